#!/usr/bin/python3
"""Synthetic "English date -> ISO date" data for the seq2seq demo model (second round, issue #14 item 3).

Each example is one (year or no year, month, day) phrased in English, in words or digits, inside an optional
sentence. Three kinds of answer, all spelled with the target characters "-0123456789" plus one whole-word token:
  "YYYY-MM-DD"  a real calendar date, 1900-01-01 .. 2099-12-31;
  "--MM-DD"     no year in the text (ISO 8601's reduced form): nothing invented;
  "invalid"     a day the month does not have (31 April, 30 February, 29 February of a non-leap year).
Phrasings: day-month-year and month-day-year, `the D of M`, `M the D`, year-first; days as `5`, `05`, `5th`,
`fifth`, `twenty-first`; months in full, as abbreviations (`Mar`, `Sept`, with or without a full stop) or as digits;
years in digits or spoken (`nineteen oh five`, `two thousand and twelve`, `twenty twelve`); ISO input (`1990-03-05`,
`1990/3/5`); numeric day/month orders only where they cannot be misread (the day is above 12, or equals the month:
`25/12/1990`, `12/25/1990`, `5.5.1990`); a correct weekday; sentences around the date, whose words are mostly
outside the vocabulary (so <unk>) and may hold numbers and ordinals that are not the date. Up to MAX_WORDS words.
Ambiguous numeric forms such as `3/5/1990` are never generated: the model has no rule for them.

Each source word carries a tag for the head analysis: day, month, year_hi / year_lo / year_mid (spoken years:
the century words, the last-two-digit words, joining words), year (a digit year) or other.

Source tokenisation (tools/MODEL_FORMAT.md, `words_ascii_lower`): ASCII A-Z lower-cased, every character outside
[a-z0-9] separates words. A digit year such as 1990 is one word; the vocabulary holds every year 1900..2099.
"""

import calendar
import datetime
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
from attnscope_tools.tokenizers import ascii_lower_words  # noqa: E402

MAX_WORDS = 32
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]
# Abbreviations a writer uses (with or without a full stop, which the tokeniser drops); "may" is already a month.
MONTH_ABBR = {1: ["jan"], 2: ["feb"], 3: ["mar"], 4: ["apr"], 5: ["may"], 6: ["jun"], 7: ["jul"], 8: ["aug"],
              9: ["sep", "sept"], 10: ["oct"], 11: ["nov"], 12: ["dec"]}
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
WEEKDAY_ABBR = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
        "nineteen"]
TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty",
        9: "ninety"}
ORD_ONES = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
            "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
            "sixteenth", "seventeenth", "eighteenth", "nineteenth"]
ORD_TENS = {2: "twentieth", 3: "thirtieth"}
# Short words that join a date's parts; they are in the vocabulary, so the model sees them as themselves also when
# they occur in the sentence around a date.
FUNCTION_WORDS = ["the", "of", "on", "in", "and", "year"]

FIRST_YEAR, LAST_YEAR = 1900, 2099
START = datetime.date(FIRST_YEAR, 1, 1)
END = datetime.date(LAST_YEAR, 12, 31)
N_DAYS = (END - START).days + 1

INVALID = "invalid"  # the whole-word target token for a day the month does not have

src_words = ascii_lower_words  # the source tokenisation: ASCII lower-case, split at every non [a-z0-9] character


def source_vocab():
    words = set(MONTHS) | {a for v in MONTH_ABBR.values() for a in v} | set(WEEKDAYS) | set(WEEKDAY_ABBR)
    words |= set(ONES[1:]) | set(TENS.values()) | set(ORD_ONES[1:]) | set(ORD_TENS.values())
    words |= {"hundred", "thousand", "oh", "o"} | set(FUNCTION_WORDS)
    words |= {str(d) for d in range(1, 32)} | {f"{d:02d}" for d in range(1, 10)}
    words |= {f"{d}{suffix(d)}" for d in range(1, 32)}
    words |= {str(y) for y in range(FIRST_YEAR, LAST_YEAR + 1)}
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


def month_length(year, month):
    """Days in the month; with no year, February has 29 (29 February is a date in some year)."""
    return calendar.monthrange(2000 if year is None else year, month)[1]


def answer(year, month, day):
    """The target string: YYYY-MM-DD, --MM-DD (no year) or 'invalid'."""
    if day > month_length(year, month):
        return INVALID
    return f"--{month:02d}-{day:02d}" if year is None else f"{year:04d}-{month:02d}-{day:02d}"


def target_tokens(target):
    return [INVALID] if target == INVALID else list(target)


def target_fields(target):
    """Field of each target token, then EOS: year / month / day / sep / invalid / eos."""
    if target == INVALID:
        return ["invalid", "eos"]
    if target.startswith("--"):
        return ["sep", "sep", "month", "month", "sep", "day", "day", "eos"]
    return ["year"] * 4 + ["sep"] + ["month"] * 2 + ["sep"] + ["day"] * 2 + ["eos"]


# ----------------------------------------------------------------------------- parts of a date

def pick(rng, options, weights=None):
    if weights is None:
        return options[int(rng.random() * len(options))]
    r = rng.random() * sum(weights)
    for o, w in zip(options, weights):
        r -= w
        if r < 0:
            return o
    return options[-1]


def day_words(d, rng, numeric_only=False):
    """-> list of (word, tag)."""
    form = "digits" if numeric_only else pick(rng, ["ordinal", "ordinal_digits", "digits", "padded", "cardinal"],
                                              [0.38, 0.27, 0.25, 0.04, 0.06])
    if form == "ordinal":
        words = ordinal_words(d)
    elif form == "ordinal_digits":
        words = [f"{d}{suffix(d)}"]
    elif form == "padded" and d < 10:
        words = [f"{d:02d}"]
    elif form == "cardinal":
        words = cardinal(d)
    else:
        words = [str(d)]
    return [(w, "day") for w in words]


def month_word(m, rng):
    r = rng.random()
    return MONTHS[m - 1] if r < 0.6 else pick(rng, MONTH_ABBR[m])


def spoken_year(y, rng):
    """-> list of (word, tag); tags year_hi (the century), year_lo (the last two digits), year_mid (joining)."""
    hi, lo = divmod(y, 100)
    H, L, M = "year_hi", "year_lo", "year_mid"
    if hi == 19:
        if lo == 0:
            opts = [[("nineteen", H), ("hundred", L)]]
        elif lo < 10:
            opts = [[("nineteen", H), (pick(rng, ["oh", "oh", "o"]), L), (ONES[lo], L)],
                    [("nineteen", H), ("hundred", M), ("and", M), (ONES[lo], L)]]
        else:
            opts = [[("nineteen", H)] + [(w, L) for w in cardinal(lo)]]
    else:  # 20xx
        if lo == 0:
            opts = [[("two", H), ("thousand", H)]]
        elif lo < 10:
            opts = [[("two", H), ("thousand", H), ("and", M), (ONES[lo], L)],
                    [("two", H), ("thousand", H), (ONES[lo], L)],
                    [("twenty", H), (pick(rng, ["oh", "oh", "o"]), L), (ONES[lo], L)]]
        else:
            opts = [[("two", H), ("thousand", H), ("and", M)] + [(w, L) for w in cardinal(lo)],
                    [("two", H), ("thousand", H)] + [(w, L) for w in cardinal(lo)],
                    [("twenty", H)] + [(w, L) for w in cardinal(lo)]]
    return pick(rng, opts)


def year_words(y, rng):
    if rng.random() < 0.5:
        return [(str(y), "year")]
    return spoken_year(y, rng)


def year_joint(rng):
    """What stands between the day/month and the year: nothing (or a comma), `in`, `of`, `in the year`."""
    return pick(rng, [[], [("in", "other")], [("of", "other")],
                      [("in", "other"), ("the", "other"), ("year", "other")]], [0.75, 0.12, 0.05, 0.08])


def numeric_core(y, m, d, rng):
    """All-digit forms -> list of (word, tag). Year first (ISO), or day/month orders that cannot be misread."""
    mw = (f"{m:02d}" if rng.random() < 0.6 else str(m), "month")
    dw = (f"{d:02d}" if rng.random() < 0.6 and d < 10 else str(d), "day")
    yw = (str(y), "year")
    if rng.random() < 0.55 or not (d > 12 or d == m):
        return [yw, mw, dw]                 # 1990-03-05, 1990/3/5, 1990.03.05
    if rng.random() < 0.5:
        return [dw, (str(m), "month"), yw]  # 25/12/1990, 25.12.1990
    return [(str(m), "month"), dw, yw]      # 12/25/1990


def words_core(y, m, d, rng):
    """Day and month in words (or the day in digits), the year optional -> list of (word, tag)."""
    day = day_words(d, rng)
    the_day = [("the", "other")] + day if rng.random() < 0.25 else day
    month = [(month_word(m, rng), "month")]
    order = pick(rng, ["dm", "the_d_of_m", "md", "m_the_d", "y_first"], [0.27, 0.2, 0.33, 0.15, 0.05])
    if order == "y_first" and y is None:
        order = "md"
    if order == "dm":
        body = the_day + month
    elif order == "the_d_of_m":
        body = [("the", "other")] + day + [("of", "other")] + month
    elif order == "md":
        body = month + day
    elif order == "m_the_d":
        body = month + [("the", "other")] + [(w, "day") for w in ordinal_words(d)]
    else:  # 1990 march 5
        return year_words(y, rng) + month + day
    if y is not None:
        body += year_joint(rng) + year_words(y, rng)
    return body


# ----------------------------------------------------------------------------- the sentence around a date

# Everyday words outside the vocabulary (the tokeniser makes them <unk>): the model learns that such words, and
# the function words among them, are not part of the date.
CONTEXT_WORDS = """
    report invoice party concert wedding trip flight train visit appointment deadline exam lecture match game
    festival holiday payment order parcel package contract lease course meeting interview election ceremony
    launch release opening closing sale auction dinner lunch breakfast picnic birthday anniversary funeral
    baptism graduation trial hearing review inspection delivery shipment survey census voyage journey expedition
    company school museum library church bank office store hospital station bridge tower castle harbour garden
    farm mill factory theatre hotel village city county river road street house building
    mother father sister brother uncle aunt cousin friend neighbour teacher doctor captain mayor king queen
    president author painter singer engineer farmer sailor soldier student child children family team band crew
    was were is are be been will would should could must can did does do has have had get got
    held signed sent paid born died married moved arrived left opened closed founded built finished started
    began ended written printed dated published recorded posted received expected scheduled planned due
    booked cancelled postponed moved renamed elected crowned launched released announced
    we they he she it you i our their his her its my your this that these those there here
    at by before after until till from to for with about around since during for from than as
    not only just still also then again ever never soon late early last next every each some any
    old new big small long short great little good bad final annual weekly local national
    please note remember sure kindly dear sir madam yes so but or if when while because
    letter card note email message diary journal book paper record records archive file page
    """.split()
DISTRACTOR_NOUNS = ["times", "people", "copies", "pages", "guests", "days", "weeks", "years", "rooms", "boxes",
                    "tickets", "steps", "ships", "cars", "floor", "place", "time", "prize", "row", "chapter"]


def context_word(rng):
    r = rng.random()
    if r < 0.2:
        return (pick(rng, FUNCTION_WORDS[:5]), "other")
    return (pick(rng, CONTEXT_WORDS), "other")


def distractor(rng):
    """A number or an ordinal that is not part of the date, followed by a noun (`the second floor`, `3 copies`,
    `twenty people`), an ordinal used as an adverb (`she first sang`, `was second published`... followed by a verb
    or any word), or `may` as a verb."""
    r = rng.random()
    if r < 0.12:
        return [(pick(rng, ORD_ONES[1:4] + ORD_ONES[1:2] * 3), "other")]
    if r < 0.35:
        n = int(rng.random() * 31) + 1
        words = ordinal_words(n) if rng.random() < 0.6 else [f"{n}{suffix(n)}"]
        words = (["the"] if rng.random() < 0.6 else []) + words
    elif r < 0.7:
        n = int(rng.random() * 99) + 1
        words = cardinal(n) if rng.random() < 0.5 else [str(n)]
    elif r < 0.85:
        words = [str(int(rng.random() * 900) + 100)]  # 100..999: not a year of the vocabulary (<unk>)
    else:
        return [("may", "other"), (pick(rng, ["be", "have", "get", "come", "rain", "change"]), "other")]
    return [(w, "other") for w in words] + [(pick(rng, DISTRACTOR_NOUNS), "other")]


def clause(rng, n_words, distractors):
    """`n_words` context words with an optional distractor inside, never at the clause's end: at least one context
    word stands between it and the date."""
    words = [context_word(rng) for _ in range(n_words)]
    if distractors and n_words >= 2 and rng.random() < 0.4:
        at = int(rng.random() * n_words)
        words = words[:at] + distractor(rng) + words[at:]
    return words


def lead_in(rng):
    r = rng.random()
    if r < 0.35:
        return []
    n = 1 + min(int(rng.expovariate(1 / 5.0)), 22)
    words = clause(rng, n, distractors=True)
    end = pick(rng, [None, "on", "of", "in", "before", "by", "until", "from", "dated", "since", "for"],
               [0.3, 0.3, 0.04, 0.04, 0.06, 0.05, 0.05, 0.05, 0.05, 0.03, 0.03])
    return words + ([(end, "other")] if end else [])


def trailing(rng):
    if rng.random() < 0.8:
        return []
    # Mostly a few words, sometimes enough to fill the sentence: at most 11 words after the date (round 2's first
    # model) left the year unread behind 24 or more.
    n = 1 + min(int(rng.expovariate(1 / 5.0)), 28)
    return [(pick(rng, ["at", "and", "in", "for", "but", "when", "with", "to"]), "other")] + clause(rng, n, False)


def example(rng, y, m, d, weekday=None):
    """-> (words, tags, target) for one phrasing of (y or None, m, d). `weekday` (0 = Monday) is written when
    given."""
    if y is not None and rng.random() < 0.15:
        core = numeric_core(y, m, d, rng)
    else:
        core = words_core(y, m, d, rng)
    if weekday is not None:
        wd = (WEEKDAYS[weekday] if rng.random() < 0.8 else WEEKDAY_ABBR[weekday], "other")
        core = [wd] + ([("the", "other")] if core[0][1] == "day" and rng.random() < 0.3 else []) + core
    lead, trail = lead_in(rng), trailing(rng)
    if weekday is not None and lead and rng.random() < 0.3:  # the weekday opens the sentence: "Friday, ..."
        lead, core = [core[0]] + lead, core[1:]
    while len(lead) + len(core) + len(trail) > MAX_WORDS:
        if trail:
            trail = trail[:-1]
        else:
            lead = lead[1:]
    words = lead + core + trail
    return [w for w, _ in words], [t for _, t in words], answer(y, m, d)


# ----------------------------------------------------------------------------- which dates

KINDS = ["valid", "no_year", "invalid"]
KIND_WEIGHTS = [0.7, 0.13, 0.17]


def sample_spec(rng, held_out):
    """-> (year or None, month, day, weekday or None) with the answer's kind drawn by KIND_WEIGHTS; dates near a
    month's end and 29 February are drawn more often than the calendar would, since they decide valid/invalid.
    `held_out` picks from the held-out dates (True) or the training dates (False), split by is_heldout."""
    while True:
        kind = pick(rng, KINDS, KIND_WEIGHTS)
        y = FIRST_YEAR + int(rng.random() * (LAST_YEAR - FIRST_YEAR + 1))
        m = 1 + int(rng.random() * 12)
        r = rng.random()
        if kind == "invalid":
            if r < 0.45:
                y = pick(rng, [yy for yy in range(FIRST_YEAR, LAST_YEAR + 1) if not calendar.isleap(yy)])
                m, d = 2, 29
            elif r < 0.7:
                m, d = 2, pick(rng, [30, 31])
            else:
                m, d = pick(rng, [4, 6, 9, 11]), 31
            if rng.random() < 0.12 and d != 29:
                y = None
        else:
            if kind == "no_year":
                y = None
            n = month_length(y, m)
            if r < 0.1:
                m, d = 2, 29
                if y is not None:
                    y = pick(rng, [yy for yy in range(FIRST_YEAR, LAST_YEAR + 1) if calendar.isleap(yy)])
            elif r < 0.3:
                d = n - int(rng.random() * 3)
            else:
                d = 1 + int(rng.random() * n)
        if is_heldout(y, m, d) != held_out:
            continue
        weekday = None
        if y is not None and answer(y, m, d) != INVALID and rng.random() < 0.2:
            weekday = datetime.date(y, m, d).weekday()
        elif rng.random() < 0.03:  # a weekday the model cannot check (no year, or no such day): it is ignored
            weekday = int(rng.random() * 7)
        return y, m, d, weekday


def is_heldout(y, m, d, frac=0.1):
    """Held-out split by hash of the (year, month, day) key, so no held-out date (valid or not, with its year or
    without) is ever seen in training, in any phrasing. 29 February is never held out: a digit year is one word,
    so whether it has a 29 February is a fact about that word, learnt from that year's 29 February (the first run
    held some out and got every one of them wrong: 5 % of its in-distribution test)."""
    if m == 2 and d == 29:
        return False
    key = f"{'----' if y is None else f'{y:04d}'}-{m:02d}-{d:02d}"
    h = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)
    return (h % 10000) < frac * 10000


def field(tag):
    return "year" if tag.startswith("year") else tag


if __name__ == "__main__":
    import random
    rng = random.Random(0)
    v = set(source_vocab())
    print(len(v), "source words")
    for _ in range(25):
        w, t, a = example(rng, *sample_spec(rng, False))
        print(f"{a:>10}  {' '.join(w)}")
    mx, kinds = 0, {}
    for _ in range(100000):
        w, t, a = example(rng, *sample_spec(rng, False))
        mx = max(mx, len(w))
        k = "invalid" if a == INVALID else "no_year" if a.startswith("--") else "valid"
        kinds[k] = kinds.get(k, 0) + 1
        assert all(tag == "other" or x in v for x, tag in zip(w, t)), (w, t)
        assert len(w) == len(t)
    print("max words", mx, kinds)
