#!/usr/bin/python3
"""Independent float64 NumPy re-implementation of both demo models, written only from
tools/MODEL_FORMAT.md (no torch), checked against the golden fixtures in
tests/fixtures/models/. It is the reference a C++/JS port can be read against.

    /usr/bin/python3 tools/check_model_numpy.py

Checks, per fixture: the model file's SHA-256, the tokenisation of the stored text
(text_json / src_text_json), greedy decoding (seq2seq), every per-head attention weight
(max abs error <= 1e-6) and the stored logits rows (<= 1e-5 relative to the largest |logit|); a case with
an `ablate` tensor is run with those heads' context zeroed before the output projection.
Exits non-zero on any mismatch.
"""

import hashlib
import json
import math
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_model import read_model  # noqa: E402  (numpy only)

ROOT = os.path.dirname(HERE)
FIX_DIR = os.path.join(ROOT, "tests", "fixtures", "models")


# ----------------------------------------------------------------------------- maths

def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def linear(x, w, b):
    return x @ w.T + b


def mha(P, prefix, q_in, kv_in, heads, causal, ablate=()):
    """nn.MultiheadAttention maths for one unbatched sequence -> (out [Tq,d], weights [H,Tq,Tk]).
    Heads in `ablate` are switched off: their context is zero before the output projection."""
    W = P[prefix + ".in_proj_weight"]
    B = P[prefix + ".in_proj_bias"]
    d = W.shape[1]
    dh = d // heads
    q = linear(q_in, W[:d], B[:d])
    k = linear(kv_in, W[d:2 * d], B[d:2 * d])
    v = linear(kv_in, W[2 * d:], B[2 * d:])
    Tq, Tk = q.shape[0], k.shape[0]
    weights = np.zeros((heads, Tq, Tk))
    ctx = np.zeros((Tq, d))
    for h in range(heads):
        sl = slice(h * dh, (h + 1) * dh)
        s = q[:, sl] @ k[:, sl].T / math.sqrt(dh)
        if causal:
            s = np.where(np.triu(np.ones((Tq, Tk), dtype=bool), 1), -np.inf, s)
        s = s - s.max(-1, keepdims=True)
        e = np.exp(s)
        a = e / e.sum(-1, keepdims=True)
        weights[h] = a
        ctx[:, sl] = 0.0 if h in ablate else a @ v[:, sl]
    return linear(ctx, P[prefix + ".out_proj.weight"], P[prefix + ".out_proj.bias"]), weights


def mlp(P, prefix, x):
    return linear(gelu(linear(x, P[prefix + ".fc1.weight"], P[prefix + ".fc1.bias"])),
                  P[prefix + ".fc2.weight"], P[prefix + ".fc2.bias"])


def lm_forward(P, cfg, ids, ablate=()):
    eps, H = cfg["ln_eps"], cfg["n_heads"]
    x = P["tok_emb.weight"][ids] + P["pos_emb.weight"][: len(ids)]
    ws = []
    for i in range(cfg["n_layers"]):
        p = f"blocks.{i}"
        h = layer_norm(x, P[p + ".ln1.weight"], P[p + ".ln1.bias"], eps)
        a, w = mha(P, p + ".attn", h, h, H, causal=True, ablate={hd for (l, hd) in ablate if l == i})
        x = x + a
        x = x + mlp(P, p + ".mlp", layer_norm(x, P[p + ".ln2.weight"], P[p + ".ln2.bias"], eps))
        ws.append(w)
    logits = linear(layer_norm(x, P["ln_f.weight"], P["ln_f.bias"], eps), P["head.weight"], P["head.bias"])
    return logits, ws


def s2s_encode(P, cfg, src):
    eps, H = cfg["ln_eps"], cfg["n_heads"]
    x = P["src_tok_emb.weight"][src] + P["src_pos_emb.weight"][: len(src)]
    ws = []
    for i in range(cfg["n_enc_layers"]):
        p = f"enc_blocks.{i}"
        h = layer_norm(x, P[p + ".ln1.weight"], P[p + ".ln1.bias"], eps)
        a, w = mha(P, p + ".attn", h, h, H, causal=False)
        x = x + a
        x = x + mlp(P, p + ".mlp", layer_norm(x, P[p + ".ln2.weight"], P[p + ".ln2.bias"], eps))
        ws.append(w)
    return layer_norm(x, P["enc_ln_f.weight"], P["enc_ln_f.bias"], eps), ws


def s2s_decode(P, cfg, tgt_in, mem):
    eps, H = cfg["ln_eps"], cfg["n_heads"]
    y = P["tgt_tok_emb.weight"][tgt_in] + P["tgt_pos_emb.weight"][: len(tgt_in)]
    wss, wcs = [], []
    for i in range(cfg["n_dec_layers"]):
        p = f"dec_blocks.{i}"
        h = layer_norm(y, P[p + ".ln1.weight"], P[p + ".ln1.bias"], eps)
        a, w = mha(P, p + ".self_attn", h, h, H, causal=True)
        y = y + a
        wss.append(w)
        h = layer_norm(y, P[p + ".ln2.weight"], P[p + ".ln2.bias"], eps)
        a, w = mha(P, p + ".cross_attn", h, mem, H, causal=False)
        y = y + a
        wcs.append(w)
        y = y + mlp(P, p + ".mlp", layer_norm(y, P[p + ".ln3.weight"], P[p + ".ln3.bias"], eps))
    logits = linear(layer_norm(y, P["dec_ln_f.weight"], P["dec_ln_f.bias"], eps), P["head.weight"], P["head.bias"])
    return logits, wss, wcs


# ----------------------------------------------------------------------------- tokenisers

# Deliberately this script's own copies, written from MODEL_FORMAT.md like the rest of it (not
# attnscope_tools.tokenizers): tests/python/test_tokenizers.py checks both against the shared vectors.

def lm_tokenize(vocab, text):
    nspec = len(vocab["specials"])
    index = {t: i for i, t in enumerate(vocab["tokens"]) if i >= nspec}
    return [vocab["bos_id"]] + [index.get(c, vocab["unk_id"]) for c in text]


def s2s_tokenize(vocab, text, max_len):
    t = "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)
    words = [w for w in re.split(r"[^a-z0-9]+", t) if w]
    specials = {vocab["src_pad_id"], vocab["src_unk_id"]}
    index = {w: i for i, w in enumerate(vocab["src_tokens"]) if i not in specials}
    return [index.get(w, vocab["src_unk_id"]) for w in words][:max_len]


def translate(P, cfg, vocab, src):
    mem, _ = s2s_encode(P, cfg, src)
    ys = [vocab["tgt_bos_id"]]
    while len(ys) < cfg["max_tgt_len"]:
        logits, _, _ = s2s_decode(P, cfg, ys, mem)
        nxt = int(np.argmax(logits[-1]))
        ys.append(nxt)
        if nxt == vocab["tgt_eos_id"]:
            break
    return ys[1:]


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
        cfg, vocab = h["config"], h["vocab"]
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
            src = s2s_tokenize(vocab, json.loads(c["str"]["src_text_json"]), cfg["max_src_len"])
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
