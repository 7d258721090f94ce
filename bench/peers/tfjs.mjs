// Peer: TensorFlow.js 4.22 on its WASM backend (XNNPACK inside), single thread, SIMD — written with tf ops.

export const name = 'tfjs-wasm';

/** Imports tfjs-core and the WASM backend and makes it the active backend, single-threaded. */
export async function load() {
  const tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  // Node has no WASM threads in tfjs (its WASM_HAS_MULTITHREAD_SUPPORT is false under Node), so this loads the
  // non-threaded SIMD binary; setThreadsCount(1) states the single thread explicitly.
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  tf.env().set('WASM_HAS_SIMD_SUPPORT', true);
  wasm.setThreadsCount(1);
  await tf.setBackend('wasm');
  await tf.ready();
  if (tf.getBackend() !== 'wasm') throw new Error(`tfjs backend is ${tf.getBackend()}, not wasm`);
  return tf;
}

/**
 * Multi-head self-attention with tf ops, tuned the way a careful user would: weights uploaded once, the q/k/v
 * projections as one fused matMul with the bias fused, the 1/√head_dim scale folded into the q weights, one
 * batched matMul per attention product over all heads, softmax on the last axis.
 *
 * Why the weights are transposed here rather than passed with transposeB: in tfjs-backend-wasm 4.22,
 * fused.matMul({transposeB: true, bias}) returns wrong numbers (max error ≈ 1 on a 16×64·64×192 product;
 * bench/tfjs-check.mjs shows it), and a plain matMul with transposeB on a 128×512·512×1536 product takes 57 ms
 * against 5 ms pre-transposed. Likewise kᵀ is made with tf.transpose (5.4 ms) rather than matMul's transposeB
 * (8.1 ms) at (128, 512, 8).
 */
export function create(tf, { E, H, state }) {
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

  return {
    forward(x, L, needWeights = true) {
      const [out, w] = tf.tidy(() => {
        const x2 = tf.tensor2d(x, [L, E]);
        const qkv = tf.fused.matMul({ a: x2, b: WinT, bias: bin }); // [L, 3E]
        const heads = tf.transpose(tf.reshape(qkv, [L, 3, H, hd]), [1, 2, 0, 3]); // [3, H, L, hd]
        const [q, k, v] = tf.unstack(heads, 0); // each [H, L, hd]
        const weights = tf.softmax(tf.matMul(q, tf.transpose(k, [0, 2, 1]))); // [H, L, L]
        const ctx = tf.reshape(tf.transpose(tf.matMul(weights, v), [1, 0, 2]), [L, E]);
        const output = tf.fused.matMul({ a: ctx, b: WoutT, bias: bout });
        return needWeights ? [output, weights] : [output, null];
      });
      const result = { output: out.dataSync(), weights: w ? w.dataSync() : null };
      out.dispose();
      if (w) w.dispose();
      return result;
    },
    dispose() {
      for (const t of [WinT, bin, WoutT, bout]) t.dispose();
    },
  };
}
