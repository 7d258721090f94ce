"""The character LM's head analysis (tools/training/train_lm.py): which attention pattern each head follows on held-out text,
the heads named after it, and the Markdown tables of tools/records/char-lm.md.

A metric scores a head by its mean weight on the keys a rule picks for each query (the previous character, the
last separator, ...); tools/attnscope_tools/heads.py names a head after the passing metric.
"""

import numpy as np
import torch

from attnscope_tools import heads
from data.lm_data import BOS, SPECIALS, UNK
from measure import measure_heads

# separators used by the head analysis (Chinese + ASCII punctuation and line breaks)
ZH_SEP = set("，。？！；：、\n")
SEP = ZH_SEP | set(",.?!;:")
SENT_END = set("。？！.?!")
GROUPS = {"all": ("zh_poems", "zh_misc", "zh_prose", "en"), "zh": ("zh_poems", "zh_misc", "zh_prose"), "en": ("en",)}
GUIDED_SUFFIX = " (guided in training)"
GROUP_SUFFIX = {"all": "", "zh": " (Chinese text)", "en": " (English text)"}


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




@torch.no_grad()
def add_induction_random(model, scores, baselines, counts, T, vocab_size, seed):
    """Olsson et al.'s induction score on random tokens repeated twice (tools/measure/measure_heads.py's definition), as the
    metric induction_random of all text (random tokens have no language)."""
    n_rep = (T - 1) // 2
    reps = measure_heads.repeated_random_ids(np.random.default_rng(seed), 64, n_rep, len(SPECIALS), vocab_size, BOS)
    _, ws = model(torch.tensor(reps), need_weights=True)
    w = torch.stack(ws, 1).double().numpy()  # [B, L, H, T, T]
    score, base = measure_heads.induction_scores(w, n_rep)
    scores["all"]["induction_random"] = score.tolist()
    baselines["all"]["induction_random"] = base
    counts["all"]["induction_random"] = 64 * n_rep
    for g in ("zh", "en"):  # measured on random tokens only: no per-language score
        for table in (scores, baselines, counts):
            table[g].pop("induction_random", None)
