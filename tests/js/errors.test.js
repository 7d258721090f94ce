// Bad input, table-driven: each case throws the right error class with a message that names the argument,
// what was expected and what was given; afterwards the same layer still gives PyTorch's answer.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { init, MultiHeadAttention, scaledDotProductAttention, memoryUsage } from 'attnscope';
import { loadFixture, fixtureDir } from './fixtures.js';
import { maxRelativeError, runIsolated } from './helpers.js';

const golden = loadFixture(`${fixtureDir}/mha_self_basic.json`);
let mha;

before(async () => {
  await init();
  mha = new MultiHeadAttention({ embedDim: golden.ints.embed_dim, numHeads: golden.ints.num_heads });
  mha.loadStateDict({
    in_proj_weight: golden.tensors.in_proj_weight,
    in_proj_bias: golden.tensors.in_proj_bias,
    'out_proj.weight': golden.tensors['out_proj.weight'],
    'out_proj.bias': golden.tensors['out_proj.bias'],
  });
});

const E = golden.ints.embed_dim; // 8
const f32 = (shape) => ({ data: new Float32Array(shape.reduce((a, b) => a * b, 1)), shape });
const x = () => f32([2, 3, E]);

const cases = [
  // constructor
  ['no options', () => new MultiHeadAttention(), TypeError, /new MultiHeadAttention: expected options \{ embedDim, numHeads/],
  ['embedDim as a string', () => new MultiHeadAttention({ embedDim: '8', numHeads: 2 }), TypeError, /embedDim: expected a whole number, got string "8"/],
  ['embedDim zero', () => new MultiHeadAttention({ embedDim: 0, numHeads: 1 }), RangeError, /embedDim: expected a whole number from 1 to \d+, got 0/],
  ['embedDim fractional', () => new MultiHeadAttention({ embedDim: 8.5, numHeads: 1 }), RangeError, /embedDim: .* got 8.5/],
  ['numHeads missing', () => new MultiHeadAttention({ embedDim: 8 }), TypeError, /numHeads: expected a whole number, got undefined/],
  ['embedDim not divisible', () => new MultiHeadAttention({ embedDim: 10, numHeads: 3 }), RangeError, /embedDim \(10\) must be divisible by numHeads \(3\)/],
  ['unknown option', () => new MultiHeadAttention({ embedDim: 8, numHeads: 2, heads: 2 }), TypeError, /unknown option 'heads'/],
  ['bias not boolean', () => new MultiHeadAttention({ embedDim: 8, numHeads: 2, bias: 1 }), TypeError, /bias: expected true or false, got number 1/],
  ['negative seed', () => new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: -1 }), RangeError, /seed: expected a whole number from 0/],
  ['parameters beyond WASM memory', () => new MultiHeadAttention({ embedDim: 100000, numHeads: 1 }), RangeError, /^new MultiHeadAttention: embedDim 100000, kdim 100000, vdim 100000 need more parameter bytes than the address space has$/],
  // forward: types
  ['query with Float64Array data', () => mha.forward({ data: new Float64Array(48), shape: [2, 3, E] }), TypeError, /forward: query.data: expected a Float32Array, got Float64Array\(48\)/],
  ['query as a bare Float32Array', () => mha.forward(new Float32Array(48)), TypeError, /query: expected a tensor \{ data: Float32Array, shape: number\[\] \} or nested arrays, got Float32Array\(48\)/],
  ['query null', () => mha.forward(null), TypeError, /query: expected a tensor .* got null/],
  ['shape not an array', () => mha.forward({ data: new Float32Array(48), shape: '2,3,8' }), TypeError, /query.shape: expected an array of dimensions/],
  ['shape with a fraction', () => mha.forward({ data: new Float32Array(48), shape: [2, 3.5, E] }), RangeError, /query.shape: every dimension must be a whole number from 1 to 2\^32, got \[2, 3.5, 8\]/],
  ['ragged nested arrays', () => mha.forward([[1, 2, 3, 4, 5, 6, 7, 8], [1, 2]]), RangeError, /query: nested arrays must be rectangular/],
  ['keyPaddingMask of Int32Array', () => mha.forward(x(), null, null, { keyPaddingMask: { data: new Int32Array(6), shape: [2, 3] } }), TypeError, /keyPaddingMask.data: expected a Uint8Array \(nonzero = blocked\) or a Float32Array \(added to the scores\), got Int32Array\(6\)/],
  ['causal as a string', () => mha.forward(x(), null, null, { causal: 'yes' }), TypeError, /causal: expected true or false, got string "yes"/],
  ['misspelt option', () => mha.forward(x(), null, null, { needWeight: false }), TypeError, /unknown option 'needWeight' \(expected one of keyPaddingMask, attnMask, causal, needWeights, averageWeights, out\)/],
  ['options not an object', () => mha.forward(x(), null, null, 5), TypeError, /options: expected an options object, got number 5/],
  // forward: shapes and sizes
  ['data shorter than shape', () => mha.forward({ data: new Float32Array(24), shape: [2, 3, E] }), RangeError, /query: data has 24 values but shape \[2, 3, 8\] needs 48/],
  ['wrong embedding size', () => mha.forward(f32([2, 3, 5])), RangeError, /query: expected shape \[batch, queryLen, 8\] or \[queryLen, 8\], got \[2, 3, 5\]/],
  ['rank 1 query', () => mha.forward(f32([E])), RangeError, /got \[8\]/],
  ['zero-length sequence', () => mha.forward({ data: new Float32Array(0), shape: [2, 0, E] }), RangeError, /query.shape: every dimension must be a whole number from 1 to 2\^32, got \[2, 0, 8\]/],
  ['key with other features', () => mha.forward(x(), f32([2, 4, 6])), RangeError, /key: expected shape \[2, keyLen, 8\] to match query \[2, 3, 8\], got \[2, 4, 6\]/],
  ['key with other batch', () => mha.forward(x(), f32([3, 4, E])), RangeError, /key: .* got \[3, 4, 8\]/],
  ['value of other length', () => mha.forward(x(), f32([2, 4, E]), f32([2, 5, E])), RangeError, /value: expected shape \[2, 4, 8\] to match key \[2, 4, 8\], got \[2, 5, 8\]/],
  ['key padding mask shape', () => mha.forward(x(), null, null, { keyPaddingMask: { data: new Uint8Array(3), shape: [3] } }), RangeError, /keyPaddingMask: expected shape \[2, 3\], got \[3\]/],
  ['attention mask shape', () => mha.forward(x(), null, null, { attnMask: { data: new Uint8Array(12), shape: [3, 4] } }), RangeError, /attnMask: expected shape \[3, 3\] or \[4, 3, 3\], got \[3, 4\]/],
  ['weights beyond 4 GiB', () => mha.forward(f32([1, 40000, E])), RangeError, /queryLen 40000, keyLen 40000 with weights need .* GiB of WebAssembly memory, more than its 4.00 GiB limit \(needWeights: false needs far less\)/],
  // state dict
  ['state dict with an unknown key', () => mha.loadStateDict({ ...mha.stateDict(), 'in_proj.weight': f32([24, E]) }), TypeError, /loadStateDict: unexpected key 'in_proj.weight' \(this layer has 'in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias'\)/],
  ['state dict with a missing key', () => { const s = mha.stateDict(); delete s['out_proj.bias']; mha.loadStateDict(s); }, TypeError, /missing key 'out_proj.bias' of shape \[8\]/],
  ['state dict with a wrong shape', () => mha.loadStateDict({ ...mha.stateDict(), 'out_proj.weight': f32([E, 7]) }), RangeError, /'out_proj.weight': expected shape \[8, 8\], got \[8, 7\]/],
  ['state dict with a short array', () => mha.loadStateDict({ ...mha.stateDict(), in_proj_bias: new Float32Array(3) }), RangeError, /'in_proj_bias': expected 24 values \(shape \[24\]\), got Float32Array\(3\)/],
  ['state dict not an object', () => mha.loadStateDict(new Float32Array(4)), TypeError, /expected an object \(or Map\) of tensors keyed by PyTorch names, got Float32Array\(4\)/],
  // functional form
  ['sdpa k of other width', () => scaledDotProductAttention(f32([2, 3, 4]), f32([2, 5, 3]), f32([2, 5, 4])), RangeError, /scaledDotProductAttention: k: expected shape \[2, keyLen, 4\] to match q \[2, 3, 4\], got \[2, 5, 3\]/],
  ['sdpa v of other length', () => scaledDotProductAttention(f32([3, 4]), f32([5, 4]), f32([6, 4])), RangeError, /v: expected shape \[5, valueDim\] to match k \[5, 4\], got \[6, 4\]/],
  ['sdpa scale NaN', () => scaledDotProductAttention(f32([3, 4]), f32([5, 4]), f32([5, 4]), { scale: NaN }), RangeError, /scale: expected a finite number, got NaN/],
  ['sdpa mask shape', () => scaledDotProductAttention(f32([3, 4]), f32([5, 4]), f32([5, 4]), { attnMask: { data: new Uint8Array(9), shape: [3, 3] } }), RangeError, /attnMask: expected shape \[3, 5\], got \[3, 3\]/],
];

for (const [name, call, ErrorClass, message] of cases) {
  test(`bad input: ${name}`, () => {
    assert.throws(call, (error) => {
      assert.equal(error.constructor, ErrorClass, `${error.constructor.name}: ${error.message}`);
      assert.match(error.message, message);
      return true;
    });
  });
}

test('out of WebAssembly memory inside the module: RangeError, nothing lost', () => {
  const tiny = new MultiHeadAttention({ embedDim: 1, numHeads: 1 });
  // 32700² weights pass the wrapper's 4 GiB estimate but cannot be allocated next to what the heap already holds.
  const long = { data: new Float32Array(32700), shape: [32700, 1] };
  const outOfMemory = (error) => {
    assert.equal(error.constructor, RangeError);
    assert.match(error.message, /MultiHeadAttention.forward: this call's arguments and results: \d+ floats \(\d+\.\d+ MiB\) do not fit in the memory left/);
    return true;
  };
  assert.throws(() => tiny.forward(long), outOfMemory);
  const afterFirst = memoryUsage(); // the first failure may keep its error message allocated
  assert.throws(() => tiny.forward(long), outOfMemory);
  assert.equal(memoryUsage().heapBytesInUse, afterFirst.heapBytesInUse, 'a failed call leaves no allocation behind');
  assert.ok(afterFirst.wasmBytes < 1024 ** 3, 'memory did not grow towards the failed request');
  const ok = tiny.forward({ data: new Float32Array([1, 2, 3]), shape: [3, 1] });
  assert.deepEqual(ok.weights.shape, [1, 3, 3]);
  tiny.dispose();
});

test('a call before init() names init', () => {
  const printed = runIsolated(`
    import { MultiHeadAttention, scaledDotProductAttention, memoryUsage } from 'attnscope';
    for (const call of [() => new MultiHeadAttention({ embedDim: 4, numHeads: 1 }), () => memoryUsage(),
                        () => scaledDotProductAttention([[1]], [[1]], [[1]])]) {
      try { call(); console.log('no error'); } catch (e) { console.log(e.constructor.name + ': ' + e.message); }
    }`);
  assert.equal(printed, [
    'Error: new MultiHeadAttention: attnscope is not initialised; call `await init()` first',
    'Error: memoryUsage: attnscope is not initialised; call `await init()` first',
    'Error: scaledDotProductAttention: attnscope is not initialised; call `await init()` first',
    '',
  ].join('\n'));
});

test('after every error above, the layer still matches PyTorch', () => {
  const { output, weights } = mha.forward(golden.tensors.query);
  assert.ok(maxRelativeError(output.data, golden.tensors.expected_output.data) < 1e-5);
  assert.ok(maxRelativeError(weights.data, golden.tensors.expected_weights.data) < 1e-5);
});
