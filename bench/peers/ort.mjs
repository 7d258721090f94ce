// Peer: onnxruntime-web's WASM backend, one thread, SIMD, running bench/onnx-graph.mjs's attention graph.
import { buildMhaModel } from '../onnx-graph.mjs';

export const name = 'onnxruntime-web';

export async function load() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1; // no worker threads, no SharedArrayBuffer pool
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  return ort;
}

/** One inference session per (E, H, weights) graph; the graph is built in memory from the seeded weights. */
export async function create(ort, { E, H, state, needWeights = true }) {
  const model = buildMhaModel({ E, H, state, withWeights: needWeights });
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  return {
    async forward(x, L) {
      const feeds = { x: new ort.Tensor('float32', x, [1, L, E]) };
      const results = await session.run(feeds);
      const output = results.output.data;
      const weights = results.weights ? results.weights.data : null;
      for (const t of Object.values(results)) t.dispose?.();
      return { output, weights };
    },
    async dispose() {
      await session.release();
    },
  };
}
