#!/usr/bin/python3
"""The NumPy reference of both demo models (tools/attnscope_tools/reference.py, written only from
tools/MODEL_FORMAT.md, no torch), run in float64 against the golden fixtures in tests/fixtures/models/.

    /usr/bin/python3 tools/references/check_model_numpy.py

Checks, per fixture: the model file's SHA-256, the tokenisation of the stored text
(text_json / src_text_json), greedy decoding (seq2seq), every per-head attention weight
(max abs error <= 1e-6) and the stored logits rows (<= 1e-5 relative to the largest |logit|); a case with
an `ablate` tensor is run with those heads' context zeroed before the output projection.
Exits non-zero on any mismatch.
"""

import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import config  # noqa: E402
from attnscope_tools.attnscope_model import read_model  # noqa: E402  (numpy only)
from attnscope_tools.paths import ROOT  # noqa: E402
from attnscope_tools.reference import lm_forward, s2s_decode, s2s_encode, translate  # noqa: E402,F401
from attnscope_tools.tokenizers import codepoint_ids as lm_tokenize, source_word_ids as s2s_tokenize  # noqa: E402

FIX_DIR = os.path.join(ROOT, "tests", "fixtures", "models")


# ----------------------------------------------------------------------------- fixtures

def parse_fixture(path):
    """A fixture file (tests/fixtures/fixture_json.py) -> {"name", "str", "int", "tensor": {name: float64 array}}."""
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    tensors = {k: np.array([float(v) for v in t["data"]], dtype=np.float64).reshape(t["shape"])
               for k, t in j["tensor"].items()}
    return {"name": j["case"], "str": j["str"], "int": j["int"], "tensor": tensors}


def main():
    models, failures, n = {}, [], 0

    def fail(msg):
        failures.append(msg)
        print("FAIL", msg)

    for fn in sorted(os.listdir(FIX_DIR)):
        if not fn.endswith(".json"):
            continue
        c = parse_fixture(os.path.join(FIX_DIR, fn))
        mpath = os.path.join(ROOT, "models", c["str"]["model"])
        if mpath not in models:
            h, ts = read_model(mpath)
            with open(mpath, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            models[mpath] = (h, {k: v.astype(np.float64) for k, v in ts.items()}, digest)
        h, P, digest = models[mpath]
        if digest != c["str"]["model_sha256"]:
            fail(f"{fn}: model sha256 differs from the fixture's (regenerate the fixtures)")
            continue
        vocab = h["vocab"]
        cfg = config.read(h["kind"], h["config"])
        T = c["tensor"]["tokens"]
        maxerr = 0.0
        if c["str"]["kind"] == "model_lm":
            ids = lm_tokenize(vocab, json.loads(c["str"]["text_json"]))
            if ids != [int(x) for x in T]:
                fail(f"{fn}: tokenisation {ids} != fixture tokens")
            ablate = [tuple(int(v) for v in pair) for pair in c["tensor"].get("ablate", np.zeros((0, 2)))]
            logits, ws = lm_forward(P, cfg, ids, ablate)
            pairs = [(f"attn_weights_{l}", ws[l]) for l in range(len(ws))]
        else:
            src = s2s_tokenize(vocab, json.loads(c["str"]["src_text_json"]), cfg.max_src_len)
            if src != [int(x) for x in c["tensor"]["src_tokens"]]:
                fail(f"{fn}: source tokenisation {src} != fixture src_tokens")
            out = translate(P, cfg, vocab, src)
            if out != [int(x) for x in c["tensor"]["expected_decoded"]]:
                fail(f"{fn}: translate {out} != expected_decoded")
            ids = [int(x) for x in T]
            mem, we = s2s_encode(P, cfg, src)
            logits, wss, wcs = s2s_decode(P, cfg, ids, mem)
            pairs = [(f"enc_self_{l}", we[l]) for l in range(len(we))]
            pairs += [(f"dec_self_{l}", wss[l]) for l in range(len(wss))]
            pairs += [(f"dec_cross_{l}", wcs[l]) for l in range(len(wcs))]
        for name, w in pairs:
            ref = c["tensor"][name]
            err = float(np.abs(ref - w).max())
            maxerr = max(maxerr, err)
            if err > 1e-6:
                fail(f"{fn}: {name} max abs err {err:.3g}")
        r0 = c["int"]["logits_first_row"]
        ref = c["tensor"]["logits"]
        lerr = float(np.abs(ref - logits[r0:]).max()) / max(1.0, float(np.abs(ref).max()))
        if lerr > 1e-5:
            fail(f"{fn}: logits rel err {lerr:.3g}")
        n += 1
        print(f"ok {fn}: weights max abs err {maxerr:.2e}, logits rel err {lerr:.2e}")
    print(f"{n - len(set(f.split(':')[0] for f in failures))} passed, {len(set(f.split(':')[0] for f in failures))} failed")
    sys.exit(1 if failures or n == 0 else 0)


if __name__ == "__main__":
    main()
