#!/usr/bin/python3
"""Everyday Chinese sentences written by the project for the character LM's training (issue #33, item 6).

    /usr/bin/python3 tools/data/zh_everyday_written.py      # -> build/zh/written/text/written.{train,heldout}.txt

The sentences are zh_everyday_written.txt beside this file: one document per line (a sentence, or two or three in a
diary line or a short exchange), under "# topic" lines. Written for this purpose, not taken from any package or
corpus, because Debian and npm ship no everyday Chinese sentences (tools/data/zh_everyday_data.py says what was
looked at): the model's real Chinese text is manuals, poems and fortunes, children's software and games, in whose
2.0 million characters words of daily life are rare (卖 30 times, 哭 18, 饿 16, 晒 once).

They are NOT the test. The held-out everyday sentences (zh_everyday_heldout.py, the target's measure) and the
development sentences (zh_everyday_dev.py, which chose the run) were written before these, by the same project and
on the same topics: this text is therefore closer to them than a third party's everyday sentences would be, and the
records say so. None of them is here. main() checks and stops at a line that shares a character 6-gram with one of
them or with the demo's Chinese sentences, or holds a whole clause of 4 characters or more of one (现在几点了？ would
be refused as a line of its own), and at a line listed twice. The 6-gram and the clause are stricter than the other
pools' 8-gram check because these lines are short and on the test's topics.

Writes the training pool in the format lm_data.load_prose reads (documents separated by "\\n%\\n"), 5% of the lines
held out by content hash as every other pool is; not in git.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools.paths import ROOT  # noqa: E402
from data import lm_data, zh_everyday_data, zh_everyday_dev, zh_everyday_heldout  # noqa: E402

# The demo's Chinese sentences (web/demo/src/state.js, EXAMPLES; eval_everyday.py's prompts): the model is shown
# reading them, so it is not trained on them.
DEMO = ["小狗没有吃饭，因为它一点也不想吃。", "这只动物没有过马路，因为它太累了。", "床前明月光，疑是地上霜。", "举头望明月，低头思故乡。",
        "妈妈说晚饭做好了"]
TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zh_everyday_written.txt")
OUT = os.path.join(ROOT, "build", "zh", "written", "text")


def documents():
    """[(topic, line)] in file order."""
    out, topic = [], ""
    with open(TEXT, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("#"):
                topic = line[1:].strip()
            elif line:
                out.append((topic, line))
    return out


# zh_everyday_data's protected pieces, at a 6-gram and clauses of 4 characters or more (its pools: 8 and 8).
GRAM = 6
MIN_CLAUSE = 4
CLAUSE = zh_everyday_data.CLAUSE


def check(docs):
    """Refuses a line listed twice, or one that shares a 6-gram or a whole clause (4 characters or more) with a test,
    development or demo sentence."""
    kept = [s for _, s in zh_everyday_heldout.sentences()] + [s for _, s in zh_everyday_dev.sentences()] + DEMO
    pieces = zh_everyday_data.protected_pieces(kept, GRAM, MIN_CLAUSE)
    seen, problems = set(), []
    for _, line in docs:
        if line in seen:
            problems.append(f"listed twice: {line}")
        seen.add(line)
        shared = sorted(zh_everyday_data.pieces_in(line, pieces, GRAM))
        if shared:
            problems.append(f"shares {shared} with a test, development or demo sentence: {line}")
    if problems:
        raise SystemExit("\n".join(problems))


def main():
    docs = documents()
    check(docs)
    lines = [s for _, s in docs]
    os.makedirs(OUT, exist_ok=True)
    train, held = lm_data.write_prose(OUT, "written", lines)
    topics = len({t.rstrip("0123456789") for t, _ in docs})  # "family2" continues "family"
    print(f"{len(lines)} lines on {topics} topics ({len(train)} train, {len(held)} held out; "
          f"{sum(map(len, train))} train characters); none shares a 6-gram or a clause with the test, development or demo sentences")


if __name__ == "__main__":
    main()
