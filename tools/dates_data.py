#!/usr/bin/python3
"""Synthetic "English date in words -> ISO date" data for the seq2seq demo model.

Every example is a real calendar date between 1900-01-01 and 2099-12-31, phrased in one of
several English word orders (day/month/year reordering makes the cross-attention alignment
visible), with an optional correct weekday and optional filler words. The target is the ISO
string YYYY-MM-DD. Each source word carries a field tag (day / month / year / other) for the
head analysis.

Source tokenisation (see tools/MODEL_FORMAT.md): ASCII letters A-Z are lower-cased, every
character that is not [a-z0-9] separates words, empty words are dropped.
"""

import datetime
import hashlib

from attnscope_tools.tokenizers import ascii_lower_words

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
        "nineteen"]
TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty",
        9: "ninety"}
ORD_ONES = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
            "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
            "sixteenth", "seventeenth", "eighteenth", "nineteenth"]
ORD_TENS = {2: "twentieth", 3: "thirtieth"}
FILLER = ["the", "of", "and", "on", "in", "year"]

START = datetime.date(1900, 1, 1)
END = datetime.date(2099, 12, 31)
N_DAYS = (END - START).days + 1


src_words = ascii_lower_words  # the source tokenisation: ASCII lower-case, split at every non [a-z0-9] character


def source_vocab():
    words = set(MONTHS) | set(WEEKDAYS) | set(ONES[1:]) | set(TENS.values()) | set(ORD_ONES[1:])
    words |= set(ORD_TENS.values()) | {"hundred", "thousand", "oh"} | set(FILLER)
    words |= {str(d) for d in range(1, 32)}
    words |= {f"{d}{suffix(d)}" for d in range(1, 32)}
    return sorted(words, key=lambda w: (w[0].isdigit(), len(w) if w[0].isdigit() else 0, w))


def suffix(d):
    if d in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(d % 10, "th")


def cardinal(n):
    """1..99 in words (list)."""
    if n < 20:
        return [ONES[n]]
    t, o = divmod(n, 10)
    return [TENS[t]] + ([ONES[o]] if o else [])


def ordinal_words(d):
    if d < 20:
        return [ORD_ONES[d]]
    t, o = divmod(d, 10)
    return [TENS[t], ORD_ONES[o]] if o else [ORD_TENS[t]]


def day_forms(d, rng):
    r = rng.random()
    if r < 0.6:
        return ordinal_words(d)
    if r < 0.8:
        return [f"{d}{suffix(d)}"]
    return [str(d)]


def year_forms(y, rng):
    """-> list of (word, tag) with tag 'year_hi' (words for the first two digits), 'year_lo'
    (words for the last two digits) or 'year_mid' ('and', and 'hundred' when it only joins)."""
    hi, lo = divmod(y, 100)
    H, L, M = "year_hi", "year_lo", "year_mid"
    if hi == 19:
        if lo == 0:
            opts = [[("nineteen", H), ("hundred", L)]]
        elif lo < 10:
            opts = [[("nineteen", H), ("oh", L), (ONES[lo], L)],
                    [("nineteen", H), ("hundred", M), ("and", M), (ONES[lo], L)]]
        else:
            opts = [[("nineteen", H)] + [(w, L) for w in cardinal(lo)]]
    else:  # 20xx
        if lo == 0:
            opts = [[("two", H), ("thousand", H)]]
        elif lo < 10:
            opts = [[("two", H), ("thousand", H), ("and", M), (ONES[lo], L)],
                    [("two", H), ("thousand", H), (ONES[lo], L)],
                    [("twenty", H), ("oh", L), (ONES[lo], L)]]
        else:
            opts = [[("two", H), ("thousand", H), ("and", M)] + [(w, L) for w in cardinal(lo)],
                    [("two", H), ("thousand", H)] + [(w, L) for w in cardinal(lo)],
                    [("twenty", H)] + [(w, L) for w in cardinal(lo)]]
    return opts[int(rng.random() * len(opts))]


def phrase(date, rng):
    """-> (words, tags) for one random phrasing of `date`; tags: 'day', 'month', 'year_hi',
    'year_mid', 'year_lo', 'other' (field(tag) gives day / month / year / other)."""
    day = [(w, "day") for w in day_forms(date.day, rng)]
    month = [(MONTHS[date.month - 1], "month")]
    year = year_forms(date.year, rng)
    if rng.random() < 0.2:
        year = [("in", "other"), ("the", "other"), ("year", "other")] + year
    fmt = int(rng.random() * 4)
    if fmt == 0:      # the fifth of march nineteen ninety
        body = [("the", "other")] + day + [("of", "other")] + month + year
    elif fmt == 1:    # march fifth nineteen ninety / march 5 ...
        body = month + day + year
    elif fmt == 2:    # march the fifth nineteen ninety
        body = month + [("the", "other")] + day + year
    else:             # fifth march nineteen ninety
        body = day + month + year
    pre = []
    r = rng.random()
    if r < 0.3:
        pre = [(WEEKDAYS[date.weekday()], "other")]
    if rng.random() < 0.15:
        pre = [("on", "other")] + pre
    words = pre + body
    return [w for w, _ in words], [t for _, t in words]


def field(tag):
    return "year" if tag.startswith("year") else tag


def iso(date):
    return date.isoformat()


def target_fields():
    """Field of each target character of YYYY-MM-DD, then EOS."""
    return ["year"] * 4 + ["sep"] + ["month"] * 2 + ["sep"] + ["day"] * 2 + ["eos"]


def date_from_index(i):
    return START + datetime.timedelta(days=int(i))


def is_heldout_date(date, frac=0.1):
    h = int(hashlib.sha256(date.isoformat().encode()).hexdigest()[:8], 16)
    return (h % 10000) < frac * 10000


if __name__ == "__main__":
    import random
    rng = random.Random(0)
    v = source_vocab()
    print(len(v), v[:40])
    for _ in range(12):
        d = date_from_index(rng.randrange(N_DAYS))
        w, t = phrase(d, rng)
        print(iso(d), " ".join(w), len(w))
    mx = 0
    for _ in range(100000):
        d = date_from_index(rng.randrange(N_DAYS))
        w, t = phrase(d, rng)
        mx = max(mx, len(w))
        assert all(x in v for x in w), w
    print("max words", mx)
