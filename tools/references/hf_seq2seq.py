"""The float64 references of Hugging Face's encoder-decoders (BART, Marian, T5), from modeling_bart.py,
modeling_marian.py and modeling_t5.py: seq2seq_forward and translate_greedy.

The shared pieces (norms, linear layers, the softmax attention, RoPE) are hf_base's, called through the module so
that hf_patching_reference and hf_research_reference can wrap them; hf_reference.forward dispatches here."""

import math  # noqa: F401

import torch

from references import hf_base as ref

# ---- Encoder-decoders: BART, Marian, T5 (modeling_bart.py, modeling_marian.py, modeling_t5.py) --------------------
#
# Entry points: `seq2seq_forward(config, state_dict, source_ids, target_ids)` -> {"logits" [T, V] (if the checkpoint
# has a head), "hidden" (the decoder's last_hidden_state), "encoder_attention" [Le, He, S, S], "decoder_attention"
# [Ld, Hd, T, T], "cross_attention" [Ld, Hd, T, S]}; `target_ids` are the decoder's inputs, starting with
# decoder_start_token_id (no shift here). `translate_greedy(config, state_dict, source_ids, max_steps)`.

def _causal(T):
    return torch.tril(torch.ones(T, T, dtype=torch.bool))


def _heads(x, H):
    T = x.shape[0]
    return x.reshape(T, H, -1).transpose(0, 1)


def _bart_attention(sd, p, x, memory, H, allowed):
    """BartAttention / MarianAttention: q, k, v, out_proj all with biases; q scaled by head_dim ** -0.5."""
    q = _heads(ref._linear(x, sd, p + "q_proj"), H)
    k = _heads(ref._linear(memory, sd, p + "k_proj"), H)
    v = _heads(ref._linear(memory, sd, p + "v_proj"), H)
    ctx, probs = ref._softmax_attention(q, k, v, q.shape[-1] ** -0.5, allowed)
    return ref._linear(ctx.transpose(0, 1).reshape(x.shape[0], -1), sd, p + "out_proj"), probs


def marian_sinusoids(rows, dim):
    """MarianSinusoidalPositionalEmbedding._init_weight: position_enc[pos, j] = pos / 10000^(2 (j // 2) / dim) in
    float64 (numpy), sin of the even j into the first half (dim // 2 columns, rounded up), cos of the odd j into the
    second; stored as a float32 table (the module's weight), read back here as float64."""
    pos = torch.arange(rows, dtype=ref.F64)[:, None]
    j = torch.arange(dim, dtype=ref.F64)[None, :]
    enc = pos / torch.pow(torch.tensor(10000.0, dtype=ref.F64), 2 * torch.floor(j / 2) / dim)
    out = torch.zeros(rows, dim, dtype=ref.F64)
    sentinel = dim // 2 if dim % 2 == 0 else (dim // 2) + 1
    out[:, :sentinel] = torch.sin(enc[:, 0::2])
    out[:, sentinel:] = torch.cos(enc[:, 1::2])
    return out.float().to(ref.F64)


def _bart_family(config, state_dict, source_ids, target_ids):
    """BartForConditionalGeneration / BartModel and MarianMTModel / MarianModel. Both are post-LayerNorm (every
    nn.LayerNorm at torch's default eps 1e-5) with biases everywhere and `activation_function` in the MLP. BART:
    learned positions read from row position + 2 (BartLearnedPositionalEmbedding.offset), `layernorm_embedding` on
    the embeddings' sum. Marian: fixed sinusoidal positions from row 0, no embedding norm. Both: embeddings times
    sqrt(d_model) when `scale_embedding`; logits = lm_head(decoder output) + final_logits_bias ([1, vocab])."""
    marian = config["model_type"] == "marian"
    prefix = ref._prefix_of(state_dict, "model.")
    sd, _ = ref._strip(state_dict, ("model.",))
    d = config["d_model"]
    act = ref._act(config.get("activation_function", "swish" if marian else "gelu"))
    scale = math.sqrt(d) if config.get("scale_embedding", False) else 1.0
    # shared: one table for the encoder, the decoder and (tied) the LM head; files may name it under any of these
    shared = next(sd[n] for n in ("shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight") if n in sd)
    if marian:
        if not config.get("share_encoder_decoder_embeddings", True):
            raise NotImplementedError("share_encoder_decoder_embeddings false")
        table = marian_sinusoids(config["max_position_embeddings"], d)

    def embed(ids, stack):
        x = shared[torch.tensor(ids)] * scale
        positions = torch.arange(len(ids))
        if marian:
            return x + table[positions]
        x = x + sd[stack + ".embed_positions.weight"][positions + 2]
        return ref._layer_norm(x, sd[stack + ".layernorm_embedding.weight"], sd[stack + ".layernorm_embedding.bias"], 1e-5)

    def norm(x, name):
        return ref._layer_norm(x, sd[name + ".weight"], sd[name + ".bias"], 1e-5)

    def ffn(x, p):
        return ref._linear(act(ref._linear(x, sd, p + "fc1")), sd, p + "fc2")

    S, T = len(source_ids), len(target_ids)
    x = embed(source_ids, "encoder")
    He, Hd = config["encoder_attention_heads"], config["decoder_attention_heads"]
    enc_attn = []
    for i in range(config["encoder_layers"]):
        p = f"encoder.layers.{i}."
        a, probs = _bart_attention(sd, p + "self_attn.", x, x, He, torch.ones(S, S, dtype=torch.bool))
        enc_attn.append(probs)
        x = norm(x + a, p + "self_attn_layer_norm")
        x = norm(x + ffn(x, p), p + "final_layer_norm")
    memory = x
    y = embed(target_ids, "decoder")
    dec_attn, cross_attn = [], []
    for i in range(config["decoder_layers"]):
        p = f"decoder.layers.{i}."
        a, probs = _bart_attention(sd, p + "self_attn.", y, y, Hd, _causal(T))
        dec_attn.append(probs)
        y = norm(y + a, p + "self_attn_layer_norm")
        a, probs = _bart_attention(sd, p + "encoder_attn.", y, memory, Hd, torch.ones(T, S, dtype=torch.bool))
        cross_attn.append(probs)
        y = norm(y + a, p + "encoder_attn_layer_norm")
        y = norm(y + ffn(y, p), p + "final_layer_norm")
    out = {"hidden": y, "encoder_attention": torch.stack(enc_attn), "decoder_attention": torch.stack(dec_attn),
           "cross_attention": torch.stack(cross_attn)}
    if prefix:  # *ForConditionalGeneration / MarianMTModel; the bare model has no head
        head = sd.get("lm_head.weight")
        if head is None or ref._tied(config, True):
            head = shared  # tie_word_embeddings (default true): lm_head is shared
        out["logits"] = y @ head.T + sd["final_logits_bias"].reshape(-1)
    return out


def t5_bucket(relative, bidirectional, num_buckets, max_distance):
    """T5Attention._relative_position_bucket, as torch computes it (the logarithmic part in float32)."""
    ret = torch.zeros_like(relative)
    if bidirectional:
        num_buckets //= 2
        ret += (relative > 0).long() * num_buckets
        n = relative.abs()
    else:
        n = -torch.min(relative, torch.zeros_like(relative))
    max_exact = num_buckets // 2
    large = max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return ret + torch.where(n < max_exact, n, large)


def t5_feed_forward(config):
    """T5Config: feed_forward_proj "act" or "gated-act"; "gated-gelu" means gelu_new."""
    proj = config.get("feed_forward_proj", "relu")
    parts = proj.split("-")
    gated = parts[0] == "gated"
    return gated, ("gelu_new" if proj == "gated-gelu" else parts[-1])


def _t5(config, state_dict, source_ids, target_ids):
    """T5ForConditionalGeneration / T5Model: pre-norm blocks of T5LayerNorm (an RMSNorm, eps layer_norm_epsilon),
    attention without biases and without the 1/sqrt(d_kv) scale, a relative-position bias from buckets of key -
    query (bidirectional in the encoder, causal in the decoder) computed by block 0's relative_attention_bias and
    added in every layer of its stack (cross-attention has none), the feed-forward wo(act(wi(x))) or
    wo(act(wi_0(x)) * wi_1(x)); a tied head reads the decoder output times d_model ** -0.5."""
    sd = {k: v.to(ref.F64) for k, v in state_dict.items()}
    d, H = config["d_model"], config["num_heads"]
    eps = config.get("layer_norm_epsilon", 1e-6)
    buckets, max_distance = config.get("relative_attention_num_buckets", 32), config.get("relative_attention_max_distance", 128)
    gated, act_name = t5_feed_forward(config)
    act = ref._act(act_name)
    shared = next(sd[n] for n in ("shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight") if n in sd)

    def bias(stack, Tq, Tk, bidirectional):
        rel = torch.arange(Tk)[None, :] - torch.arange(Tq)[:, None]  # memory_position - context_position
        b = t5_bucket(rel, bidirectional, buckets, max_distance)
        return sd[stack + ".block.0.layer.0.SelfAttention.relative_attention_bias.weight"][b].permute(2, 0, 1)

    def attention(p, x, memory, allowed, position_bias):
        q, k, v = (_heads(ref._linear(src, sd, p + n, False), H) for n, src in (("q", x), ("k", memory), ("v", memory)))
        scores = q @ k.transpose(-1, -2) + position_bias
        scores = scores + torch.zeros(allowed.shape, dtype=ref.F64).masked_fill(~allowed, torch.finfo(ref.F64).min)
        probs = torch.softmax(scores, dim=-1)
        return ref._linear((probs @ v).transpose(0, 1).reshape(x.shape[0], -1), sd, p + "o", False), probs

    def ff(p, x):
        h = ref._rms_norm(x, sd[p + "layer_norm.weight"], eps)
        if gated:
            h = act(ref._linear(h, sd, p + "DenseReluDense.wi_0", False)) * ref._linear(h, sd, p + "DenseReluDense.wi_1", False)
        else:
            h = act(ref._linear(h, sd, p + "DenseReluDense.wi", False))
        return x + ref._linear(h, sd, p + "DenseReluDense.wo", False)

    S, T = len(source_ids), len(target_ids)
    x = shared[torch.tensor(source_ids)]
    pb = bias("encoder", S, S, True)
    enc_attn = []
    for i in range(config["num_layers"]):
        p = f"encoder.block.{i}.layer."
        h = ref._rms_norm(x, sd[p + "0.layer_norm.weight"], eps)
        a, probs = attention(p + "0.SelfAttention.", h, h, torch.ones(S, S, dtype=torch.bool), pb)
        enc_attn.append(probs)
        x = ff(p + "1.", x + a)
    memory = ref._rms_norm(x, sd["encoder.final_layer_norm.weight"], eps)
    y = shared[torch.tensor(target_ids)]
    pb = bias("decoder", T, T, False)
    dec_attn, cross_attn = [], []
    for i in range(config.get("num_decoder_layers") or config["num_layers"]):
        p = f"decoder.block.{i}.layer."
        h = ref._rms_norm(y, sd[p + "0.layer_norm.weight"], eps)
        a, probs = attention(p + "0.SelfAttention.", h, h, _causal(T), pb)
        dec_attn.append(probs)
        y = y + a
        h = ref._rms_norm(y, sd[p + "1.layer_norm.weight"], eps)
        a, probs = attention(p + "1.EncDecAttention.", h, memory, torch.ones(T, S, dtype=torch.bool), torch.zeros(H, T, S, dtype=ref.F64))
        cross_attn.append(probs)
        y = ff(p + "2.", y + a)
    y = ref._rms_norm(y, sd["decoder.final_layer_norm.weight"], eps)
    out = {"hidden": y, "encoder_attention": torch.stack(enc_attn), "decoder_attention": torch.stack(dec_attn),
           "cross_attention": torch.stack(cross_attn)}
    if config.get("architectures", ["T5ForConditionalGeneration"])[0] == "T5ForConditionalGeneration":
        if ref._tied(config, True):
            out["logits"] = (y * d ** -0.5) @ shared.T  # the rescale before a tied lm_head
        else:
            out["logits"] = y @ sd["lm_head.weight"].T
    return out


def seq2seq_forward(config, state_dict, source_ids, target_ids):
    mt = config["model_type"]
    if mt in ("bart", "marian"):
        return _bart_family(config, state_dict, source_ids, target_ids)
    if mt == "t5":
        return _t5(config, state_dict, source_ids, target_ids)
    raise NotImplementedError(f"model_type {mt!r}")


def translate_greedy(config, state_dict, source_ids, max_steps):
    """Greedy decoding from decoder_start_token_id, the whole target recomputed each step, until eos_token_id (kept)
    or max_steps tokens; returns the tokens after the start token. No logits processor (forced BOS/EOS, bad words)."""
    target = [config["decoder_start_token_id"]]
    for _ in range(max_steps):
        token = int(torch.argmax(seq2seq_forward(config, state_dict, source_ids, target)["logits"][-1]))
        target.append(token)
        if token == config["eos_token_id"]:
            break
    return target[1:]
