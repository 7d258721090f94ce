"""The tensors of the tiny random encoder-decoder checkpoints (BartModel, MarianModel, T5ForConditionalGeneration
layouts) that make_hf_checkpoints.py writes: `init` draws them (make_hf_checkpoints.Init)."""

from references import hf_seq2seq


def bart_weights(c, init, prefix, embed_tokens, saved_positions):
    """BartModel / MarianModel under `prefix`: shared, the stacks' layers, BART's learned positions (max + 2 rows)
    and layernorm_embedding; final_logits_bias [1, vocab] outside it. Marian's sinusoidal tables are only saved
    when `saved_positions` (older transformers did)."""
    d, V, marian = c["d_model"], c["vocab_size"], c["model_type"] == "marian"
    m = prefix
    sd = {m + "shared.weight": init.normal(V, d)}
    if embed_tokens:  # the same Parameter under the stacks' names, as older save_pretrained wrote it
        sd[m + "encoder.embed_tokens.weight"] = sd[m + "shared.weight"]
        sd[m + "decoder.embed_tokens.weight"] = sd[m + "shared.weight"]

    def linear(name, out_dim, in_dim):
        sd[name + ".weight"], sd[name + ".bias"] = init.matrix(out_dim, in_dim), init.bias(out_dim)

    def norm(name):
        sd[name + ".weight"], sd[name + ".bias"] = init.norm(d), init.bias(d)
    for stack in ("encoder", "decoder"):
        s = m + stack + "."
        if marian:
            if saved_positions:
                sd[s + "embed_positions.weight"] = hf_seq2seq.marian_sinusoids(c["max_position_embeddings"], d).float()
        else:
            sd[s + "embed_positions.weight"] = init.normal(c["max_position_embeddings"] + 2, d, std=0.5)
            norm(s + "layernorm_embedding")
        ffn = c[stack + "_ffn_dim"]
        for i in range(c[stack + "_layers"]):
            p = f"{s}layers.{i}."
            for att in ("self_attn",) + (("encoder_attn",) if stack == "decoder" else ()):
                for n in ("k_proj", "v_proj", "q_proj", "out_proj"):
                    linear(p + att + "." + n, d, d)
                norm(p + att + "_layer_norm")
            linear(p + "fc1", ffn, d)
            linear(p + "fc2", d, ffn)
            norm(p + "final_layer_norm")
    sd["final_logits_bias"] = init.bias(V).reshape(1, V)
    return sd


def t5_weights(c, init, lm_head):
    d, H, dkv, ff, V = c["d_model"], c["num_heads"], c["d_kv"], c["d_ff"], c["vocab_size"]
    gated, _ = hf_seq2seq.t5_feed_forward(c)
    sd = {"shared.weight": init.normal(V, d)}
    layers = {"encoder": c["num_layers"], "decoder": c.get("num_decoder_layers") or c["num_layers"]}
    for stack, L in layers.items():
        for i in range(L):
            p = f"{stack}.block.{i}.layer."
            atts = ["0.SelfAttention"] + (["1.EncDecAttention"] if stack == "decoder" else [])
            for a in atts:
                sd[p + a[0] + ".layer_norm.weight"] = init.norm(d)
                for n in ("q", "k", "v"):
                    sd[f"{p}{a}.{n}.weight"] = init.matrix(H * dkv, d)
                sd[f"{p}{a}.o.weight"] = init.matrix(d, H * dkv)
            if i == 0:  # block 0's table, shared by its stack
                sd[p + "0.SelfAttention.relative_attention_bias.weight"] = init.normal(c["relative_attention_num_buckets"], H)
            f = p + str(len(atts)) + "."
            sd[f + "layer_norm.weight"] = init.norm(d)
            for n in (("wi_0", "wi_1") if gated else ("wi",)):
                sd[f + "DenseReluDense." + n + ".weight"] = init.matrix(ff, d)
            sd[f + "DenseReluDense.wo.weight"] = init.matrix(d, ff)
        sd[stack + ".final_layer_norm.weight"] = init.norm(d)
    if lm_head:
        sd["lm_head.weight"] = init.normal(V, d)
    return sd
