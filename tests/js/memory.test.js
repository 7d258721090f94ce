// Long loops, valid and failing calls mixed: WebAssembly memory and the heap stay flat after warm-up.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { init, MultiHeadAttention, memoryUsage } from 'attnscope';
import { randomTensor } from './helpers.js';

// ATTNSCOPE_SOAK=1 runs ten times longer.
const rounds = process.env.ATTNSCOPE_SOAK ? 200_000 : 20_000;

before(() => init());

test(`${rounds} forward calls, every 7th one invalid, leak nothing`, () => {
  const mha = new MultiHeadAttention({ embedDim: 64, numHeads: 4, seed: 1 });
  const inputs = [randomTensor([16, 64], 1), randomTensor([2, 9, 64], 2), randomTensor([1, 16, 64], 3)];
  const badMask = { data: new Uint8Array(5), shape: [5] };
  const run = (i) => {
    if (i % 7 === 3) {
      assert.throws(() => mha.forward(inputs[i % 3], null, null, { keyPaddingMask: badMask }), RangeError);
      return;
    }
    const { output } = mha.forward(inputs[i % 3], null, null, { causal: i % 2 === 0, averageWeights: i % 5 === 0 });
    assert.equal(output.data.length, inputs[i % 3].data.length);
  };
  for (let i = 0; i < 100; i++) run(i); // warm-up: the arena and workspace reach their size
  const warm = memoryUsage();
  for (let i = 100; i < rounds; i++) run(i);
  const after = memoryUsage();
  assert.equal(after.heapBytesInUse, warm.heapBytesInUse);
  assert.equal(after.wasmBytes, warm.wasmBytes);
  mha.dispose();
});

test('creating and disposing layers in a loop returns every byte', () => {
  const start = memoryUsage().heapBytesInUse;
  for (let i = 0; i < 2000; i++) {
    const cross = i % 2 === 1; // alternate the packed and the separate q/k/v layouts
    const mha = new MultiHeadAttention({ embedDim: 32, numHeads: 4, kdim: cross ? 16 : undefined, seed: i });
    if (cross) mha.forward(randomTensor([4, 32], i), randomTensor([5, 16], i), randomTensor([5, 32], i));
    else mha.forward(randomTensor([4, 32], i));
    if (i % 10 === 0) assert.throws(() => mha.loadStateDict({}), TypeError);
    mha.dispose();
  }
  assert.equal(memoryUsage().heapBytesInUse, start);
});
