#!/usr/bin/python3
"""Writes the random networks of `npm run bench:models` (issue #21) into build/bench-models/ (not committed): GPT-2
small's shape and SmolLM-135M's shape, in Hugging Face's layout (config.json + model.safetensors) and as ONNX
(model.onnx: input_ids [1, T] -> logits [1, T, V] and attentions [L, 1, H, T, T], T dynamic) of the same weights.

    /usr/bin/python3 tools/references/make_bench_models.py                 # both, full size (~1.1 GB of safetensors + ONNX)
    /usr/bin/python3 tools/references/make_bench_models.py --small --check # tiny shapes, torch module vs hf_reference.py
    options: --only gpt2-small|smollm-135m, --no-onnx, --out DIR
"""

import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import safetensors_file  # noqa: E402
from attnscope_tools.paths import ROOT  # noqa: E402
from references import hf_reference  # noqa: E402

# configuration_gpt2.GPT2Config with gpt2's published sizes (the "gpt2" checkpoint: 124M parameters)
GPT2_SMALL = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "activation_function": "gelu_new",
              "bos_token_id": 50256, "eos_token_id": 50256, "initializer_range": 0.02, "layer_norm_epsilon": 1e-5,
              "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_inner": None, "n_layer": 12, "n_positions": 1024,
              "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True, "torch_dtype": "float32",
              "vocab_size": 50257}
# configuration_llama.LlamaConfig with SmolLM-135M's sizes (HuggingFaceTB/SmolLM-135M: tied head, GQA 9/3)
SMOLLM_135M = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": False,
               "bos_token_id": 0, "eos_token_id": 0, "head_dim": 64, "hidden_act": "silu", "hidden_size": 576,
               "initializer_range": 0.02, "intermediate_size": 1536, "max_position_embeddings": 2048,
               "mlp_bias": False, "num_attention_heads": 9, "num_hidden_layers": 30, "num_key_value_heads": 3,
               "rms_norm_eps": 1e-5, "rope_scaling": None, "rope_theta": 10000.0, "tie_word_embeddings": True,
               "torch_dtype": "float32", "vocab_size": 49152}
SMALL = {"gpt2-small": dict(GPT2_SMALL, n_embd=64, n_head=4, n_layer=2, n_positions=64, n_ctx=64, vocab_size=300),
         "smollm-135m": dict(SMOLLM_135M, hidden_size=48, head_dim=16, num_attention_heads=3, num_key_value_heads=1,
                             intermediate_size=96, num_hidden_layers=2, max_position_embeddings=64, vocab_size=300)}


def hf_init_gpt2(c, g):
    """GPT2PreTrainedModel._init_weights: weights N(0, initializer_range), c_proj weights N(0, range / sqrt(2 *
    n_layer)), biases 0, LayerNorm 1 / 0; the state dict of GPT2LMHeadModel (head tied, so absent)."""
    d, L, r = c["n_embd"], c["n_layer"], c["initializer_range"]
    inner = c["n_inner"] or 4 * d
    n = lambda *s, std=r: torch.randn(*s, generator=g) * std  # noqa: E731
    sd = {"transformer.wte.weight": n(c["vocab_size"], d), "transformer.wpe.weight": n(c["n_positions"], d)}
    for i in range(L):
        p = f"transformer.h.{i}."
        sd.update({p + "ln_1.weight": torch.ones(d), p + "ln_1.bias": torch.zeros(d),
                   p + "attn.c_attn.weight": n(d, 3 * d), p + "attn.c_attn.bias": torch.zeros(3 * d),
                   p + "attn.c_proj.weight": n(d, d, std=r / math.sqrt(2 * L)), p + "attn.c_proj.bias": torch.zeros(d),
                   p + "ln_2.weight": torch.ones(d), p + "ln_2.bias": torch.zeros(d),
                   p + "mlp.c_fc.weight": n(d, inner), p + "mlp.c_fc.bias": torch.zeros(inner),
                   p + "mlp.c_proj.weight": n(inner, d, std=r / math.sqrt(2 * L)), p + "mlp.c_proj.bias": torch.zeros(d)})
    sd.update({"transformer.ln_f.weight": torch.ones(d), "transformer.ln_f.bias": torch.zeros(d)})
    return sd


def hf_init_llama(c, g):
    """LlamaPreTrainedModel._init_weights: Linear and Embedding N(0, initializer_range), RMSNorm 1; the state dict
    of LlamaForCausalLM with a tied head (absent)."""
    d, H, KV, hd, f, r = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"],
                          c["intermediate_size"], c["initializer_range"])
    n = lambda *s: torch.randn(*s, generator=g) * r  # noqa: E731
    sd = {"model.embed_tokens.weight": n(c["vocab_size"], d)}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        sd.update({p + "input_layernorm.weight": torch.ones(d), p + "self_attn.q_proj.weight": n(H * hd, d),
                   p + "self_attn.k_proj.weight": n(KV * hd, d), p + "self_attn.v_proj.weight": n(KV * hd, d),
                   p + "self_attn.o_proj.weight": n(d, H * hd), p + "post_attention_layernorm.weight": torch.ones(d),
                   p + "mlp.gate_proj.weight": n(f, d), p + "mlp.up_proj.weight": n(f, d),
                   p + "mlp.down_proj.weight": n(d, f)})
    sd["model.norm.weight"] = torch.ones(d)
    return sd


class Exportable(torch.nn.Module):
    """The same network as a traceable module: weights as buffers (ONNX initializers); the causal mask and RoPE
    tables as [maxT, ...] buffers sliced to T, because a mask built from a dynamic T does not export under torch
    1.13. The tied embedding is held once, transposed ([d, V]): the head multiplies by it and the lookup gathers
    its columns, since the exporter folds `x @ E.T` into a transposed copy of E (+150 MB for GPT-2)."""

    TIED = ("transformer.wte.weight", "model.embed_tokens.weight")

    def __init__(self, c, sd):
        super().__init__()
        self.c, self.names = c, {}
        for k, v in sd.items():
            self.names[k] = k.replace(".", "_") + ("_T" if k in self.TIED else "")
            self.register_buffer(self.names[k], (v.t() if k in self.TIED else v).float().contiguous())
        max_t = c.get("n_positions") or c["max_position_embeddings"]
        self.register_buffer("causal", torch.tril(torch.ones(max_t, max_t, dtype=torch.bool)))
        if c["model_type"] == "llama":
            inv = hf_reference.rope_inv_freq(c)
            freqs = torch.arange(max_t, dtype=torch.float64)[:, None] * inv[None, :]
            emb = torch.cat((freqs, freqs), dim=-1)
            self.register_buffer("rope_cos", emb.cos().float())
            self.register_buffer("rope_sin", emb.sin().float())

    def w(self, name):
        return getattr(self, self.names[name])

    def embed(self, ids, name):  # the rows of E are the columns of the stored E.T
        return torch.index_select(self.w(name), 1, ids).t()

    def head(self, x, name):
        return torch.matmul(x, self.w(name))

    def attend(self, q, k, v, T):
        """q [H, T, hd], k/v [H, T, hd] -> (context [T, H*hd], probabilities [H, T, T])."""
        scores = torch.matmul(q, k.transpose(1, 2)) * (q.shape[-1] ** -0.5)
        scores = scores.masked_fill(~self.causal[:T, :T], float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs, v).transpose(0, 1).reshape(T, -1), probs

    def forward(self, input_ids):
        T = input_ids.shape[1]
        ids = input_ids[0]
        body = self.gpt2 if self.c["model_type"] == "gpt2" else self.llama
        logits, attn = body(ids, T)
        return logits.unsqueeze(0), torch.stack(attn).unsqueeze(1)

    def gpt2(self, ids, T):
        c, w = self.c, self.w
        d, H, eps = c["n_embd"], c["n_head"], c["layer_norm_epsilon"]
        x = self.embed(ids, "transformer.wte.weight") + w("transformer.wpe.weight")[:T]
        attn = []
        for i in range(c["n_layer"]):
            p = f"transformer.h.{i}."
            h = F.layer_norm(x, (d,), w(p + "ln_1.weight"), w(p + "ln_1.bias"), eps)
            qkv = torch.matmul(h, w(p + "attn.c_attn.weight")) + w(p + "attn.c_attn.bias")  # Conv1D: [in, out]
            q, k, v = (t.reshape(T, H, d // H).transpose(0, 1) for t in qkv.split(d, dim=-1))
            ctx, probs = self.attend(q, k, v, T)
            attn.append(probs)
            x = x + torch.matmul(ctx, w(p + "attn.c_proj.weight")) + w(p + "attn.c_proj.bias")
            h = F.layer_norm(x, (d,), w(p + "ln_2.weight"), w(p + "ln_2.bias"), eps)
            h = F.gelu(torch.matmul(h, w(p + "mlp.c_fc.weight")) + w(p + "mlp.c_fc.bias"), approximate="tanh")
            x = x + torch.matmul(h, w(p + "mlp.c_proj.weight")) + w(p + "mlp.c_proj.bias")
        x = F.layer_norm(x, (d,), w("transformer.ln_f.weight"), w("transformer.ln_f.bias"), eps)
        return self.head(x, "transformer.wte.weight"), attn  # tied head

    def llama(self, ids, T):
        c, w = self.c, self.w
        H, KV, hd, eps = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
        cos, sin = self.rope_cos[:T], self.rope_sin[:T]

        def norm(x, name):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w(name)

        def rope(x):  # rotate_half convention
            return x * cos + torch.cat((-x[..., hd // 2:], x[..., :hd // 2]), dim=-1) * sin

        def heads(x, n):
            return x.reshape(T, n, hd).transpose(0, 1)

        def repeat_kv(x):  # [KV, T, hd] -> [H, T, hd], query head h reading KV head h // (H / KV)
            return x[:, None].expand(KV, H // KV, T, hd).reshape(H, T, hd)
        x = self.embed(ids, "model.embed_tokens.weight")
        attn = []
        for i in range(c["num_hidden_layers"]):
            p = f"model.layers.{i}."
            h = norm(x, p + "input_layernorm.weight")
            q = rope(heads(F.linear(h, w(p + "self_attn.q_proj.weight")), H))
            k = rope(heads(F.linear(h, w(p + "self_attn.k_proj.weight")), KV))
            v = heads(F.linear(h, w(p + "self_attn.v_proj.weight")), KV)
            ctx, probs = self.attend(q, repeat_kv(k), repeat_kv(v), T)
            attn.append(probs)
            x = x + F.linear(ctx, w(p + "self_attn.o_proj.weight"))
            h = norm(x, p + "post_attention_layernorm.weight")
            x = x + F.linear(F.silu(F.linear(h, w(p + "mlp.gate_proj.weight"))) * F.linear(h, w(p + "mlp.up_proj.weight")),
                             w(p + "mlp.down_proj.weight"))
        return self.head(norm(x, "model.norm.weight"), "model.embed_tokens.weight"), attn


def export_onnx(module, path, vocab):
    ids = torch.randint(0, vocab, (1, 8), generator=torch.Generator().manual_seed(1))
    torch.onnx.export(module, (ids,), path, opset_version=17, input_names=["input_ids"],
                      output_names=["logits", "attentions"],
                      dynamic_axes={"input_ids": {1: "T"}, "logits": {1: "T"}, "attentions": {3: "T", 4: "T"}})


def check(c, init, T=11):
    """The exportable module (float32) against hf_reference.py (float64) at two lengths. The weights are drawn at
    N(0, (1.6 / sqrt(d))^2) for this (0.2 at d 64, 0.058 at d 768), not HF's 0.02: at 0.02 every attention row is
    near uniform and the comparison would prove little; a fixed larger std overflows the scores of the wide
    models instead. Returns the largest errors (logits relative to their largest magnitude, attention absolute)."""
    c = dict(c, initializer_range=1.6 / math.sqrt(c.get("n_embd") or c["hidden_size"]))
    sd = init(c, torch.Generator().manual_seed(3))
    module = Exportable(c, sd).eval()
    g = torch.Generator().manual_seed(2)
    worst = [0.0, 0.0]
    for t in (T, T - 4):
        ids = torch.randint(0, c["vocab_size"], (1, t), generator=g)
        want = hf_reference.forward(c, sd, ids[0].tolist())
        with torch.no_grad():
            logits, attn = module(ids)
        worst[0] = max(worst[0], float((logits[0].double() - want["logits"]).abs().max() / want["logits"].abs().max()))
        worst[1] = max(worst[1], float((attn[:, 0].double() - want["attention"]).abs().max()))
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["gpt2-small", "smollm-135m"])
    ap.add_argument("--small", action="store_true", help="tiny shapes of the same families (for testing)")
    ap.add_argument("--check", action="store_true", help="compare with hf_reference.py before writing")
    ap.add_argument("--no-onnx", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    out_root = args.out or os.path.join(ROOT, "build", "bench-models-small" if args.small else "bench-models")
    for name, (config, init, seed) in {"gpt2-small": (GPT2_SMALL, hf_init_gpt2, 21),
                                       "smollm-135m": (SMOLLM_135M, hf_init_llama, 22)}.items():
        if args.only and name != args.only:
            continue
        c = SMALL[name] if args.small else config
        if args.check:
            print(f"{name}: logits max error / max |logit| {{:.1e}}, attention max error {{:.1e}}".format(*check(c, init)))
        sd = init(c, torch.Generator().manual_seed(seed))
        module = Exportable(c, sd).eval()
        folder = os.path.join(out_root, name)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "config.json"), "w") as f:
            f.write(json.dumps(c, indent=2) + "\n")
        n = safetensors_file.save_file(sd, os.path.join(folder, "model.safetensors"), {"format": "pt"})
        print(f"{name}: {sum(t.numel() for t in sd.values()) / 1e6:.1f} M parameters, model.safetensors {n / 1e6:.1f} MB")
        if not args.no_onnx:
            path = os.path.join(folder, "model.onnx")
            export_onnx(module, path, c["vocab_size"])
            print(f"{name}: model.onnx {os.path.getsize(path) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
