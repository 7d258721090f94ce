// The package in worker_threads: four workers load attnscope at once, each its own WebAssembly instance, and run
// the same seeded causal forward pass; every result must be bitwise the main thread's, and every worker must exit
// on its own with code 0 (nothing the package leaves behind may keep a thread alive).
// This one file is both the test (main thread) and the workers' code (it starts workers on itself).
import { Worker, isMainThread, parentPort, threadId, workerData } from 'node:worker_threads';
import { init, MultiHeadAttention } from 'attnscope';
import { randomTensor } from './helpers.js';

const WORKERS = 4;
const CONFIG = { embedDim: 64, numHeads: 4, seed: 1 };
const INPUT_SHAPE = [2, 24, 64];
const INPUT_SEED = 7;
// Generous for four module instantiations on a shared 2-core machine; a hang fails the test instead of stalling it.
const TIMEOUT_MS = 10_000;

/** The pass every thread computes: a fresh layer, the same input, causal self-attention with per-head weights. */
function forwardPass() {
  const mha = new MultiHeadAttention(CONFIG);
  try {
    return mha.forward(randomTensor(INPUT_SHAPE, INPUT_SEED), null, null, { causal: true });
  } finally {
    mha.dispose();
  }
}

if (!isMainThread) {
  // Worker: load the module, then wait until every worker has loaded it too, so the passes run at the same time.
  const { arrived } = workerData;
  await init();
  Atomics.add(arrived, 0, 1);
  Atomics.notify(arrived, 0);
  for (let n; (n = Atomics.load(arrived, 0)) < WORKERS; ) {
    if (Atomics.wait(arrived, 0, n, TIMEOUT_MS) === 'timed-out') throw new Error(`worker ${threadId}: the others never arrived`);
  }
  const { output, weights } = forwardPass();
  parentPort.postMessage({ threadId, output, weights }, [output.data.buffer, weights.data.buffer]);
} else {
  const { test } = await import('node:test');
  const { default: assert } = await import('node:assert/strict');

  /** Starts a worker on this file; resolves with its one message once it has exited with code 0. */
  function runWorker(arrived) {
    return new Promise((resolve, reject) => {
      const worker = new Worker(new URL(import.meta.url), { workerData: { arrived } });
      let message = null;
      const timer = setTimeout(() => {
        worker.terminate();
        reject(new Error(`worker ${worker.threadId} did not exit within ${TIMEOUT_MS} ms`));
      }, TIMEOUT_MS);
      worker.on('message', (m) => (message = m));
      worker.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      worker.on('exit', (code) => {
        clearTimeout(timer);
        if (code !== 0) reject(new Error(`worker ${worker.threadId} exited with code ${code}`));
        else if (!message) reject(new Error(`worker ${worker.threadId} exited without a result`));
        else resolve({ ...message, exitCode: code });
      });
    });
  }

  // Bitwise, so -0 vs 0 and NaN payloads count: the same WebAssembly code on the same input must give the same bits.
  const bits = (tensor) => new Uint32Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.length);

  test('four worker threads, each with its own instance, give the main thread\'s result bit for bit', { timeout: 2 * TIMEOUT_MS }, async () => {
    await init();
    const expected = forwardPass();
    assert.deepEqual(expected.output.shape, INPUT_SHAPE);
    assert.deepEqual(expected.weights.shape, [2, 4, 24, 24]);
    // Causal: no query may attend to a later key (so the pass really is the causal one).
    const L = INPUT_SHAPE[1];
    for (let row = 0; row < expected.weights.data.length / L; row++) {
      for (let j = (row % L) + 1; j < L; j++) assert.equal(expected.weights.data[row * L + j], 0, `weights row ${row}, key ${j}`);
    }

    const arrived = new Int32Array(new SharedArrayBuffer(4));
    const results = await Promise.all(Array.from({ length: WORKERS }, () => runWorker(arrived)));

    assert.equal(new Set(results.map((r) => r.threadId)).size, WORKERS, 'four distinct threads');
    assert.equal(Atomics.load(arrived, 0), WORKERS, 'every worker loaded the module before any computed');
    for (const r of results) {
      assert.equal(r.exitCode, 0);
      assert.deepEqual(r.output.shape, expected.output.shape);
      assert.deepEqual(r.weights.shape, expected.weights.shape);
      assert.deepEqual(bits(r.output), bits(expected.output), `worker ${r.threadId}: output differs from the main thread's`);
      assert.deepEqual(bits(r.weights), bits(expected.weights), `worker ${r.threadId}: weights differ from the main thread's`);
    }
  });
}
