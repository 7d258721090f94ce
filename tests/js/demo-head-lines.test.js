// The head view's thinning (web/demo/src/maps/lines.js' strongestLines) on maps whose strongest weights are known by
// construction: every weight distinct and placed by a formula, so the expected lines are counted, not copied.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { strongestLines, MAX_LINES } from '../../web/demo/src/maps/lines.js';

/** A causal T×T map whose row i weighs key j by (j + 1) (normalised): each row's strongest key is its last. */
function causal(T) {
  const data = new Float32Array(T * T);
  for (let i = 0; i < T; i++) {
    const sum = ((i + 1) * (i + 2)) / 2;
    for (let j = 0; j <= i; j++) data[i * T + j] = (j + 1) / sum;
  }
  return data;
}

test('a map with fewer nonzero weights than the bound: every line, strongest first', () => {
  const T = 6, data = causal(T);
  const { lines, of } = strongestLines(data, 0, T, T, 100);
  assert.equal(of, (T * (T + 1)) / 2);
  assert.equal(lines.length, of);
  // Query 0's only key weighs 1: the strongest line of all.
  assert.deepEqual(lines[0], [0, 0, 1]);
  for (let k = 1; k < lines.length; k++) assert.ok(lines[k - 1][2] >= lines[k][2]);
  // Zeros (the keys after each query) are never lines.
  assert.ok(lines.every(([i, j, w]) => j <= i && w > 0));
});

test('a long map is cut to exactly `max` lines, and they are its strongest', () => {
  const T = 512, data = causal(T);
  const { lines, of } = strongestLines(data, 0, T, T, MAX_LINES);
  assert.equal(of, (T * (T + 1)) / 2);
  assert.equal(lines.length, MAX_LINES);
  // The weakest line kept is at least every weight left out: sort the whole map in float64 to know the cut.
  const all = Array.from(data).filter((w) => w > 0).sort((a, b) => b - a);
  assert.equal(lines[MAX_LINES - 1][2], all[MAX_LINES - 1]);
  assert.equal(lines[0][2], all[0]);
  for (const [i, j, w] of lines) assert.equal(w, data[i * T + j]);
  assert.equal(new Set(lines.map(([i, j]) => `${i}/${j}`)).size, MAX_LINES);
});

test('a flat map (every weight in one bin of the histogram) still gives `max` lines', () => {
  // Rows of 1/S: every weight equal, so all L·S cells fall in the same bin and ties decide.
  const L = 300, S = 400;
  const data = new Float32Array(L * S).fill(1 / S);
  const { lines, of } = strongestLines(data, 0, L, S, 1000);
  assert.equal(of, L * S);
  assert.equal(lines.length, 1000);
  assert.ok(lines.every(([i, j, w]) => i < L && j < S && w === data[0]));
});

test('an offset selects one head of a [H, L, S] block, and rows and columns are told apart', () => {
  // Head 1 of two, L = 3 queries over S = 5 keys: one nonzero weight, at query 2, key 4.
  const L = 3, S = 5, data = new Float32Array(2 * L * S);
  data[0] = 1; // head 0's, not asked for
  data[L * S + 2 * S + 4] = 0.75;
  assert.deepEqual(strongestLines(data, L * S, L, S, 10), { lines: [[2, 4, 0.75]], of: 1 });
});
