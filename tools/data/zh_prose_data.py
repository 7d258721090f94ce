#!/usr/bin/python3
"""Everyday Chinese prose for the next character LM (issue #14, item 1), read only from Debian packages,
and the vocabulary coverage it allows. Prepares data; trains nothing.

    /usr/bin/python3 tools/data/zh_prose_data.py --download   # apt-get download + dpkg-deb -x into build/zh/ (~110 MB, no install)
    /usr/bin/python3 tools/data/zh_prose_data.py [--vocab 1500] [--record tools/records/zh-prose-data.md]

Writes build/zh/prose/<package>.train.txt and .heldout.txt (paragraphs separated by "\\n%\\n", the fortune
format lm_data.py reads) and a record with the packages, their versions and licences, the amount of text,
and the coverage of held-out Chinese prose and of the demo's example sentences by a vocabulary of the most
frequent characters of the training text (this prose together with lm_data.py's fortunes training split,
so that English keeps its characters). Downloaded and extracted data stay in build/, out of git.

Extraction: HTML -> text of block elements (p, li, dd, dt, td, th, h1-h6, title; pre/code/script/style
dropped); man pages (troff) -> text lines without requests and font escapes. A paragraph is kept when it has
>= 12 non-space characters, at least 60% of them CJK, and no run of 30+ ASCII letters (code, paths). Exact
duplicates are dropped. Held-out: 5% of paragraphs by content hash (lm_data.is_heldout), per package.
"""

import argparse
import collections
import gzip
import html.parser
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools.paths import RECORDS, ROOT  # noqa: E402
from data import lm_data  # noqa: E402

BUILD = os.path.join(ROOT, "build", "zh")

# package -> (where its Chinese text lives inside the package, what it is, licence as its copyright file says)
PACKAGES = {
    "debian-reference-zh-cn": ("usr/share/debian-reference", "Debian Reference (Simplified Chinese)", "GPL-2+"),
    "debian-handbook": ("usr/share/doc/debian-handbook/html/zh-CN", "The Debian Administrator's Handbook, zh-CN",
                        "GPL-2.0+ or CC-BY-SA-3.0"),
    "debian-faq-zh-cn": ("usr/share/doc/debian/FAQ/zh-cn", "Debian FAQ (Simplified Chinese)",
                         "verbatim and modified copies and translations permitted (SPI notice)"),
    "maint-guide-zh-cn": ("usr/share/doc/maint-guide-zh-cn", "Debian New Maintainers' Guide (zh-CN)",
                          "GPL-2.0+ / MIT / public-domain"),
    "debian-edu-doc-zh-cn": ("usr/share/doc/debian-edu-doc-zh-cn", "Debian Edu manual (zh-CN)", "GPL-2+ / GPL-3+"),
    "gimp-help-zh-cn": ("usr/share/gimp/2.0/help/zh_CN", "GIMP user manual (Simplified Chinese)",
                        "GFDL-NIV-1.2+ (copyright file in gimp-help-common)"),
    "libreoffice-help-zh-cn": ("usr/share/libreoffice/help/zh-CN", "LibreOffice help (Simplified Chinese)",
                               "MPL-2.0 / CC-BY-SA-3.0 and others (see its copyright file)"),
    "manpages-zh": ("usr/share/man/zh_CN", "Chinese manual pages", "GFDL-1.2+ / GPL-2.0(+) / BSD-2-Clause / CC0"),
}
# The demo's example sentences that the LM must read without <unk> (web/demo/src/state.js, EXAMPLES).
DEMO_SENTENCES = [
    "小猫没有吃鱼，因为它一点也不饿。",
    "这只动物没有过马路，因为它太累了。",
    "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。",
    "The animal didn\u2019t cross the street because it was too tired.",
    "The cat sat on the mat. The cat sat on the mat. The cat",
]
CJK = lm_data.CJK
BLOCKS = {"p", "li", "dd", "dt", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "title", "div", "br"}
SKIP = {"pre", "code", "script", "style", "tt", "kbd", "samp"}
LONG_ASCII = re.compile(r"[A-Za-z_./-]{30,}")


class _Text(html.parser.HTMLParser):
    """Text of an HTML page, one paragraph per block element; code and scripts left out."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.paragraphs, self.current, self.skipping = [], [], 0

    def _flush(self):
        text = re.sub(r"\s+", " ", "".join(self.current)).strip()
        if text:
            self.paragraphs.append(text)
        self.current = []

    def handle_starttag(self, tag, attrs):
        if tag in SKIP:
            self.skipping += 1
        if tag in BLOCKS:
            self._flush()

    def handle_endtag(self, tag):
        if tag in SKIP and self.skipping:
            self.skipping -= 1
        if tag in BLOCKS:
            self._flush()

    def handle_data(self, data):
        if not self.skipping:
            self.current.append(data)


def html_paragraphs(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        parser = _Text()
        parser.feed(f.read())
        parser._flush()
    return parser.paragraphs


def man_paragraphs(path):
    """A troff man page -> paragraphs: requests (.XX) end a paragraph, font and size escapes removed."""
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    out, cur = [], []
    for line in lines:
        if line.startswith((".", "'")):
            if cur:
                out.append("".join(cur))
                cur = []
            continue
        line = re.sub(r"\\f[BIRP1-4]|\\f\(..|\\s[+-]?\d|\\[&|^]|\\\(..|\\-", "", line).replace("\\e", "\\")
        cur.append(line.strip())
    if cur:
        out.append("".join(cur))
    return out


def is_prose(paragraph):
    chars = [c for c in paragraph if not c.isspace()]
    if len(chars) < 12 or LONG_ASCII.search(paragraph):
        return False
    return sum(1 for c in chars if CJK.match(c)) >= 0.6 * len(chars)


def package_paragraphs(package):
    base = os.path.join(BUILD, "root", package, PACKAGES[package][0])
    seen, out = set(), []
    for dirpath, _, files in sorted(os.walk(base)):
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            if name.endswith((".html", ".htm")):
                paragraphs = html_paragraphs(path)
            elif package == "manpages-zh" and name.endswith(".gz"):
                paragraphs = man_paragraphs(path)
            else:
                continue
            for p in paragraphs:
                if is_prose(p) and p not in seen:
                    seen.add(p)
                    out.append(p)
    return out


def download():
    debs = os.path.join(BUILD, "debs")
    os.makedirs(debs, exist_ok=True)
    subprocess.run(["apt-get", "download", *PACKAGES], cwd=debs, check=True)
    for deb in sorted(os.listdir(debs)):
        package = deb.split("_")[0]
        if package in PACKAGES:
            # dpkg-deb -x creates the last directory only, not its parents.
            target = os.path.join(BUILD, "root", package)
            os.makedirs(target, exist_ok=True)
            subprocess.run(["dpkg-deb", "-x", os.path.join(debs, deb), target], check=True)


def versions():
    debs = os.path.join(BUILD, "debs")
    out = {}
    for deb in sorted(os.listdir(debs)) if os.path.isdir(debs) else []:
        package = deb.split("_")[0]
        if package in PACKAGES:
            out[package] = subprocess.run(["dpkg-deb", "-f", os.path.join(debs, deb), "Version"], capture_output=True,
                                          text=True, check=True).stdout.strip()
    return out


def coverage(counts, vocab):
    total = sum(counts.values())
    return sum(n for c, n in counts.items() if c in vocab) / total if total else 1.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--download", action="store_true")
    ap.add_argument("--vocab", type=int, default=1500, help="vocabulary size incl. 2 specials (today's model: 1500)")
    ap.add_argument("--record", default=os.path.join(RECORDS, "zh-prose-data.md"))
    args = ap.parse_args()
    if args.download:
        download()
    prose_dir = os.path.join(BUILD, "prose")
    os.makedirs(prose_dir, exist_ok=True)

    train_chars, held_chars, rows, held_all = collections.Counter(), collections.Counter(), [], []
    for package in PACKAGES:
        paragraphs = package_paragraphs(package)
        train, held = lm_data.write_prose(prose_dir, package, paragraphs)
        for p in train:
            train_chars.update(p)
        for p in held:
            held_chars.update(p)
        held_all += held
        rows.append((package, len(train), sum(map(len, train)), len(held), sum(map(len, held))))
        print(f"{package}: {len(train)} train paragraphs ({sum(map(len, train))} chars), {len(held)} held out")

    # The vocabulary is shared with English and the fortunes: count their training split too.
    fortunes_train, _ = lm_data.split_sources(lm_data.load_sources())
    all_chars = collections.Counter(train_chars)
    for docs in fortunes_train.values():
        for d in docs:
            all_chars.update(d)
    ranked = [c for c, _ in sorted(all_chars.items(), key=lambda kv: (-kv[1], ord(kv[0])))]
    held_cjk = collections.Counter({c: n for c, n in held_chars.items() if CJK.match(c)})
    demo_chars = collections.Counter("".join(DEMO_SENTENCES).replace("\n", ""))

    def stats(size):
        vocab = set(ranked[: size - 2])
        missing = sorted({c for c in demo_chars if c not in vocab})
        return coverage(held_chars, vocab), missing, coverage(held_cjk, vocab)

    sizes = sorted({args.vocab, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 5000, 6000})
    table = [(V, *stats(V)) for V in sizes if V - 2 <= len(ranked)]
    needed = next((V for V in range(500, len(ranked) + 3, 50) if stats(V)[0] >= 0.995), None)
    needed_demo = next((V for V in range(500, len(ranked) + 3, 50) if not stats(V)[1]), None)
    cur_cov, cur_missing, _ = stats(args.vocab)
    print(f"vocabulary {args.vocab}: held-out Chinese prose coverage {cur_cov:.4%}; demo characters missing: "
          f"{''.join(cur_missing) or 'none'}; 99.5% needs {needed}; the demo sentences need {needed_demo}")

    vers = versions()
    lines = ["# Chinese prose from Debian packages (issue #14, item 1): data prepared, not trained", "",
             "Made by `/usr/bin/python3 tools/data/zh_prose_data.py --download` (then without `--download` to re-measure). "
             "Text goes to `build/zh/prose/` (not in git).", "",
             "| package | version | what | licence (its copyright file) | train paragraphs | train chars | held-out paragraphs | held-out chars |",
             "|---|---|---|---|---|---|---|---|"]
    for package, ntr, ctr, nh, ch in rows:
        lines.append(f"| {package} | {vers.get(package, '?')} | {PACKAGES[package][1]} | {PACKAGES[package][2]} | "
                     f"{ntr} | {ctr} | {nh} | {ch} |")
    lines += ["", f"Distinct characters (this prose + fortunes training split): {len(ranked)}. Vocabulary = the most "
              "frequent characters + `<unk>`, `<bos>`.", "",
              "| vocabulary size | held-out Chinese prose covered (every character) | its CJK characters only | "
              "demo sentence characters outside it |", "|---|---|---|---|"]
    for V, cov, missing, cjk in table:
        lines.append(f"| {V} | {cov:.4%} | {cjk:.4%} | {''.join(missing) or 'none'} |")
    lines += ["", f"- Goal ≥ 99.5 % of held-out Chinese prose characters: needs a vocabulary of **{needed}**; "
              f"today's {args.vocab} covers {cur_cov:.2%}.",
              f"- The demo's example sentences ({len(DEMO_SENTENCES)}, web/demo/src/state.js) have no character outside "
              f"a vocabulary of **{needed_demo}**.",
              "- Size: token embedding and output head are vocab × d_model floats each; at d_model 96, "
              "+1000 tokens cost 0.77 MB untied or 0.38 MB with the head tied to the embedding.",
              "- The packages are manuals: technical prose. Everyday words are rare in them (猫 and 饿 of the demo's "
              "default sentence need a vocabulary near 3,000), so the next vocabulary should add the demo sentences' "
              "characters explicitly (a handful of tokens), and the training mix keep fortunes-zh's everyday text "
              "beside the manuals.", ""]
    with open(args.record, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
