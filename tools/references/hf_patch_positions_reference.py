#!/usr/bin/python3
"""Per-position activation patching references, in float64 from a fixture's weights: writes
tests/fixtures/hf/<case>/patch_positions.json. Run: /usr/bin/python3 tools/references/hf_patch_positions_reference.py [--check]

Patching head (l, h) at positions P runs the corrupted ids with that head's context taken from the clean run at the
positions in P only; at the others it is the context the corrupted run computes there (TransformerLens's per-position
patching of hook_z). Applied through hf_patching_reference.run's context hook, as whole-run patching is. The prompts
are 40 tokens long, so that patched positions fall on both sides of the pass's blocks of 32 query rows.
"""

import json
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import safetensors_file  # noqa: E402
from references import fixture_cli, hf_patching_reference  # noqa: E402

HF = fixture_cli.HF
T = 40
FIRST_ROW = 28  # the rows kept: both sides of the block edge at 32, and the last


def prompts(vocab, seed):
    """A clean prompt and a corrupted one that differs at three positions (2, 20 and 35), the last token shared."""
    rng = random.Random(seed)
    clean = [rng.randrange(vocab) for _ in range(T)]
    corrupted = list(clean)
    for p in (2, 20, 35):
        corrupted[p] = (clean[p] + 1 + rng.randrange(vocab - 1)) % vocab
    return clean, corrupted


# (layer, head, positions): one position in the first block (2: where the prompts first differ), at its edges, in the second block, and two at once.
RUNS = [(0, 1, [2]), (0, 2, [20]), (1, 3, [31]), (1, 0, [32]), (0, 3, [35]), (1, 2, [39]), (0, 1, [5, 35])]
CASES = [{"case": "llama-gqa", "seed": 1}, {"case": "mistral-window", "seed": 2}]


def position_edit(layer, head, positions, clean):
    def edit(l, ctx):
        if l == layer:
            for p in positions:
                ctx[head, p] = clean[l][head, p]
        return ctx
    return edit


def make(case):
    d = os.path.join(HF, case["case"])
    config = json.load(open(os.path.join(d, "config.json")))
    sd = safetensors_file.load_file(os.path.join(d, "model.safetensors"))[1]
    sd = {k: torch.tensor(list(t.values), dtype=torch.float64).reshape(t.shape) for k, t in sd.items()}
    clean_ids, corrupted_ids = prompts(config["vocab_size"], case["seed"])
    clean_ctx = []
    hf_patching_reference.run(config, sd, clean_ids, keep=clean_ctx)
    numbers = hf_patching_reference.numbers
    def logits(edit=None):  # the rows from FIRST_ROW on, flattened
        return numbers(hf_patching_reference.run(config, sd, corrupted_ids, edit, every_row=True)[FIRST_ROW:].reshape(-1))

    out = {"description": "Per-position activation patching (tools/references/hf_patch_positions_reference.py): logits "
                          "of the positions from first_row on of the corrupted ids, with one head's context taken from "
                          "the clean run at the given positions only.",
           "clean_ids": clean_ids, "corrupted_ids": corrupted_ids, "first_row": FIRST_ROW, "corrupted_logits": logits()}
    out["patched"] = [{"layer": l, "head": h, "positions": ps, "logits": logits(position_edit(l, h, ps, clean_ctx))}
                      for l, h, ps in RUNS]
    return out


def main():
    fixture_cli.write_case_files(CASES, make, "patch_positions.json")


if __name__ == "__main__":
    main()
