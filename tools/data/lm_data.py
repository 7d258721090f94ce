#!/usr/bin/python3
"""Training text for the character LM, read only from Debian packages:

* fortunes-zh: /usr/share/games/fortunes/{tang300,song100} (Tang and Song poems) -> source
  "zh_poems"; /usr/share/games/fortunes/chinese (poems, ci, proverbs, classics, Debian's
  code of conduct ...) -> source "zh_misc" (entries that are mostly CJK only).
* fortunes: every English fortune file of the package (ascii-art excluded) -> source "en".

Cleaning (a training-data step only; the tokenizer itself does no normalisation):
ANSI colour escapes removed; poem title/author lines and "-- author" attribution lines
removed; tabs -> spaces, runs of spaces collapsed, lines stripped, blank lines dropped for
Chinese and runs of blank lines collapsed for English; "\r" removed.

Then the training text as the model sees it: the vocabulary (build_vocab), the tokeniser (Tokenizer) and the
sequences (pack_random for training, pack_in_order for held-out evaluation).
"""

import collections
import hashlib
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
from attnscope_tools.tokenizers import CodepointTokenizer  # noqa: E402

UNK, BOS = 0, 1
SPECIALS = ["<unk>", "<bos>"]

# Where the fortunes packages put their files; ATTNSCOPE_FORTUNE_DIR points at an unpacked copy instead
# (`apt-get download fortunes fortunes-min fortunes-zh` + `dpkg-deb -x` into build/, no install needed).
FORTUNE_DIR = os.environ.get("ATTNSCOPE_FORTUNE_DIR", "/usr/share/games/fortunes")
ZH_POEM_FILES = ["tang300", "song100"]
ZH_MISC_FILES = ["chinese"]
EN_EXCLUDE = {"ascii-art"} | set(ZH_POEM_FILES) | set(ZH_MISC_FILES)

ANSI = re.compile(r"\x1b\[[0-9;]*m")
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
SUBTITLE = re.compile(r"^(其[一二三四五六七八九十]+|[一二三四五六七八九十]+)$")


def _entries(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read().replace("\r", "")
    for e in re.split(r"\n%\n", text):
        e = ANSI.sub("", e).strip("\n")
        if e.strip() and e.strip() != "%":
            yield e


def _clean_zh_poem(entry):
    lines = [l.strip() for l in entry.split("\n")]
    body = []
    for l in lines:
        if not l:
            continue
        if l.startswith("《") or l.startswith("题目") or l.startswith("作者") or l.startswith("--"):
            continue
        if SUBTITLE.match(l):
            continue
        body.append(re.sub(r"\s+", "", l))
    return "\n".join(body)


def _clean_zh_misc(entry):
    body = []
    for l in entry.split("\n"):
        l = l.strip()
        if not l or l.startswith("--"):
            continue
        body.append(re.sub(r"[ \t\u3000\xa0]+", " ", l))
    text = "\n".join(body)
    nonspace = [c for c in text if not c.isspace()]
    if not nonspace:
        return ""
    cjk = sum(1 for c in nonspace if CJK.match(c))
    if cjk / len(nonspace) < 0.7 or any(c in text for c in "│┌└─"):
        return ""
    return text


def _clean_en(entry):
    out, blank = [], False
    for l in entry.split("\n"):
        l = re.sub(r"[ \t]+", " ", l).strip()
        if not l:
            if out and not blank:
                out.append("")
            blank = True
            continue
        blank = False
        out.append(l)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out)


def _en_files():
    names = []
    for n in sorted(os.listdir(FORTUNE_DIR)):
        p = os.path.join(FORTUNE_DIR, n)
        if "." in n or n in EN_EXCLUDE or os.path.islink(p) or not os.path.isfile(p):
            continue
        names.append(n)
    return names


def load_sources():
    """-> dict source -> list of documents (str), in file order, deduplicated."""
    src = {"zh_poems": [], "zh_misc": [], "en": []}
    for n in ZH_POEM_FILES:
        src["zh_poems"] += [_clean_zh_poem(e) for e in _entries(os.path.join(FORTUNE_DIR, n))]
    for n in ZH_MISC_FILES:
        src["zh_misc"] += [_clean_zh_misc(e) for e in _entries(os.path.join(FORTUNE_DIR, n))]
    for n in _en_files():
        src["en"] += [_clean_en(e) for e in _entries(os.path.join(FORTUNE_DIR, n))]
    seen = set()
    for k in src:
        docs = []
        for d in src[k]:
            if len(d) >= 8 and d not in seen:
                seen.add(d)
                docs.append(d)
        src[k] = docs
    return src


def is_regular_verse(doc):
    """Chinese regular verse: >= 2 lines (split at ，。？！；：、 and line breaks), all of the same
    length 4..7."""
    segs = [s for s in re.split(r"[，。？！；：、\n]", doc) if s]
    if len(segs) < 2:
        return False
    lens = {len(s) for s in segs}
    return len(lens) == 1 and 4 <= lens.pop() <= 7


def is_heldout(doc, frac):
    """Deterministic split by content hash (independent of file order)."""
    h = int(hashlib.sha256(doc.encode("utf-8")).hexdigest()[:8], 16)
    return (h % 10000) < frac * 10000


def split_sources(src, frac=0.05):
    train, held = {}, {}
    for k, docs in src.items():
        train[k] = [d for d in docs if not is_heldout(d, frac)]
        held[k] = [d for d in docs if is_heldout(d, frac)]
    return train, held


def write_prose(directory, name, docs, frac=0.05):
    """The writer of load_prose's files: `docs` split by content hash into <name>.train.txt and <name>.heldout.txt of
    `directory` (documents separated by "\n%\n"), in their order. Returns (train, held)."""
    train = [d for d in docs if not is_heldout(d, frac)]
    held = [d for d in docs if is_heldout(d, frac)]
    for split, part in (("train", train), ("heldout", held)):
        with open(os.path.join(directory, f"{name}.{split}.txt"), "w", encoding="utf-8") as f:
            f.write("\n%\n".join(part) + "\n")
    return train, held


def load_prose(directory):
    """Chinese prose made by tools/data/zh_prose_data.py: (train, held-out) paragraphs of every package in
    `directory` (<package>.train.txt and <package>.heldout.txt, paragraphs separated by "\n%\n")."""
    out = ([], [])
    for name in sorted(os.listdir(directory)):
        for i, split in enumerate((".train.txt", ".heldout.txt")):
            if name.endswith(split):
                with open(os.path.join(directory, name), encoding="utf-8") as f:
                    out[i].extend(p.strip("\n") for p in f.read().split("\n%\n") if p.strip())
    return out


def sources_info():
    return {
        "zh_poems": "fortunes-zh: " + ", ".join(f"{FORTUNE_DIR}/{n}" for n in ZH_POEM_FILES),
        "zh_misc": "fortunes-zh: " + ", ".join(f"{FORTUNE_DIR}/{n}" for n in ZH_MISC_FILES)
                   + " (entries >= 70% CJK)",
        "en": "fortunes: " + ", ".join(_en_files()),
    }

# ----------------------------------------------------------------------------- vocabulary and sequences

def build_vocab(train_docs, size, required=""):
    """The most frequent characters; `required` ones (the demo's sentences, everyday characters) replace the
    rarest characters that are not required if missing, and follow them."""
    cnt = collections.Counter()
    for docs in train_docs.values():
        for d in docs:
            cnt.update(d)
    ranked = sorted(cnt.items(), key=lambda kv: (-kv[1], ord(kv[0])))
    chars = ranked[: size - len(SPECIALS)]
    have = {c for c, _ in chars}
    missing = [c for c in dict.fromkeys(required) if c not in have]  # in the order given
    required = set(required)
    if missing:
        assert len(missing) <= len(chars), "build_vocab: more required characters than the vocabulary holds"
        # Drop the rarest characters that are not required (dropping a required one would lose it again).
        drop, keep = len(missing), []
        for c, n in reversed(chars):
            if drop and c not in required:
                drop -= 1
            else:
                keep.append((c, n))
        assert not drop, "build_vocab: the required characters do not fit in the vocabulary"
        chars = keep[::-1] + [(c, cnt.get(c, 0)) for c in missing]
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


if __name__ == "__main__":
    src = load_sources()
    train, held = split_sources(src)
    cnt = collections.Counter()
    for k in src:
        n = sum(len(d) for d in src[k])
        print(k, len(src[k]), "docs", n, "chars; held-out", len(held[k]), "docs")
        for d in train[k]:
            cnt.update(d)
    total = sum(cnt.values())
    print("distinct chars", len(cnt))
    for V in (1000, 1200, 1400, 1500, 2000):
        top = cnt.most_common(V)
        cov = sum(c for _, c in top) / total
        zh = [c for c in cnt if CJK.match(c)]
        zt = sum(cnt[c] for c in zh)
        zc = sum(c for ch, c in top if CJK.match(ch)) / zt
        print(V, "coverage %.4f  cjk coverage %.4f" % (cov, zc))
    print(repr(src["zh_poems"][0]), repr(src["zh_misc"][3]), repr(src["en"][5]))
