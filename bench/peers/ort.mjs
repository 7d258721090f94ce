// Peer: onnxruntime-web's WASM backend (SIMD; threaded at numThreads > 1) running bench/onnx-graph.mjs's graphs.
import { IN_NODE, Unavailable, queryBlockRows } from '../common.mjs';
import { buildBlockedModels, buildMhaModel } from '../onnx-graph.mjs';

export const name = 'onnxruntime-web';

/**
 * The graphs timed with weights; the table keeps the faster per configuration and says which. `attention` is the
 * opset-23 `Attention` operator, `plain` the same computation as MatMul/Softmax/MatMul (bench/onnx-graph.mjs).
 */
export const variants = ['attention', 'plain'];

/**
 * numThreads is global to the process (or page): ORT builds its thread pool once, when the first session is created,
 * and ignores per-session intraOpNumThreads in its WASM build. So each thread count needs its own process or page.
 */
export async function load({ threads = 1 } = {}) {
  if (threads > 1 && !IN_NODE && !globalThis.crossOriginIsolated)
    throw new Unavailable('threads need a cross-origin-isolated page (COOP/COEP)');
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false; // run in this thread, as the other libraries do
  ort.env.logLevel = 'error';
  return ort;
}

const sessionOptions = {
  executionProviders: ['wasm'],
  graphOptimizationLevel: 'all',
  executionMode: 'sequential',
  logSeverityLevel: 3, // the attention graph's symbolic weights shape makes ORT warn on every run otherwise
};

/**
 * With weights: one session on the chosen graph. Without weights (`needWeights: false`): ORT's best no-weights path,
 * the fused `com.microsoft.MultiHeadAttention` operator, run over blocks of queries (see buildBlockedModels).
 */
export async function create(ort, { E, H, state, needWeights = true, variant = 'attention' }) {
  if (!needWeights) return createBlocked(ort, { E, H, state });
  const session = await ort.InferenceSession.create(buildMhaModel({ E, H, state, withWeights: true, graph: variant }), sessionOptions);
  return {
    async forward(x, L) {
      const results = await session.run({ x: new ort.Tensor('float32', x, [1, L, E]) });
      const output = results.output.data;
      const weights = results.weights.data;
      for (const t of Object.values(results)) t.dispose?.();
      return { output, weights };
    },
    dispose: () => session.release(),
  };
}

async function createBlocked(ort, { E, H, state }) {
  const { project, attend } = buildBlockedModels({ E, H, state });
  const projectSession = await ort.InferenceSession.create(project, sessionOptions);
  const attendSession = await ort.InferenceSession.create(attend, sessionOptions);
  return {
    async forward(x, L) {
      const { q, k, v } = await projectSession.run({ x: new ort.Tensor('float32', x, [1, L, E]) });
      const output = new Float32Array(L * E);
      const rows = queryBlockRows(H, L);
      for (let r0 = 0; r0 < L; r0 += rows) {
        const n = Math.min(rows, L - r0);
        const qBlock = new ort.Tensor('float32', q.data.subarray(r0 * E, (r0 + n) * E), [1, n, E]);
        const { output: block } = await attendSession.run({ q: qBlock, k, v });
        output.set(block.data, r0 * E);
        block.dispose?.();
      }
      for (const t of [q, k, v]) t.dispose?.();
      return { output, weights: null };
    },
    async dispose() {
      await projectSession.release();
      await attendSession.release();
    },
  };
}
