#!/usr/bin/python3
"""Writes tests/fixtures/hf/: tiny random Hugging Face checkpoints (save_pretrained's layout) with float64 reference
outputs from tools/references/hf_reference.py. Deterministic (one seed per case). Run: /usr/bin/python3 tools/references/make_hf_checkpoints.py
[--only CASE ...] [--check]  (--check: regenerate in memory and compare with the files instead of writing)."""

import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import safetensors_file  # noqa: E402
from attnscope_tools.paths import ROOT  # noqa: E402
from references import hf_reference, hf_tokenizer_files as tkf  # noqa: E402
from references.hf_cases import CASES, SEQ2SEQ_CASES  # noqa: E402
from references.seq2seq_weights import bart_weights, t5_weights  # noqa: E402

OUT = os.path.join(ROOT, "tests", "fixtures", "hf")

# Weight scale. HF initialises with N(0, 0.02) (initializer_range), which in a 16-32 wide model gives scores of
# ~1e-3: every attention row is uniform to 1e-3 and the logits are flat, so a wrong mask, RoPE or head mapping
# would still pass the tolerances. Matrices here are N(0, (GAIN / sqrt(fan_in))^2), embeddings N(0, 1), norm
# weights 1 + N(0, 0.2^2), biases N(0, 0.2^2): q and k entries are then ~GAIN, the scores have a standard deviation
# of ~GAIN^2 (a few units), rows put most of their weight on one or two keys, and logits spread over several units
# (make_case prints the mean largest attention weight and the logits' spread of every case).
GAIN = 1.6


class Init:
    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)

    def normal(self, *shape, std=1.0):
        return torch.randn(*shape, generator=self.g) * std

    def matrix(self, out_dim, in_dim):  # nn.Linear layout [out, in]
        return self.normal(out_dim, in_dim, std=GAIN / in_dim ** 0.5)

    def norm(self, n):
        return 1.0 + self.normal(n, std=0.2)

    def bias(self, n):
        return self.normal(n, std=0.2)


def gpt2_weights(c, init, prefix, with_buffers):
    d, n_inner, P = c["n_embd"], c["n_inner"] or 4 * c["n_embd"], c["n_positions"]
    sd = {prefix + "wte.weight": init.normal(c["vocab_size"], d), prefix + "wpe.weight": init.normal(P, d, std=0.5)}
    for i in range(c["n_layer"]):
        p = f"{prefix}h.{i}."
        sd[p + "ln_1.weight"], sd[p + "ln_1.bias"] = init.norm(d), init.bias(d)
        if with_buffers:
            # GPT2Attention's buffers, saved by transformers before 4.x made them non-persistent: `bias` the
            # [1, 1, n_positions, n_positions] lower-triangular causal mask, `masked_bias` the scalar -1e4 that
            # masked scores were set to. They carry no learned value; a loader must skip them.
            sd[p + "attn.bias"] = torch.tril(torch.ones(P, P)).view(1, 1, P, P)
            sd[p + "attn.masked_bias"] = torch.tensor(-1e4)
        # Conv1D: weight stored [in, out], i.e. the transpose of nn.Linear's
        sd[p + "attn.c_attn.weight"], sd[p + "attn.c_attn.bias"] = init.matrix(3 * d, d).T.contiguous(), init.bias(3 * d)
        sd[p + "attn.c_proj.weight"], sd[p + "attn.c_proj.bias"] = init.matrix(d, d).T.contiguous(), init.bias(d)
        sd[p + "ln_2.weight"], sd[p + "ln_2.bias"] = init.norm(d), init.bias(d)
        sd[p + "mlp.c_fc.weight"], sd[p + "mlp.c_fc.bias"] = init.matrix(n_inner, d).T.contiguous(), init.bias(n_inner)
        sd[p + "mlp.c_proj.weight"], sd[p + "mlp.c_proj.bias"] = init.matrix(d, n_inner).T.contiguous(), init.bias(d)
    sd[prefix + "ln_f.weight"], sd[prefix + "ln_f.bias"] = init.norm(d), init.bias(d)
    return sd


def bert_weights(c, init, prefix, mlm, pooler):
    d, f = c["hidden_size"], c["intermediate_size"]
    e = prefix + "embeddings."
    sd = {e + "word_embeddings.weight": init.normal(c["vocab_size"], d),
          e + "position_embeddings.weight": init.normal(c["max_position_embeddings"], d, std=0.5),
          e + "token_type_embeddings.weight": init.normal(c["type_vocab_size"], d, std=0.5),
          e + "LayerNorm.weight": init.norm(d), e + "LayerNorm.bias": init.bias(d)}

    def linear(name, out_dim, in_dim):
        sd[name + ".weight"], sd[name + ".bias"] = init.matrix(out_dim, in_dim), init.bias(out_dim)
    for i in range(c["num_hidden_layers"]):
        p = f"{prefix}encoder.layer.{i}."
        for n in ("query", "key", "value"):
            linear(p + "attention.self." + n, d, d)
        linear(p + "attention.output.dense", d, d)
        sd[p + "attention.output.LayerNorm.weight"], sd[p + "attention.output.LayerNorm.bias"] = init.norm(d), init.bias(d)
        linear(p + "intermediate.dense", f, d)
        linear(p + "output.dense", d, f)
        sd[p + "output.LayerNorm.weight"], sd[p + "output.LayerNorm.bias"] = init.norm(d), init.bias(d)
    if pooler:  # BertPooler: dense + tanh on [CLS]; not part of last_hidden_state, present in base checkpoints
        linear(prefix + "pooler.dense", d, d)
    if mlm:
        linear("cls.predictions.transform.dense", d, d)
        sd["cls.predictions.transform.LayerNorm.weight"] = init.norm(d)
        sd["cls.predictions.transform.LayerNorm.bias"] = init.bias(d)
        sd["cls.predictions.bias"] = init.bias(c["vocab_size"])
    return sd


def llama_weights(c, init, prefix, lm_head, inv_freq_buffers):
    d, H, f = c["hidden_size"], c["num_attention_heads"], c["intermediate_size"]
    KV, hd, mt = c.get("num_key_value_heads") or H, hf_reference.head_dim(c), c["model_type"]
    qkv_bias = mt == "qwen2" or c.get("attention_bias", False)
    sd = {prefix + "embed_tokens.weight": init.normal(c["vocab_size"], d)}
    for i in range(c["num_hidden_layers"]):
        p = f"{prefix}layers.{i}."
        sd[p + "input_layernorm.weight"] = init.norm(d)
        for n, rows in (("q_proj", H * hd), ("k_proj", KV * hd), ("v_proj", KV * hd)):
            sd[p + "self_attn." + n + ".weight"] = init.matrix(rows, d)
            if qkv_bias:
                sd[p + "self_attn." + n + ".bias"] = init.bias(rows)
        sd[p + "self_attn.o_proj.weight"] = init.matrix(d, H * hd)
        if mt in ("llama", "qwen3") and c.get("attention_bias", False):
            sd[p + "self_attn.o_proj.bias"] = init.bias(d)
        if mt == "qwen3":
            sd[p + "self_attn.q_norm.weight"], sd[p + "self_attn.k_norm.weight"] = init.norm(hd), init.norm(hd)
        if inv_freq_buffers:
            # LlamaRotaryEmbedding.inv_freq, a buffer older transformers saved per layer: derived, never loaded
            sd[p + "self_attn.rotary_emb.inv_freq"] = hf_reference.rope_inv_freq(c).float()
        sd[p + "post_attention_layernorm.weight"] = init.norm(d)
        for n, rows, cols in (("gate_proj", f, d), ("up_proj", f, d), ("down_proj", d, f)):
            sd[p + "mlp." + n + ".weight"] = init.matrix(rows, cols)
            if c.get("mlp_bias", False):
                sd[p + "mlp." + n + ".bias"] = init.bias(rows)
    sd[prefix + "norm.weight"] = init.norm(d)
    if lm_head:
        sd["lm_head.weight"] = init.normal(c["vocab_size"], d)  # as the embeddings: logits spread over units
    return sd


def gemma_weights(c, init, prefix, lm_head):
    """GemmaModel's tensors (and Gemma2Model's, Gemma3TextModel's). The RMSNorm weights are offsets from 1 (the
    norm multiplies by 1 + weight; HF initialises them to zeros), drawn N(0, 0.2^2) so that 1 + w is near 1."""
    d, H, f, KV, hd = c["hidden_size"], c["num_attention_heads"], c["intermediate_size"], c["num_key_value_heads"], c["head_dim"]
    mt, bias = c["model_type"], c.get("attention_bias", False)
    sd = {prefix + "embed_tokens.weight": init.normal(c["vocab_size"], d)}
    for i in range(c["num_hidden_layers"]):
        p = f"{prefix}layers.{i}."
        sd[p + "input_layernorm.weight"] = init.bias(d)
        for n, rows, cols in (("q_proj", H * hd, d), ("k_proj", KV * hd, d), ("v_proj", KV * hd, d), ("o_proj", d, H * hd)):
            sd[p + "self_attn." + n + ".weight"] = init.matrix(rows, cols)
            if bias:
                sd[p + "self_attn." + n + ".bias"] = init.bias(rows)
        if mt == "gemma3_text":
            sd[p + "self_attn.q_norm.weight"], sd[p + "self_attn.k_norm.weight"] = init.bias(hd), init.bias(hd)
        sd[p + "post_attention_layernorm.weight"] = init.bias(d)
        if mt != "gemma":
            sd[p + "pre_feedforward_layernorm.weight"] = init.bias(d)
            sd[p + "post_feedforward_layernorm.weight"] = init.bias(d)
        for n, rows, cols in (("gate_proj", f, d), ("up_proj", f, d), ("down_proj", d, f)):
            sd[p + "mlp." + n + ".weight"] = init.matrix(rows, cols)
    sd[prefix + "norm.weight"] = init.bias(d)
    if lm_head:
        sd["lm_head.weight"] = init.normal(c["vocab_size"], d)
    return sd


def gpt_neox_weights(c, init, prefix, lm_head, buffers):
    d, f, H = c["hidden_size"], c["intermediate_size"], c["num_attention_heads"]
    bias, P, hd = c.get("attention_bias", True), c["max_position_embeddings"], d // H
    sd = {prefix + "embed_in.weight": init.normal(c["vocab_size"], d)}

    def linear(name, out_dim, in_dim, with_bias=True):
        sd[name + ".weight"] = init.matrix(out_dim, in_dim)
        if with_bias:
            sd[name + ".bias"] = init.bias(out_dim)
    for i in range(c["num_hidden_layers"]):
        p = f"{prefix}layers.{i}."
        sd[p + "input_layernorm.weight"], sd[p + "input_layernorm.bias"] = init.norm(d), init.bias(d)
        linear(p + "attention.query_key_value", 3 * d, d, bias)  # rows [heads, 3, head_size]
        linear(p + "attention.dense", d, d, bias)
        if buffers:
            # GPTNeoXAttention's buffers, persistent in the transformers that saved Pythia (4.24): the causal mask
            # `bias` [1, 1, P, P] (bool), `masked_bias` (-1e9) and the rotary inv_freq. Never loaded.
            sd[p + "attention.bias"] = torch.tril(torch.ones(P, P)).view(1, 1, P, P)
            sd[p + "attention.masked_bias"] = torch.tensor(-1e9)
            rot = int(hd * c.get("rotary_pct", 0.25))
            sd[p + "attention.rotary_emb.inv_freq"] = 1.0 / (c.get("rotary_emb_base", 10000) ** (torch.arange(0, rot, 2).float() / rot))
        sd[p + "post_attention_layernorm.weight"], sd[p + "post_attention_layernorm.bias"] = init.norm(d), init.bias(d)
        linear(p + "mlp.dense_h_to_4h", f, d)
        linear(p + "mlp.dense_4h_to_h", d, f)
    sd[prefix + "final_layer_norm.weight"], sd[prefix + "final_layer_norm.bias"] = init.norm(d), init.bias(d)
    if lm_head:
        sd["embed_out.weight"] = init.normal(c["vocab_size"], d)
    return sd


def phi3_weights(c, init, prefix, lm_head):
    d, H, f = c["hidden_size"], c["num_attention_heads"], c["intermediate_size"]
    KV, hd = c.get("num_key_value_heads") or H, hf_reference.head_dim(c)
    sd = {prefix + "embed_tokens.weight": init.normal(c["vocab_size"], d)}
    for i in range(c["num_hidden_layers"]):
        p = f"{prefix}layers.{i}."
        sd[p + "input_layernorm.weight"] = init.norm(d)
        sd[p + "self_attn.qkv_proj.weight"] = init.matrix((H + 2 * KV) * hd, d)  # q, k, v rows; no bias
        sd[p + "self_attn.o_proj.weight"] = init.matrix(d, H * hd)
        sd[p + "post_attention_layernorm.weight"] = init.norm(d)
        sd[p + "mlp.gate_up_proj.weight"] = init.matrix(2 * f, d)  # gate rows, then up rows
        sd[p + "mlp.down_proj.weight"] = init.matrix(d, f)
    sd[prefix + "norm.weight"] = init.norm(d)
    if lm_head:
        sd["lm_head.weight"] = init.normal(c["vocab_size"], d)
    return sd


def olmo2_weights(c, init, prefix, lm_head):
    d, H, f = c["hidden_size"], c["num_attention_heads"], c["intermediate_size"]
    KV, hd, bias = c.get("num_key_value_heads") or H, hf_reference.head_dim(c), c.get("attention_bias", False)
    sd = {prefix + "embed_tokens.weight": init.normal(c["vocab_size"], d)}
    for i in range(c["num_hidden_layers"]):
        p = f"{prefix}layers.{i}."
        for n, rows, cols in (("q_proj", H * hd, d), ("k_proj", KV * hd, d), ("v_proj", KV * hd, d), ("o_proj", d, H * hd)):
            sd[p + "self_attn." + n + ".weight"] = init.matrix(rows, cols)
            if bias:
                sd[p + "self_attn." + n + ".bias"] = init.bias(rows)
        # q_norm and k_norm as wide as the whole projections (not per head)
        sd[p + "self_attn.q_norm.weight"], sd[p + "self_attn.k_norm.weight"] = init.norm(H * hd), init.norm(KV * hd)
        sd[p + "post_attention_layernorm.weight"] = init.norm(d)
        for n, rows, cols in (("gate_proj", f, d), ("up_proj", f, d), ("down_proj", d, f)):
            sd[p + "mlp." + n + ".weight"] = init.matrix(rows, cols)
        sd[p + "post_feedforward_layernorm.weight"] = init.norm(d)
    sd[prefix + "norm.weight"] = init.norm(d)
    if lm_head:
        sd["lm_head.weight"] = init.normal(c["vocab_size"], d)
    return sd


def weights(case, init):
    c, w = case["config"], case["weights"]
    if c["model_type"] == "gpt2":
        return gpt2_weights(c, init, w.get("prefix", ""), w.get("buffers", False))
    if c["model_type"] == "gpt_neox":
        return gpt_neox_weights(c, init, w.get("prefix", ""), w.get("lm_head", False), w.get("buffers", False))
    if c["model_type"] == "phi3":
        return phi3_weights(c, init, w.get("prefix", ""), w.get("lm_head", False))
    if c["model_type"] == "olmo2":
        return olmo2_weights(c, init, w.get("prefix", ""), w.get("lm_head", False))
    if c["model_type"] in ("bart", "marian"):
        return bart_weights(c, init, w.get("prefix", ""), w.get("embed_tokens", False), w.get("positions", False))
    if c["model_type"] == "t5":
        return t5_weights(c, init, w.get("lm_head", False))
    if c["model_type"] == "bert":
        return bert_weights(c, init, w.get("prefix", ""), w.get("mlm", False), w.get("pooler", False))
    if c["model_type"] in ("gemma", "gemma2", "gemma3_text"):
        return gemma_weights(c, init, w.get("prefix", ""), w.get("lm_head", False))
    return llama_weights(c, init, w.get("prefix", ""), w.get("lm_head", False), w.get("inv_freq", False))


def f32(x):
    return float(f"{x:.9g}")  # the float32 value's shortest round-trip text (at most 9 significant digits)


def tensor_json(t):
    return {"shape": list(t.shape), "data": [f32(v) for v in t.float().reshape(-1).tolist()]}


def shard_files(sd, n_shards, dtypes):
    """{file name: bytes} as save_pretrained writes them: one file, or n shards + model.safetensors.index.json."""
    meta = {"format": "pt"}
    if n_shards == 1:
        return {"model.safetensors": safetensors_file.encode(sd, meta, dtypes)}
    names = list(sd)
    per = -(-len(names) // n_shards)
    files, weight_map, total = {}, {}, 0
    for s in range(n_shards):
        fname = f"model-{s + 1:05d}-of-{n_shards:05d}.safetensors"
        part = {n: sd[n] for n in names[s * per:(s + 1) * per]}
        files[fname] = safetensors_file.encode(part, meta, {n: dt for n, dt in dtypes.items() if n in part})
        for n, t in part.items():
            weight_map[n] = fname
            total += t.numel() * {"F16": 2, "BF16": 2}.get(dtypes.get(n), 4)
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    files["model.safetensors.index.json"] = (json.dumps(index, indent=2) + "\n").encode()
    return files


def make_case(case):
    """-> {file name: bytes} of the case's folder, and a one-line summary."""
    init = Init(case["seed"])
    c = case["config"]
    sd = weights(case, init)
    dtype = c.get("torch_dtype", "float32")
    tag = {"float16": "F16", "bfloat16": "BF16"}.get(dtype)
    # A checkpoint saved in F16/BF16 holds every floating tensor in that dtype; the reference runs on the values
    # as read back (widened), not on the float32 draws.
    tdt = {"float16": torch.float16, "bfloat16": torch.bfloat16}.get(dtype)
    if tdt is not None:
        sd = {n: t.to(tdt).float() for n, t in sd.items()}
    dtypes = {n: tag for n in sd} if tag else {}
    files = shard_files(sd, case.get("shards", 1), dtypes)
    files["config.json"] = (json.dumps(c, indent=2) + "\n").encode()
    ref_inputs, stats = [], []
    for inp in case["inputs"]:
        kw = {k: inp[k] for k in ("attention_mask", "token_type_ids") if k in inp}
        r = hf_reference.forward(c, sd, inp["input_ids"], **kw)
        entry = dict(inp)
        entry["hidden"] = tensor_json(r["hidden"])
        if "logits" in r:
            entry["logits"] = tensor_json(r["logits"])
            stats.append(f"logit std {float(r['logits'].std()):.2f}")
        entry["attention"] = tensor_json(r["attention"])
        stats.append(f"mean max attention {float(r['attention'].max(-1).values.mean()):.2f}")
        ref_inputs.append(entry)
    ref = {"case": case["case"], "description": case["description"], "inputs": ref_inputs}
    if "generate" in case:
        g = case["generate"]
        ref["generate"] = {"prompt": g["prompt"], "max_new_tokens": g["max_new_tokens"],
                           "tokens": hf_reference.generate_greedy(c, sd, g["prompt"], g["max_new_tokens"])}
    files["reference.json"] = (json.dumps(ref, separators=(",", ":")) + "\n").encode()
    tok = {"bpe": tkf.bpe_files, "wordpiece": tkf.wp_files}.get(case.get("tokenizer"))
    if tok:
        tj, tc = tok()
        files["tokenizer.json"] = (json.dumps(tj, ensure_ascii=False, indent=1) + "\n").encode()
        files["tokenizer_config.json"] = (json.dumps(tc, indent=2) + "\n").encode()
    size = sum(len(b) for b in files.values())
    return files, f"{case['case']}: {size / 1024:.1f} KB, " + ", ".join(stats)


def make_seq2seq_case(case):
    """An encoder-decoder's folder: its files, and reference.json with every input's logits and three attentions
    (hf_reference.seq2seq_forward) and the greedy translation of the first input's source."""
    init = Init(case["seed"])
    c = case["config"]
    sd = weights(case, init)
    files = shard_files(sd, 1, {})
    files["config.json"] = (json.dumps(c, indent=2) + "\n").encode()
    ref_inputs, stats = [], []
    for inp in case["inputs"]:
        r = hf_reference.seq2seq_forward(c, sd, inp["source_ids"], inp["target_ids"])
        entry = dict(inp)
        for key in ("hidden", "logits", "encoder_attention", "decoder_attention", "cross_attention"):
            if key in r:
                entry[key] = tensor_json(r[key])
        stats.append(f"logit std {float(r['logits'].std()):.2f}" if "logits" in r else "no head")
        for key in ("encoder_attention", "decoder_attention", "cross_attention"):
            stats.append(f"{key.split('_')[0]} max {float(r[key].max(-1).values.mean()):.2f}")
        ref_inputs.append(entry)
    ref = {"case": case["case"], "description": case["description"], "inputs": ref_inputs}
    if "text" in case:
        ref["text"] = case["text"]
    if "translate" in case:
        steps = case["translate"]["max_steps"]
        source = case["inputs"][0]["source_ids"]
        ref["translate"] = {"source_ids": source, "max_steps": steps,
                            "tokens": hf_reference.translate_greedy(c, sd, source, steps)}
    files["reference.json"] = (json.dumps(ref, separators=(",", ":")) + "\n").encode()
    tok = {"bpe": tkf.bpe_files, "unigram": tkf.unigram_files}.get(case.get("tokenizer"))
    if tok:
        tj, tc = tok()
        files["tokenizer.json"] = (json.dumps(tj, ensure_ascii=False, indent=1) + "\n").encode()
        files["tokenizer_config.json"] = (json.dumps(tc, indent=2) + "\n").encode()
    if case.get("spm"):
        # What a Helsinki-NLP folder holds instead of tokenizer.json: SentencePiece models (stand-ins here: attnscope
        # does not read them) and the shared vocab.json.
        files["source.spm"] = files["target.spm"] = b"\x0a\x00 SentencePiece model stand-in (not read)\n"
        files["vocab.json"] = (json.dumps({f"t{i}": i for i in range(c["vocab_size"])}) + "\n").encode()
        files["tokenizer_config.json"] = (json.dumps({"tokenizer_class": "MarianTokenizer", "source_lang": "en",
                                                      "target_lang": "de", "model_max_length": 512}) + "\n").encode()
    size = sum(len(b) for b in files.values())
    return files, f"{case['case']}: {size / 1024:.1f} KB, " + ", ".join(stats)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", nargs="*", help="case names")
    ap.add_argument("--check", action="store_true", help="compare with the files on disk instead of writing")
    args = ap.parse_args()
    torch.set_num_threads(1)
    bad = 0
    for case in CASES + SEQ2SEQ_CASES:
        if args.only and case["case"] not in args.only:
            continue
        files, summary = (make_seq2seq_case if case in SEQ2SEQ_CASES else make_case)(case)
        folder = os.path.join(OUT, case["case"])
        print(summary)
        if args.check:
            for name, blob in files.items():
                path = os.path.join(folder, name)
                if not os.path.exists(path) or open(path, "rb").read() != blob:
                    print(f"  differs: {name}")
                    bad += 1
            continue
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            if name not in files:
                os.remove(os.path.join(folder, name))
        for name, blob in files.items():
            with open(os.path.join(folder, name), "wb") as f:
                f.write(blob)
    if not args.check and not args.only:
        index = [{"case": c["case"], "family": c["config"]["model_type"], "features": c["features"]} for c in CASES]
        with open(os.path.join(OUT, "cases.json"), "w") as f:
            f.write(json.dumps(index, indent=2) + "\n")
    if not args.check:  # the encoder-decoders' own index (the tests of Seq2SeqModel read it), written every time
        index = [{"case": c["case"], "family": c["config"]["model_type"], "features": c["features"]} for c in SEQ2SEQ_CASES]
        with open(os.path.join(OUT, "seq2seq-cases.json"), "w") as f:
            f.write(json.dumps(index, indent=2) + "\n")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
