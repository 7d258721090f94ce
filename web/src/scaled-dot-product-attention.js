// scaledDotProductAttention: the functional form, on tensors of any leading shape. It converts JS values; the C++
// side checks the shapes, the scale and the `out` arrays, and gives its buffers back after the call.
import { call, module } from './runtime.js';
import { booleanOption, checkOptions, floatTensor, maskArg, noMask, outBuffers } from './tensor.js';

/**
 * softmax(q·kᵀ·scale + mask)·v. See index.d.ts.
 */
export function scaledDotProductAttention(q, k, v, options) {
  const caller = 'scaledDotProductAttention';
  const wasm = module(caller);
  const opts = checkOptions(options, ['attnMask', 'causal', 'scale', 'out'], `${caller}: options`);
  const Q = floatTensor(q, `${caller}: q`);
  const K = floatTensor(k, `${caller}: k`);
  const V = floatTensor(v, `${caller}: v`);
  const mask = opts.attnMask == null ? noMask(wasm) : maskArg(wasm, opts.attnMask, `${caller}: attnMask`);
  const causal = booleanOption(opts.causal, `${caller}: causal`, false);
  if (opts.scale !== undefined && typeof opts.scale !== 'number') throw new TypeError(`${caller}: scale: expected a number, got ${typeof opts.scale}`);
  const out = outBuffers(opts.out, `${caller}: options.out`);
  return call(caller, (m) => m._scaledDotProductAttention({
    q: Q, k: K, v: V, mask, causal, hasScale: opts.scale !== undefined, scale: opts.scale ?? 0,
    outOutput: out.output, outWeights: out.weights,
  }));
}
