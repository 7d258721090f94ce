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

test("the model Worker: a cancel sent just after a lens request is that lens's, and each call of the lens is in the core's computation", async () => {
  // The Worker's module with a stand-in for its global scope: what it posts is kept in order.
  const posted = [];
  globalThis.self = { crossOriginIsolated: false, postMessage: (message) => posted.push(message) };
  await import('../../web/demo/src/open/worker/model-worker.js');
  const send = (data) => globalThis.self.onmessage({ data });
  const reply = async (id) => {
    for (;;) {
      const r = posted.find((m) => m.type === 'reply' && m.id === id);
      if (r) return r;
      await new Promise((ok) => setTimeout(ok, 5));
    }
  };
  send({ type: 'start', id: 1 });
  await reply(1);
  send({ type: 'load', id: 2, url: new URL('../fixtures/hf/gpt2-lm/', import.meta.url).href });
  assert.equal((await reply(2)).error, undefined);
  const text = 'the cat sat on the mat';
  send({ type: 'forward', id: 3, text, pair: null, ablate: [] }); // the typing pass: the lens reads its cache
  await reply(3);
  // Cancelled before the lens's handler has started (the Worker takes a turn first): the lens stops after its first call.
  send({ type: 'lens', id: 4, text, pair: null, ablate: [] });
  send({ type: 'cancelLens' });
  assert.deepEqual((await reply(4)).value, { cancelled: true });
  // A lens run to its end: every call comes after a 'compute' phase, so that the page's watchdog leaves it alone
  // even when another request is answered between two calls.
  const from = posted.length;
  send({ type: 'lens', id: 5, text, pair: null, ablate: [] });
  send({ type: 'trace', id: 6, text, pair: null, layer: 0, head: 0, query: 1, ablate: [] });
  const lens = await reply(5);
  assert.equal(lens.value.fromCache, true);
  const seen = posted.slice(from).map((m) => (m.type === 'phase' ? m.phase : m.type === 'researchProgress' ? `progress ${m.done}` : m.type === 'reply' ? `reply ${m.id}` : m.type));
  const progress = seen.flatMap((m, i) => (m.startsWith('progress') ? [seen[i - 1]] : []));
  assert.deepEqual(progress, ['compute', 'compute', 'compute'], seen.join(', '));
  assert.ok(seen.includes('reply 6'), 'the trace was answered between the calls or after them');
});
