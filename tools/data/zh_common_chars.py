#!/usr/bin/python3
"""The most frequent Chinese characters of everyday text, counted from python3-jieba's dictionary, for the
character LM's vocabulary (issue #23, item 5), and a training pool of that dictionary's words.

    apt-get install -y python3-jieba
    /usr/bin/python3 tools/data/zh_common_chars.py [--count 3500]   # prints the counts and the coverage
    /usr/bin/python3 tools/data/zh_common_chars.py --record tools/records/zh-common-chars.md   # + the model's coverage

Source: /usr/lib/python3/dist-packages/jieba/dict.txt (Debian's python3-jieba), one line per word: word,
frequency, part-of-speech tag. A character's count is the sum of the frequencies of the words it occurs in, each
occurrence once (so 妈妈 adds its frequency twice to 妈). Only CJK unified ideographs count (the dictionary also
has a few Latin letters and signs). The ranking ties on count are broken by code point.

Why jieba's dictionary: it is the one word-frequency list in Debian that is counted over general text (news,
novels, everyday words), where our training prose is manuals, in which family words such as 妈 and 爸 never occur.
A handful of its frequent entries are mis-decoded UTF-8 (锛 is the first byte pair of a full-width comma read
as GBK); they are counted as the dictionary has them and cost a few tokens.

The word pool (word_documents) is how the LM sees characters that our prose and fortunes lack: lists of the
dictionary's words joined by the enumeration comma 、, words drawn with probability proportional to the square
root of their frequency (plain frequency would repeat 的 and 了; the square root still favours common words).
"""

import argparse
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools.paths import ROOT  # noqa: E402

import numpy as np  # noqa: E402

DICT = "/usr/lib/python3/dist-packages/jieba/dict.txt"
HAN = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff]+$")
HAN_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def add_train_args(ap):
    """train_lm.py's options for everyday Chinese (issue #23): the vocabulary keeps the N most frequent characters of
    the dictionary, and the training mix may draw on a pool of its words ("zh_words")."""
    ap.add_argument("--zh-common", type=int, metavar="N",
                    help="the vocabulary keeps the N most frequent characters of jieba's dictionary")
    ap.add_argument("--zh-words-docs", type=int, default=20000,
                    help="documents in the zh_words pool (lists of jieba's words; only with --zh-common)")


def read_dict(path=DICT):
    """[(word, frequency)] of the dictionary, in file order."""
    if not os.path.exists(path):
        raise SystemExit(f"{path} not found: apt-get install -y python3-jieba")
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                out.append((parts[0], int(parts[1])))
    return out


def char_counts(words):
    """{character: sum of the frequencies of the words it occurs in, once per occurrence}, CJK only."""
    counts = {}
    for w, n in words:
        for c in HAN_CHAR.findall(w):
            counts[c] = counts.get(c, 0) + n
    return counts


def common_chars(n, path=DICT):
    """-> (the n most frequent characters, most frequent first; the share of all character occurrences they
    cover, weighted by word frequency; the number of distinct characters)."""
    counts = char_counts(read_dict(path))
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], ord(kv[0])))
    total = sum(counts.values())
    return [c for c, _ in ranked[:n]], sum(k for _, k in ranked[:n]) / total, len(counts)


def dictionary_words(chars, max_word_len=4, path=DICT):
    """[(word, frequency)] of the dictionary's Chinese words of at most max_word_len characters, every one of them in
    `chars` (so a pool of them adds no <unk>), in file order."""
    allowed = set(chars)
    return [(w, f) for w, f in read_dict(path) if HAN.match(w) and len(w) <= max_word_len and all(c in allowed for c in w)]


def word_documents(chars, n_docs, seed, path=DICT, words_per_doc=(8, 24), max_word_len=4):
    """n_docs training documents, each a list of dictionary words (dictionary_words) joined by 、 and ended by 。"""
    words = dictionary_words(chars, max_word_len, path)
    p = np.array([math.sqrt(f) for _, f in words])
    p /= p.sum()
    rng = np.random.RandomState(seed)
    docs = []
    for _ in range(n_docs):
        k = rng.randint(words_per_doc[0], words_per_doc[1] + 1)
        docs.append("、".join(words[i][0] for i in rng.choice(len(words), size=k, p=p)) + "。")
    return docs


def write_record(path, model_path, chars, mass, distinct):
    """records/zh-common-chars.md: the source, the coverage, and how the model file's vocabulary and training text
    hold the characters (the training record in the file says which were absent from its text)."""
    import json
    from attnscope_tools import safetensors_file
    from data import lm_data
    meta, _ = safetensors_file.load_file(model_path)
    tokens, training = json.loads(meta["vocab"])["tokens"], json.loads(meta["training"])
    common = training["data"].get("zh_common", {})
    have = set(tokens)
    missing = [c for c in chars if c not in have]
    cjk = [t for t in tokens if lm_data.CJK.fullmatch(t)]
    words = read_dict()
    counts = char_counts(words)
    total = sum(counts.values())
    # Which of them the training text lacks: counted again from the text (as train_lm.py reads it).
    src = lm_data.load_sources()
    train_docs, _ = lm_data.split_sources(src, training["train"]["heldout_frac"])
    prose = os.path.join(ROOT, "build", "zh", "prose")
    if os.path.isdir(prose):
        train_docs["zh_prose"], _ = lm_data.load_prose(prose)
    pools = []  # the run's other text pools (train_lm.py --text-pool), when their text is here
    for name, directory in training["train"].get("text_pools", {}).items():
        directory = os.path.join(ROOT, directory)
        if os.path.isdir(directory):
            train_docs[name], _ = lm_data.load_prose(directory)
            pools.append(name)
    seen = set(c for docs in train_docs.values() for d in docs for c in d)
    absent = [c for c in chars if c not in seen]
    lines = ["# Everyday Chinese characters in the character LM's vocabulary (issue #23, item 5)", "",
             f"Made by `/usr/bin/python3 tools/data/zh_common_chars.py --record {os.path.relpath(path)}` from "
             f"`{os.path.relpath(model_path)}`.", "",
             f"- Source: `{DICT}`, Debian's python3-jieba (its dictionary: word, frequency, part-of-speech tag; "
             f"{len(words):,} words). A character counts the frequencies of the words it occurs in; {distinct:,} distinct CJK "
             "characters.",
             f"- The {len(chars):,} most frequent cover **{100 * mass:.2f}%** of the dictionary's character occurrences "
             "(weighted by word frequency).",
             f"- In the model's vocabulary ({len(tokens):,} tokens, {len(cjk):,} of them CJK): "
             f"**{len(chars) - len(missing):,} of the {len(chars):,}**" + (f"; missing: {''.join(missing)}" if missing
                                                                           else ", none missing") + ".",
             f"- The whole vocabulary covers {100 * sum(counts.get(c, 0) for c in have) / total:.2f}% of them; its "
             f"other {len(tokens) - len(chars) + len(missing):,} tokens are `<unk>`, `<bos>`, English letters, "
             "punctuation and the training text's most frequent characters outside the list.",
             f"- Of the {len(chars):,}, {len(absent)} never occur in the training text (prose from Debian's manuals, "
             "fortunes, poems" + "".join(f", {p}" for p in pools) + (")" if os.path.isdir(prose) else "; build/zh/prose absent, so prose not counted)")
             + ": the model sees them only in the `zh_words` pool, lists of jieba's words joined by 、 "
             f"(`word_documents`). Among them: {''.join(c for c in '妈爸' if c in absent) or 'neither 妈 nor 爸'}; "
             f"the first 40: {''.join(absent[:40])}." + (f" (The training record says {common['absent_from_text']}.)"
                                                          if common.get("absent_from_text") not in (None, len(absent))
                                                          else ""),
             "- Ranks: " + ", ".join(f"{c} {chars.index(c) + 1}" for c in "的妈爸猫饿" if c in chars) + ".",
             "- A few of the dictionary's frequent entries are mis-decoded UTF-8 read as GBK (锛, 銆, 鐨 …); they are "
             "counted as the dictionary has them.", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=3500)
    ap.add_argument("--record", help="write this record (e.g. tools/records/zh-common-chars.md) for --model")
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "char-lm.safetensors"))
    args = ap.parse_args()
    chars, mass, distinct = common_chars(args.count)
    if args.record:
        write_record(args.record, args.model, chars, mass, distinct)
    print(f"{DICT}: {distinct} distinct CJK characters; the {args.count} most frequent cover {100 * mass:.2f}% of "
          "character occurrences weighted by word frequency")
    print("first 50:", "".join(chars[:50]))
    print("last 50:", "".join(chars[-50:]))
    for c in "妈爸":
        print(c, "rank", chars.index(c) + 1 if c in chars else "not in the list")


if __name__ == "__main__":
    main()
