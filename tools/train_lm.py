#!/usr/bin/python3
"""Train attnscope's character LM (Chinese poems + English fortunes) and write
models/char-lm.safetensors and tools/records/char-lm.md.

    /usr/bin/python3 tools/train_lm.py                 # train (deterministic, seed 1234)
    /usr/bin/python3 tools/train_lm.py --steps 200     # quick smoke run
    /usr/bin/python3 tools/train_lm.py --analyse-only  # re-run the head analysis on the
                                                       # existing model file and rewrite it

Tokenisation (also stored in the model file, see tools/MODEL_FORMAT.md): one token per
Unicode code point; id 0 = <unk> (any code point not in the vocabulary), id 1 = <bos>
(prepended to every input, and placed before every document when documents are packed);
ids 2.. = the most frequent code points of the training text, by descending count
(ties: ascending code point). No other normalisation.
"""

import argparse
import collections
import hashlib
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import heads, runtime, schedule  # noqa: E402
from attnscope_tools.tokenizers import CodepointTokenizer  # noqa: E402

BLAS = runtime.setup(threads=1)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import attnscope_model  # noqa: E402
import induction_data  # noqa: E402
import lm_data  # noqa: E402
import measure_heads  # noqa: E402
from attnscope_nets import LanguageModel  # noqa: E402

ROOT = os.path.dirname(HERE)
MODEL_PATH = os.path.join(ROOT, "models", "char-lm.safetensors")
RECORD_PATH = os.path.join(HERE, "records", "char-lm.md")

UNK, BOS = 0, 1
SPECIALS = ["<unk>", "<bos>"]

CFG = dict(vocab_size=1500, d_model=96, n_heads=4, n_layers=3, d_ff=384, max_len=128)
TRAIN = dict(seed=1234, steps=3600, batch=32, seq_len=128, lr=3e-3, min_lr_frac=0.1, warmup=100,
             weight_decay=0.1, grad_clip=1.0, betas=(0.9, 0.98), pos_init="sinusoidal x 0.1",
             mix={"en": 0.5, "zh_verse": 0.2, "zh_other": 0.3}, heldout_frac=0.05)

# separators used by the head analysis (Chinese + ASCII punctuation and line breaks)
ZH_SEP = set("，。？！；：、\n")
SEP = ZH_SEP | set(",.?!;:")
SENT_END = set("。？！.?!")
GROUPS = {"all": ("zh_poems", "zh_misc", "zh_prose", "en"), "zh": ("zh_poems", "zh_misc", "zh_prose"), "en": ("en",)}
GUIDED_SUFFIX = " (guided in training)"
GROUP_SUFFIX = {"all": "", "zh": " (Chinese text)", "en": " (English text)"}


# ----------------------------------------------------------------------------- vocab / data

def previous_token_loss(w):
    """-log of the weight each query i >= 1 puts on key i-1, averaged: w is one head's [B, T, T] weights.

    An auxiliary loss, used only when asked for (--prev-token-head): without it the layer-0 head that feeds the
    induction head spreads over the last three characters and stays near 0.4 on i-1
    (tools/records/char-lm-unguided-heads.md)."""
    return -torch.log(torch.diagonal(w, offset=-1, dim1=-2, dim2=-1).clamp_min(1e-6)).mean()


def build_vocab(train_docs, size, required=""):
    """The most frequent characters; `required` ones (the demo's sentences) replace the rarest if missing."""
    cnt = collections.Counter()
    for docs in train_docs.values():
        for d in docs:
            cnt.update(d)
    ranked = sorted(cnt.items(), key=lambda kv: (-kv[1], ord(kv[0])))
    chars = ranked[: size - len(SPECIALS)]
    have = {c for c, _ in chars}
    missing = [c for c in dict.fromkeys(required) if c not in have]
    if missing:
        chars = chars[: len(chars) - len(missing)] + [(c, cnt.get(c, 0)) for c in missing]
    tokens = SPECIALS + [c for c, _ in chars]
    covered = sum(n for _, n in chars) / sum(cnt.values())
    return tokens, covered


class Tokenizer:
    def __init__(self, tokens):
        self.tokens = tokens
        self.codepoints = CodepointTokenizer({"specials": SPECIALS, "tokens": tokens, "unk_id": UNK, "bos_id": BOS})

    def tokenize(self, text, bos=True):
        return self.codepoints.ids(text, bos)

    def detokenize(self, ids):
        return "".join(self.tokens[i] if i >= len(SPECIALS) else ("\u241e" if i == BOS else "\ufffd")
                       for i in ids)


def pack_random(rng, docs_ids, T):
    """One training sequence of T+1 ids: <bos> doc <bos> doc ... (random docs), cut to T+1."""
    seq = []
    while len(seq) < T + 1:
        seq.extend(docs_ids[rng.randint(len(docs_ids))])
    return seq[: T + 1]


def pack_in_order(docs_ids, T):
    """Deterministic held-out sequences: each starts at a document start; documents are
    appended while they fit, the one that does not fit is truncated and the next sequence
    starts with the following document."""
    seqs, seq = [], []
    for ids in docs_ids:
        seq.extend(ids)
        if len(seq) >= T + 1:
            seqs.append(seq[: T + 1])
            seq = []
    if len(seq) > 8:
        seqs.append(seq + [BOS] * (T + 1 - len(seq)))  # tail; padded targets are ignored below
    return seqs


# ----------------------------------------------------------------------------- evaluation

@torch.no_grad()
def eval_loss(model, seqs, batch=32):
    """Mean next-char cross-entropy over targets that are not <bos> (document boundaries are
    not predictable). Returns (loss, n_targets, n_unk_targets)."""
    tot, n, nunk = 0.0, 0, 0
    for i in range(0, len(seqs), batch):
        x = torch.tensor([s[:-1] for s in seqs[i:i + batch]])
        y = torch.tensor([s[1:] for s in seqs[i:i + batch]])
        logits = model(x)
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none")
        m = (y.reshape(-1) != BOS)
        tot += float(ce[m].sum())
        n += int(m.sum())
        nunk += int((y.reshape(-1) == UNK).sum())
    return tot / max(n, 1), n, nunk


# ----------------------------------------------------------------------------- head analysis

METRICS = {
    # name: (description, threshold on score, minimum lift over the uniform baseline, head name)
    # Single-key metrics: a head is named when it puts >= 0.3 of its weight on the key on
    # average AND >= 5x what a uniformly attending causal head would; mass metrics (several
    # keys) need a higher absolute score and >= 2.5-3x the uniform mass.
    "prev_token": ("mean weight on key i-1 (queries i>=2)", 0.3, 5.0, "previous token"),
    "current_token": ("mean weight on key i (queries i>=1)", 0.3, 5.0, "current token"),
    "local_window": ("mean total weight on keys i-3..i-1 (queries i>=3)", 0.5, 3.0,
                     "recent characters (i-3..i-1)"),
    "first_token": ("mean weight on key 0 = <bos> (queries i>=1)", 0.3, 5.0, "first token (<bos>)"),
    "separator_mass": ("mean total weight on separator keys (，。？！；：、\\n ,.?!;:) (queries i>=1)",
                       0.3, 2.5, "punctuation / line break"),
    "last_separator": ("mean weight on the most recent key j<=i that is a separator (，。？！；：、\\n ,.?!;:) or "
                       "<bos> (queries i>=1)", 0.3, 5.0, "last separator"),
    "sentence_start": ("mean weight on the most recent key j<=i that ends a sentence (。？！.?!) or is <bos> "
                       "(queries i>=1)", 0.3, 5.0, "last sentence end"),
    "line_start": ("mean weight on the most recent key j<=i that is a line break or <bos> (queries i>=1)",
                   0.3, 5.0, "last line break"),
    "duplicate_token": ("mean weight on the most recent earlier occurrence j<i of the query's own character "
                        "(queries whose character occurred before in the same document; spaces excluded)", 0.3, 5.0,
                        "earlier occurrence of the same char"),
    "induction_random": ("Olsson et al. (2022): on <bos> r r (random tokens repeated twice), mean weight from each "
                         "second-copy token to the token after its first occurrence", 0.4, 5.0,
                         "induction (copies what followed the earlier occurrence)"),
    "induction": ("mean weight on the key right after the most recent earlier occurrence of the query's "
                  "character (j+1 < i; spaces excluded)", 0.3, 5.0, "induction (char after an earlier copy)"),
    "prev_line_same": ("Chinese parallel lines: mean weight on the key at the query's offset in the previous "
                       "line (lines split at ，。？！；：、\\n; both lines of equal length)", 0.3, 5.0,
                       "same position in previous line"),
    "prev_line_next": ("Chinese parallel lines: mean weight on the key in the previous line at the offset of the "
                       "character being predicted (the one aligned with position i+1)", 0.3, 5.0,
                       "aligned position in previous line (for the next char)"),
}


def _annotate(seq_ids, tokens):
    """Per-position targets for one sequence (list of ids, length T). Returns dict metric ->
    list of (i, j) single-key targets, plus the separator mask."""
    T = len(seq_ids)
    ch = [tokens[t] if t >= len(SPECIALS) else None for t in seq_ids]
    is_sep = [c in SEP for c in ch]
    is_zsep = [(c in ZH_SEP) or (seq_ids[p] == BOS) for p, c in enumerate(ch)]
    doc_start = []
    cur = 0
    for p, t in enumerate(seq_ids):
        if t == BOS:
            cur = p
        doc_start.append(cur)
    tg = {k: [] for k in ("prev_token", "current_token", "first_token", "last_separator", "sentence_start",
                          "line_start", "duplicate_token", "induction", "prev_line_same", "prev_line_next")}
    last_seen = {}
    for i, t in enumerate(seq_ids):
        if t == BOS:
            last_seen = {}
            continue
        if ch[i] != " " and t != UNK and t in last_seen:
            j = last_seen[t]
            tg["duplicate_token"].append((i, j))
            if j + 1 < i:
                tg["induction"].append((i, j + 1))
        last_seen[t] = i
    last_sep = last_sent = last_line = 0
    for i in range(T):
        if is_sep[i] or seq_ids[i] == BOS:
            last_sep = i
        if ch[i] in SENT_END or seq_ids[i] == BOS:
            last_sent = i
        if ch[i] == "\n" or seq_ids[i] == BOS:
            last_line = i
        if i >= 2:
            tg["prev_token"].append((i, i - 1))
        if i >= 1:
            tg["current_token"].append((i, i))
            tg["first_token"].append((i, 0))
            tg["last_separator"].append((i, last_sep))
            tg["sentence_start"].append((i, last_sent))
            tg["line_start"].append((i, last_line))
    # Chinese lines: maximal runs of non-separator positions inside a document.
    lines = []  # (start, end_exclusive)
    p = 0
    while p < T:
        if is_zsep[p]:
            p += 1
            continue
        q = p
        while q < T and not is_zsep[q]:
            q += 1
        lines.append((p, q))
        p = q
    line_of = [-1] * T
    for li, (a, b) in enumerate(lines):
        for p in range(a, b):
            line_of[p] = li

    def prev_parallel(li):
        if li <= 0:
            return None
        a, b = lines[li]
        pa, pb = lines[li - 1]
        if pa < doc_start[a] or (pb - pa) != (b - a) or (b - a) < 2:
            return None
        if b == T:  # line cut by the window: length unknown
            return None
        # all chars of both lines must be CJK-ish (not latin words)
        for x in list(range(pa, pb)) + list(range(a, b)):
            c = ch[x]
            if c is None or not ("\u3400" <= c <= "\u9fff"):
                return None
        return pa

    for i in range(T):
        li = line_of[i]
        if li >= 0:
            pa = prev_parallel(li)
            if pa is not None:
                tg["prev_line_same"].append((i, pa + (i - lines[li][0])))
        if i + 1 < T and line_of[i + 1] >= 0:
            ln = line_of[i + 1]
            pa = prev_parallel(ln)
            if pa is not None:
                tg["prev_line_next"].append((i, pa + (i + 1 - lines[ln][0])))
    return tg, is_sep


@torch.no_grad()
def analyse_heads(model, seqs_by_src, tokens):
    """-> scores[group][metric][layer][head], baselines[group][metric], counts[group][metric]
    over held-out sequences; groups: all, zh (zh_poems + zh_misc), en."""
    L = len(model.blocks)
    H = model.blocks[0].attn.num_heads
    per_src = {}
    for src, seqs in seqs_by_src.items():
        sums = {m: np.zeros((L, H)) for m in METRICS}
        counts = {m: 0 for m in METRICS}
        base = {m: 0.0 for m in METRICS}
        for s0 in range(0, len(seqs), 16):
            chunk = [s[:-1] for s in seqs[s0:s0 + 16]]
            x = torch.tensor(chunk)
            _, ws = model(x, need_weights=True)
            W = torch.stack(ws, 1).double().numpy()  # [B, L, H, T, T]
            for b, ids in enumerate(chunk):
                tg, is_sep = _annotate(ids, tokens)
                sep = np.array(is_sep, dtype=np.float64)
                T = len(ids)
                # separator mass for queries i >= 1 (causal: keys j <= i)
                mass = (W[b] * sep[None, None, None, :]).sum(-1)[:, :, 1:]  # [L,H,T-1]
                sums["separator_mass"] += mass.sum(-1)
                counts["separator_mass"] += T - 1
                csum = np.cumsum(sep)
                base["separator_mass"] += float(sum(csum[i] / (i + 1) for i in range(1, T)))
                if T > 3:
                    lw = sum(W[b][:, :, np.arange(3, T), np.arange(3, T) - k] for k in (1, 2, 3))  # [L,H,T-3]
                    sums["local_window"] += lw.sum(-1)
                    counts["local_window"] += T - 3
                    base["local_window"] += float(sum(3.0 / (i + 1) for i in range(3, T)))
                for m, pairs in tg.items():
                    if not pairs:
                        continue
                    qi = np.array([p[0] for p in pairs])
                    kj = np.array([p[1] for p in pairs])
                    sums[m] += W[b][:, :, qi, kj].sum(-1)
                    counts[m] += len(pairs)
                    base[m] += float((1.0 / (qi + 1)).sum())
        per_src[src] = (sums, counts, base)
    scores, baselines, counts_out = {}, {}, {}
    for g, srcs in GROUPS.items():
        scores[g], baselines[g], counts_out[g] = {}, {}, {}
        for m in METRICS:
            if g == "en" and m.startswith("prev_line"):
                continue
            tot = sum(per_src[s][0][m] for s in srcs if s in per_src)
            c = sum(per_src[s][1][m] for s in srcs if s in per_src)
            bs = sum(per_src[s][2][m] for s in srcs if s in per_src)
            if g == "all" and m.startswith("prev_line"):
                pass  # only Chinese sequences contribute anyway
            scores[g][m] = (tot / max(c, 1)).tolist()
            baselines[g][m] = bs / max(c, 1)
            counts_out[g][m] = int(c)
    return scores, baselines, counts_out


def name_heads(scores, baselines, module_fmt="blocks.{layer}.attn"):
    """A head is named after a metric whose score passes the metric's threshold and its minimum
    lift over the uniform baseline. Scores on all held-out text are preferred: only when no
    metric passes there are the Chinese-only / English-only scores used (the name then says
    so). Among passing metrics the largest score/threshold wins."""
    L = len(scores["all"]["prev_token"])
    H = len(scores["all"]["prev_token"][0])
    named = []
    for l in range(L):
        for h in range(H):
            best = None
            for groups in (("all",), ("zh", "en")):
                best = heads.best_metric(((g, m), scores[g][m][l][h], METRICS[m][1], METRICS[m][2], baselines[g][m])
                                         for g in groups for m in scores[g])
                if best:
                    break
            if best:
                (g, m), sc = best
                named.append({"layer": l, "head": h, "module": module_fmt.format(layer=l),
                              "name": METRICS[m][3] + GROUP_SUFFIX[g], "metric": m, "text": g,
                              "score": round(sc, 4), "threshold": METRICS[m][1],
                              "baseline": round(baselines[g][m], 4)})
    return named


def heads_table(scores, baselines, counts, named):
    nm = {(n["layer"], n["head"]): n["name"] for n in named}
    out = []
    titles = {"all": "All held-out text", "zh": "Chinese held-out text (zh_poems + zh_misc)",
              "en": "English held-out text"}
    for g in GROUPS:
        ms = list(scores[g])
        out += [f"**{titles[g]}**", ""]
        out += heads.score_table(ms, scores[g], baselines[g], {m: METRICS[m][1:3] for m in ms}, nm)
        out += ["", f"Queries per metric ({g}): " + ", ".join(f"{m} {counts[g][m]}" for m in ms) + ".", ""]
    out += heads.markdown_table(["metric", "definition", "threshold", "min lift over uniform baseline"],
                                [(m, d, thr, f"{lift}x") for m, (d, thr, lift, _) in METRICS.items()])
    out.append("")
    out.append("Named heads: one name per head, after the passing metric with the largest score/threshold on all "
               "held-out text; a head with no passing metric there is named from the Chinese-only or English-only "
               "scores (the name says which):")
    out.append("")
    out += heads.markdown_table(["layer", "head", "name", "metric", "text", "score", "threshold", "uniform baseline"],
                                [(n["layer"], n["head"], n["name"], n["metric"], n["text"], f"{n['score']:.3f}",
                                  n["threshold"], f"{n['baseline']:.3f}") for n in named])
    return "\n".join(out)


# ----------------------------------------------------------------------------- generation

@torch.no_grad()
def sample(model, tok, prompt, n, temperature=0.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = tok.tokenize(prompt)
    for _ in range(n):
        x = torch.tensor([ids[-model.max_len:]])
        logits = model(x)[0, -1]
        logits[UNK] = -1e9
        if temperature <= 0:
            nxt = int(logits.argmax())
        else:
            p = torch.softmax(logits / temperature, -1)
            nxt = int(torch.multinomial(p, 1, generator=g))
        if nxt == BOS:
            break
        ids.append(nxt)
    return tok.detokenize(ids[1:])


# ----------------------------------------------------------------------------- main

def write_model(model, tokens, named, record):
    vocab = {"tokenizer": "codepoint", "tokens": tokens, "unk_id": UNK, "bos_id": BOS,
             "specials": SPECIALS}
    config = dict(CFG)
    config.update({"vocab_size": len(tokens), "ln_eps": 1e-5, "activation": "gelu_erf",
                   "norm": "pre", "pos_emb": "learned", "causal": True, "head_dim": CFG["d_model"] // CFG["n_heads"]})
    os.makedirs(os.path.dirname(MODEL_PATH), exist_ok=True)
    return attnscope_model.write_model(MODEL_PATH, "decoder_lm", config, vocab, model.state_dict(),
                                       named_heads=named, training=record)


def write_record(record, table, samples):
    os.makedirs(os.path.dirname(RECORD_PATH), exist_ok=True)
    r = record
    lines = [
        "# char-lm training record",
        "",
        f"Written by `tools/train_lm.py` on {r['date']} ({r['blas']}, torch {r['torch']}, 1 thread).",
        "",
        "## Data",
        "",
    ]
    for k, v in r["data"]["sources"].items():
        s = r["data"]["stats"][k]
        lines.append(f"- **{k}**: {v}. {s['docs']} documents, {s['chars']} characters; held out "
                     f"{s['heldout_docs']} documents ({s['heldout_chars']} chars) by content hash.")
    lines += [
        f"- Mixture per training sequence: {r['train']['mix']}; zh_verse = the regular-verse documents of "
        f"zh_poems + zh_misc (every line, split at ，。？！；：、 and line breaks, has the same length 4-7), "
        f"zh_other = the other Chinese documents. Training pools: "
        + ", ".join(f"{k} {v['docs']} docs / {v['chars']} chars" for k, v in r['data'].get('pools', {}).items())
        + f". A sequence is <bos> doc <bos> doc ... from one pool, documents drawn uniformly, cut to "
        f"{r['train']['seq_len']} + 1 tokens.",
        f"- Vocabulary: {r['data']['vocab_size']} tokens (<unk>, <bos>, then the most frequent code points); "
        f"covers {100 * r['data']['vocab_coverage']:.2f}% of the training characters.",
        "",
        "## Model",
        "",
        f"Decoder-only, pre-LN: d={CFG['d_model']}, heads={CFG['n_heads']}, layers={CFG['n_layers']}, "
        f"dff={CFG['d_ff']}, max_len={CFG['max_len']}, vocab={r['data']['vocab_size']}; "
        f"{r['params']} parameters ({4 * r['params'] / 1e6:.2f} MB float32).",
        "",
        "## Training",
        "",
        f"Positional table initialised with {r['train'].get('pos_init', 'N(0, 0.02)')} (still learned), other "
        f"embeddings and linear layers N(0, 0.02), attention layers PyTorch's default. "
        f"AdamW (betas {r['train']['betas']}, weight decay {r['train']['weight_decay']} on matrices"
        f"{'' if r['train'].get('qk_weight_decay') is None else ', ' + str(r['train']['qk_weight_decay']) + ' on the attention input projections'}), "
        f"lr {r['train']['lr']} with {r['train']['warmup']} warm-up steps and cosine decay to "
        f"{r['train']['min_lr_frac']}x, grad clip {r['train']['grad_clip']}, batch {r['train']['batch']} x "
        f"{r['train']['seq_len']} tokens, {r['train']['steps']} steps, seed {r['train']['seed']}, repeated spans in "
        f"{r['train'].get('repeat_frac', 0)} of the sequences ({r['train'].get('repeat_text_share', 0.5)} of them "
        f"text); "
        f"{r['train_seconds']:.0f} s of training ({r['train_seconds'] / r['train']['steps']:.2f} s/step on one "
        f"core of a shared 2-core machine).",
        "",
    ]
    g = r["train"].get("prev_token_guide")
    if g:
        lines += [f"**Guided head.** Layer {g['layer']} head {g['head']} was trained towards the previous token: the loss "
                  f"adds {g['weight']} x the mean of -log(its weight on key i-1) over queries i >= 1 "
                  f"(`previous_token_loss`). Every other head formed unguided.", ""]
    if r.get("init_from"):
        f = r["init_from"]
        lines += [
            f"**Second phase.** Started from `{f['path']}` (sha256 {f['sha256'][:12]}…), a first phase of "
            f"{f['steps']} steps ({f['train_seconds']:.0f} s; lr {f['train']['lr']}, repeated spans "
            f"{f['train'].get('repeat_frac', 0)} of the sequences, {f['train'].get('repeat_text_share', 0.5)} of "
            f"them text; final train loss {f['final_train_loss']:.4f}; held-out "
            + ", ".join(f"{k} {v['loss']:.4f}" for k, v in f["heldout"].items())
            + f"). Both phases together: {f['train_seconds'] + r['train_seconds']:.0f} s.",
            "",
        ]
    lines += [
        f"- Final train loss (mean of the last 50 steps): {r['final_train_loss']:.4f}",
    ]
    for k, v in r["heldout"].items():
        lines.append(f"- Held-out {k}: loss {v['loss']:.4f} nats/char, perplexity {v['ppl']:.2f} "
                     f"({v['targets']} targets, {v['unk_targets']} of them <unk>)")
    # Every held-out source that was evaluated during training, in the order first seen (zh_prose only when used).
    sources = list(dict.fromkeys(k for p in r["progress"] for k in p.get("heldout", {})))
    lines += ["", "Progress (held-out: the first 24 held-out sequences of each source; all held-out losses "
              "in nats/char):", "",
              "| step | train loss (avg of 50 steps) | " + " | ".join(f"held-out {k}" for k in sources) + " | lr |",
              "|---|---|" + "---|" * len(sources) + "---|"]
    for p in r["progress"]:
        hq = p.get("heldout", {})
        lines.append(f"| {p['step']} | {p['train_loss']:.4f} | " + " | ".join(
            f"{hq[k]:.3f}" if k in hq else "" for k in sources) + f" | {p['lr']:.2e} |")
    lines += ["", "## Head analysis (held-out text)", "",
              "Each score is an average attention weight (float64, per head, weights from "
              "`need_weights=True, average_attn_weights=False`). Bold = passes the threshold and the "
              "minimum lift over the score a uniform causal head would get. Named heads are stored in "
              "the model file's `named_heads`.", "", table, "", "## Samples (greedy, then T=0.8)", ""]
    for p, s in samples:
        lines.append(f"- `{json.dumps(p, ensure_ascii=False)}` → `{json.dumps(s, ensure_ascii=False)}`")
    lines.append("")
    with open(RECORD_PATH, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=TRAIN["steps"])
    ap.add_argument("--analyse-only", action="store_true")
    ap.add_argument("--out-model", help="write the model here instead of models/ (experiments)")
    ap.add_argument("--out-record", help="write the record here instead of tools/records/")
    # Second round (issue #14): more layers, a larger vocabulary with the demo's characters, Chinese prose
    # from Debian's manuals (tools/zh_prose_data.py), and repeated spans for induction heads.
    ap.add_argument("--layers", type=int, default=CFG["n_layers"])
    ap.add_argument("--vocab", type=int, default=CFG["vocab_size"])
    ap.add_argument("--zh-prose", metavar="DIR", help="build/zh/prose: <package>.train.txt / .heldout.txt")
    ap.add_argument("--mix", type=json.loads, help='pool weights as JSON, e.g. {"en": 0.4, "zh_prose": 0.3, ...}')
    ap.add_argument("--repeat-frac", type=float, default=0.0,
                    help="fraction of training sequences that are a span repeated (tools/induction_data.py)")
    ap.add_argument("--repeat-text-share", type=float, default=0.5,
                    help="of the repeated spans, the share that is training text rather than random tokens")
    ap.add_argument("--init-from", metavar="MODEL",
                    help="continue training from this model file (same vocabulary): a second phase, e.g. more "
                         "repeated text so that the induction head copies real text, not only random tokens")
    ap.add_argument("--lr", type=float, default=TRAIN["lr"])
    ap.add_argument("--seed", type=int, default=TRAIN["seed"])
    ap.add_argument("--require-demo-chars", action="store_true",
                    help="the vocabulary keeps every character of the demo's sentences (tools/zh_prose_data.py)")
    ap.add_argument("--qk-weight-decay", type=float,
                    help="weight decay of the attention input projections (default: the weight decay of the "
                         "other matrices, 0.1); the values' third of in_proj shares it")
    ap.add_argument("--heads", type=int, default=CFG["n_heads"], help="attention heads per layer (default 4)")
    ap.add_argument("--prev-token-head", metavar="LAYER.HEAD",
                    help="guide this head towards the previous token with an auxiliary loss (see previous_token_loss)")
    ap.add_argument("--prev-token-weight", type=float, default=0.1, help="weight of that loss (default 0.1)")
    args = ap.parse_args()
    if args.prev_token_head:
        layer, head = (int(x) for x in args.prev_token_head.split("."))
        TRAIN["prev_token_guide"] = {"layer": layer, "head": head, "weight": args.prev_token_weight}
    CFG["n_layers"], CFG["vocab_size"], CFG["n_heads"] = args.layers, args.vocab, args.heads
    if args.qk_weight_decay is not None:
        TRAIN["qk_weight_decay"] = args.qk_weight_decay
    if args.mix:
        TRAIN["mix"] = args.mix
    TRAIN["repeat_frac"] = args.repeat_frac
    TRAIN["repeat_text_share"] = args.repeat_text_share
    TRAIN["lr"], TRAIN["seed"] = args.lr, args.seed
    global MODEL_PATH, RECORD_PATH
    if args.out_model:
        MODEL_PATH = os.path.abspath(args.out_model)
    if args.out_record:
        RECORD_PATH = os.path.abspath(args.out_record)
    TRAIN["steps"] = args.steps

    src = lm_data.load_sources()
    train_docs, held_docs = lm_data.split_sources(src, TRAIN["heldout_frac"])
    if args.zh_prose:
        train_docs["zh_prose"], held_docs["zh_prose"] = lm_data.load_prose(args.zh_prose)
        src["zh_prose"] = train_docs["zh_prose"] + held_docs["zh_prose"]
    required = ""
    if args.require_demo_chars:
        import zh_prose_data
        required = "".join(zh_prose_data.DEMO_SENTENCES)
    tokens, coverage = build_vocab(train_docs, CFG["vocab_size"], required)
    tok = Tokenizer(tokens)
    T = TRAIN["seq_len"]
    enc = {k: [tok.tokenize(d) for d in v] for k, v in train_docs.items()}
    zh = [(d, e) for k in ("zh_poems", "zh_misc") for d, e in zip(train_docs[k], enc[k])]
    pools = {"en": enc["en"],
             "zh_verse": [e for d, e in zh if lm_data.is_regular_verse(d)],
             "zh_other": [e for d, e in zh if not lm_data.is_regular_verse(d)]}
    if "zh_prose" in enc:
        pools["zh_prose"] = enc["zh_prose"]
    text_docs = [e for pool in pools.values() for e in pool]
    for k, v in pools.items():
        print(f"pool {k}: {len(v)} docs, {sum(len(x) - 1 for x in v)} chars")
    held = {k: pack_in_order([tok.tokenize(d) for d in v], T) for k, v in held_docs.items()}
    print(f"blas: {BLAS}")
    for k in src:
        print(f"{k}: {len(train_docs[k])} train docs, {len(held_docs[k])} held-out docs, "
              f"{len(held[k])} held-out sequences")
    print(f"vocab {len(tokens)} covers {coverage:.4f} of training chars")

    torch.manual_seed(TRAIN["seed"])
    model = LanguageModel(len(tokens), CFG["d_model"], CFG["n_heads"], CFG["n_layers"], CFG["d_ff"], CFG["max_len"],
                   pos_init_scale=0.1)
    nparams = sum(p.numel() for p in model.parameters())
    print(f"params {nparams} ({4 * nparams / 1e6:.2f} MB)")

    if args.analyse_only:
        header, tensors = attnscope_model.read_model(MODEL_PATH)
        assert header["vocab"]["tokens"] == tokens, "vocabulary changed since training"
        attnscope_model.load_state_dict_into(model, tensors)
        record = header["training"]
    else:
        init_from = None
        if args.init_from:
            header, tensors = attnscope_model.read_model(args.init_from)
            assert header["vocab"]["tokens"] == tokens, "--init-from: the vocabulary differs from this run's"
            # Equal shapes do not mean equal models (n_heads splits the same matrices differently): the whole config.
            differs = {k: (header["config"].get(k), v) for k, v in CFG.items() if header["config"].get(k) != v}
            assert not differs, f"--init-from: the file's config differs from this run's (file, run): {differs}"
            attnscope_model.load_state_dict_into(model, tensors)
            first = header["training"]
            init_from = {"path": os.path.relpath(os.path.abspath(args.init_from), ROOT),
                         "sha256": hashlib.sha256(open(args.init_from, "rb").read()).hexdigest(),
                         "steps": first["train"]["steps"], "train_seconds": first["train_seconds"],
                         "train": first["train"], "final_train_loss": first["final_train_loss"],
                         "heldout": first.get("heldout", {})}
            print(f"continuing from {args.init_from} ({first['train']['steps']} steps)")
        # The attention input projections (q, k and v: one in_proj_weight) may get their own weight decay: decay
        # caps how large q·k can grow, hence how sharply a head can pick one position (a previous-token head needs a
        # gap of several nats to i-2).
        def group(n, p):
            if not (p.dim() >= 2 and "emb" not in n):
                return "none"
            return "qk" if n.endswith("attn.in_proj_weight") else "decay"
        params = {"decay": [], "qk": [], "none": []}
        for n, p in model.named_parameters():
            params[group(n, p)].append(p)
        qk_decay = TRAIN.get("qk_weight_decay", TRAIN["weight_decay"])
        opt = torch.optim.AdamW([{"params": params["decay"], "weight_decay": TRAIN["weight_decay"]},
                                 {"params": params["qk"], "weight_decay": qk_decay},
                                 {"params": params["none"], "weight_decay": 0.0}],
                                lr=TRAIN["lr"], betas=TRAIN["betas"])
        guide = TRAIN.get("prev_token_guide")
        rng = np.random.RandomState(TRAIN["seed"])
        quick_held = {k: v[:24] for k, v in held.items()}
        progress, losses = [], []
        t0 = time.time()
        for step in range(TRAIN["steps"]):
            lr = schedule.lr_at(step, TRAIN["steps"], TRAIN["lr"], TRAIN["warmup"], TRAIN["min_lr_frac"])
            for g in opt.param_groups:
                g["lr"] = lr
            seqs = []
            names = list(TRAIN["mix"])
            probs = np.array([TRAIN["mix"][k] for k in names])
            for _ in range(TRAIN["batch"]):
                if TRAIN["repeat_frac"] and rng.rand() < TRAIN["repeat_frac"]:
                    seqs.append(induction_data.repeated_sequence(rng, T, len(tokens), len(SPECIALS), text_docs, bos=BOS,
                                                                 text_share=TRAIN["repeat_text_share"]))
                    continue
                pool = pools[names[rng.choice(len(names), p=probs / probs.sum())]]
                seqs.append(pack_random(rng, pool, T))
            b = torch.tensor(seqs)
            x, y = b[:, :-1], b[:, 1:]
            logits, ws = model(x, need_weights=True) if guide else (model(x), None)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
            if guide:
                loss = loss + guide["weight"] * previous_token_loss(ws[guide["layer"]][:, guide["head"]])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), TRAIN["grad_clip"])
            opt.step()
            losses.append(float(loss))
            if (step + 1) % 50 == 0 or step == 0:
                avg = float(np.mean(losses[-50:]))
                entry = {"step": step + 1, "train_loss": avg, "lr": lr}
                msg = f"step {step + 1:5d}  loss {avg:.4f}  lr {lr:.2e}  {time.time() - t0:6.0f}s"
                if (step + 1) % 250 == 0 or step + 1 == TRAIN["steps"]:
                    hl = [eval_loss(model, v)[0] for v in quick_held.values()]
                    entry["heldout_loss"] = float(np.mean(hl))
                    entry["heldout"] = {k: round(v, 4) for k, v in zip(quick_held, hl)}
                    msg += "  held-out(quick) " + " ".join(f"{k}={v:.3f}" for k, v in zip(quick_held, hl))
                    progress.append(entry)
                print(msg, flush=True)
        train_seconds = time.time() - t0
        record = {
            "script": "tools/train_lm.py", "date": time.strftime("%Y-%m-%d"), "torch": torch.__version__,
            "blas": os.path.basename(os.path.dirname(BLAS)) + "/" + os.path.basename(BLAS),
            "params": nparams, "train": dict(TRAIN), "train_seconds": round(train_seconds, 1),
            **({"init_from": init_from} if init_from else {}),
            "final_train_loss": float(np.mean(losses[-50:])), "progress": progress,
            "data": {"sources": dict(lm_data.sources_info(), **({"zh_prose": "Debian manuals in Simplified Chinese, "
                                                                   "tools/zh_prose_data.py (packages and licences: "
                                                                   "tools/records/zh-prose-data.md)"}
                                                                  if args.zh_prose else {})),
                     "vocab_size": len(tokens),
                     "vocab_coverage": round(coverage, 5),
                     "pools": {k: {"docs": len(v), "chars": sum(len(x) - 1 for x in v)} for k, v in pools.items()},
                     "stats": {k: {"docs": len(src[k]), "chars": sum(len(d) for d in src[k]),
                                   "heldout_docs": len(held_docs[k]),
                                   "heldout_chars": sum(len(d) for d in held_docs[k])} for k in src}},
        }
    # full held-out evaluation
    record["heldout"] = {}
    tot, totn = 0.0, 0
    for k, v in held.items():
        loss, n, nunk = eval_loss(model, v)
        record["heldout"][k] = {"loss": round(loss, 4), "ppl": round(math.exp(loss), 3),
                                "targets": n, "unk_targets": nunk}
        tot += loss * n
        totn += n
        print(f"held-out {k}: loss {loss:.4f} ppl {math.exp(loss):.2f} ({n} targets, {nunk} unk)")
    record["heldout"]["all"] = {"loss": round(tot / totn, 4), "ppl": round(math.exp(tot / totn), 3),
                                "targets": totn, "unk_targets": sum(v["unk_targets"] for v in record["heldout"].values())}

    # head analysis on held-out sequences (all of zh, up to 96 English sequences)
    full = {k: [s for s in v if s[-8:] != [BOS] * 8] for k, v in held.items()}  # no padded tails
    ana = {"zh_poems": full["zh_poems"], "zh_misc": full["zh_misc"], "en": full["en"][:96]}
    if "zh_prose" in full:
        ana["zh_prose"] = full["zh_prose"][:96]
    scores, baselines, counts = analyse_heads(model, ana, tokens)
    # Olsson et al.'s induction score on random tokens repeated twice (tools/measure_heads.py's definition).
    n_rep = (T - 1) // 2
    reps = measure_heads.repeated_random_ids(np.random.default_rng(TRAIN["seed"]), 64, n_rep, len(SPECIALS), len(tokens), BOS)
    with torch.no_grad():
        _, ws = model(torch.tensor(reps), need_weights=True)
    w = torch.stack(ws, 1).double().numpy()  # [B, L, H, T, T]
    score, base = measure_heads.induction_scores(w, n_rep)
    scores["all"]["induction_random"] = score.tolist()
    baselines["all"]["induction_random"] = base
    counts["all"]["induction_random"] = 64 * n_rep
    for g in ("zh", "en"):  # measured on random tokens only: no per-language score
        for table in (scores, baselines, counts):
            table[g].pop("induction_random", None)
    named = name_heads(scores, baselines)
    guide = record["train"].get("prev_token_guide")
    for n in named:  # the demo shows these names: a head trained to its pattern says so
        if guide and (n["layer"], n["head"]) == (guide["layer"], guide["head"]):
            n["name"] += GUIDED_SUFFIX
    table = heads_table(scores, baselines, counts, named)
    print(table)
    record["head_analysis"] = {"scores": {g: {m: [[round(x, 4) for x in row] for row in v] for m, v in sg.items()}
                                          for g, sg in scores.items()},
                               "baselines": {g: {m: round(v, 4) for m, v in bg.items()} for g, bg in baselines.items()},
                               "counts": counts,
                               "thresholds": {m: {"score": METRICS[m][1], "lift": METRICS[m][2]} for m in METRICS},
                               "data": "held-out sequences (128 tokens, padded tails dropped): zh_poems, zh_misc (all), en (first 96)"}
    samples = []
    for p in ["床前明月光，", "春眠不觉晓，", "白日依山尽，黄河入海流。\n", "The meaning of life is", "A fool and "]:
        samples.append((p, sample(model, tok, p, 40)))
    for p in ["春风", "Love is"]:
        samples.append((p, sample(model, tok, p, 60, temperature=0.8, seed=1)))
    for p, s in samples:
        print(repr(p), "->", repr(s))
    size = write_model(model, tokens, named, record)
    write_record(record, table, samples)
    print(f"wrote {MODEL_PATH} ({size} bytes) and {RECORD_PATH}")
    for n in named:
        print("named head:", json.dumps(n, ensure_ascii=False))


if __name__ == "__main__":
    main()
