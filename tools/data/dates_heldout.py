#!/usr/bin/python3
"""Held-out test dates for the second dates model (issue #14, item 3), written apart from the training generator
(tools/data/dates_data.py shares no table or function with this file), so that the test phrasings are not the
training phrasings.

    /usr/bin/python3 tools/data/dates_heldout.py [--count 3000] [--seed 2026] [--out build/dates-heldout.jsonl]

Each line is {"text": ..., "expected": ..., "kind": ...}. Expected answers:
  "YYYY-MM-DD"  a real date, 1900-01-01 .. 2099-12-31;
  "--MM-DD"     no year given: ISO 8601's reduced form, nothing invented (the target characters stay -0-9);
  "invalid"     a day the month does not have (31 April, 30 February, 29 February of a non-leap year).
Phrasings: day-month-year and month-day-year in words and in digits, ordinals (5th, fifth), abbreviations
(Mar., Sept), digit and spelled years, ISO input, slashed dates only where the order cannot be misread
(day > 12), weekdays, and lead-in words, up to 32 words. The split is 80 % valid, 10 % no year, 10 % invalid.
"""

import argparse
import calendar
import datetime
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools.paths import ROOT  # noqa: E402

MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
               "November", "December"]
MONTH_ABBREVIATIONS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
SMALL = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
         "seventeen eighteen nineteen").split()
DECADES = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty", 9: "ninety"}
SMALL_ORDINALS = ("zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
                  "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth").split()
LEAD_INS = ["", "", "", "on", "it was on", "the meeting is on", "we first met on", "my grandmother was born on",
            "the letter was dated", "please reply before", "the shop opened its doors on",
            "according to the old records kept in the town hall the bridge was finished on",
            "after a long and difficult winter the first ship finally reached the harbour on"]


def number_words(n):
    if n < 20:
        return SMALL[n]
    tens, ones = divmod(n, 10)
    return DECADES[tens] + ("-" + SMALL[ones] if ones else "")


def ordinal_words(n):
    if n < 20:
        return SMALL_ORDINALS[n]
    tens, ones = divmod(n, 10)
    if not ones:
        return DECADES[tens][:-1] + "ieth"
    return DECADES[tens] + "-" + SMALL_ORDINALS[ones]


def ordinal_digits(n):
    ending = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{ending}"


def spelled_year(year, rng):
    high, low = divmod(year, 100)
    if high == 20 and (low < 10 or rng.random() < 0.5):
        return "two thousand" + ("" if low == 0 else rng.choice([" and ", " "]) + number_words(low))
    if low == 0:
        return number_words(high) + " hundred"
    if low < 10:
        return number_words(high) + rng.choice([" oh ", " hundred and "]) + number_words(low)
    return number_words(high) + " " + number_words(low)


def day_text(day, rng):
    return rng.choice([str(day), ordinal_digits(day), ordinal_words(day), "the " + ordinal_words(day),
                       "the " + ordinal_digits(day)])


def month_text(month, rng):
    r = rng.random()
    if r < 0.6:
        return MONTH_NAMES[month - 1]
    abbreviation = "Sept" if month == 9 and rng.random() < 0.5 else MONTH_ABBREVIATIONS[month - 1]
    return abbreviation + ("." if rng.random() < 0.5 else "")


def year_text(year, rng):
    return str(year) if rng.random() < 0.5 else spelled_year(year, rng)


def phrase(year, month, day, rng):
    """One phrasing; `year` None leaves the year out."""
    if year is not None and rng.random() < 0.12:
        return rng.choice([f"{year:04d}-{month:02d}-{day:02d}", f"{year:04d}/{month:02d}/{day:02d}"])
    if year is not None and day > 12 and rng.random() < 0.1:
        return rng.choice([f"{day}/{month}/{year}", f"{month}/{day}/{year}", f"{day}.{month}.{year}"])
    d, m = day_text(day, rng), month_text(month, rng)
    if rng.random() < 0.5:  # day-month(-year)
        body = rng.choice([f"{d} {m}", f"{d} of {m}"])
    else:                   # month-day(-year)
        body = rng.choice([f"{m} {d}", f"{m} the {ordinal_words(day)}"])
    if year is not None:
        body += rng.choice([" ", ", ", " in "]) + year_text(year, rng)
    lead = rng.choice(LEAD_INS)
    return (lead + " " + body).strip()


def example(rng):
    kind = rng.choices(["valid", "no_year", "invalid"], weights=[8, 1, 1])[0]
    year = rng.randint(1900, 2099)
    month = rng.randint(1, 12)
    length = calendar.monthrange(year, month)[1]
    if kind == "invalid":
        choices = [(m, d) for m in range(1, 13) for d in range(29, 32) if d > calendar.monthrange(year, m)[1]]
        month, day = rng.choice(choices)
        expected = "invalid"
    else:
        day = rng.randint(1, length)
        expected = f"{year:04d}-{month:02d}-{day:02d}" if kind == "valid" else f"--{month:02d}-{day:02d}"
    text = phrase(None if kind == "no_year" else year, month, day, rng)
    if kind == "valid" and rng.random() < 0.2 and not re.match(r"^\d", text):
        weekday = datetime.date(year, month, day).strftime("%A")
        text = f"{weekday}, {text}" if rng.random() < 0.5 else text.replace(" on ", f" on {weekday} ", 1)
    return {"text": text, "expected": expected, "kind": kind}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "dates-heldout.jsonl"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    examples = [example(rng) for _ in range(args.count)]
    for e in examples:  # every answer checked against the calendar, and the 32-word bound of issue #14
        assert len(re.findall(r"[A-Za-z0-9]+", e["text"])) <= 32, e
        if e["kind"] == "valid":
            datetime.date.fromisoformat(e["expected"])
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        for e in examples:
            f.write(json.dumps(e) + "\n")
    kinds = {k: sum(e["kind"] == k for e in examples) for k in ("valid", "no_year", "invalid")}
    words = max(len(re.findall(r"[A-Za-z0-9]+", e["text"])) for e in examples)
    print(f"wrote {len(examples)} examples to {args.out}: {kinds}, up to {words} words")
    for e in examples[:12]:
        print(f"  {e['expected']:>10}  {e['text']}")


if __name__ == "__main__":
    main()
