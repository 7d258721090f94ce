// The circuits' route through head_dim × head_dim Gram matrices (web/src/circuits.js), whose XᵀX takes four rows of X
// at a time: against the d × d product computed here in float64, for hidden sizes that are and are not a multiple of
// four, so the rows left after the last group of four are counted too. (research.test.js checks the circuits of real
// checkpoints against PyTorch.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { circuitNorms, headCircuits } from '../../web/src/circuits.js';
import { mulberry32 } from '../random.js';

/** A head's weights { q, k, v, o }, each [d, n], seeded. */
function weights(d, n, seed) {
  const rand = mulberry32(seed);
  const m = () => ({ data: Float32Array.from({ length: d * n }, () => 2 * rand() - 1), shape: [d, n] });
  return { kvHead: 0, q: m(), k: m(), v: m(), o: m() };
}

/** X·Yᵀ in float64, [d, d]. */
function product(x, y, d, n) {
  const p = new Float64Array(d * d);
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) for (let c = 0; c < n; c++) p[i * d + j] += x[i * n + c] * y[j * n + c];
  return p;
}

/** The largest singular value of a d × d matrix: power iteration on PᵀP. */
function largest(p, d) {
  let v = Float64Array.from({ length: d }, (_, i) => 1 + i / d), s = 0;
  for (let it = 0; it < 500; it++) {
    const pv = new Float64Array(d), w = new Float64Array(d);
    for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) pv[i] += p[i * d + j] * v[j];
    for (let j = 0; j < d; j++) for (let i = 0; i < d; i++) w[j] += p[i * d + j] * pv[i];
    const norm = Math.hypot(...w);
    v = w.map((x) => x / norm);
    s = Math.sqrt(norm);
  }
  return s;
}

for (const [d, n] of [[1, 1], [3, 2], [4, 4], [5, 3], [7, 4], [9, 3], [13, 5]]) {
  test(`d = ${d}, head_dim = ${n}: norms and singular values are those of the d × d products`, () => {
    const w = weights(d, n, 17 + d * 31 + n);
    const c = headCircuits(w);
    const norms = circuitNorms(1, 1, () => w);
    for (const [kind, x, y] of [['qk', w.q, w.k], ['ov', w.v, w.o]]) {
      const p = product(x.data, y.data, d, n);
      const frob = Math.sqrt(p.reduce((s, v) => s + v * v, 0));
      const sv = c[`${kind}SingularValues`].data;
      assert.equal(sv.length, n);
      assert.ok(Math.abs(norms[kind].data[0] - frob) < 1e-5 * frob, `${kind}: norm ${norms[kind].data[0]}, product's ${frob}`);
      // Σσ² = ‖P‖²_F, and σ₁ is the product's largest singular value.
      const sumSq = sv.reduce((s, v) => s + v * v, 0);
      assert.ok(Math.abs(Math.sqrt(sumSq) - frob) < 1e-5 * frob, `${kind}: √Σσ² ${Math.sqrt(sumSq)}, ‖P‖ ${frob}`);
      assert.ok(Math.abs(sv[0] - largest(p, d)) < 1e-4 * sv[0], `${kind}: σ₁ ${sv[0]}, power iteration ${largest(p, d)}`);
      c[kind].data.forEach((v, i) => assert.ok(Math.abs(v - p[i]) < 1e-5, `${kind}[${i}]: ${v}, ${p[i]}`));
    }
  });
}
