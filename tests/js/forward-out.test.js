// Model.forward's `out: { attention }`: the maps copied into the caller's Float32Array give the bits of the fresh
// array forward() returns otherwise, for a plain pass, an encoder and a pass through a ForwardCache; the array is the
// result's own; a wrong array is refused before the pass (the cache keeps its pass), and nothing leaks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { init, loadModel, memoryUsage } from 'attnscope';
import { shippedModel } from './helpers.js';

const fixtures = new URL('../fixtures/hf/', import.meta.url);
const models = {};

before(async () => {
  await init();
  models.ours = await loadModel(shippedModel('char-lm.safetensors'));
  for (const name of ['llama-gqa', 'bert-base']) models[name] = await loadModel(new URL(`${name}/`, fixtures));
});
after(() => Object.values(models).forEach((m) => m.dispose()));

const idsOf = (n, vocab) => Array.from({ length: n }, (_, i) => (i * 7919 + 13) % vocab);
const bits = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
/** The number of values of every layer's maps at T tokens, from the model's own description. */
const mapValues = (model, T) => model.architecture.layers * model.architecture.heads * T * T;

for (const name of ['ours', 'llama-gqa', 'bert-base']) {
  test(`${name}: forward({ out: { attention } }) fills the caller's array with the fresh array's bits`, () => {
    const model = models[name];
    const T = Math.min(37, model.architecture.maxPositions), ids = idsOf(T, model.architecture.vocabSize);
    const fresh = model.forward(ids);
    // Filled with NaN first: every value must be written.
    const out = new Float32Array(mapValues(model, T)).fill(Number.NaN);
    const r = model.forward(ids, { out: { attention: out } });
    assert.equal(r.attention.data, out, 'the result holds the caller\'s array');
    assert.deepEqual(r.attention.shape, fresh.attention.shape);
    assert.ok(bits(out).equals(bits(fresh.attention.data)));
    assert.ok(bits(r.hidden.data).equals(bits(fresh.hidden.data)), 'the hidden states as without out');
    // A view into a larger buffer (a reused one): only its own values are written.
    const big = new Float32Array(out.length + 8).fill(-1);
    const view = new Float32Array(big.buffer, 16, out.length);
    model.forward(ids, { out: { attention: view } });
    assert.ok(bits(view).equals(bits(fresh.attention.data)));
    assert.deepEqual([...big.subarray(0, 4), ...big.subarray(4 + out.length)], [-1, -1, -1, -1, -1, -1, -1, -1]);
  });
}

test('llama-gqa: through a ForwardCache, out.attention holds the fresh pass\'s maps as the input grows and changes', () => {
  const model = models['llama-gqa'];
  const ids = idsOf(64, model.architecture.vocabSize);
  const { cache } = model.forward(ids.slice(0, 33), { cache: true });
  for (const [n, edit] of [[40, false], [40, true], [64, false], [63, false]]) {
    if (edit) ids[n - 1] = (ids[n - 1] + 1) % model.architecture.vocabSize; // a typist's edit of the last token
    const out = new Float32Array(mapValues(model, n)).fill(Number.NaN);
    const r = model.forward(ids.slice(0, n), { cache, out: { attention: out } });
    assert.ok(cache.reused > 0, `${n} tokens: the cache was used`);
    assert.ok(bits(r.attention.data).equals(bits(model.forward(ids.slice(0, n)).attention.data)), `${n} tokens`);
  }
  cache.dispose();
});

test('a wrong out is refused before the pass, naming the option, and the cache keeps its pass', () => {
  const model = models['llama-gqa'];
  const { layers: L, heads: H } = model.architecture;
  const ids = idsOf(40, model.architecture.vocabSize);
  const { cache } = model.forward(ids.slice(0, 36), { cache: true });
  const n = L * H * 40 * 40;
  assert.throws(() => model.forward(ids, { cache, out: { attention: new Float32Array(n - 1) } }), {
    name: 'RangeError',
    message: `LanguageModel.forward: options.out.attention: expected a Float32Array of ${n} values (shape [${L}, ${H}, 40, 40]), got Float32Array(${n - 1})`,
  });
  assert.equal(cache.positions, 36, 'the cache still holds the 36 tokens before the refused call');
  assert.throws(() => model.forward(ids, { out: { attention: new Float64Array(n) } }), {
    name: 'TypeError', message: /^LanguageModel\.forward: options\.out\.attention: expected a Float32Array, got Float64Array/,
  });
  assert.throws(() => model.forward(ids, { out: { logits: new Float32Array(4) } }), {
    name: 'TypeError', message: "LanguageModel.forward: options.out: unknown key 'logits' (expected attention)",
  });
  assert.throws(() => model.forward(ids, { out: new Float32Array(n) }), { name: 'TypeError', message: /options\.out: expected \{ attention\?: Float32Array \}/ });
  assert.throws(() => model.forward(ids, { needAttention: false, out: { attention: new Float32Array(n) } }), {
    name: 'RangeError', message: `LanguageModel.forward: options.out.attention: expected no array with needAttention: false (no attention is returned), got Float32Array(${n})`,
  });
  // The cache goes on from its 36 tokens (it reuses whole blocks of 32), and out works after the refusals.
  const out = new Float32Array(n);
  model.forward(ids, { cache, out: { attention: out } });
  assert.equal(cache.reused, 32);
  assert.ok(bits(out).equals(bits(model.forward(ids).attention.data)));
  cache.dispose();
});

// A leak check of the core's side: the copy into the caller's array leaves nothing behind in WebAssembly memory.
test('forward into the same out array, call after call, leaves WebAssembly memory as it was', () => {
  const model = models.ours;
  const T = 64, ids = idsOf(T, model.architecture.vocabSize);
  const out = new Float32Array(mapValues(model, T));
  for (let k = 0; k < 3; k++) model.forward(ids, { out: { attention: out } });
  const before = memoryUsage().wasmBytes;
  for (let k = 0; k < 20; k++) model.forward(ids, { out: { attention: out } });
  assert.equal(memoryUsage().wasmBytes, before);
});
