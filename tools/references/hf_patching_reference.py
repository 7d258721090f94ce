#!/usr/bin/python3
"""Activation patching and mean-ablation references, in float64 from a fixture's weights, on top of hf_reference.py:
writes tests/fixtures/hf/<case>/patching.json. Run: /usr/bin/python3 tools/references/hf_patching_reference.py [--check]

A head's output is its context softmax(q·kᵀ)·v before the output projection (TransformerLens's hook_z). Patching
head (l, h) runs the corrupted ids with that head's context, at every position, taken from the clean run; mean
ablation replaces a head's context by its mean over the run's positions. Both are applied by wrapping
hf_base._softmax_attention, the one place every family computes the context [H, T, hd] (after repeat_kv, so
per query head), counting its calls to know the layer: the reference's own forward pass is not touched.
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import safetensors_file  # noqa: E402
from references import fixture_cli, hf_base, hf_reference  # noqa: E402

HF = fixture_cli.HF
_plain_attention = hf_base._softmax_attention

# gpt2-lm has a tokenizer: its texts are what the demo's Patching tab is given ("the", " cat", ... one token each,
# "m"/"h" + "at" at the end), and the answers "on" and "b" are single tokens of its vocabulary: the pair of letter
# tokens whose logit difference the corruption moves most (0.2, small in a random model, yet 100 times the float32
# error). llama-gqa covers grouped-query attention (4 query heads reading 2 key/value heads), with ids only.
CASES = [
    {"case": "gpt2-lm", "clean_text": "the cat sat on the mat", "corrupted_text": "the cat sat on the hat",
     "clean_ids": [266, 261, 263, 265, 258, 220, 76, 259], "corrupted_ids": [266, 261, 263, 265, 258, 220, 71, 259],
     "answers": ["on", "b"]},
    {"case": "llama-gqa", "clean_ids": [3, 17, 40, 8, 25, 11, 30], "corrupted_ids": [3, 17, 41, 8, 25, 5, 30]},
]


def run(config, sd, ids, edit=None, keep=None, every_row=False):
    """Last position's logits (every_row: every position's); edit(layer, ctx [H, T, hd]) may change the context; keep
    (a list) receives each layer's context."""
    layer = [0]

    def attention(q, k, v, scale, allowed):
        ctx, probs = _plain_attention(q, k, v, scale, allowed)
        if edit is not None:
            ctx = edit(layer[0], ctx.clone())
        if keep is not None:
            keep.append(ctx)
        layer[0] += 1
        return ctx, probs

    hf_base._softmax_attention = attention
    try:
        logits = hf_reference.forward(config, sd, ids)["logits"]
        return logits if every_row else logits[-1]
    finally:
        hf_base._softmax_attention = _plain_attention


def patch_edit(heads, clean):
    def edit(layer, ctx):
        for l, h in heads:
            if l == layer:
                ctx[h] = clean[layer][h]
        return ctx
    return edit


def mean_edit(heads):
    def edit(layer, ctx):
        for l, h in heads:
            if l == layer:
                ctx[h] = ctx[h].mean(0, keepdim=True).expand_as(ctx[h])
        return ctx
    return edit


def numbers(t):
    return [float("%.9g" % x) for x in t.tolist()]


def make(case):
    d = os.path.join(HF, case["case"])
    config = json.load(open(os.path.join(d, "config.json")))
    sd = safetensors_file.load_file(os.path.join(d, "model.safetensors"))[1]
    sd = {k: torch.tensor(list(t.values), dtype=torch.float64).reshape(t.shape) for k, t in sd.items()}
    clean_ctx = []
    clean = run(config, sd, case["clean_ids"], keep=clean_ctx)
    corrupted = run(config, sd, case["corrupted_ids"])
    layers, heads = len(clean_ctx), clean_ctx[0].shape[0]
    every = [(l, h) for l in range(layers) for h in range(heads)]
    out = {k: v for k, v in case.items() if k != "answers"}
    out["description"] = ("Activation patching (tools/references/hf_patching_reference.py): logits of the last position of the "
                          "corrupted ids with each head's context taken from the clean run, and mean-ablated.")
    out.update(layers=layers, heads=heads, clean_logits=numbers(clean), corrupted_logits=numbers(corrupted))
    out["patched"] = [{"heads": [[l, h]], "logits": numbers(run(config, sd, case["corrupted_ids"], patch_edit([(l, h)], clean_ctx)))}
                      for l, h in every]
    two = [every[0], every[-1]]
    # Every head at once: where the last token is the same in both prompts, norms and MLPs act on each position
    # alone, so its residual stream is its embedding plus the clean run's attention outputs: the clean logits.
    for hs in (two, every):
        out["patched"].append({"heads": [list(x) for x in hs],
                               "logits": numbers(run(config, sd, case["corrupted_ids"], patch_edit(hs, clean_ctx)))})
    out["mean_ablated"] = [{"ids": "corrupted", "heads": [list(x) for x in hs],
                            "logits": numbers(run(config, sd, case["corrupted_ids"], mean_edit(hs)))}
                           for hs in ([every[1]], two)]
    if "answers" in case:
        vocab = json.load(open(os.path.join(d, "tokenizer.json")))["model"]["vocab"]
        a, b = (vocab[s] for s in case["answers"])
        diff = lambda logits: float(logits[a] - logits[b])  # noqa: E731
        c0, c1 = diff(corrupted), diff(clean)
        out["answers"] = {"text": case["answers"], "ids": [a, b], "clean_difference": c1, "corrupted_difference": c0,
                          # (patched - corrupted) / (clean - corrupted), per layer, per head: what the tab draws
                          "recovered": [[(diff(torch.tensor(p["logits"], dtype=torch.float64)) - c0) / (c1 - c0)
                                         for p in out["patched"][l * heads:(l + 1) * heads]] for l in range(layers)]}
    return out


def main():
    fixture_cli.write_case_files(CASES, make, "patching.json")


if __name__ == "__main__":
    main()
