#!/usr/bin/python3
"""Exact match of a dates model on the held-out dates of tools/data/dates_heldout.py, by kind (valid, no year, invalid).

    /usr/bin/python3 tools/data/dates_heldout.py                        # build/dates-heldout.jsonl
    /usr/bin/python3 tools/measure/eval_dates.py [models/dates-seq2seq.safetensors] [--data build/dates-heldout.jsonl]
                                         [--limit N]

Runs the model with the float64 NumPy reference (tools/attnscope_tools/reference.py) (greedy decoding, no torch), with
the source cut to the model's max_src_len as the package does. Issue #14's goal is >= 99.5 % exact match on
3,000 held-out dates, with 'invalid' and '--MM-DD' answered, never an impossible date.
"""

import argparse
import collections
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
import numpy as np  # noqa: E402

from attnscope_tools import config, reference  # noqa: E402
from attnscope_tools.attnscope_model import read_model  # noqa: E402
from attnscope_tools.paths import ROOT  # noqa: E402
from attnscope_tools.tokenizers import source_word_ids  # noqa: E402


def impossible(answer):
    """An answer shaped like YYYY-MM-DD that is no calendar date (what the first model gives for 31 February)."""
    if len(answer) != 10 or answer[4] != "-" or answer[7] != "-":
        return False
    try:
        datetime.date.fromisoformat(answer)
        return False
    except ValueError:
        return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", nargs="?", default=os.path.join(ROOT, "models", "dates-seq2seq.safetensors"))
    ap.add_argument("--data", default=os.path.join(ROOT, "build", "dates-heldout.jsonl"))
    ap.add_argument("--limit", type=int)
    args = ap.parse_args()
    header, tensors = read_model(args.model)
    P = {k: np.asarray(v, dtype=np.float64) for k, v in tensors.items()}
    cfg, vocab = config.read("seq2seq", header["config"]), header["vocab"]
    with open(args.data, encoding="utf-8") as f:
        examples = [json.loads(line) for line in f][: args.limit]
    right, total, bad = collections.Counter(), collections.Counter(), 0
    wrong = []
    for e in examples:
        src = source_word_ids(vocab, e["text"], cfg.max_src_len)
        answer = "".join(vocab["tgt_tokens"][i] for i in reference.translate(P, cfg, vocab, src) if i != vocab["tgt_eos_id"]) if src else ""
        total[e["kind"]] += 1
        bad += impossible(answer)
        if answer == e["expected"]:
            right[e["kind"]] += 1
        elif len(wrong) < 8:
            wrong.append((e["text"], e["expected"], answer))
    n = sum(total.values())
    print(f"{os.path.relpath(args.model, ROOT)} on {n} held-out dates ({os.path.relpath(args.data, ROOT)}):")
    print(f"  exact match {sum(right.values()) / n:.2%}; " + ", ".join(
        f"{k} {right[k]}/{total[k]} ({right[k] / total[k]:.1%})" for k in total) + f"; impossible dates output: {bad}")
    for text, expected, answer in wrong:
        print(f"  {text!r}: expected {expected}, got {answer!r}")


if __name__ == "__main__":
    main()
