#!/usr/bin/python3
"""The demo's "Repetition" examples, copied character by character with every head and with the induction head off,
from the NumPy reference (tools/attnscope_tools/reference.py, float64, no torch): tests/fixtures/repetition.json.

    /usr/bin/python3 tools/references/make_repetition_fixture.py

The texts are the page's default sentences typed twice (web/demo/src/state.js: EXAMPLES.repeat, shown on the
English page, and EXAMPLES.repeatZh, on the Chinese one). A character of the second copy is copied right when the
model's most likely next character at the position before it is that character. Every character of the second copy
counts, its first too (tools/README.md's "45 of the 60"), although the character before it never preceded it earlier.
tests/browser/copying.test.js checks the demo's marks, position by position, and its counts against this file.
"""

import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import config  # noqa: E402
from attnscope_tools.attnscope_model import read_model  # noqa: E402
from attnscope_tools.paths import ROOT  # noqa: E402
from attnscope_tools.reference import lm_forward  # noqa: E402
from attnscope_tools.tokenizers import codepoint_ids  # noqa: E402

MODEL = "char-lm.safetensors"
# Each page language's example: its default sentence typed twice (state.js EXAMPLES.repeat, EXAMPLES.repeatZh).
SENTENCES = {"en": ("The animal didn\u2019t cross the street because it was too tired.", " "),
             "zh": ("\u5c0f\u72d7\u6ca1\u6709\u5403\u996d\uff0c\u56e0\u4e3a\u5b83\u4e00\u70b9\u4e5f\u4e0d\u60f3\u5403\u3002", "")}
OUT = os.path.join(ROOT, "tests", "fixtures", "repetition.json")


def main():
    path = os.path.join(ROOT, "models", MODEL)
    header, tensors = read_model(path)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    P = {k: v.astype(np.float64) for k, v in tensors.items()}
    cfg = config.read(header["kind"], header["config"])
    induction = [(h["layer"], h["head"]) for h in header["named_heads"] if h["metric"] == "induction_random"]
    assert len(induction) == 1, induction
    examples = {}
    for lang, (sentence, between) in SENTENCES.items():
        text = f"{sentence}{between}{sentence}"
        ids = codepoint_ids(header["vocab"], text)  # <bos> first
        assert len(ids) == len(text) + 1, f"{lang}: a character outside the vocabulary"
        start = len(ids) - len(sentence)  # the second copy's first character
        targets = list(range(start, len(ids)))

        def marks(ablate):
            logits, _ = lm_forward(P, cfg, ids, ablate)
            pred = logits.argmax(-1)
            return [bool(pred[p - 1] == ids[p]) for p in targets]

        every, without = marks(()), marks(induction)
        # The control: each other head of the induction head's layer switched off instead, alone.
        layer, head = induction[0]
        others = [sum(marks([(layer, h)])) for h in range(cfg.n_heads) if h != head]
        examples[lang] = {"text": text, "second_copy_start": start, "targets": targets, "all_heads": every, "without": without,
                          "counts": {"all_heads": sum(every), "without": sum(without), "of": len(targets),
                                     "other_heads_of_its_layer_off": others}}
        print(f"{lang}: {sum(every)} of {len(targets)} with every head, {sum(without)} with {induction} off, "
              f"{others} with another head of layer {layer} off")
    out = {"model": MODEL, "model_sha256": digest, "off": [list(x) for x in induction], "examples": examples}
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
