#!/usr/bin/python3
"""Measures the canonical heads of a character LM file (issue #14, item 2) and what switching them off does.

    /usr/bin/python3 tools/measure/measure_heads.py [models/char-lm.safetensors] [--out tools/records/char-lm-heads.md]
                                            [--json FILE] [--sequences 64] [--seed 14]

Needs only NumPy (no torch): the NumPy reference (tools/attnscope_tools/reference.py) batched in float32, with
head ablation as the core does it: an ablated head's context is zeroed before its layer's output projection.

Measurements, per head (layer, head), written as a Markdown table (and optionally JSON):

* previous-token score: on held-out text (tools/data/lm_data.py's split, the documents of every source packed in
  order into 128-token windows), the mean attention weight from position i to position i-1 (i >= 1).
  The goal of issue #14 is >= 0.5; the uniform baseline is the mean of 1/(i+1).
* induction score, as in Olsson et al. (2022), "In-context learning and induction heads": sequences
  <bos> r_1 .. r_n r_1 .. r_n of n distinct random tokens repeated twice; for every token of the second copy,
  the weight on the token after its earlier occurrence (the first copy's r_{k+1} for the second copy's r_k),
  averaged. Goal >= 0.4. Reported beside the uniform baseline (mean 1/(p+1) over those queries) and a layer-1
  control: the best score of a first-layer head, which has no earlier layer to compose with and so cannot do
  induction (a high control means the score measures something else, e.g. position).
  Two token pools: every non-special token, and the 100 most frequent.
* copying: next-token accuracy on the repeated half (predicting r_{k+1} from the second copy's r_k) and on
  the first half (chance), with no head ablated, with the best induction head ablated (the highest induction
  score outside the first layer), and with each other head ablated (mean, min, max, and one drawn at random
  with --seed). Accuracy dropping only for the induction head is the causal evidence that it does the copying.

Today's shipped model (3 layers of 4 heads, trained on fortunes) is the baseline of the next training round.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import config, reference  # noqa: E402
from attnscope_tools.attnscope_model import read_model  # noqa: E402
from attnscope_tools.paths import RECORDS, ROOT  # noqa: E402
from attnscope_tools.records import write_text  # noqa: E402
from attnscope_tools.tokenizers import CodepointTokenizer  # noqa: E402
from data import lm_data  # noqa: E402
PREV_TOKEN_GOAL, INDUCTION_GOAL = 0.5, 0.4


# ----------------------------------------------------------------------------- the model, batched, float32

class LanguageModel:
    """The decoder LM of a model file: forward(ids [B, T], ablate={(layer, head)}) -> logits, weights."""

    def __init__(self, path):
        header, tensors = read_model(path)
        if header["kind"] != "decoder_lm":
            raise SystemExit(f"{path}: expected a decoder_lm model, got {header['kind']}")
        self.header, self.P = header, {k: np.asarray(v, dtype=np.float32) for k, v in tensors.items()}
        self.cfg, self.vocab = config.read("decoder_lm", header["config"]), header["vocab"]
        self.L, self.H = self.cfg.n_layers, self.cfg.n_heads
        self.tokenize = CodepointTokenizer(self.vocab).ids

    def forward(self, ids, ablate=()):
        logits, weights = reference.lm_forward(self.P, self.cfg, ids, ablate, erf=reference.erf_fast)
        return logits, np.stack(weights, 1)  # [B, T, V], [B, L, H, T, T]


# ----------------------------------------------------------------------------- data

def heldout_windows(model, count):
    """The first `count` 128-token windows of held-out text, interleaved over sources (fortunes today):
    documents packed in order, each window starting at a document start, as train_lm.py evaluates."""
    T = model.cfg.max_len
    _, held = lm_data.split_sources(lm_data.load_sources())
    per_source = []
    for docs in held.values():
        windows, seq = [], []
        for doc in docs:
            seq.extend(model.tokenize(doc))
            if len(seq) >= T:
                windows.append(seq[:T])
                seq = []
        per_source.append(windows)
    out = []
    for i in range(max(len(w) for w in per_source)):
        out += [w[i] for w in per_source if i < len(w)]
    return np.array(out[:count])


def repeated_random(model, count, n, pool, rng):
    """`count` sequences <bos> r_1..r_n r_1..r_n of n distinct tokens drawn from `pool`."""
    bos = model.vocab["bos_id"]
    rows = []
    for _ in range(count):
        r = rng.choice(pool, size=n, replace=False)
        rows.append([bos] + list(r) + list(r))
    return np.array(rows)


def repeated_text(model, windows, n):
    """<bos> s s for the first n characters s of each held-out window: copying real text, as the demo's
    "Repetition" example shows it (characters recur inside s too, so the earlier occurrence can be ambiguous)."""
    bos = model.vocab["bos_id"]
    return np.array([[bos] + list(w[1:1 + n]) * 2 for w in windows])


def repeated_random_ids(rng, count, n, specials, vocab_size, bos):
    """The same sequences for a model in training (tools/training/train_lm.py): tokens from every non-special id."""
    rows = []
    for _ in range(count):
        r = rng.choice(np.arange(specials, vocab_size), size=n, replace=False)
        rows.append([bos] + list(r) + list(r))
    return np.array(rows)


# ----------------------------------------------------------------------------- measurements

def prev_token_scores(weights):
    """[L, H] mean weight on i-1 over queries i >= 1, and the uniform baseline."""
    T = weights.shape[-1]
    i = np.arange(1, T)
    score = weights[..., i, i - 1].mean(axis=(0, 3))
    return score, float((1.0 / (i + 1)).mean())


def induction_scores(weights, n):
    """[L, H] Olsson et al.'s score on <bos> r r: query p = 1+n+k (k = 0..n-1) -> key 2+k, and the baseline."""
    k = np.arange(n)
    q, key = 1 + n + k, 2 + k
    score = weights[..., q, key].mean(axis=(0, 3))
    return score, float((1.0 / (q + 1)).mean())


def copy_accuracy(logits, ids, n):
    """Next-token accuracy on the repeated half (targets r_2..r_n of the second copy) and the first half."""
    pred = logits.argmax(-1)
    second = np.arange(1 + n, 2 * n)      # positions of r_1..r_{n-1} in the second copy, predicting r_2..r_n
    first = np.arange(1, n)               # the first copy: nothing to copy from
    acc = lambda pos: float((pred[:, pos] == ids[:, pos + 1]).mean())  # noqa: E731
    return acc(second), acc(first)


def guided_head(training):
    """The head trained towards the previous token by an auxiliary loss, in either phase (train_lm.py's record)."""
    return (training.get("train", {}).get("prev_token_guide")
            or training.get("init_from", {}).get("train", {}).get("prev_token_guide"))


def measure(model, sequences, seed):
    rng = np.random.default_rng(seed)
    L, H = model.L, model.H
    specials = len(model.vocab["specials"])
    n = (model.cfg.max_len - 1) // 2
    result = {"model": model.header["config"], "sequences": sequences, "seed": seed, "n": n,
              "guided": guided_head(model.header.get("training", {}))}

    held = heldout_windows(model, sequences)
    _, w = model.forward(held)
    prev, prev_base = prev_token_scores(w)
    result["prev_token"] = {"scores": prev.round(4).tolist(), "baseline": round(prev_base, 4), "goal": PREV_TOKEN_GOAL,
                            "windows": int(held.shape[0])}

    pools = {"all": np.arange(specials, model.cfg.vocab_size), "frequent": np.arange(specials, specials + 100)}
    result["induction"] = {}
    for name, pool in [*pools.items(), ("text", None)]:
        ids = repeated_random(model, sequences, n, pool, rng) if pool is not None else repeated_text(model, held, n)
        logits, w = model.forward(ids)
        score, base = induction_scores(w, n)
        best = max(((l, h) for l in range(1, L) for h in range(H)), key=lambda lh: score[lh])
        control = max(((0, h) for h in range(H)), key=lambda lh: score[lh])
        entry = {"scores": score.round(4).tolist(), "baseline": round(base, 4), "goal": INDUCTION_GOAL,
                 "best": {"layer": best[0], "head": best[1], "score": round(float(score[best]), 4)},
                 "layer1_control": {"layer": 0, "head": control[1], "score": round(float(score[control]), 4)}}
        repeat, first = copy_accuracy(logits, ids, n)
        others = [(l, h) for l in range(L) for h in range(H) if (l, h) != best]
        by_head = {}
        for lh in [best] + others:
            by_head[lh] = copy_accuracy(model.forward(ids, ablate=[lh])[0], ids, n)[0]
        drawn = others[int(rng.integers(len(others)))]
        other = [by_head[lh] for lh in others]
        entry["copying"] = {
            "none_ablated": {"repeated_half": round(repeat, 4), "first_half": round(first, 4)},
            "induction_head_ablated": round(by_head[best], 4),
            "random_other_head": {"layer": drawn[0], "head": drawn[1], "accuracy": round(by_head[drawn], 4)},
            "other_heads": {"mean": round(float(np.mean(other)), 4), "min": round(float(np.min(other)), 4),
                            "max": round(float(np.max(other)), 4)},
            "per_head": [[round(by_head[(l, h)], 4) for h in range(H)] for l in range(L)],
        }
        result["induction"][name] = entry
    return result


def table(result, path):
    L = len(result["prev_token"]["scores"])
    H = len(result["prev_token"]["scores"][0])
    n, seq = result["n"], result["sequences"]
    pt = result["prev_token"]
    lines = [f"# Canonical heads of `{os.path.relpath(path, ROOT)}`", "",
             f"Measured by `tools/measure/measure_heads.py` (NumPy float32, seed {result['seed']}). Goals of issue #14: "
             f"previous-token score ≥ {PREV_TOKEN_GOAL}, induction score ≥ {INDUCTION_GOAL}.", "",
             f"- Previous-token score: mean weight on i−1 over {pt['windows']} held-out 128-token windows "
             f"(fortunes-zh and fortunes, tools/data/lm_data.py's split). Uniform baseline {pt['baseline']:.4f}.",
             f"- Induction score (Olsson et al. 2022): {seq} sequences of `<bos>` and {n} distinct random tokens "
             f"repeated twice; weight from each second-copy token to the token after its first occurrence.",
             "- Copying: next-token accuracy on the repeated half, with no head, the best induction head "
             "(outside layer 0) or another head ablated.",
             f"- Token pools: `all` (every non-special token), `frequent` (the 100 most frequent), `text` (the first "
             f"{n} characters of each held-out window instead of random tokens, repeated: real text, whose "
             f"characters also recur inside the span).", "",
             "| layer | head | previous token | induction (all tokens) | induction (100 frequent) | copying, this head ablated (all / frequent / text) |",
             "|---|---|---|---|---|---|"]
    ind = result["induction"]
    for l in range(L):
        for h in range(H):
            lines.append(f"| {l} | {h} | {pt['scores'][l][h]:.4f} | {ind['all']['scores'][l][h]:.4f} | "
                         f"{ind['frequent']['scores'][l][h]:.4f} | {ind['all']['copying']['per_head'][l][h]:.4f} / "
                         f"{ind['frequent']['copying']['per_head'][l][h]:.4f} / "
                         f"{ind['text']['copying']['per_head'][l][h]:.4f} |")
    lines += ["", "| token pool | uniform baseline | best induction head (layer ≥ 1) | layer-1 control (best layer-0 head) "
              "| copying, nothing ablated (repeated / first half) | induction head ablated | random other head ablated "
              "| other heads ablated (mean, min–max) |", "|---|---|---|---|---|---|---|---|"]
    for name, e in ind.items():
        c = e["copying"]
        lines.append(f"| {name} | {e['baseline']:.4f} | L{e['best']['layer']}H{e['best']['head']} {e['best']['score']:.4f} | "
                     f"L0H{e['layer1_control']['head']} {e['layer1_control']['score']:.4f} | "
                     f"{c['none_ablated']['repeated_half']:.4f} / {c['none_ablated']['first_half']:.4f} | "
                     f"{c['induction_head_ablated']:.4f} | L{c['random_other_head']['layer']}H{c['random_other_head']['head']} "
                     f"{c['random_other_head']['accuracy']:.4f} | {c['other_heads']['mean']:.4f} "
                     f"({c['other_heads']['min']:.4f}–{c['other_heads']['max']:.4f}) |")
    best_prev = max(max(r) for r in pt["scores"])
    best_ind = ind["all"]["best"]["score"]
    guided = result.get("guided")
    prev_note = f"best {best_prev:.4f}"
    if guided:  # a head trained towards i-1 by an auxiliary loss: say so, and give the best head that was not
        g = (guided["layer"], guided["head"])
        others = [(pt["scores"][l][h], l, h) for l in range(L) for h in range(H) if (l, h) != g]
        score, l, h = max(others)
        prev_note = (f"L{g[0]}H{g[1]} {pt['scores'][g[0]][g[1]]:.4f}, guided in training by an auxiliary loss; "
                     f"best unguided head L{l}H{h} {score:.4f}")
        best_prev = score  # the goal counts heads that formed on their own
    lines += ["", f"Previous-token head (≥ {PREV_TOKEN_GOAL}): {'found' if best_prev >= PREV_TOKEN_GOAL else 'not found'} "
              f"({prev_note}). Induction head (≥ {INDUCTION_GOAL}): "
              f"{'found' if best_ind >= INDUCTION_GOAL else 'not found'} (best {best_ind:.4f}).", ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", nargs="?", default=os.path.join(ROOT, "models", "char-lm.safetensors"))
    ap.add_argument("--out", default=os.path.join(RECORDS, "char-lm-heads.md"))
    ap.add_argument("--json")
    ap.add_argument("--sequences", type=int, default=64)
    ap.add_argument("--seed", type=int, default=14)
    args = ap.parse_args()
    model = LanguageModel(args.model)
    result = measure(model, args.sequences, args.seed)
    text = table(result, args.model)
    print(text)
    write_text(args.out, text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
