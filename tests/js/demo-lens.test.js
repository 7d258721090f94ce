// The demo Worker's logit lens (web/demo/src/open/worker/research.js lensOf), in Node on the gpt2-lm fixture: through
// the typing cache it goes a few rows a call (logitLens's `layers`) with progress between calls, and the table it
// assembles is the one-call lens's, bit for bit; it stops when cancelled or superseded, and without a cache it is
// one call.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { init, loadModel } from 'attnscope';
import { lensOf, lensRowsPerCall } from '../../web/demo/src/open/worker/research.js';

let model;
before(async () => {
  await init();
  model = await loadModel(new URL('../fixtures/hf/gpt2-lm/', import.meta.url));
});
after(() => model.dispose());

const input = (ids) => ({ ids, tokens: ids.map(String), tokenTypeIds: null, total: ids.length });
const IDS = [5, 17, 3, 99, 42, 7];

test('rows per call: about 40 GFLOP of the head, at most a quarter of the rows, at least one', () => {
  assert.equal(lensRowsPerCall(13, 128, 768, 50257), 4, 'GPT-2 small at 128 tokens: 9.9 GFLOP a row');
  assert.equal(lensRowsPerCall(13, 512, 768, 50257), 1, 'at 512 tokens: 39.5 GFLOP a row');
  assert.equal(lensRowsPerCall(17, 128, 2048, 128256), 1, 'a row over 40 GFLOP is a call of its own');
  assert.equal(lensRowsPerCall(3, 6, 16, 268), 1, 'a small model: a call per row');
  assert.equal(lensRowsPerCall(41, 8, 16, 268), 11, 'a quarter of the rows at most');
});

test('through the typing cache: a call per row of this fixture, progress after each, the one-call lens bit for bit', async () => {
  const { cache } = model.forward(IDS, { cache: true });
  try {
    const whole = model.logitLens(IDS, { k: 10 });
    const progress = [];
    const { value } = await lensOf(model, input(IDS), [], cache, { onProgress: (done, total) => progress.push([done, total]) });
    const rows = model.config.layers + 1;
    assert.deepEqual(progress, Array.from({ length: rows }, (_, i) => [i + 1, rows]));
    assert.equal(value.calls, rows);
    assert.equal(value.fromCache, true);
    assert.equal(value.rows, rows);
    assert.deepEqual(value.probabilities, whole.probabilities.data);
    assert.deepEqual(value.topIds, whole.topIds.data);
    assert.deepEqual(Object.keys(value.names).map(Number).sort((a, b) => a - b), [...new Set(whole.topIds.data)].sort((a, b) => a - b));
  } finally {
    cache.dispose();
  }
});

test('cancelled or superseded between calls: it stops there', async () => {
  const { cache } = model.forward(IDS, { cache: true });
  try {
    let calls = 0;
    const cancelled = await lensOf(model, input(IDS), [], cache, { onProgress: () => calls++, cancelled: () => calls >= 1 });
    assert.deepEqual(cancelled.value, { cancelled: true });
    assert.equal(calls, 1);
    calls = 0;
    const superseded = await lensOf(model, input(IDS), [], cache, { onProgress: () => calls++, superseded: () => calls >= 2 });
    assert.equal(superseded.value, null);
    assert.equal(calls, 2);
  } finally {
    cache.dispose();
  }
});

test("a cache of another input: the first call runs its own pass, and the rest go in one more call", async () => {
  const { cache } = model.forward([1, 2, 3], { cache: true });
  try {
    const { value } = await lensOf(model, input(IDS), [], cache);
    assert.equal(value.fromCache, false);
    assert.equal(value.calls, 2);
    assert.deepEqual(value.probabilities, model.logitLens(IDS, { k: 10 }).probabilities.data);
  } finally {
    cache.dispose();
  }
});

test('without a cache: one call', async () => {
  const { value } = await lensOf(model, input(IDS), [], null);
  assert.equal(value.calls, 1);
  assert.deepEqual(value.topIds, model.logitLens(IDS, { k: 10 }).topIds.data);
});
