// The wrapper over the binding: sizes from C++ (32k tokens without weights), caller-owned `out` buffers, arenas that
// give their peak back, memoryUsage above 2 GiB, NaN agreement of both paths, and nested-array edges.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { init, MultiHeadAttention, scaledDotProductAttention, memoryUsage } from 'attnscope';
import { maxRelativeError, randomTensor, runIsolated } from './helpers.js';

before(async () => {
  await init();
});

/** Double-precision self-attention of rows `rows` of x [L, E] with one head and the given PyTorch state. */
function referenceRows(x, L, E, state, rows, causal) {
  const W = state.in_proj_weight.data, b = state.in_proj_bias.data, Wo = state['out_proj.weight'].data, bo = state['out_proj.bias'].data;
  const project = (row, which) => {
    const out = new Float64Array(E);
    for (let o = 0; o < E; o++) {
      let s = b[which * E + o];
      for (let i = 0; i < E; i++) s += W[(which * E + o) * E + i] * x[row * E + i];
      out[o] = s;
    }
    return out;
  };
  const keys = [], values = [];
  for (let j = 0; j < L; j++) { keys.push(project(j, 1)); values.push(project(j, 2)); }
  return rows.map((i) => {
    const q = project(i, 0);
    const end = causal ? i + 1 : L;
    const scores = new Float64Array(end);
    let max = -Infinity;
    for (let j = 0; j < end; j++) {
      let s = 0;
      for (let e = 0; e < E; e++) s += q[e] * keys[j][e];
      scores[j] = s / Math.sqrt(E);
      max = Math.max(max, scores[j]);
    }
    let sum = 0;
    for (let j = 0; j < end; j++) sum += (scores[j] = Math.exp(scores[j] - max));
    const context = new Float64Array(E);
    for (let j = 0; j < end; j++) for (let e = 0; e < E; e++) context[e] += (scores[j] / sum) * values[j][e];
    const out = new Float64Array(E);
    for (let o = 0; o < E; o++) {
      let s = bo[o];
      for (let e = 0; e < E; e++) s += Wo[o * E + e] * context[e];
      out[o] = s;
    }
    return out;
  });
}

test('needWeights: false runs 32,768 tokens (workspace from C++, not Lq·Lk) and matches a double reference', () => {
  const L = 32768, E = 4;
  const mha = new MultiHeadAttention({ embedDim: E, numHeads: 1, seed: 3 });
  const x = randomTensor([L, E], 5);
  const { output, weights } = mha.forward(x, null, null, { needWeights: false, causal: true });
  assert.equal(weights, null);
  assert.deepEqual(output.shape, [L, E]);
  const rows = [0, 31, 32, 4097, L - 1];
  const expected = referenceRows(x.data, L, E, mha.stateDict(), rows, true);
  rows.forEach((row, n) => {
    const got = output.data.subarray(row * E, (row + 1) * E);
    assert.ok(maxRelativeError(got, expected[n]) < 1e-4, `row ${row}: ${got} vs ${expected[n]}`);
  });
  mha.dispose();
});

test('out: results land in the caller\'s arrays, equal to fresh results', () => {
  const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
  const x = randomTensor([2, 5, 8], 7);
  const fresh = mha.forward(x);
  const out = { output: new Float32Array(80), weights: new Float32Array(2 * 2 * 5 * 5).fill(NaN) };
  const r = mha.forward(x, null, null, { out });
  assert.equal(r.output.data, out.output);
  assert.equal(r.weights.data, out.weights);
  assert.deepEqual(r.output.shape, fresh.output.shape);
  assert.deepEqual(r.weights.shape, fresh.weights.shape);
  assert.deepEqual(out.output, fresh.output.data);
  assert.deepEqual(out.weights, fresh.weights.data);
  // Only one of them given: the other comes back fresh.
  const onlyWeights = mha.forward(x, null, null, { out: { weights: out.weights } });
  assert.notEqual(onlyWeights.output.data, out.output);
  assert.deepEqual(onlyWeights.output.data, fresh.output.data);
  // Averaged weights have their own length.
  const averaged = new Float32Array(2 * 5 * 5);
  mha.forward(x, null, null, { averageWeights: true, out: { weights: averaged } });
  assert.deepEqual(averaged, mha.forward(x, null, null, { averageWeights: true }).weights.data);
  mha.dispose();
});

test('out in scaledDotProductAttention: the same results in the caller\'s arrays', () => {
  const q = randomTensor([2, 3, 4], 1), k = randomTensor([2, 5, 4], 2), v = randomTensor([2, 5, 6], 3);
  const fresh = scaledDotProductAttention(q, k, v, { causal: true });
  const out = { output: new Float32Array(36), weights: new Float32Array(30) };
  const r = scaledDotProductAttention(q, k, v, { causal: true, out });
  assert.equal(r.output.data, out.output);
  assert.equal(r.weights.data, out.weights);
  assert.deepEqual(out.output, fresh.output.data);
  assert.deepEqual(out.weights, fresh.weights.data);
  assert.throws(() => scaledDotProductAttention(q, k, v, { out: { weights: new Float32Array(31) } }),
    { name: 'RangeError', message: /scaledDotProductAttention: options.out.weights: expected a Float32Array of 30 values \(shape \[2, 3, 5\]\), got Float32Array\(31\)/ });
});

test('out: wrong buffers are refused before anything runs', () => {
  const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2 });
  const x = randomTensor([3, 8], 2);
  const cases = [
    [{ output: new Float32Array(23) }, RangeError, /options.out.output: expected a Float32Array of 24 values \(shape \[3, 8\]\), got Float32Array\(23\)/],
    [{ weights: new Float32Array(9) }, RangeError, /options.out.weights: expected a Float32Array of 18 values \(shape \[2, 3, 3\]\), got Float32Array\(9\)/],
    [{ output: new Float64Array(24) }, TypeError, /options.out.output: expected a Float32Array, got Float64Array\(24\)/],
    [{ output: new Float32Array(24), extra: 1 }, TypeError, /options.out: unknown key 'extra'/],
    [new Float32Array(24), TypeError, /options.out: expected \{ output\?: Float32Array, weights\?: Float32Array \}, got Float32Array\(24\)/],
  ];
  for (const [out, ErrorClass, message] of cases) {
    assert.throws(() => mha.forward(x, null, null, { out }), (e) => e.constructor === ErrorClass && message.test(e.message));
  }
  assert.throws(() => mha.forward(x, null, null, { needWeights: false, out: { weights: new Float32Array(18) } }),
    { name: 'TypeError', message: /needWeights is false, so there are no weights to write/ });
  mha.dispose();
});

test('arenas give back their peak: scaledDotProductAttention at once, a layer on trim() or a much smaller call', () => {
  const start = memoryUsage().heapBytesInUse;
  const q = randomTensor([2100, 8], 1);
  scaledDotProductAttention(q, q, q); // 17 MiB of weights
  assert.ok(memoryUsage().heapBytesInUse - start < 1024 ** 2, `SDPA kept ${memoryUsage().heapBytesInUse - start} bytes`);

  const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2 });
  const afterCreate = memoryUsage().heapBytesInUse;
  mha.forward(randomTensor([1500, 8], 2)); // 17 MiB of weights in its arena
  const afterBig = memoryUsage().heapBytesInUse;
  assert.ok(afterBig - afterCreate > 16 * 1024 ** 2);
  mha.forward(randomTensor([10, 8], 3));
  const afterSmall = memoryUsage().heapBytesInUse;
  assert.ok(afterSmall - afterCreate < 1024 ** 2, `a small call after a big one holds ${afterSmall - afterCreate} bytes`);
  mha.forward(randomTensor([1500, 8], 2));
  mha.trim();
  assert.ok(memoryUsage().heapBytesInUse - afterCreate < 1024, 'trim() frees the arena and the workspace');
  assert.deepEqual(mha.forward(randomTensor([3, 8], 4)).output.shape, [3, 8]);
  mha.dispose();
  assert.throws(() => mha.trim(), /MultiHeadAttention.trim: this MultiHeadAttention was disposed/);
});

test('memoryUsage() is right above 2 GiB', () => {
  const printed = runIsolated(`
    import { init, memoryUsage } from 'attnscope';
    const runtime = await import(new URL('./runtime.js', import.meta.resolve('attnscope')));
    await init();
    const wasm = runtime.module('test');
    const before = memoryUsage().heapBytesInUse;
    // Two blocks: sbrk takes a signed 32-bit increment, so one allocation cannot pass 2 GiB by itself.
    const arenas = [new wasm._Arena(), new wasm._Arena()];
    for (const arena of arenas) if (!arena.reserve(1.125 * 1024 ** 3)) throw new Error(wasm._lastError());
    const { wasmBytes, heapBytesInUse } = memoryUsage();
    for (const arena of arenas) arena.delete();
    console.log(JSON.stringify({ wasmBytes, grew: heapBytesInUse - before, after: memoryUsage().heapBytesInUse - before }));`);
  const { wasmBytes, grew, after } = JSON.parse(printed);
  assert.ok(wasmBytes > 2.25 * 1024 ** 3, `wasmBytes ${wasmBytes}`);
  assert.ok(grew >= 2.25 * 1024 ** 3 && grew < 2.26 * 1024 ** 3, `heapBytesInUse grew by ${grew}`);
  assert.ok(Math.abs(after) < 1024, `after delete: ${after}`);
});

test('needWeights true and false agree on NaN at every length (causal, NaN in one value row)', () => {
  const E = 4;
  const mha = new MultiHeadAttention({ embedDim: E, numHeads: 2, seed: 9 });
  for (const L of [1, 2, 31, 33, 64, 65, 300]) {
    for (const nanRow of [0, L - 1, L >> 1]) {
      const x = randomTensor([L, E], L);
      x.data[nanRow * E + 1] = NaN;
      for (const causal of [true, false]) {
        const withWeights = mha.forward(x, null, null, { causal }).output.data;
        const without = mha.forward(x, null, null, { causal, needWeights: false }).output.data;
        for (let i = 0; i < L * E; i++) {
          assert.equal(Number.isNaN(without[i]), Number.isNaN(withWeights[i]), `L ${L}, NaN row ${nanRow}, causal ${causal}, element ${i}`);
        }
        // The README's rule: a NaN value reaches every output (0·NaN = NaN), masked or not.
        assert.ok(without.every(Number.isNaN), `L ${L}: every output is NaN`);
      }
    }
  }
  mha.dispose();
});

test('nested arrays: ragged or sparse ones are a RangeError, never reshaped', () => {
  const mha = new MultiHeadAttention({ embedDim: 4, numHeads: 1 });
  // eslint-disable-next-line no-sparse-arrays
  const sparse = [[1, , 3, 4], [5, 6, 7, 8, 9]];
  assert.throws(() => mha.forward(sparse), { name: 'RangeError', message: /MultiHeadAttention.forward: query: nested arrays must not have holes: query\[0\]\[1\] is empty/ });
  assert.throws(() => mha.forward([[1, 2, 3, 4], [5, 6, 7, 8, 9]]), { name: 'RangeError', message: /query: nested arrays must be rectangular: query\[1\] has length 5, expected length 4/ });
  // 20,000 levels once overflowed the stack in the walk, with the engine's RangeError and no call named.
  let deep = [1, 2, 3, 4];
  for (let i = 0; i < 20_000; i++) deep = [deep];
  assert.throws(() => mha.forward(deep), { name: 'RangeError', message: 'MultiHeadAttention.forward: query: nested arrays more than 8 deep (a tensor here has at most 4 dimensions)' });
  assert.throws(() => mha.forward([[1, 2, 3, 4], 5]), { name: 'RangeError', message: /query\[1\] has number 5, expected length 4/ });
  assert.throws(() => mha.forward([[[1, 2, 3, 4]], [[1, 2, 3, 4], [1, 2, 3, 4]]]), { name: 'RangeError', message: /query\[1\] has length 2, expected length 1/ });
  assert.throws(() => mha.forward([[1, 2, 3, [4]]]), { name: 'RangeError', message: /query\[0\]\[3\] is an array/ });
  assert.deepEqual(mha.forward([[1, 2, 3, 4], [5, 6, 7, 8]]).output.shape, [2, 4]);
  mha.dispose();
});

test('state-dict keys and shapes come from the C++ layer (separate q/k/v when kdim, vdim differ)', () => {
  const mha = new MultiHeadAttention({ embedDim: 6, numHeads: 2, kdim: 4, vdim: 5, bias: false });
  const state = mha.stateDict();
  assert.deepEqual(Object.keys(state), ['q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'out_proj.weight']);
  assert.deepEqual(Object.values(state).map((t) => t.shape), [[6, 6], [6, 4], [6, 5], [6, 6]]);
  mha.loadStateDict(state);
  assert.throws(() => mha.loadStateDict({ ...state, in_proj_bias: state['out_proj.weight'] }), { name: 'TypeError', message: /unexpected key 'in_proj_bias' \(this layer has 'q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'out_proj.weight'\)/ });
  mha.dispose();
});

test('a trap inside WebAssembly breaks the module for good: every later call throws an Error naming itself and saying to reload', () => {
  // A deliberate trap that costs the shipped .wasm nothing: the raw safetensors reader pointed at an address far past
  // the end of WebAssembly memory, so the read traps with "memory access out of bounds" inside the module.
  const printed = runIsolated(`
    import { init, MultiHeadAttention, readSafetensors, memoryUsage, scaledDotProductAttention } from 'attnscope';
    const runtime = await import(new URL('./runtime.js', import.meta.resolve('attnscope')));
    await init();
    const wasm = runtime.module('test');
    const mha = new MultiHeadAttention({ embedDim: 4, numHeads: 1 });
    const report = (call) => { try { call(); return 'no error'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
    console.log(report(() => mha.forward([[1, 2, 3, 4]])));
    const read = wasm._readSafetensors;
    wasm._readSafetensors = () => read(2 ** 32 - 64, 64);
    console.log(report(() => readSafetensors(new Uint8Array(16))));
    wasm._readSafetensors = read;
    for (const call of [() => mha.forward([[1, 2, 3, 4]]), () => new MultiHeadAttention({ embedDim: 4, numHeads: 1 }),
                        () => scaledDotProductAttention([[1]], [[1]], [[1]]), () => memoryUsage(), () => readSafetensors(new Uint8Array(16))]) {
      console.log(report(call));
    }
    console.log(report(() => mha.dispose()));`);
  const lines = printed.trim().split('\n');
  assert.equal(lines[0], 'no error');
  assert.match(lines[1], /^Error: readSafetensors: attnscope's WebAssembly module trapped \(memory access out of bounds\); its memory can no longer be trusted, so every later call throws: reload the page \(or restart the process\)/);
  const callers = ['MultiHeadAttention.forward', 'new MultiHeadAttention', 'scaledDotProductAttention', 'memoryUsage', 'readSafetensors'];
  callers.forEach((caller, i) => {
    assert.match(lines[2 + i], new RegExp(`^Error: ${caller}: attnscope cannot run: its WebAssembly module trapped in an earlier call \\(readSafetensors: memory access out of bounds\\) .* reload the page`));
  });
  assert.equal(lines[7], 'no error', 'dispose() frees nothing then, and throws nothing');
});
