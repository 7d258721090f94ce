#!/usr/bin/python3
"""Repeated spans for the character LM's training mix (issue #14, item 2): the data that makes induction heads
form. Induction-head work (Olsson et al. 2022) trains on text where a span recurs: the model learns that after
a token seen before comes what followed it then, which needs a previous-token head in an earlier layer and an
induction head reading it. Natural text repeats too rarely within 128 characters for that to be learnt here.

    repeated_sequence(rng, T, vocab_size, specials, docs) -> T + 1 ids: <bos> s s s ... cut to T + 1

`s` is n distinct random non-special tokens (with odds 1 - text_share) (nothing but the repeat predicts them, as in
the induction score of tools/measure/measure_heads.py) or a span of n tokens of a training document (odds text_share: copying real
text, as the demo's "Repetition" example asks for); n is drawn from [min_span, max_span].
"""

import numpy as np


def repeated_sequence(rng, T, vocab_size, specials, docs, min_span=8, max_span=48, bos=1, text_share=0.5):
    n = int(rng.randint(min_span, max_span + 1))
    if rng.rand() < 1 - text_share or not docs:
        span = list(rng.choice(np.arange(specials, vocab_size), size=n, replace=False))
    else:
        doc = docs[rng.randint(len(docs))][1:]  # without its <bos>
        while len(doc) < n:
            doc = doc + docs[rng.randint(len(docs))][1:]
        start = rng.randint(len(doc) - n + 1)
        span = doc[start:start + n]
    seq = [bos]
    while len(seq) < T + 1:
        seq.extend(int(t) for t in span)
    return seq[: T + 1]


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    s = repeated_sequence(rng, 32, 1500, 2, [[1, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]])
    print(len(s), s)
