"""The learning-rate schedule of both training scripts."""

import math


def lr_at(step, total, base, warmup, min_frac):
    """Learning rate of both training scripts: linear warm-up, then cosine decay to min_frac·base."""
    if step < warmup:
        return base * (step + 1) / warmup
    p = (step - warmup) / max(1, total - warmup)
    return base * (min_frac + (1 - min_frac) * 0.5 * (1 + math.cos(math.pi * p)))
