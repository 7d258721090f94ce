// Peer: TensorFlow.js 4.22 on its WASM backend (XNNPACK inside), SIMD; threaded where tfjs allows it — written with
// tf ops.
import { IN_NODE, Unavailable, queryBlockRows } from '../common.mjs';

export const name = 'tfjs-wasm';

/**
 * `per-head` runs the two attention products as 2-D matMuls per head: tfjs-backend-wasm 4.22 hands only batch-1,
 * non-transposed matMuls to XNNPACK, and runs batched ones in a scalar loop. `batched` (one [H, L, hd] matMul per
 * product, fewer ops) can still win where the products are tiny, so both are timed up to 512 tokens and the faster
 * one stands for tfjs; above that only per-head runs (batched took 8.5 s a run at (2048, 768, 12), 10× per-head);
 * `--all-variants` times both everywhere.
 */
export const variants = ['per-head', 'batched'];
export const variantsFor = ({ L }) => (L <= 512 ? variants : ['per-head']);

/**
 * Imports tfjs-core and the WASM backend and makes it the active backend. One thread: the non-threaded SIMD binary.
 * More: the threaded SIMD binary with setThreadsCount(threads), which tfjs allows only in a cross-origin-isolated
 * page — under Node it turns threads off (tfjs issue #3830), and forcing them on fails: its pthread workers are
 * blob: URLs, which Node's Worker refuses (ERR_WORKER_PATH).
 */
export async function load({ threads = 1 } = {}) {
  if (threads > 1 && IN_NODE) throw new Unavailable('no threads under Node in tfjs-backend-wasm 4.22');
  if (threads > 1 && !globalThis.crossOriginIsolated) throw new Unavailable('threads need a cross-origin-isolated page');
  const tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  if (globalThis.TFJS_WASM_PATH) wasm.setWasmPaths(globalThis.TFJS_WASM_PATH);
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', threads > 1);
  tf.env().set('WASM_HAS_SIMD_SUPPORT', true);
  wasm.setThreadsCount(threads);
  await tf.setBackend('wasm');
  await tf.ready();
  if (tf.getBackend() !== 'wasm') throw new Error(`tfjs backend is ${tf.getBackend()}, not wasm`);
  // In Chromium 156 the threaded build loads (with its pthread workers), yet XNNPACK's pool reports one thread after
  // setThreadsCount(2), and a 768² matMul gets no faster: then there is no 2-thread tfjs to compare with.
  if (wasm.getThreadsCount() !== threads)
    throw new Unavailable(`its threaded build reports getThreadsCount() = ${wasm.getThreadsCount()} after setThreadsCount(${threads})`);
  return tf;
}

/**
 * Multi-head self-attention with tf ops, tuned the way a careful user would: weights uploaded once, the q/k/v
 * projections as one fused matMul with the bias fused, the 1/√head_dim scale folded into the q weights, softmax on
 * the last axis.
 *
 * Why the weights are transposed here rather than passed with transposeB: in tfjs-backend-wasm 4.22,
 * fused.matMul({transposeB: true, bias}) returns wrong numbers (max error ≈ 1 on a 16×64·64×192 product;
 * bench/tfjs-check.mjs shows it), and a plain matMul with transposeB on a 128×512·512×1536 product takes 57 ms
 * against 5 ms pre-transposed. Likewise kᵀ is made with tf.transpose rather than matMul's transposeB.
 *
 * Without weights (`needWeights: false`) it runs per head over blocks of queries, so no call holds more than one
 * block's scores: tfjs has no fused or streaming attention of its own.
 */
export function create(tf, { E, H, state, needWeights = true, variant = 'per-head' }) {
  const hd = E / H;
  const scale = 1 / Math.sqrt(hd);
  const wIn = Float32Array.from(state.in_proj_weight.data);
  const bIn = Float32Array.from(state.in_proj_bias.data);
  for (let i = 0; i < E * E; i++) wIn[i] *= scale;
  for (let i = 0; i < E; i++) bIn[i] *= scale;
  const WinT = tf.tidy(() => tf.transpose(tf.tensor2d(wIn, [3 * E, E]))); // [E, 3E]
  const bin = tf.tensor1d(bIn);
  const WoutT = tf.tidy(() => tf.transpose(tf.tensor2d(state['out_proj.weight'].data, [E, E])));
  const bout = tf.tensor1d(state['out_proj.bias'].data);

  /** q, kᵀ and v per head, [H] arrays of [L, hd], [hd, L], [L, hd] (inside a tidy). */
  const splitHeads = (x, L) => {
    const qkv = tf.fused.matMul({ a: tf.tensor2d(x, [L, E]), b: WinT, bias: bin }); // [L, 3E]
    const [q, k, v] = tf.unstack(tf.transpose(tf.reshape(qkv, [L, 3, H, hd]), [1, 2, 0, 3]), 0); // each [H, L, hd]
    return { q, k, v, qs: tf.unstack(q), kTs: tf.unstack(tf.transpose(k, [0, 2, 1])), vs: tf.unstack(v) };
  };
  const project = (ctx) => tf.fused.matMul({ a: ctx, b: WoutT, bias: bout });

  const forwards = {
    'per-head'(x, L) {
      const weights = new Float32Array(H * L * L);
      const out = tf.tidy(() => {
        const { qs, kTs, vs } = splitHeads(x, L);
        const ctx = [];
        for (let h = 0; h < H; h++) {
          const w = tf.softmax(tf.matMul(qs[h], kTs[h])); // [L, L]
          weights.set(w.dataSync(), h * L * L);
          ctx.push(tf.matMul(w, vs[h])); // [L, hd]
        }
        return project(tf.concat(ctx, 1));
      });
      const output = out.dataSync();
      out.dispose();
      return { output, weights };
    },
    batched(x, L) {
      const [out, w] = tf.tidy(() => {
        const { q, k, v } = splitHeads(x, L);
        const weights = tf.softmax(tf.matMul(q, tf.transpose(k, [0, 2, 1]))); // [H, L, L]
        const ctx = tf.reshape(tf.transpose(tf.matMul(weights, v), [1, 0, 2]), [L, E]);
        return [project(ctx), weights];
      });
      const result = { output: out.dataSync(), weights: w.dataSync() };
      out.dispose();
      w.dispose();
      return result;
    },
    blocked(x, L) {
      const rows = queryBlockRows(1, L, 128 * 2 ** 20); // one head's block at a time: 128 MiB of scores
      const out = tf.tidy(() => {
        const { qs, kTs, vs } = splitHeads(x, L);
        const ctx = [];
        for (let h = 0; h < H; h++) {
          const blocks = [];
          for (let r0 = 0; r0 < L; r0 += rows) {
            const n = Math.min(rows, L - r0);
            // One block's scores live only inside this tidy.
            blocks.push(tf.tidy(() => tf.matMul(tf.softmax(tf.matMul(tf.slice(qs[h], [r0, 0], [n, hd]), kTs[h])), vs[h])));
          }
          ctx.push(blocks.length > 1 ? tf.concat(blocks, 0) : blocks[0]);
        }
        return project(tf.concat(ctx, 1));
      });
      const output = out.dataSync();
      out.dispose();
      return { output, weights: null };
    },
  };
  if (needWeights && !forwards[variant]) throw new Error(`tfjs peer: unknown variant '${variant}'`);
  const forward = needWeights ? forwards[variant] : forwards.blocked;
  return {
    forward: (x, L) => forward(x, L),
    dispose() {
      for (const t of [WinT, bin, WoutT, bout]) t.dispose();
    },
  };
}
