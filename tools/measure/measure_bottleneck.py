#!/usr/bin/python3
"""The fixed-context bottleneck, measured: greedy exact match of the dates models against source length in words,
1 to 64, with the date at the start of the source and filler words after it. Writes
web/demo/src/data/bottleneck-curves.json (the demo's plot) and tools/records/bottleneck.svg (the README's), and
prints the table tools/records/bottleneck.md quotes.

    nice -n 10 /usr/bin/python3 tools/measure/measure_bottleneck.py [--per-length 200]

Why the date first: a decoder that sees only the encoder's final state must carry the date through every word
after it, so the words after the date are what the fixed vector has to survive (the tutorial's "the beginning of a
long sentence is lost"). The filler is tools/data/dates_data.py's own context words (everyday words outside the
vocabulary, so <unk>, and the function words the/of/on/in/and), so no number in it can be read as part of a date.
The dates are the held-out ones (dates_data.is_heldout), phrased by dates_data's own date cores (no weekday); for a
length shorter than a date's phrasing another phrasing is drawn, and a length no phrasing fits (1 word) has no
score. The transformers have learned positions for 32 source words only: their curves end at 32.
"""

import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import runtime  # noqa: E402

runtime.setup(threads=1)

import torch  # noqa: E402

from attnscope_tools import attnscope_model  # noqa: E402
from attnscope_tools.paths import RECORDS, ROOT  # noqa: E402
from attnscope_tools.tokenizers import SourceWordTokenizer  # noqa: E402
from data import dates_data as dd, dates_vocab as dv  # noqa: E402
from training.attnscope_nets import Seq2SeqModel  # noqa: E402
from training.rnn_nets import RnnSeq2Seq  # noqa: E402
MAX_LEN = 64
MODELS = [  # (id, file, label)
    ("gru", "models/dates-gru.safetensors", "GRU, fixed context vector"),
    ("gru_attention", "models/dates-gru-attention.safetensors", "GRU + dot-product attention"),
    ("transformer", "models/dates-seq2seq.safetensors", "transformer (shipped)"),
]
COLORS = {"gru": "#d62728", "gru_attention": "#1f77b4", "transformer": "#7f7f7f"}
TABLE_LENGTHS = [1, 8, 16, 24, 32, 48, 64]
JSON_PATH = os.path.join(ROOT, "web", "demo", "src", "data", "bottleneck-curves.json")
SVG_PATH = os.path.join(RECORDS, "bottleneck.svg")


def load(path):
    header, tensors = attnscope_model.read_model(os.path.join(ROOT, path))
    c = header["config"]
    if header["kind"] == "rnn_seq2seq":
        model = RnnSeq2Seq(c["src_vocab_size"], c["tgt_vocab_size"], c["emb"], c["hidden"], c["attention"],
                           c["max_tgt_len"])
        max_src = c["max_src_len"]
    else:
        model = Seq2SeqModel(c["src_vocab_size"], c["tgt_vocab_size"], c["d_model"], c["n_heads"], c["n_enc_layers"],
                             c["n_dec_layers"], c["d_ff"], c["max_src_len"], c["max_tgt_len"])
        max_src = c["max_src_len"]
    attnscope_model.load_state_dict_into(model, tensors).eval()
    return header, model, max_src


def date_core(rng, spec, max_words):
    """A phrasing of the date of `spec` in at most max_words words (as dates_data.example, without the weekday and
    the sentence), or None when 50 draws find none."""
    y, m, d, _ = spec
    for _ in range(50):
        core = dd.numeric_core(y, m, d, rng) if y is not None and rng.random() < 0.15 else dd.words_core(y, m, d, rng)
        if len(core) <= max_words:
            return [w for w, _ in core]
    return None


def examples_at(length, n, seed):
    rng = random.Random(seed * 1000 + length)
    out = []
    for _ in range(n):
        spec = dd.sample_spec(rng, True)
        core = date_core(rng, spec, length)
        if core is None:
            continue
        filler = [dd.context_word(rng)[0] for _ in range(length - len(core))]
        out.append((core + filler, dd.answer(*spec[:3])))
    return out


@torch.no_grad()
def exact_match(model, vocab, tokenizer, examples):
    ids = [tokenizer.word_ids(w) for w, _ in examples]
    src, pad, _, _ = dv.make_batch(vocab, [(s, [dv.TGT_EOS]) for s in ids])
    outs = model.translate(src, dv.TGT_BOS, dv.TGT_EOS, src_pad=pad)
    return sum(vocab.detokenize_target(o[:-1] if o and o[-1] == dv.TGT_EOS else o) == a
               for o, (_, a) in zip(outs, examples)) / len(examples)


def svg(curves):
    W, H, L, R, T, B = 640, 360, 56, 200, 20, 44
    pw, ph = W - L - R, H - T - B
    x = lambda n: L + (n - 1) / (MAX_LEN - 1) * pw  # noqa: E731
    y = lambda v: T + (1 - v) * ph  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
             'font-family="sans-serif" font-size="12">', f'<rect width="{W}" height="{H}" fill="white"/>']
    for v in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<line x1="{L}" x2="{L + pw}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ddd"/>'
                     f'<text x="{L - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{int(v * 100)}%</text>')
    for n in (1, 8, 16, 24, 32, 40, 48, 56, 64):
        parts.append(f'<line x1="{x(n):.1f}" x2="{x(n):.1f}" y1="{T + ph}" y2="{T + ph + 4}" stroke="#333"/>'
                     f'<text x="{x(n):.1f}" y="{T + ph + 17}" text-anchor="middle">{n}</text>')
    parts.append(f'<line x1="{x(32):.1f}" x2="{x(32):.1f}" y1="{T}" y2="{T + ph}" stroke="#999" stroke-dasharray="4 3"/>'
                 f'<text x="{x(32) + 4:.1f}" y="{T + 12}" fill="#666">longest training sentence</text>')
    parts.append(f'<text x="{L + pw / 2}" y="{H - 8}" text-anchor="middle">source length (words; the date first, '
                 'filler after)</text>')
    parts.append(f'<text transform="translate(14 {T + ph / 2}) rotate(-90)" text-anchor="middle">exact match</text>')
    for i, c in enumerate(curves):
        pts = " ".join(f"{x(n):.1f},{y(v):.1f}" for n, v in zip(c["lengths"], c["exact_match"]) if v is not None)
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{COLORS[c["id"]]}" stroke-width="2"/>')
        parts.append(f'<line x1="{L + pw + 12}" x2="{L + pw + 30}" y1="{T + 10 + 18 * i}" y2="{T + 10 + 18 * i}" '
                     f'stroke="{COLORS[c["id"]]}" stroke-width="2"/><text x="{L + pw + 34}" y="{T + 14 + 18 * i}" '
                     f'font-size="10">{c["label"]}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-length", type=int, default=200)
    ap.add_argument("--seed", type=int, default=23)
    args = ap.parse_args()
    vocab = dv.Vocab(MAX_LEN)
    tokenizer = SourceWordTokenizer(vocab.to_json(), MAX_LEN)
    sets = {n: examples_at(n, args.per_length, args.seed) for n in range(1, MAX_LEN + 1)}
    curves = []
    for mid, path, label in MODELS:
        if not os.path.exists(os.path.join(ROOT, path)):
            print(f"skipping {mid}: {path} not found")
            continue
        header, model, max_src = load(path)
        scores = [round(exact_match(model, vocab, tokenizer, sets[n]), 4) if sets[n] and n <= max_src else None
                  for n in range(1, MAX_LEN + 1)]
        tr = header["training"]
        curves.append({"id": mid, "label": label, "file": path, "kind": header["kind"],
                       "attention": header["config"].get("attention", "multi-head"),
                       "steps": tr["train"]["steps"], "batch": tr["train"]["batch"], "params": tr["params"],
                       "max_src_len": max_src, "lengths": list(range(1, MAX_LEN + 1)), "exact_match": scores})
        print(label, " ".join(f"{n}:{'-' if scores[n - 1] is None else f'{100 * scores[n - 1]:.1f}'}"
                              for n in TABLE_LENGTHS), flush=True)
    data = {"task": "dates (tools/data/dates_data.py), held-out dates, the date first and filler words after it",
            "script": "tools/measure/measure_bottleneck.py", "per_length": args.per_length, "seed": args.seed,
            "examples": [len(sets[n]) for n in range(1, MAX_LEN + 1)], "curves": curves}
    os.makedirs(os.path.dirname(JSON_PATH), exist_ok=True)
    with open(JSON_PATH, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    with open(SVG_PATH, "w") as f:
        f.write(svg(curves))
    rows = ["| model | steps x batch | params | " + " | ".join(str(n) for n in TABLE_LENGTHS) + " |",
            "|---|---|---|" + "---|" * len(TABLE_LENGTHS)]
    for c in curves:
        rows.append(f"| {c['label']} | {c['steps']} x {c['batch']} | {c['params']} | " + " | ".join(
            "n/a" if c["exact_match"][n - 1] is None else f"{100 * c['exact_match'][n - 1]:.1f}%"
            for n in TABLE_LENGTHS) + " |")
    print("\n".join(rows))  # tools/records/bottleneck.md quotes this table
    print(f"wrote {JSON_PATH} and {SVG_PATH}")


if __name__ == "__main__":
    main()
