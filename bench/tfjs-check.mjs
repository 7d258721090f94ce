// Shows why the tfjs peer pre-transposes its weights: tfjs-backend-wasm 4.22's fused.matMul with transposeB and a
// bias gives wrong results, while the same product with the weights transposed beforehand is right.
//   node bench/tfjs-check.mjs
import * as tfjs from './peers/tfjs.mjs';
import { maxAbsDiff } from './common.mjs';

const tf = await tfjs.load();
for (const [M, K, N] of [[4, 8, 16], [16, 64, 192]]) {
  const a = tf.randomUniform([M, K], -1, 1, 'float32', 1);
  const b = tf.randomUniform([N, K], -1, 1, 'float32', 2);
  const bias = tf.randomUniform([N], -1, 1, 'float32', 3);
  const reference = tf.add(tf.matMul(a, tf.transpose(b)), bias).dataSync();
  const withTransposeB = tf.fused.matMul({ a, b, transposeB: true, bias }).dataSync();
  const preTransposed = tf.fused.matMul({ a, b: tf.transpose(b), bias }).dataSync();
  console.log(
    `${M}×${K}·(${N}×${K})ᵀ + bias: fused transposeB max error ${maxAbsDiff(withTransposeB, reference).toExponential(1)}, ` +
      `pre-transposed ${maxAbsDiff(preTransposed, reference).toExponential(1)}`,
  );
}
