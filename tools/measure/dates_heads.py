"""The dates model's head analysis (tools/training/train_seq2seq.py): which attention pattern each head of the encoder, the
decoder and the cross-attention follows on held-out examples, the heads named after it, and the Markdown tables of
tools/records/dates-seq2seq.md (naming: tools/attnscope_tools/heads.py)."""

import numpy as np
import torch

from attnscope_tools import heads
from data import dates_data as dd
from data.dates_vocab import TGT_BOS


METRICS = {
    # name: (attention kind, description, threshold, min lift over uniform, head name)
    "cross_field_next": ("dec_cross", "mean total cross-attention weight on the source words of the date field "
                         "(day/month/year) of the character being predicted (queries whose next target char is a "
                         "digit)", 0.6, 2.0, "aligns to the source field of the next output digit"),
    "cross_field_current": ("dec_cross", "same, for the field of the query's own input character (queries whose "
                            "input char is a digit)", 0.6, 2.0, "aligns to the source field of the current digit"),
    "cross_year_split": ("dec_cross", "mean total weight on the year words that spell the predicted year digit: "
                         "queries predicting digits 1-2 -> the century words (`nineteen`, `two thousand`, `twenty`), "
                         "digits 3-4 -> the words of the last two digits (`ninety`, `oh five`, `twelve` ...; years "
                         "2000 and 1900-style `two thousand` skipped)", 0.6, 2.0,
                         "year: century words for digits 1-2, last-two-digit words for digits 3-4"),
    "cross_year_mass": ("dec_cross", "mean total weight on the year words, over all queries", 0.6, 2.0,
                        "year words"),
    "enc_prev_word": ("enc_self", "mean weight on the previous word (queries i>=1)", 0.4, 3.0, "previous word"),
    "enc_next_word": ("enc_self", "mean weight on the next word (queries i<S-1)", 0.4, 3.0, "next word"),
    "enc_same_field": ("enc_self", "mean total weight on words of the query word's own field (day/month/year "
                       "queries)", 0.7, 1.5, "same date field"),
    "dec_prev_token": ("dec_self", "mean weight on the previous decoder position (queries t>=1)", 0.5, 2.0,
                       "previous output char"),
    "dec_bos": ("dec_self", "mean weight on the <bos> position (queries t>=1)", 0.6, 2.0, "<bos>"),
}


@torch.no_grad()
def analyse_heads(model, vocab, examples):
    sums = {}
    counts = {m: 0 for m in METRICS}
    base = {m: 0.0 for m in METRICS}
    L = {"enc_self": len(model.enc_blocks), "dec_self": len(model.dec_blocks), "dec_cross": len(model.dec_blocks)}
    H = model.enc_blocks[0].attn.num_heads
    for m, spec in METRICS.items():
        sums[m] = np.zeros((L[spec[0]], H))
    for e in examples:  # one at a time: no padding, exact weights
        src = torch.tensor([e[0]])
        tin = torch.tensor([[TGT_BOS] + e[1][:-1]])
        _, ws = model(src, tin, need_weights=True)
        W = {k: torch.stack(v, 0)[:, 0].double().numpy() for k, v in ws.items()}  # [L,H,Tq,Tk]
        tags = e[3]
        TF = dd.target_fields(e[4])  # field of each target token: year / month / day / sep / invalid / eos
        S = len(tags)
        T = tin.shape[1]
        field_mask = {f: np.array([dd.field(t) == f for t in tags], dtype=np.float64)
                      for f in ("day", "month", "year")}
        hi_mask = np.array([t == "year_hi" for t in tags], dtype=np.float64)
        lo_mask = np.array([t == "year_lo" for t in tags], dtype=np.float64)
        # cross attention
        for t in range(T):
            nf = TF[t]              # field of the char predicted at query t (target index t)
            if nf in field_mask:
                sums["cross_field_next"] += (W["dec_cross"][:, :, t, :] * field_mask[nf]).sum(-1)
                counts["cross_field_next"] += 1
                base["cross_field_next"] += field_mask[nf].mean()
            if t >= 1 and TF[t - 1] in field_mask:
                cf = TF[t - 1]      # input char at position t is target char t-1
                sums["cross_field_current"] += (W["dec_cross"][:, :, t, :] * field_mask[cf]).sum(-1)
                counts["cross_field_current"] += 1
                base["cross_field_current"] += field_mask[cf].mean()
            if t < 4 and nf == "year":
                ym = hi_mask if t < 2 else lo_mask
                if ym.sum() > 0:
                    sums["cross_year_split"] += (W["dec_cross"][:, :, t, :] * ym).sum(-1)
                    counts["cross_year_split"] += 1
                    base["cross_year_split"] += ym.mean()
            sums["cross_year_mass"] += (W["dec_cross"][:, :, t, :] * field_mask["year"]).sum(-1)
            counts["cross_year_mass"] += 1
            base["cross_year_mass"] += field_mask["year"].mean()
        # encoder self attention (non-causal: uniform baseline 1/S)
        for i in range(S):
            if i >= 1:
                sums["enc_prev_word"] += W["enc_self"][:, :, i, i - 1]
                counts["enc_prev_word"] += 1
                base["enc_prev_word"] += 1.0 / S
            if i < S - 1:
                sums["enc_next_word"] += W["enc_self"][:, :, i, i + 1]
                counts["enc_next_word"] += 1
                base["enc_next_word"] += 1.0 / S
            if dd.field(tags[i]) in field_mask:
                fm = field_mask[dd.field(tags[i])]
                sums["enc_same_field"] += (W["enc_self"][:, :, i, :] * fm).sum(-1)
                counts["enc_same_field"] += 1
                base["enc_same_field"] += fm.mean()
        for t in range(1, T):
            sums["dec_prev_token"] += W["dec_self"][:, :, t, t - 1]
            sums["dec_bos"] += W["dec_self"][:, :, t, 0]
            counts["dec_prev_token"] += 1
            counts["dec_bos"] += 1
            base["dec_prev_token"] += 1.0 / (t + 1)
            base["dec_bos"] += 1.0 / (t + 1)
    scores = {m: (sums[m] / max(counts[m], 1)).tolist() for m in METRICS}
    baselines = {m: base[m] / max(counts[m], 1) for m in METRICS}
    return scores, baselines, counts


MODULES = {"enc_self": "enc_blocks.{l}.attn", "dec_self": "dec_blocks.{l}.self_attn",
           "dec_cross": "dec_blocks.{l}.cross_attn"}


def name_heads(scores, baselines):
    named = []
    for kind in ("enc_self", "dec_self", "dec_cross"):
        ms = [m for m, s in METRICS.items() if s[0] == kind]
        Ln = len(scores[ms[0]])
        Hn = len(scores[ms[0]][0])
        for l in range(Ln):
            for h in range(Hn):
                best = heads.best_metric((m, scores[m][l][h], METRICS[m][2], METRICS[m][3], baselines[m]) for m in ms)
                if best:
                    m, s = best
                    _, _, thr, _, hname = METRICS[m]
                    named.append({"layer": l, "head": h, "attn": kind, "module": MODULES[kind].format(l=l),
                                  "name": hname, "metric": m, "score": round(s, 4), "threshold": thr,
                                  "baseline": round(baselines[m], 4)})
    return named


def heads_table(scores, baselines, counts, named):
    out = []
    nm = {(n["attn"], n["layer"], n["head"]): n["name"] for n in named}
    for kind in ("enc_self", "dec_self", "dec_cross"):
        ms = [m for m, s in METRICS.items() if s[0] == kind]
        out += [f"**{kind}** (`{MODULES[kind]}`)", ""]
        out += heads.score_table(ms, scores, baselines, {m: METRICS[m][2:4] for m in ms},
                                 {(l, h): name for (k, l, h), name in nm.items() if k == kind})
        out.append("")
    out += heads.markdown_table(["metric", "attention", "definition", "threshold", "min lift over uniform"],
                                [(m, kind, d, thr, f"{lift}x") for m, (kind, d, thr, lift, _) in METRICS.items()])
    out.append("")
    out.append("Queries per metric: " + ", ".join(f"{m} {counts[m]}" for m in METRICS) + ".")
    return "\n".join(out)
