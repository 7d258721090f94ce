"""The NumPy reference of both model kinds, written from tools/MODEL_FORMAT.md (no torch), the one Python copy of the
maths: check_model_numpy.py runs it in float64 against the golden fixtures, eval_dates.py decodes with it,
measure_heads.py runs it batched in float32 with heads ablated.

P is a model file's tensors by state-dict name, in the dtype to compute in; cfg is attnscope_tools.config.read(...).
Every function takes one sequence ([T] ids) or a batch ([B, T]); attention weights come back per layer as
[..., H, Tq, Tk]. An ablated head's context is zeroed before its layer's output projection, as the C++ core does.
"""

import math

import numpy as np


def erf_exact(x):
    """math.erf on every element: exact, and slow on large arrays."""
    return np.vectorize(math.erf)(x)


def erf_fast(x):
    """Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), vectorised: exact enough for float32 activations, and what makes
    measure_heads.py's batches affordable."""
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-a * a)
    return s * y


def gelu(x, erf=erf_exact):
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def attention(P, prefix, q_in, kv_in, heads, causal, ablate=()):
    """nn.MultiheadAttention's maths up to the output projection -> (context [..., Tq, d] with the heads in `ablate`
    zeroed, weights [..., H, Tq, Tk]). Self-attention (kv_in is q_in) projects q, k and v in one product."""
    W, B = P[prefix + ".in_proj_weight"], P[prefix + ".in_proj_bias"]
    d = W.shape[1]
    dh = d // heads
    if kv_in is q_in:
        qkv = q_in @ W.T + B
        q, k, v = (qkv[..., i * d:(i + 1) * d] for i in range(3))
    else:
        q = q_in @ W[:d].T + B[:d]
        kv = kv_in @ W[d:].T + B[d:]
        k, v = kv[..., :d], kv[..., d:]
    q, k, v = (t.reshape(*t.shape[:-1], heads, dh).swapaxes(-2, -3) for t in (q, k, v))  # [..., H, T, dh]
    s = q @ k.swapaxes(-1, -2) / q.dtype.type(math.sqrt(dh))
    Tq, Tk = s.shape[-2:]
    if causal:
        s = np.where(np.triu(np.ones((Tq, Tk), dtype=bool), 1), -np.inf, s)
    s = np.exp(s - s.max(-1, keepdims=True))
    w = s / s.sum(-1, keepdims=True)
    ctx = w @ v  # [..., H, Tq, dh]
    for h in ablate:
        ctx[..., h, :, :] = 0.0  # the head's context never reaches the output projection
    return ctx.swapaxes(-2, -3).reshape(*ctx.shape[:-3], Tq, d), w


def _attend(P, prefix, x, q_in, kv_in, heads, causal, ablate=()):
    """x + the attention's output projection; the weights."""
    ctx, w = attention(P, prefix, q_in, kv_in, heads, causal, ablate)
    return x + ctx @ P[prefix + ".out_proj.weight"].T + P[prefix + ".out_proj.bias"], w


def _mlp(P, prefix, x, h, erf):
    """x + mlp(h)."""
    u = gelu(h @ P[prefix + ".fc1.weight"].T + P[prefix + ".fc1.bias"], erf)
    return x + u @ P[prefix + ".fc2.weight"].T + P[prefix + ".fc2.bias"]


def _ln(P, prefix, x, eps):
    return layer_norm(x, P[prefix + ".weight"], P[prefix + ".bias"], eps)


def _embed(P, prefix, ids):
    ids = np.asarray(ids)
    return P[prefix + "tok_emb.weight"][ids] + P[prefix + "pos_emb.weight"][:ids.shape[-1]]


def lm_forward(P, cfg, ids, ablate=(), erf=erf_exact):
    """Decoder LM -> (logits [..., T, V], [weights of each layer]). ablate: (layer, head) pairs."""
    x = _embed(P, "", ids)
    ws = []
    for i in range(cfg.n_layers):
        p = f"blocks.{i}"
        h = _ln(P, p + ".ln1", x, cfg.ln_eps)
        x, w = _attend(P, p + ".attn", x, h, h, cfg.n_heads, True, {hd for (l, hd) in ablate if l == i})
        x = _mlp(P, p + ".mlp", x, _ln(P, p + ".ln2", x, cfg.ln_eps), erf)
        ws.append(w)
    head = P["tok_emb.weight"] if cfg.tie_head else P["head.weight"]  # tie_head: the embedding is the head's weight
    logits = _ln(P, "ln_f", x, cfg.ln_eps) @ head.T + P["head.bias"]
    return logits, ws


def s2s_encode(P, cfg, src, erf=erf_exact):
    """Encoder -> (memory [..., S, d], [weights of each layer])."""
    x = _embed(P, "src_", src)
    ws = []
    for i in range(cfg.n_enc_layers):
        p = f"enc_blocks.{i}"
        h = _ln(P, p + ".ln1", x, cfg.ln_eps)
        x, w = _attend(P, p + ".attn", x, h, h, cfg.n_heads, False)
        x = _mlp(P, p + ".mlp", x, _ln(P, p + ".ln2", x, cfg.ln_eps), erf)
        ws.append(w)
    return _ln(P, "enc_ln_f", x, cfg.ln_eps), ws


def s2s_decode(P, cfg, tgt_in, mem, erf=erf_exact):
    """Decoder -> (logits [..., T, Vt], [self-attention weights], [cross-attention weights])."""
    y = _embed(P, "tgt_", tgt_in)
    wss, wcs = [], []
    for i in range(cfg.n_dec_layers):
        p = f"dec_blocks.{i}"
        h = _ln(P, p + ".ln1", y, cfg.ln_eps)
        y, w = _attend(P, p + ".self_attn", y, h, h, cfg.n_heads, True)
        wss.append(w)
        y, w = _attend(P, p + ".cross_attn", y, _ln(P, p + ".ln2", y, cfg.ln_eps), mem, cfg.n_heads, False)
        wcs.append(w)
        y = _mlp(P, p + ".mlp", y, _ln(P, p + ".ln3", y, cfg.ln_eps), erf)
    logits = _ln(P, "dec_ln_f", y, cfg.ln_eps) @ P["head.weight"].T + P["head.bias"]
    return logits, wss, wcs


def translate(P, cfg, vocab, src):
    """Greedy decoding of one source: the output ids after <bos>, up to and including <eos> (or max_tgt_len - 1)."""
    mem, _ = s2s_encode(P, cfg, src)
    ys = [vocab["tgt_bos_id"]]
    while len(ys) < cfg.max_tgt_len:
        logits, _, _ = s2s_decode(P, cfg, ys, mem)
        nxt = int(np.argmax(logits[-1]))
        ys.append(nxt)
        if nxt == vocab["tgt_eos_id"]:
            break
    return ys[1:]
