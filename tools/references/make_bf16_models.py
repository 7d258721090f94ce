#!/usr/bin/python3
"""Writes the random checkpoints of `npm run bench:bf16` (issue #35) into build/bench-bf16/ (not committed):

- gpt2-small/ and smollm-135m/: make_bench_models.py's networks (same shapes, same seeds), each twice, f32/ and bf16/,
  with the same values: every weight is rounded to BF16 first, so the F32 file holds exactly what the BF16 file
  does and the two loads must give the same bits (BF16 -> F32 is exact).
- llama-3.2-1b/bf16/: Llama-3.2-1B's shape (meta-llama/Llama-3.2-1B's config.json: 16 layers, hidden 2048, 32 heads,
  8 key/value heads, intermediate 8192, vocabulary 128,256, tied embeddings, rope_theta 500000 with llama3 scaling),
  weights N(0, 0.02) as LlamaPreTrainedModel._init_weights draws them, norms 1, every tensor BF16 (2.47 GB).

Every file is written one tensor at a time (safetensors_file.save_stream): the 1B file is never in memory whole.

    /usr/bin/python3 tools/references/make_bf16_models.py                      # all three (~3.4 GB, ~2 minutes)
    options: --only gpt2-small|smollm-135m|llama-3.2-1b (repeatable), --out DIR
"""

import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import safetensors_file  # noqa: E402
from attnscope_tools.paths import ROOT  # noqa: E402
from references import make_bench_models as bench  # noqa: E402

# meta-llama/Llama-3.2-1B's config.json (transformers 4.45): the fields configuration_llama.LlamaConfig reads.
LLAMA_32_1B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": False,
               "attention_dropout": 0.0, "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64,
               "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
               "max_position_embeddings": 131072, "mlp_bias": False, "num_attention_heads": 32,
               "num_hidden_layers": 16, "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-5,
               "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                                "original_max_position_embeddings": 8192, "rope_type": "llama3"},
               "rope_theta": 500000.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16", "use_cache": True,
               "vocab_size": 128256}


def bf16_bytes(t):
    """A tensor's values rounded to BF16 (torch's cast: nearest, ties to even), as little-endian bytes."""
    return t.to(torch.bfloat16).contiguous().view(torch.int16).numpy().tobytes()


def f32_bytes(t):
    return t.float().contiguous().numpy().astype("<f4").tobytes()


def llama_entries(c, seed):
    """(name, shape, draw) of LlamaForCausalLM's state dict with a tied head, in hf_init_llama's order; draw() makes
    the tensor when it is written, from a generator seeded per tensor (the order of writing cannot change values)."""
    d, H, KV, hd, f, r = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"],
                          c["intermediate_size"], c["initializer_range"])
    entries = []

    def normal(name, *shape):
        index = len(entries)
        entries.append((name, shape, lambda: torch.randn(*shape, generator=torch.Generator().manual_seed(seed * 1000 + index)) * r))

    def ones(name, n):
        entries.append((name, (n,), lambda: torch.ones(n)))
    normal("model.embed_tokens.weight", c["vocab_size"], d)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        ones(p + "input_layernorm.weight", d)
        normal(p + "self_attn.q_proj.weight", H * hd, d)
        normal(p + "self_attn.k_proj.weight", KV * hd, d)
        normal(p + "self_attn.v_proj.weight", KV * hd, d)
        normal(p + "self_attn.o_proj.weight", d, H * hd)
        ones(p + "post_attention_layernorm.weight", d)
        normal(p + "mlp.gate_proj.weight", f, d)
        normal(p + "mlp.up_proj.weight", f, d)
        normal(p + "mlp.down_proj.weight", d, f)
    ones("model.norm.weight", d)
    return entries


def write(folder, config, entries, dtype):
    """config.json and model.safetensors of `entries` ((name, shape, draw)) stored as `dtype` (F32 or BF16)."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        f.write(json.dumps(dict(config, torch_dtype="bfloat16" if dtype == "BF16" else "float32"), indent=2) + "\n")
    to_bytes = bf16_bytes if dtype == "BF16" else f32_bytes
    stream = [(name, dtype, shape, lambda draw=draw: to_bytes(draw())) for name, shape, draw in entries]
    return safetensors_file.save_stream(os.path.join(folder, "model.safetensors"), stream, {"format": "pt"})


def bench_pair(name, out_root):
    """make_bench_models.py's network `name`, rounded to BF16, as f32/ and bf16/."""
    config, init, seed = {"gpt2-small": (bench.GPT2_SMALL, bench.hf_init_gpt2, 21),
                          "smollm-135m": (bench.SMOLLM_135M, bench.hf_init_llama, 22)}[name]
    sd = init(config, torch.Generator().manual_seed(seed))
    # Rounded once, here: the F32 file then holds the BF16 file's values exactly.
    sd = {k: v.to(torch.bfloat16).float() for k, v in sd.items()}
    entries = [(k, tuple(v.shape), lambda v=v: v) for k, v in sd.items()]
    for dtype in ("F32", "BF16"):
        n = write(os.path.join(out_root, name, dtype.lower()), config, entries, dtype)
        print(f"{name}/{dtype.lower()}: {sum(v.numel() for v in sd.values()) / 1e6:.1f} M parameters, model.safetensors {n / 1e6:.1f} MB")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", choices=["gpt2-small", "smollm-135m", "llama-3.2-1b"])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench-bf16"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    for name in args.only or ["gpt2-small", "smollm-135m", "llama-3.2-1b"]:
        started = time.time()
        if name == "llama-3.2-1b":
            entries = llama_entries(LLAMA_32_1B, 35)
            n = write(os.path.join(args.out, name, "bf16"), LLAMA_32_1B, entries, "BF16")
            count = sum(torch.Size(shape).numel() for _, shape, _ in entries)
            print(f"{name}/bf16: {count / 1e9:.3f} B parameters, model.safetensors {n / 1e9:.2f} GB")
        else:
            bench_pair(name, args.out)
        print(f"{name}: {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
