"""Naming attention heads from their metric scores, and the Markdown tables of the training records.

A metric has a threshold and a minimum lift over the uniform baseline (the score a head attending uniformly would
get). A head passes a metric when its score reaches both; it is named after the passing metric with the largest
score/threshold.
"""


def passes(score, threshold, lift, baseline):
    """Whether a head's score reaches the metric's threshold and `lift` times the uniform baseline."""
    return score >= threshold and score >= lift * baseline


def best_metric(candidates):
    """candidates: (key, score, threshold, lift, baseline) tuples, in order of preference.
    Returns (key, score) of the passing candidate with the largest score/threshold (the first on ties), or None."""
    best = None
    for key, score, threshold, lift, baseline in candidates:
        if passes(score, threshold, lift, baseline) and (best is None or score / threshold > best[0]):
            best = (score / threshold, key, score)
    return None if best is None else best[1:]


def score_table(metrics, scores, baselines, rules, names):
    """Markdown lines: a row per (layer, head) with each metric's score (bold where it passes), the uniform
    baselines first, the head's name last. scores[m][layer][head]; baselines[m]; rules[m] = (threshold, lift);
    names[(layer, head)] (absent: unnamed)."""
    layers = len(scores[metrics[0]])
    heads = len(scores[metrics[0]][0])
    out = ["| layer | head | " + " | ".join(metrics) + " | name |",
           "|---|---|" + "---|" * len(metrics) + "---|",
           "| uniform baseline | | " + " | ".join(f"{baselines[m]:.3f}" for m in metrics) + " | |"]
    for l in range(layers):
        for h in range(heads):
            cells = []
            for m in metrics:
                s = scores[m][l][h]
                cells.append(f"**{s:.3f}**" if passes(s, *rules[m], baselines[m]) else f"{s:.3f}")
            out.append(f"| {l} | {h} | " + " | ".join(cells) + f" | {names.get((l, h), '')} |")
    return out


def markdown_table(header, rows):
    """Markdown lines of a table; every cell is formatted with str()."""
    return (["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])
