// The public JS API: loading, layouts, options, state dicts and ownership.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { init, MultiHeadAttention, scaledDotProductAttention, memoryUsage, runtimeInfo } from 'attnscope';
import { maxRelativeError, randomTensor, runIsolated } from './helpers.js';

before(() => init());

test('init is idempotent and resolves', async () => {
  const first = init();
  assert.equal(init(), first);
  await first;
});

test('init({ wasmBinary }) and init({ wasmUrl }) load the module in a fresh process', () => {
  // The file of the build this process runs (the relaxed-SIMD suite runs attnscope-relaxed.wasm), so the bits match.
  const file = runtimeInfo().simd === 'relaxed' ? 'attnscope-relaxed.wasm' : 'attnscope.wasm';
  const outputs = ['wasmBinary', 'wasmUrl'].map((how) => runIsolated(`
    import { readFile } from 'node:fs/promises';
    import { init, MultiHeadAttention } from 'attnscope';
    const url = new URL('./dist/${file}', 'file://' + process.cwd() + '/');
    await init(${JSON.stringify(how)} === 'wasmBinary' ? { wasmBinary: await readFile(url) } : { wasmUrl: url });
    const mha = new MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: 3 });
    console.log(JSON.stringify(Array.from(mha.forward([[1, 2, 3, 4], [4, 3, 2, 1]]).output.data)));`));
  const mha = new MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: 3 });
  const expected = Array.from(mha.forward([[1, 2, 3, 4], [4, 3, 2, 1]]).output.data);
  for (const printed of outputs) assert.deepEqual(JSON.parse(printed), expected);
  mha.dispose();
});

test('init with a wasmUrl that does not exist rejects, and can be retried', () => {
  const printed = runIsolated(`
    import { init } from 'attnscope';
    try { await init({ wasmUrl: new URL('file:///nonexistent/attnscope.wasm') }); } catch (e) { console.log('rejected: ' + e.code); }
    await init();
    console.log('retried: ok');`);
  assert.equal(printed, 'rejected: ENOENT\nretried: ok\n');
});

test('properties reflect the configuration', () => {
  const mha = new MultiHeadAttention({ embedDim: 12, numHeads: 3, kdim: 5, vdim: 7, bias: false });
  assert.deepEqual([mha.embedDim, mha.numHeads, mha.headDim, mha.kdim, mha.vdim, mha.bias], [12, 3, 4, 5, 7, false]);
  assert.deepEqual(Object.keys(mha.stateDict()), ['q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'out_proj.weight']);
  mha.dispose();
});

test('seeded initialisation is deterministic and follows PyTorch (Xavier projections, zero biases)', () => {
  const a = new MultiHeadAttention({ embedDim: 16, numHeads: 4, seed: 7 }).stateDict();
  const b = new MultiHeadAttention({ embedDim: 16, numHeads: 4, seed: 7 }).stateDict();
  const c = new MultiHeadAttention({ embedDim: 16, numHeads: 4, seed: 8 }).stateDict();
  assert.deepEqual(a.in_proj_weight.data, b.in_proj_weight.data);
  assert.notDeepEqual(a.in_proj_weight.data, c.in_proj_weight.data);
  assert.deepEqual(a.in_proj_weight.shape, [48, 16]);
  const bound = Math.sqrt(6 / (16 + 48));
  assert.ok(a.in_proj_weight.data.every((w) => Math.abs(w) <= bound));
  assert.ok(a.in_proj_bias.data.every((w) => w === 0));
  assert.ok(a['out_proj.weight'].data.every((w) => Math.abs(w) <= 0.25));
});

test('stateDict round-trips through loadStateDict, in all accepted value forms', () => {
  const source = new MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: 1 });
  const state = source.stateDict();
  const target = new MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: 2 });
  const x = randomTensor([2, 3, 4], 9);
  assert.notDeepEqual(target.forward(x).output.data, source.forward(x).output.data);

  target.loadStateDict(state);
  assert.deepEqual(target.forward(x).output.data, source.forward(x).output.data);

  // Flat Float32Arrays, nested arrays and a Map load the same values.
  const nested = (t) => Array.from({ length: t.shape[0] }, (_, r) => Array.from(t.data.slice(r * t.shape[1], (r + 1) * t.shape[1])));
  const other = new MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: 3 });
  other.loadStateDict(new Map([
    ['in_proj_weight', nested(state.in_proj_weight)],
    ['in_proj_bias', state.in_proj_bias.data],
    ['out_proj.weight', state['out_proj.weight']],
    ['out_proj.bias', Array.from(state['out_proj.bias'].data)],
  ]));
  assert.deepEqual(other.forward(x).output.data, source.forward(x).output.data);
  // stateDict hands out copies: changing them changes nothing inside.
  state.in_proj_weight.data.fill(0);
  assert.notEqual(source.stateDict().in_proj_weight.data[0], 0);
  for (const m of [source, target, other]) m.dispose();
});

test('unbatched input equals a batch of one without the batch dimension', () => {
  const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 4 });
  const q = randomTensor([5, 8], 1);
  const kpm = new Uint8Array([0, 1, 0, 0, 1]);
  const unbatched = mha.forward(q, null, null, { keyPaddingMask: { data: kpm, shape: [5] } });
  const batched = mha.forward({ data: q.data, shape: [1, 5, 8] }, null, null, { keyPaddingMask: { data: kpm, shape: [1, 5] } });
  assert.deepEqual(unbatched.output.shape, [5, 8]);
  assert.deepEqual(unbatched.weights.shape, [2, 5, 5]);
  assert.deepEqual(batched.weights.shape, [1, 2, 5, 5]);
  assert.deepEqual(unbatched.output.data, batched.output.data);
  assert.deepEqual(unbatched.weights.data, batched.weights.data);
  mha.dispose();
});

test('averageWeights is the mean of the per-head weights; needWeights false gives null and the same output', () => {
  const mha = new MultiHeadAttention({ embedDim: 12, numHeads: 3, seed: 5 });
  const x = randomTensor([2, 4, 12], 2);
  const perHead = mha.forward(x, null, null, { causal: true });
  const averaged = mha.forward(x, null, null, { causal: true, averageWeights: true });
  const none = mha.forward(x, null, null, { causal: true, needWeights: false });
  assert.deepEqual(averaged.weights.shape, [2, 4, 4]);
  const mean = new Float32Array(2 * 16);
  for (let b = 0; b < 2; b++) for (let h = 0; h < 3; h++) for (let i = 0; i < 16; i++) mean[b * 16 + i] += perHead.weights.data[(b * 3 + h) * 16 + i] / 3;
  assert.ok(maxRelativeError(averaged.weights.data, mean) < 1e-6);
  assert.equal(none.weights, null);
  // Without weights the keys are processed in tiles (online softmax): same result up to float round-off.
  assert.ok(maxRelativeError(none.output.data, perHead.output.data) < 1e-6);
  // Causal: no query sees a later key.
  for (let r = 0; r < 2 * 3 * 4; r++) for (let j = (r % 4) + 1; j < 4; j++) assert.equal(perHead.weights.data[r * 4 + j], 0);
  mha.dispose();
});

test('cross-attention: value defaults to key, and nested arrays work as inputs and masks', () => {
  const mha = new MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: 6 });
  const q = randomTensor([2, 4], 3);
  const kv = randomTensor([3, 4], 4);
  const explicit = mha.forward(q, kv, kv);
  const defaulted = mha.forward(q, kv);
  assert.deepEqual(defaulted.output.data, explicit.output.data);
  assert.deepEqual(defaulted.weights.shape, [2, 2, 3]);
  const nestedQuery = [Array.from(q.data.slice(0, 4)), Array.from(q.data.slice(4))];
  const masked = mha.forward(nestedQuery, kv, kv, { attnMask: [[false, true, false], [true, true, true]] });
  // Row 1 is fully masked: zero weights, output = out_proj.bias = 0 for a fresh layer.
  assert.deepEqual(Array.from(masked.weights.data.slice(3, 6)), [0, 0, 0]);
  assert.deepEqual(Array.from(masked.output.data.slice(4)), [0, 0, 0, 0]);
  assert.equal(masked.weights.data[1], 0);
  mha.dispose();
});

test('every weight row sums to 1 and nothing is NaN, even with logits of ±1e4', () => {
  const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
  const x = randomTensor([6, 8], 8);
  for (let i = 0; i < x.data.length; i++) x.data[i] *= 300;
  const { output, weights } = mha.forward(x);
  assert.ok(output.data.every(Number.isFinite));
  for (let r = 0; r < 12; r++) {
    const sum = weights.data.slice(r * 6, r * 6 + 6).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 1e-5, `row ${r} sums to ${sum}`);
  }
  mha.dispose();
});

test('scaledDotProductAttention: custom scale and masks of both kinds', () => {
  const q = randomTensor([2, 3, 4], 1);
  const k = randomTensor([2, 5, 4], 2);
  const v = randomTensor([2, 5, 6], 3);
  // scale 0.25 on q equals the default 1/√4 = 0.5 on q·0.5.
  const scaled = scaledDotProductAttention(q, k, v, { scale: 0.25 });
  const halvedQuery = scaledDotProductAttention({ data: q.data.map((x) => x * 0.5), shape: q.shape }, k, v);
  const plain = scaledDotProductAttention(q, k, v);
  assert.ok(maxRelativeError(scaled.weights.data, halvedQuery.weights.data) < 1e-6);
  assert.ok(maxRelativeError(scaled.output.data, halvedQuery.output.data) < 1e-6);
  assert.ok(maxRelativeError(scaled.weights.data, plain.weights.data) > 1e-3);
  const additive = new Float32Array(15).fill(0);
  additive[0] = -Infinity;
  const blocked = new Uint8Array(15);
  blocked[0] = 1;
  const a = scaledDotProductAttention(q, k, v, { attnMask: { data: additive, shape: [3, 5] } });
  const b = scaledDotProductAttention(q, k, v, { attnMask: { data: blocked, shape: [3, 5] } });
  assert.deepEqual(a.weights.data, b.weights.data);
  assert.equal(a.weights.data[0], 0);
  assert.deepEqual(a.output.shape, [2, 3, 6]);
});

test('Symbol.dispose releases the layer; use after dispose throws; dispose twice is harmless', () => {
  const before = memoryUsage().heapBytesInUse;
  const mha = new MultiHeadAttention({ embedDim: 64, numHeads: 4 });
  mha.forward(randomTensor([10, 64]));
  assert.ok(memoryUsage().heapBytesInUse > before);
  mha[Symbol.dispose]();
  mha.dispose();
  assert.equal(memoryUsage().heapBytesInUse, before);
  assert.throws(() => mha.forward(randomTensor([10, 64])), { name: 'Error', message: /MultiHeadAttention.forward: this MultiHeadAttention was disposed/ });
  assert.throws(() => mha.stateDict(), /disposed/);
});

test('two layers never share state', () => {
  const a = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
  const b = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
  const x = randomTensor([4, 8], 1);
  const first = a.forward(x).output.data;
  b.forward(randomTensor([9, 8], 2));
  b.loadStateDict(new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 9 }).stateDict());
  assert.deepEqual(a.forward(x).output.data, first);
  a.dispose();
  b.dispose();
});
