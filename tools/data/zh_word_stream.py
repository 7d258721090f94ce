#!/usr/bin/python3
"""A training pool of running Chinese words for the character LM (issue #33, item 6): jieba's dictionary words
drawn at random by frequency and written one after another, with no separator, as Chinese is written.

    apt-get install -y python3-jieba
    /usr/bin/python3 tools/data/zh_word_stream.py [--docs 20000] [--alpha 0.75]   # -> build/zh/wordstream/

Why: on the 80 held-out everyday sentences (zh_everyday_heldout.py), cut into words by jieba, round 5's model paid
4.2 nats for a character inside a word (早|上, 起|床), 1.5 of its 4.96 nats/char. Those are the transitions a word
list teaches. The older pool of the same words (zh_common_chars.word_documents, `zh_words`) joins them with 、, and
taught the model that 、 follows every word (round 3's "、一个、一个…"); here a word is followed by another word.

What it is not: text. The order of the words is random (a unigram model of words), so the pool teaches which
characters make a word and how often each word is used, not grammar. Words are drawn with probability
proportional to frequency ** alpha (alpha 1 repeats 的 and 了; 0.5 is the `zh_words` pool's square root), among
the dictionary's words of at most 4 characters whose characters are all in the model's vocabulary (so the pool adds
no <unk>). A document is 16 to 48 words ended by 。; 5% of the documents are held out (lm_data.is_heldout).
A document that shares a character 8-gram with a held-out everyday sentence is dropped (the count is printed).

Writes build/zh/wordstream/jieba.train.txt and .heldout.txt (paragraphs separated by "\\n%\\n", the format of
lm_data.load_prose), for train_lm.py's `--text-pool zh_wordstream=build/zh/wordstream`.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools.attnscope_model import read_model  # noqa: E402
from attnscope_tools.paths import ROOT  # noqa: E402
from data import lm_data  # noqa: E402
from data.zh_common_chars import dictionary_words  # noqa: E402
from data.zh_everyday_frames import heldout_grams  # noqa: E402

import numpy as np  # noqa: E402


def documents(chars, n_docs, alpha, seed, words_per_doc=(16, 48), max_word_len=4):
    """-> (documents, documents dropped for sharing an 8-gram with a held-out everyday sentence)."""
    words = dictionary_words(chars, max_word_len)
    p = np.array([float(f) ** alpha for _, f in words])
    p /= p.sum()
    held = heldout_grams()
    rng = np.random.RandomState(seed)
    docs, dropped = [], 0
    for _ in range(n_docs):
        k = rng.randint(words_per_doc[0], words_per_doc[1] + 1)
        doc = "".join(words[i][0] for i in rng.choice(len(words), size=k, p=p)) + "。"
        if any(doc[i:i + 8] in held for i in range(len(doc) - 7)):
            dropped += 1
            continue
        docs.append(doc)
    return docs, dropped


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "char-lm.safetensors"),
                    help="the model whose vocabulary limits the words (default: the shipped char LM)")
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--alpha", type=float, default=0.75)
    ap.add_argument("--seed", type=int, default=1251)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "zh", "wordstream"))
    args = ap.parse_args()
    tokens = read_model(args.model)[0]["vocab"]["tokens"]
    docs, dropped = documents(tokens, args.docs, args.alpha, args.seed)
    os.makedirs(args.out, exist_ok=True)
    train, held = lm_data.write_prose(args.out, "jieba", docs)
    print(f"{args.out}: {len(train)} train and {len(held)} held-out documents, "
          f"{sum(map(len, train))} train characters; {dropped} dropped for sharing an 8-gram with a "
          f"held-out everyday sentence; alpha {args.alpha}")


if __name__ == "__main__":
    main()
