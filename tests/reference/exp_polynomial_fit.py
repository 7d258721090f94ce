#!/usr/bin/python3
# The polynomial of cpp/src/kernels/exp.hpp: run it to see the coefficients and their error (needs numpy).
# Minimax-ish fit (Lawson's iteratively reweighted least squares) of e^r ≈ 1 + r·(c1 + r·(c2 + r·(c3 + r·(c4 + r·c5))))
# on |r| ≤ ln2/2, minimising the relative error; coefficients rounded to float32, error checked after rounding.
import numpy as np
h = np.log(2) / 2
r = np.cos(np.linspace(0, np.pi, 4001)) * h
A = np.stack([r**k for k in range(1, 6)], axis=1)
b = np.exp(r) - 1
w = np.ones_like(r) / len(r)
for it in range(200):
    W = np.sqrt(w) / np.exp(r)
    c, *_ = np.linalg.lstsq(A * W[:, None], b * W, rcond=None)
    err = np.abs(A @ c - b) / np.exp(r)
    w = w * err; w /= w.sum()
c32 = c.astype(np.float32)
rr = np.linspace(-h, h, 200001)
p = 1 + rr * (c32[0] + rr * (c32[1] + rr * (c32[2] + rr * (c32[3] + rr * c32[4]))))
print("max rel err (exact arithmetic, float32 coefficients):", np.max(np.abs(p / np.exp(rr) - 1)))
for k, v in enumerate(c32, 1): print(f"c{k} = {float(v)!r}f  ({float(v).hex()})")
