#!/usr/bin/python3
"""Scores a character LM file on the held-out everyday sentences (tools/data/zh_everyday_heldout.py, issue #33 item 6):
nats per character and top-1 next-character accuracy, with the NumPy reference (attnscope_tools/reference.py,
float64; no torch, not the C++ core).

    /usr/bin/python3 tools/measure/eval_everyday.py [models/char-lm.safetensors] [--baseline OLD.safetensors]
                                            [--record tools/records/char-lm-everyday.md] [--json FILE] [--dev]

--dev scores the development sentences (tools/data/zh_everyday_dev.py) instead: what a choice between trained runs
may look at, so that the held-out sentences stay the measure of the target alone.

Each sentence is scored alone, as a user types it into the demo: the input is <bos> + its characters, and every
character is a target, the first one predicted from <bos> alone, the last one (its 。？！) from the whole sentence.
nats/char = the mean of -log p(target) over all targets of all sentences; top-1 = the share of targets that are the
model's most likely next token. A character outside the vocabulary is an <unk> target (the sentences have none
with today's vocabulary; the count is printed). Uniform over V tokens is log(V) nats/char (8.22 at 3,700).

The prompts (--prompts, default two from the issue) print the five most likely next characters and a greedy
continuation (<unk> never chosen), as the demo's next-token line and 续写 show them.
"""

import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import config, reference  # noqa: E402
from attnscope_tools.attnscope_model import read_model  # noqa: E402
from attnscope_tools.paths import ROOT  # noqa: E402
from attnscope_tools.records import write_text  # noqa: E402
from attnscope_tools.tokenizers import CodepointTokenizer  # noqa: E402
from data import zh_everyday_dev, zh_everyday_heldout  # noqa: E402
PROMPTS = ["妈妈说晚饭做好了", "我们一起去"]


class Model:
    def __init__(self, path):
        header, tensors = read_model(path)
        if header["kind"] != "decoder_lm":
            raise SystemExit(f"{path}: expected a decoder_lm model, got {header['kind']}")
        self.path = path
        self.P = {k: np.asarray(v, dtype=np.float64) for k, v in tensors.items()}
        self.cfg, self.vocab = config.read("decoder_lm", header["config"]), header["vocab"]
        self.tokenizer = CodepointTokenizer(self.vocab)

    def log_probs(self, ids):
        """[T, V] log-softmax of the logits of one sequence of ids."""
        logits, _ = reference.lm_forward(self.P, self.cfg, np.asarray(ids))
        z = logits - logits.max(-1, keepdims=True)
        return z - np.log(np.exp(z).sum(-1, keepdims=True))


def score(model, items):
    """-> {"all": {...}, topic: {...}}: nats/char, top-1, targets, <unk> targets, per topic and over all, and the
    over-confident tail: the share of targets that cost more than a uniform guess (log V nats) and the nats/char
    those targets add to the mean."""
    acc = {}
    unk = model.vocab["unk_id"]
    uniform = math.log(model.cfg.vocab_size)
    for topic, sentence in items:
        ids = model.tokenizer.ids(sentence, True)  # <bos> first
        lp = model.log_probs(ids[:-1])
        targets = np.asarray(ids[1:])
        nll = -lp[np.arange(len(targets)), targets]
        right = lp.argmax(-1) == targets
        for key in (topic, "all"):
            a = acc.setdefault(key, {"nll": 0.0, "right": 0, "targets": 0, "unk_targets": 0, "sentences": 0,
                                     "over": 0, "over_nll": 0.0})
            a["nll"] += float(nll.sum())
            a["over"] += int((nll > uniform).sum())
            a["over_nll"] += float(nll[nll > uniform].sum())
            a["right"] += int(right.sum())
            a["targets"] += len(targets)
            a["unk_targets"] += int((targets == unk).sum())
            a["sentences"] += 1
    return {k: {"nats_per_char": round(a["nll"] / a["targets"], 4), "top1": round(a["right"] / a["targets"], 4),
                "targets": a["targets"], "unk_targets": a["unk_targets"], "sentences": a["sentences"],
                "over_uniform": round(a["over"] / a["targets"], 4), "over_uniform_nats": round(a["over_nll"] / a["targets"], 4)}
            for k, a in acc.items()}


def prompt_lines(model, prompt, n_new=20):
    """(the five most likely next tokens with their probabilities, the greedy continuation of n_new tokens)."""
    ids = model.tokenizer.ids(prompt, True)
    p = np.exp(model.log_probs(ids)[-1])
    tokens = model.vocab["tokens"]
    top = [(tokens[i], float(p[i])) for i in np.argsort(-p)[:5]]
    for _ in range(n_new):
        lp = model.log_probs(ids[-model.cfg.max_len:])[-1]
        lp[model.vocab["unk_id"]] = -np.inf
        nxt = int(lp.argmax())
        if nxt == model.vocab["bos_id"]:
            break
        ids.append(nxt)
    return top, "".join(tokens[i] for i in ids[1:])


def table(results, names, topics):
    """Markdown: one row per topic, a column pair per model."""
    head = "| topic | sentences | characters | " + " | ".join(f"{n}: nats/char | {n}: top-1" for n in names) + " |"
    lines = [head, "|" + "---|" * (3 + 2 * len(names))]
    first = results[0]
    for topic in list(topics) + ["all"]:
        row = [("**all**" if topic == "all" else topic), str(first[topic]["sentences"]), str(first[topic]["targets"])]
        for r in results:
            row += [f"{r[topic]['nats_per_char']:.3f}", f"{100 * r[topic]['top1']:.1f}%"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", nargs="?", default=os.path.join(ROOT, "models", "char-lm.safetensors"))
    ap.add_argument("--baseline", help="a second model file (e.g. the one shipped before) scored beside it")
    ap.add_argument("--prompts", nargs="*", default=PROMPTS)
    ap.add_argument("--record", help="write the results as Markdown here (e.g. tools/records/char-lm-everyday.md)")
    ap.add_argument("--json", help="write the results as JSON here")
    ap.add_argument("--dev", action="store_true", help="score the development sentences, not the held-out ones")
    args = ap.parse_args()
    sentences = zh_everyday_dev if args.dev else zh_everyday_heldout
    items = sentences.sentences()
    models = [Model(p) for p in ([args.baseline] if args.baseline else []) + [args.model]]
    names = (["before", "after"] if args.baseline else ["model"])
    results = [score(m, items) for m in models]
    out = {"sentences": len(items), "models": {}}
    lines = []
    for name, m, r in zip(names, models, results):
        prompts = {p: prompt_lines(m, p) for p in args.prompts}
        out["models"][name] = {"path": os.path.relpath(m.path, ROOT), "scores": r,
                               "prompts": {p: {"top5": t, "greedy": g} for p, (t, g) in prompts.items()}}
        a = r["all"]
        print(f"{name} ({os.path.relpath(m.path, ROOT)}): {a['nats_per_char']:.3f} nats/char, top-1 "
              f"{100 * a['top1']:.1f}% over {a['targets']} characters of {a['sentences']} sentences "
              f"({a['unk_targets']} <unk>); uniform {math.log(m.cfg.vocab_size):.2f}; "
              f"{100 * a['over_uniform']:.1f}% of the targets cost more than uniform, {a['over_uniform_nats']:.2f} nats/char of the mean")
        lines.append(f"- {name}: {100 * a['over_uniform']:.1f}% of the characters cost more than a uniform guess "
                     f"({math.log(m.cfg.vocab_size):.2f} nats); they add {a['over_uniform_nats']:.2f} of the "
                     f"{a['nats_per_char']:.2f} nats/char.")
        for p, (top, greedy) in prompts.items():
            line = (f"`{p}` → next: " + ", ".join(f"{t!r} {100 * q:.1f}%" for t, q in top) + f"; greedy: `{greedy}`")
            print("  ", line)
            lines.append(f"- {name}: {line}")
    print(table(results, names, sentences.SENTENCES))
    if args.json:
        write_text(args.json, json.dumps(out, ensure_ascii=False, indent=1) + "\n")
    if args.record:
        md = ["# The character LM on held-out everyday Chinese sentences (issue #33, item 6)", "",
              f"Made by `/usr/bin/python3 tools/measure/eval_everyday.py {os.path.relpath(args.model, ROOT)}"
              + (f" --baseline {os.path.relpath(args.baseline, ROOT)}" if args.baseline else "")
              + (" --dev" if args.dev else "")
              + f" --record {os.path.relpath(args.record, ROOT)}` (NumPy float64, attnscope_tools/reference.py).", "",
              f"- {len(items)} sentences written for the purpose (`tools/data/{sentences.__name__.split('.')[-1]}.py`"
              + (", the development set" if args.dev else "") + "), never in training; "
              "each scored alone: input `<bos>` + its characters, every character a target (the first predicted from "
              "`<bos>`).",
              "- nats/char: mean −log p of the target; top-1: share of targets that are the most likely token. "
              f"Uniform over the {models[-1].cfg.vocab_size:,} tokens: {math.log(models[-1].cfg.vocab_size):.2f} "
              "nats/char. Target of issue #33: ≤ 4.5 nats/char and top-1 ≥ 20%.",
              *[f"- {n}: `{os.path.relpath(m.path, ROOT)}`" for n, m in zip(names, models)], "",
              table(results, names, sentences.SENTENCES), "", "The over-confident tail, and the prompts (the five most likely next "
              "characters; the greedy continuation, `<unk>` never chosen):", "", *lines, ""]
        write_text(args.record, "\n".join(md))


if __name__ == "__main__":
    main()
