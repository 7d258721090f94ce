// What an opened model's maps show (web/demo/src/research/maps.js): a key hidden and value-weighted maps, computed a
// layer at a time, against the definitions computed here in float64; the sink table's row; which queries a sink's
// mass averages; the research keys of the URL (research/hash.js) read back as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { viewMaps, mapsShown, rowViews, sinkFrom, sinkMassOf, shownKey, AT_ONCE } from '../../web/demo/src/research/maps.js';
import { parseResearch, writeResearch, defaultResearch } from '../../web/demo/src/research/hash.js';
import { mulberry32 } from '../random.js';

/** Causal maps [L, H, T, T] (rows softmaxed from seeded scores) and value norms [L, H, T]. */
function made(L, H, T, seed = 7) {
  const rand = mulberry32(seed);
  const data = new Float32Array(L * H * T * T);
  for (let row = 0; row < L * H * T; row++) {
    const i = row % T;
    const e = Array.from({ length: T }, (_, j) => (j <= i ? Math.exp(3 * rand()) : 0));
    const z = e.reduce((a, b) => a + b, 0);
    e.forEach((x, j) => { data[row * T + j] = x / z; });
  }
  const norms = Float32Array.from({ length: L * H * T }, () => 0.1 + 2 * rand());
  return { attention: { data, shape: [L, H, T, T] }, valueNorms: { data: norms, shape: [L, H, T] } };
}

/** Row `row` of [rows, T] weights times `scale` per key, renormalised (0s when nothing is left), in float64. */
function expectedRow(a, row, T, scale) {
  const x = Array.from({ length: T }, (_, j) => a[row * T + j] * scale(j));
  const z = x.reduce((s, v) => s + v, 0);
  return x.map((v) => (z > 0 ? v / z : 0));
}

const close = (got, want, what) => want.forEach((w, j) => assert.ok(Math.abs(got[j] - w) < 1e-6, `${what} key ${j}: ${got[j]}, expected ${w}`));

test('a hidden key: that column 0 and every row renormalised over the rest, in every layer', () => {
  const L = 3, H = 2, T = 6, { attention } = made(L, H, T);
  const v = viewMaps(attention, 'hidden', 2);
  assert.deepEqual(v.shape, [L, H, T, T]);
  for (let row = 0; row < L * H * T; row++) {
    close(v.data.subarray(row * T, (row + 1) * T), expectedRow(attention.data, row, T, (j) => (j === 2 ? 0 : 1)), `row ${row}`);
  }
  // A causal model's first rows see key 0 only: hidden, they are left with nothing (all 0, not NaN).
  const first = viewMaps(attention, 'hidden', 0);
  assert.deepEqual(Array.from(first.data.subarray(0, T)), new Array(T).fill(0));
});

test('value-weighted: α·‖v‖ renormalised per row, each head with its own norms', () => {
  const L = 2, H = 3, T = 5, { attention, valueNorms } = made(L, H, T, 11);
  const v = viewMaps(attention, 'value', 0, valueNorms);
  for (let row = 0; row < L * H * T; row++) {
    const m = Math.floor(row / T); // layer × head
    close(v.data.subarray(row * T, (row + 1) * T), expectedRow(attention.data, row, T, (j) => valueNorms.data[m * T + j]), `row ${row}`);
  }
});

test('the maps shown: the run itself for the weights, one kept object per view, the weights while the norms are awaited', () => {
  const { attention, valueNorms } = made(2, 2, 4);
  const run = { ids: [5, 6, 7, 8], tokens: ['a', 'b', 'c', 'd'], attention };
  assert.equal(mapsShown({ shows: 'weights', key: 1 }, run, null).run, run);
  const hidden = mapsShown({ shows: 'hidden', key: 1 }, run, null);
  assert.deepEqual(hidden.view, { shows: 'hidden', key: 1, token: 'b', waiting: false });
  assert.notEqual(hidden.run, run);
  assert.equal(hidden.run.tokens, run.tokens);
  assert.equal(mapsShown({ shows: 'hidden', key: 1 }, run, null).run, hidden.run, 'the same object while nothing changed');
  const waiting = mapsShown({ shows: 'value', key: 1 }, run, null);
  assert.equal(waiting.run, run);
  assert.equal(waiting.view.waiting, 'norms');
  assert.notEqual(mapsShown({ shows: 'value', key: 1 }, run, valueNorms).run.attention, attention);
  // A key past the input's end (the text became shorter) is the first token.
  assert.equal(mapsShown({ shows: 'hidden', key: 9 }, run, null).view.key, 0);
  assert.equal(shownKey(9, 4), 0);
});

test('large maps are viewed a layer per task: the weights meanwhile, said so; the last view asked for, then ready', async () => {
  const { attention } = made(2, 4, 400);
  assert.ok(attention.data.length > AT_ONCE);
  const run = { ids: Array.from({ length: 400 }, (_, i) => i), tokens: null, attention };
  let ready;
  const done = new Promise((ok) => { ready = ok; });
  const first = mapsShown({ shows: 'hidden', key: 3 }, run, null, () => assert.fail('an abandoned view called ready'));
  assert.equal(first.run, run);
  assert.equal(first.view.waiting, 'view');
  assert.equal(first.view.token, '#3');
  // Another key before the first view is done: the first is abandoned, the second computed.
  assert.equal(mapsShown({ shows: 'hidden', key: 4 }, run, null, ready).view.waiting, 'view');
  await done;
  const after = mapsShown({ shows: 'hidden', key: 4 }, run, null);
  assert.equal(after.view.waiting, false);
  assert.deepEqual(after.run.attention.data, viewMaps(attention, 'hidden', 4).data);
});

test('a sink’s mass averages the queries that can see the key, not a causal query 0; the row four ways', () => {
  assert.deepEqual([sinkFrom(0, 8, true), sinkFrom(3, 8, true), sinkFrom(7, 8, true), sinkFrom(0, 1, true), sinkFrom(5, 8, false)], [1, 3, 7, 0, 0]);
  const L = 2, H = 2, T = 5, { attention, valueNorms } = made(L, H, T, 3);
  const mass = sinkMassOf(attention, 2, true);
  for (let m = 0; m < L * H; m++) {
    let sum = 0;
    for (let i = 2; i < T; i++) sum += attention.data[(m * T + i) * T + 2];
    assert.ok(Math.abs(mass[m] - sum / (T - 2)) < 1e-6, `head ${m}: ${mass[m]}, expected ${sum / (T - 2)}`);
  }
  const r = rowViews(attention, 1, 0, 4, 0, valueNorms);
  const row = (1 * H + 0) * T + 4;
  close(r.weights, Array.from(attention.data.subarray(row * T, (row + 1) * T)), 'weights');
  close(r.hidden, expectedRow(attention.data, row, T, (j) => (j === 0 ? 0 : 1)), 'hidden');
  close(r.norms, Array.from(valueNorms.data.subarray(2 * T, 3 * T)), 'norms');
  close(r.value, expectedRow(attention.data, row, T, (j) => valueNorms.data[2 * T + j]), 'value-weighted');
  const none = rowViews(attention, 1, 0, 4, 0, null);
  assert.equal(none.norms, null);
  assert.equal(none.value, null);
});

test('the URL keeps what the maps show, the key, the sinks, the circuits and the cache’s hooks', () => {
  const cache = ['attn.hook_pattern', 'hook_resid_post', 'ln_final.hook_normalized'];
  const o = { ...defaultResearch(), shows: 'value', key: 3, sinks: true, circuits: true, cache };
  const p = new URLSearchParams();
  writeResearch(p, o);
  assert.equal(p.toString(), 'oshow=value&okey=3&osink=1&ocirc=1&ocache=pattern%2Cresid_post%2Cln_final');
  assert.deepEqual(parseResearch(p, defaultResearch()), o);
  // The defaults write nothing; unknown values read as the defaults; an empty cache list is an open form with nothing ticked.
  const q = new URLSearchParams();
  writeResearch(q, defaultResearch());
  assert.equal(q.toString(), '');
  const bad = parseResearch(new URLSearchParams('oshow=zzz&okey=-1&ocache=nothing,q'), defaultResearch());
  assert.deepEqual([bad.shows, bad.key, bad.cache], ['weights', 0, ['attn.hook_q']]);
  assert.deepEqual(parseResearch(new URLSearchParams('ocache='), defaultResearch()).cache, []);
});
