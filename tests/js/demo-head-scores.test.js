// The demo's "Find heads" scores (web/demo/src/open/worker/head-scores.js) on attention built to have a known answer
// (the head view's thinning is demo-head-lines.test.js').
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { headScores, randomIds } from '../../web/demo/src/open/worker/head-scores.js';

/** [1, 3, T, T]: head 0 looks at the previous token, head 1 at the induction target, head 2 at the first token. */
function made(half) {
  const T = 2 * half, H = 3;
  const data = new Float32Array(H * T * T);
  for (let i = 0; i < T; i++) {
    data[(0 * T + i) * T + Math.max(0, i - 1)] = 1;
    data[(1 * T + i) * T + (i >= half ? i - half + 1 : 0)] = 1;
    data[(2 * T + i) * T] = 1;
  }
  return { data, shape: [1, H, T, T] };
}

test('a previous-token, an induction and a sink head each score 1 on their own measure', () => {
  const s = headScores(made(10), 10);
  assert.deepEqual([...s.previous].map((x) => +x.toFixed(3)), [1, 0.053, 0.053]);
  assert.deepEqual([...s.induction].map((x) => +x.toFixed(3)), [0, 1, 0]);
  assert.equal(s.first[2], 1);
  // Queries 1 … 9 of the induction head have no earlier copy yet and look at key 0: 9 of 19.
  assert.deepEqual([s.first[0], s.first[1]].map((x) => +x.toFixed(3)), [0.053, 0.474]);
});

test('the random sequence is fixed and within the vocabulary', () => {
  const a = randomIds(50, 300);
  assert.deepEqual(a, randomIds(50, 300));
  assert.ok(a.every((x) => Number.isInteger(x) && x >= 0 && x < 300));
  assert.ok(new Set(a).size > 30);
});
