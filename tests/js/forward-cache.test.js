// LanguageModel.forward's `cache` through the JS API: appended input gives a fresh pass's bits (logits, hidden states,
// maps) for our char LM and a Hugging Face family, patched calls through a cache (per head, and per head and
// position) give a fresh patched pass's bits and PyTorch's logits, trace() and the logit lens through a cache of
// their input give a fresh call's bits, and misuse is a TypeError naming options.cache with nothing leaked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ForwardCache, init, loadModel, memoryUsage } from 'attnscope';
import { maxRelativeError, shippedModel } from './helpers.js';

const fixtures = new URL('../fixtures/hf/', import.meta.url);
const models = {};

before(async () => {
  await init();
  models.ours = await loadModel(shippedModel('char-lm.safetensors'));
  for (const name of ['gpt2-lm', 'llama-gqa']) models[name] = await loadModel(new URL(`${name}/`, fixtures));
});
after(() => Object.values(models).forEach((m) => m.dispose()));

/** Ids 0..n-1 of a fixed pseudo-random walk over the vocabulary. */
const idsOf = (n, vocab) => Array.from({ length: n }, (_, i) => (i * 7919 + 13) % vocab);

function assertSame(got, fresh, what) {
  for (const key of ['logits', 'hidden', 'attention']) {
    if (fresh[key] === null) {
      assert.equal(got[key], null, `${what}: ${key}`);
      continue;
    }
    assert.deepEqual(got[key].shape, fresh[key].shape, `${what}: ${key} shape`);
    assert.ok(Buffer.from(got[key].data.buffer).equals(Buffer.from(fresh[key].data.buffer)), `${what}: ${key} bits`);
  }
}

for (const name of ['ours', 'llama-gqa']) {
  test(`${name}: forward through a cache gives a fresh pass's bits as the input grows and changes`, () => {
    const model = models[name];
    const ids = idsOf(model.architecture.maxPositions, model.architecture.vocabSize);
    let result = model.forward(ids.slice(0, 30), { cache: true });
    const { cache } = result;
    assert.ok(cache instanceof ForwardCache);
    assert.equal(cache.reused, 0);
    for (const [n, reused] of [[33, 0], [40, 32], [44, 32], [64, 32], [63, 32]]) {
      result = model.forward(ids.slice(0, n), { cache });
      assert.equal(result.cache, cache, 'the same cache object');
      assert.equal(cache.positions, n);
      assert.equal(cache.reused, reused, `${n} tokens`);
      assertSame(result, model.forward(ids.slice(0, n)), `${n} tokens`);
    }
    assert.ok(cache.bytes > 0);
    cache.dispose();
    cache.dispose();
    assert.throws(() => model.forward(ids.slice(0, 8), { cache }), { name: 'TypeError', message: /options\.cache: this cache was disposed/ });
  });
}

test('ours: the pass a keepHeads call leaves in a cache is reused by the next call (patching\'s corrupted run after its clean one)', () => {
  const model = models.ours;
  const clean = idsOf(70, model.architecture.vocabSize), corrupted = clean.slice();
  corrupted[45] = (corrupted[45] + 1) % model.architecture.vocabSize;
  const kept = model.forward(clean, { keepHeads: true, needAttention: false, cache: true });
  assert.ok(Buffer.from(kept.heads.data.buffer).equals(Buffer.from(model.forward(clean, { keepHeads: true, needAttention: false }).heads.data.buffer)));
  const base = model.forward(corrupted, { needAttention: false, cache: kept.cache });
  assert.equal(base.cache, kept.cache);
  assert.equal(base.cache.reused, 32, 'the block before position 45');
  assertSame(base, model.forward(corrupted, { needAttention: false }), 'the corrupted run');
  base.cache.dispose();
});

test('gpt2-lm: patching every head through a cache gives the patched bits of a fresh pass, and PyTorch\'s logits', () => {
  const model = models['gpt2-lm'];
  const p = JSON.parse(readFileSync(new URL('gpt2-lm/patching.json', fixtures), 'utf8'));
  const clean = model.forward(p.clean_ids, { keepHeads: true, needAttention: false });
  const base = model.forward(p.corrupted_ids, { cache: true });
  const { layers, heads } = model.config;
  for (let layer = 0; layer < layers; layer++) {
    for (let head = 0; head < heads; head++) {
      const options = { patch: [{ layer, head }], patchFrom: clean.heads };
      const got = model.forward(p.corrupted_ids, { ...options, cache: base.cache });
      assertSame(got, model.forward(p.corrupted_ids, options), `layer ${layer} head ${head}`);
    }
  }
  for (const run of p.patched) {
    const patch = run.heads.map(([layer, head]) => ({ layer, head }));
    const out = model.forward(p.corrupted_ids, { needAttention: false, patch, patchFrom: clean.heads, cache: base.cache });
    const last = out.logits.data.subarray(out.logits.data.length - out.logits.shape[1]);
    assert.ok(maxRelativeError(last, run.logits) < 1e-4, `patched ${JSON.stringify(run.heads)}`);
  }
  // The kept pass is still the unpatched one: extending the input reuses it.
  assertSame(model.forward(p.corrupted_ids, { cache: base.cache }), model.forward(p.corrupted_ids), 'after patching');
  base.cache.dispose();
});

test('llama-gqa: per-position patching matches PyTorch; through a cache it starts at the layer and position', () => {
  const model = models['llama-gqa'];
  const p = JSON.parse(readFileSync(new URL('llama-gqa/patch_positions.json', fixtures), 'utf8'));
  const clean = model.forward(p.clean_ids, { keepHeads: true, needAttention: false });
  const base = model.forward(p.corrupted_ids, { cache: true });
  const V = model.config.vocabSize;
  for (const run of p.patched) {
    const options = { patch: [{ layer: run.layer, head: run.head }], patchFrom: clean.heads, patchPositions: run.positions };
    const fresh = model.forward(p.corrupted_ids, options);
    const label = `layer ${run.layer} head ${run.head} at ${run.positions}`;
    assert.ok(maxRelativeError(fresh.logits.data.subarray(p.first_row * V), run.logits) < 1e-4, label);
    assertSame(model.forward(p.corrupted_ids, { ...options, cache: base.cache }), fresh, label);
    assert.equal(base.cache.resumedLayer, run.layer);
    assert.equal(base.cache.resumedPosition, Math.floor(Math.min(...run.positions) / 32) * 32);
    const last = model.forward(p.corrupted_ids, { ...options, cache: base.cache, logitsToKeep: 1 });
    assert.deepEqual(last.logits.shape, [1, V]);
    assert.deepEqual(last.logits.data, fresh.logits.data.slice((p.corrupted_ids.length - 1) * V));
  }
  const bad = { patch: [{ layer: 0, head: 0 }], patchFrom: clean.heads };
  assert.throws(() => model.forward(p.corrupted_ids, { ...bad, patchPositions: [40] }),
    { name: 'RangeError', message: /^LanguageModel\.forward: patchPositions\[0\]: expected a position from 0 to 39, got 40$/ });
  assert.throws(() => model.forward(p.corrupted_ids, { ...bad, patchPositions: 3 }), { name: 'TypeError', message: /options\.patchPositions: expected an array/ });
  assert.throws(() => model.forward(p.corrupted_ids, { patchPositions: [1] }), { name: 'RangeError', message: /patchPositions: expected with options\.patch/ });
  assert.throws(() => model.forward(p.corrupted_ids, { logitsToKeep: 41 }),
    { name: 'RangeError', message: /^LanguageModel\.forward: options\.logitsToKeep: expected a whole number from 1 to 40 \(one row per token\), got 41$/ });
  assert.throws(() => model.forward(p.corrupted_ids, { logitsToKeep: 0 }), { name: 'RangeError', message: /options\.logitsToKeep: expected a whole number from 1/ });
  base.cache.dispose();
});

test('forward through a cache: misuse is a TypeError naming options.cache, and memory stays flat', () => {
  const ours = models.ours, llama = models['llama-gqa'];
  const { cache } = ours.forward([1, 2, 3], { cache: true });
  const expected = /^LanguageModel\.forward: options\.cache: expected true \(a new cache\) or a result\.cache/;
  assert.throws(() => ours.forward([1, 2], { cache: 'yes' }), { name: 'TypeError', message: expected });
  assert.throws(() => ours.forward([1, 2], { cache: {} }), { name: 'TypeError', message: /options\.cache: expected true/ });
  assert.throws(() => llama.forward([1, 2], { cache }), { name: 'TypeError', message: /options\.cache: expected a cache of this model, got another model's/ });
  assert.throws(() => ours.trace([1, 2], { layer: 0, head: 0, query: 0, cache: true }),
    { name: 'TypeError', message: /^LanguageModel\.trace: options\.cache: expected a result\.cache of this model's forward, got boolean true$/ });
  assert.throws(() => llama.trace([1, 2], { layer: 0, head: 0, query: 0, cache }), { name: 'TypeError', message: /trace: options\.cache: expected a cache of this model/ });
  assert.throws(() => ours.logitLens([1, 2], { cache: true }),
    { name: 'TypeError', message: /^LanguageModel\.logitLens: options\.cache: expected a result\.cache of this model's forward, got boolean true$/ });
  assert.throws(() => llama.logitLens([1, 2], { cache }),
    { name: 'TypeError', message: /^LanguageModel\.logitLens: options\.cache: expected a cache of this model/ });
  // A refused request: no cache is made, the given one still works.
  assert.throws(() => ours.forward([1, -2], { cache: true }), { name: 'RangeError', message: /tokens\[1\]/ });
  const before = memoryUsage().heapBytesInUse;
  for (let i = 0; i < 5; i++) ours.forward([1, 2, 3, 4 + i], { cache: true }).cache.dispose();
  for (let i = 0; i < 5; i++) ours.forward([1, 2, 3, 4 + i], { cache });
  assert.ok(memoryUsage().heapBytesInUse - before < 1 << 16, 'no cache left behind');
  cache.dispose();
  assert.ok(memoryUsage().heapBytesInUse <= before, 'dispose frees it');
  assert.throws(() => ours.trace([1, 2, 3], { layer: 0, head: 0, query: 0, cache }), { name: 'TypeError', message: /trace: options\.cache: this cache was disposed/ });
  assert.throws(() => ours.logitLens([1, 2, 3], { cache }),
    { name: 'TypeError', message: /^LanguageModel\.logitLens: options\.cache: this cache was disposed/ });
});

test('gpt2-lm: patchEach gives every run\'s forward() last row and PyTorch\'s logits; bad runs are refused by index', () => {
  const model = models['gpt2-lm'];
  const p = JSON.parse(readFileSync(new URL('gpt2-lm/patching.json', fixtures), 'utf8'));
  const clean = model.forward(p.clean_ids, { keepHeads: true, needAttention: false });
  const single = p.patched.filter((run) => run.heads.length === 1);
  const patches = [...single.map(({ heads: [[layer, head]] }) => ({ layer, head })), { layer: 1, head: 0, positions: [2, 5] }];
  const base = model.forward(p.corrupted_ids, { cache: true, needAttention: false });
  const { logits } = model.patchEach(p.corrupted_ids, { patches, patchFrom: clean.heads, cache: base.cache });
  const V = model.config.vocabSize;
  assert.deepEqual(logits.shape, [patches.length, V]);
  patches.forEach((patch, i) => {
    const row = logits.data.subarray(i * V, (i + 1) * V);
    const want = model.forward(p.corrupted_ids, { patch: [patch], patchFrom: clean.heads, patchPositions: patch.positions, logitsToKeep: 1 });
    assert.ok(Buffer.from(row.slice().buffer).equals(Buffer.from(want.logits.data.buffer)), `run ${i}`);
    if (i < single.length) assert.ok(maxRelativeError(row, single[i].logits) < 1e-4, `run ${i} against PyTorch`);
  });
  assert.equal(base.cache.resumedLayer, 1);
  // Without a cache: the same rows.
  const alone = model.patchEach(p.corrupted_ids, { patches, patchFrom: clean.heads });
  assert.ok(Buffer.from(alone.logits.data.buffer).equals(Buffer.from(logits.data.buffer)));
  // Two answers' logits alone (a logit difference), in any order, from a typed array: those columns' bits.
  const answers = [V - 1, 7, 7, 0];
  const columns = model.patchEach(p.corrupted_ids, { patches, patchFrom: clean.heads, cache: base.cache, logitIds: Int32Array.from(answers) });
  assert.deepEqual(columns.logits.shape, [patches.length, answers.length]);
  patches.forEach((_, i) => answers.forEach((id, j) => assert.ok(Object.is(columns.logits.data[i * answers.length + j], logits.data[i * V + id]), `run ${i}, token ${id}`)));
  const call = { patchFrom: clean.heads };
  assert.throws(() => model.patchEach(p.corrupted_ids, { ...call, patches, logitIds: [3, V] }),
    { name: 'RangeError', message: new RegExp(`^LanguageModel\\.patchEach: options\\.logitIds\\[1\\]: expected a token id from 0 to ${V - 1}, got ${V}$`) });
  assert.throws(() => model.patchEach(p.corrupted_ids, { ...call, patches, logitIds: [] }),
    { name: 'RangeError', message: /^LanguageModel\.patchEach: options\.logitIds: expected at least one token id/ });
  assert.throws(() => model.patchEach(p.corrupted_ids, { ...call, patches, logitIds: 5 }),
    { name: 'TypeError', message: /^LanguageModel\.patchEach: options\.logitIds: expected an array of token ids, got/ });
  // An array-like could claim any length: refused, as the types say (NumberList).
  assert.throws(() => model.patchEach(p.corrupted_ids, { ...call, patches, logitIds: { length: 2 ** 40, 0: 1 } }),
    { name: 'TypeError', message: /^LanguageModel\.patchEach: options\.logitIds: expected an array of token ids, got/ });
  assert.throws(() => model.tokenStrings({ length: 2 ** 40, 0: 1 }), { name: 'TypeError', message: /\.tokenStrings: ids: expected an array of token ids, got/ });
  // Ids that are no ids at all (tokenStrings is the JS side's own: it once read -1 and 1.5 as "<id -1>", "<id 1.5>");
  // one past the vocabulary reads <id N>, as a tokenizer's token past the model's table does.
  for (const [ids, at, got] of [[[0, -1], 1, -1], [[1.5], 0, 1.5], [[NaN], 0, NaN]]) {
    assert.throws(() => model.tokenStrings(ids),
      { name: 'RangeError', message: new RegExp(`^LanguageModel\\.tokenStrings: ids\\[${at}\\]: expected a token id \\(a whole number from 0\\), got ${String(got).replace('.', '\\.')}$`) });
  }
  assert.deepEqual(model.tokenStrings([V + 5]), model.hasTokenizer ? [`<id ${V + 5}>`] : null);
  // A typed array whose buffer went to another thread: a TypeError naming the call, not the engine's message.
  const gone = new Int32Array(p.corrupted_ids);
  structuredClone(gone.buffer, { transfer: [gone.buffer] });
  assert.throws(() => model.forward(gone),
    { name: 'TypeError', message: /^LanguageModel\.forward: input: expected text or an array of token ids, got a typed array \(Int32Array\) whose buffer was transferred \(detached\)$/ });
  assert.equal(model.forward(new Int32Array(p.corrupted_ids), { needAttention: false }).logits.shape[0], p.corrupted_ids.length);
  assert.throws(() => model.patchEach(p.corrupted_ids, { ...call, patches, logitIds: [1.5] }),
    { name: 'RangeError', message: new RegExp(`^LanguageModel\\.patchEach: options\\.logitIds\\[0\\]: expected a token id from 0 to ${V - 1}, got 1\\.5$`) });
  assert.throws(() => model.patchEach(p.corrupted_ids, { ...call, patches: [{ layer: 2, head: 0 }] }),
    { name: 'RangeError', message: /^LanguageModel\.patchEach: options\.patches\[0\]\.layer: expected 0 to 1, got 2$/ });
  assert.throws(() => model.patchEach(p.corrupted_ids, { ...call, patches: [{ layer: 0, head: 0, positions: [8] }] }),
    { name: 'RangeError', message: /: options\.patches\[0\]\.positions\[0\]: expected a position from 0 to 7/ });
  assert.throws(() => model.patchEach(p.corrupted_ids, { ...call, patches: [{ layer: 0 }] }),
    { name: 'TypeError', message: /options\.patches\[0\]\.head: expected a whole number/ });
  assert.throws(() => model.patchEach(p.corrupted_ids, { ...call, patches: 'all' }), { name: 'TypeError', message: /options\.patches: expected an array/ });
  assert.throws(() => model.patchEach(p.corrupted_ids, { patches }), { name: 'RangeError', message: /patchFrom: expected a kept run's heads/ });
  assert.throws(() => model.patchEach(p.corrupted_ids, { ...call, patches: [{ layer: 0, head: 0, position: 3 }] }),
    { name: 'TypeError', message: /options\.patches\[0\]: unknown option 'position'/ });
  assert.throws(() => model.patchEach(p.corrupted_ids, { ...call, patches: [{ layer: 0, head: 0, positions: [] }] }),
    { name: 'RangeError', message: /options\.patches\[0\]\.positions: expected at least one position/ });
  assert.throws(() => model.forward(p.corrupted_ids, { patch: [{ layer: 0, head: 0 }], ...call, patchPositions: [] }),
    { name: 'RangeError', message: /options\.patchPositions: expected at least one position/ });
  base.cache.dispose();
});

// trace() through a cache that holds its input's pass starts at the traced layer (the demo's step-by-step panel at
// every keystroke): every number is a fresh trace's, bit for bit; through a cache of another input, a fresh trace.
for (const name of ['ours', 'llama-gqa']) {
  test(`${name}: trace through a cache of its input gives a fresh trace's bits at every layer`, () => {
    const model = models[name];
    const { layers: L, heads: H } = model.architecture;
    const ids = idsOf(Math.min(45, model.architecture.maxPositions), model.architecture.vocabSize);
    const ablate = [{ layer: 0, head: H - 1 }];
    const { cache } = model.forward(ids, { ablate, cache: true, needAttention: false });
    const keys = ['layerInput', 'attentionInput', 'queryRaw', 'queryVector', 'keysRaw', 'keys', 'values', 'scores', 'weights', 'context', 'headOutput'];
    const same = (got, fresh, what) => {
      for (const key of keys) assert.ok(Buffer.from(got[key].data.buffer).equals(Buffer.from(fresh[key].data.buffer)), `${what}: ${key}`);
    };
    for (let layer = 0; layer < L; layer++) {
      const at = { layer, head: layer % H, query: ids.length - 1 - layer, ablate };
      same(model.trace(ids, { ...at, cache }), model.trace(ids, at), `layer ${layer}`);
    }
    const other = [...ids.slice(0, -1), (ids.at(-1) + 1) % model.architecture.vocabSize];
    const at = { layer: L - 1, head: 0, query: other.length - 1, ablate };
    same(model.trace(other, { ...at, cache }), model.trace(other, at), 'another input');
    assert.equal(cache.positions, ids.length);
    cache.dispose();
  });
}

// The logit lens through a cache that holds its input's pass (the demo's Worker, whose typing cache holds the text
// shown, keeping only the last row of logits) reads every layer's input and the last hidden state from it: a fresh
// lens's bits, ids as an Int32Array, and says so (fromCache); through a cache of another input or other heads switched
// off, a fresh lens.
for (const name of ['ours', 'llama-gqa']) {
  test(`${name}: the logit lens through a cache of its input gives a fresh lens's bits`, () => {
    const model = models[name];
    const { heads: H, vocabSize } = model.architecture;
    const ids = idsOf(Math.min(45, model.architecture.maxPositions), vocabSize);
    const ablate = [{ layer: 0, head: H - 1 }];
    const { cache } = model.forward(ids, { ablate, cache: true, logitsToKeep: 1 });
    // served: whether the lens says it read the cache (only the head ran) rather than running its own pass.
    const same = (got, fresh, what, served) => {
      assert.equal(got.fromCache, served, `${what}: ${served ? 'read from the cache' : 'a pass of its own'}`);
      assert.equal(fresh.fromCache, false, `${what}: the lens without a cache ran its own pass`);
      assert.deepEqual(got.probabilities.shape, fresh.probabilities.shape, `${what}: shape`);
      assert.ok(Buffer.from(got.probabilities.data.buffer).equals(Buffer.from(fresh.probabilities.data.buffer)), `${what}: probabilities`);
      assert.ok(got.topIds.data instanceof Int32Array, `${what}: ids as an Int32Array`);
      assert.deepEqual(got.topIds.data, fresh.topIds.data, `${what}: ids`);
    };
    same(model.logitLens(ids, { k: 5, ablate, cache }), model.logitLens(ids, { k: 5, ablate }), 'its input', true);
    const other = [...ids.slice(0, -1), (ids.at(-1) + 1) % vocabSize];
    same(model.logitLens(other, { k: 5, ablate, cache }), model.logitLens(other, { k: 5, ablate }), 'another input', false);
    same(model.logitLens(ids, { k: 5, cache }), model.logitLens(ids, { k: 5 }), 'other heads off', false);
    assert.equal(cache.positions, ids.length, 'the cache is left as it was');
    same(model.logitLens(ids, { k: 5, ablate, cache }), model.logitLens(ids, { k: 5, ablate }), 'its input again', true);
    cache.dispose();
  });
}
