#!/usr/bin/python3
"""References of the research tools, in float64 from a fixture's weights, on top of hf_reference.py: writes
tests/fixtures/hf/<case>/research.json. Run: /usr/bin/python3 tools/references/hf_research_reference.py [--check]

- The residual stream: every [T, d] input of a norm in the order the reference calls them is, for a pre-norm model
  (GPT-2, Llama), the stream entering layer l's attention (resid_pre), entering its MLP (resid_mid), and entering
  the final norm (the last resid_post); a post-norm model's (BERT) stream is the output of those norms instead.
  Both are recorded by wrapping hf_base's norm functions; its forward pass is not touched.
- The logit lens at layer l: the same model cut to its first l layers (num_hidden_layers = l), whose output goes
  through the final norm and the head as the whole model's does; softmaxed over the vocabulary.
- ‖v_j‖: the values each query head reads (hf_base._softmax_attention's v, after repeat_kv), per position.
- QK = W_Q·W_Kᵀ and OV = W_V·W_O of each head, from the tensors as the file names them, the key/value head of query
  head h being h // (heads / kv_heads) (repeat_interleave); Frobenius norms, and one head's matrices and singular values.
"""

import copy
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import safetensors_file  # noqa: E402
from references import fixture_cli, hf_base, hf_reference  # noqa: E402

HF = fixture_cli.HF
# gpt2-lm: pre-norm LayerNorm, learned positions; llama-gqa: RMSNorm, RoPE, 4 query heads over 2 key/value heads
# (its circuits' head 3 reads key/value head 1); bert-mlm: post-norm, an MLM head with its own transform.
CASES = [
    {"case": "gpt2-lm", "ids": [266, 261, 263, 265, 258, 220, 76, 259], "head": [1, 1]},
    {"case": "llama-gqa", "ids": [1, 17, 40, 5, 33, 41, 17, 40], "head": [1, 3]},
    {"case": "bert-mlm", "ids": [2, 62, 65, 93, 71, 94, 7, 3], "head": [1, 1]},
]


class _Torch:
    """torch, with stack([]) allowed: a model cut to 0 layers stacks no attention maps."""

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def stack(tensors, *args, **kwargs):
        return torch.stack(tensors, *args, **kwargs) if len(tensors) else torch.zeros(0)


def run(config, sd, ids, T, d):
    """forward() with the norms' [T, d] inputs and outputs and the attention's values recorded."""
    seen = {"in": [], "out": [], "v": []}
    plain = {n: getattr(hf_base, n) for n in ("_layer_norm", "_rms_norm", "_softmax_attention")}

    def norm(name):
        def wrapped(x, *args):
            y = plain[name](x, *args)
            if tuple(x.shape) == (T, d):
                seen["in"].append(x)
                seen["out"].append(y)
            return y
        return wrapped

    def attention(q, k, v, scale, allowed):
        seen["v"].append(v)
        return plain["_softmax_attention"](q, k, v, scale, allowed)

    hf_base._layer_norm, hf_base._rms_norm = norm("_layer_norm"), norm("_rms_norm")
    hf_base._softmax_attention = attention
    hf_base.torch = _Torch()
    try:
        return hf_reference.forward(config, sd, ids), seen
    finally:
        for n, f in plain.items():
            setattr(hf_base, n, f)
        hf_base.torch = torch


def layers_key(config):
    return "n_layer" if config["model_type"] == "gpt2" else "num_hidden_layers"


def head_factors(config, sd, layer):
    """[(W_Q, W_K, W_V, W_O)] of every query head of `layer`: d × hd, d × hd, d × hd, hd × d."""
    mt = config["model_type"]
    if mt == "gpt2":
        s, _ = hf_reference._strip(sd, ("transformer.",))
        d, H = config["n_embd"], config["n_head"]
        hd, KV = d // H, H
        w = s[f"h.{layer}.attn.c_attn.weight"]  # Conv1D [in, out]: y = x @ W, columns q | k | v
        q, k, v = w[:, :d], w[:, d:2 * d], w[:, 2 * d:]
        o = s[f"h.{layer}.attn.c_proj.weight"]  # [in = heads · hd, out = d]
    else:
        if mt == "bert":
            s, _ = hf_reference._strip(sd, ("bert.",))
            p = f"encoder.layer.{layer}.attention."
            names = (p + "self.query", p + "self.key", p + "self.value", p + "output.dense")
            H = config["num_attention_heads"]
            KV, hd = H, config["hidden_size"] // H
        else:
            s, _ = hf_reference._strip(sd, ("model.",))
            p = f"layers.{layer}.self_attn."
            names = tuple(p + n for n in ("q_proj", "k_proj", "v_proj", "o_proj"))
            H = config["num_attention_heads"]
            KV, hd = config.get("num_key_value_heads") or H, hf_reference.head_dim(config)
        # nn.Linear [out, in]: y = x @ Wᵀ
        q, k, v, o = (s[n + ".weight"].T for n in names)
    group = H // KV
    return [(q[:, h * hd:(h + 1) * hd], k[:, (h // group) * hd:(h // group + 1) * hd],
             v[:, (h // group) * hd:(h // group + 1) * hd], o[h * hd:(h + 1) * hd, :]) for h in range(H)]


def numbers(t):
    return [float("%.9g" % x) for x in t.reshape(-1).tolist()]


def make(case):
    folder = os.path.join(HF, case["case"])
    config = json.load(open(os.path.join(folder, "config.json")))
    sd = safetensors_file.load_file(os.path.join(folder, "model.safetensors"))[1]
    sd = {k: torch.tensor(list(t.values), dtype=torch.float64).reshape(t.shape) for k, t in sd.items()}
    ids = case["ids"]
    T = len(ids)
    out, seen = run(config, sd, ids, T, out_width(config))
    L = config[layers_key(config)]
    pre_norm = config["model_type"] != "bert"
    stream = seen["in"] if pre_norm else seen["out"]
    # pre-norm: [ln_1, ln_2] per layer, then the final norm; post-norm: the embeddings' norm, then [attention, MLP]
    # per layer (the MLM transform's LayerNorm, last, is the head's)
    pre = [stream[2 * l] for l in range(L)] + [stream[2 * L]]
    mid = [stream[2 * l + 1] for l in range(L)]
    lens = []
    for l in range(L + 1):
        cut = copy.deepcopy(config)
        cut[layers_key(config)] = l
        lens.append(torch.softmax(run(cut, sd, ids, T, out_width(config))[0]["logits"], dim=-1))
    assert torch.allclose(lens[L], torch.softmax(out["logits"], dim=-1))
    result = {"case": case["case"], "ids": ids, "layers": L, "width": out_width(config),
              "description": "Research tools (tools/references/hf_research_reference.py): the residual stream, the logit "
                             "lens, the values' norms and the heads' QK/OV circuits, in float64."}
    result["residual"] = numbers(torch.stack(pre))
    result["residual_mid"] = numbers(torch.stack(mid))
    result["lens_probabilities"] = numbers(torch.stack(lens))
    result["attention"] = numbers(out["attention"])
    result["value_norms"] = numbers(torch.stack([v.norm(dim=-1) for v in seen["v"]]))
    qk_norms, ov_norms = [], []
    for l in range(L):
        for wq, wk, wv, wo in head_factors(config, sd, l):
            qk_norms.append(torch.linalg.norm(wq @ wk.T))
            ov_norms.append(torch.linalg.norm(wv @ wo))
    result["qk_norms"], result["ov_norms"] = numbers(torch.stack(qk_norms)), numbers(torch.stack(ov_norms))
    layer, head = case["head"]
    wq, wk, wv, wo = head_factors(config, sd, layer)[head]
    qk, ov = wq @ wk.T, wv @ wo
    result["circuit"] = {"layer": layer, "head": head, "qk": numbers(qk), "ov": numbers(ov),
                         "qk_singular": numbers(torch.linalg.svdvals(qk)[:wq.shape[1]]),
                         "ov_singular": numbers(torch.linalg.svdvals(ov)[:wq.shape[1]])}
    return result


def out_width(config):
    return config.get("n_embd") or config["hidden_size"]


def main():
    torch.set_num_threads(1)
    fixture_cli.write_case_files(CASES, make, "research.json")


if __name__ == "__main__":
    main()
