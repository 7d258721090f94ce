// scaledDotProductAttention: the functional form, on tensors of any leading shape.
import { check, copyIn, copyInto, copyOut, formatBytes, memoryLimit, module, reserve } from './runtime.js';
import { booleanOption, checkOptions, expectLength, expectShape, floatTensor, maskKind, maskTensor, numel, outBuffers, shapeString } from './tensor.js';

// One arena per loaded module, reused by calls up to KEEP_BYTES; a larger call's arena is given back at once, so
// a single huge call does not hold its peak for the life of the page.
const arenas = new WeakMap();
const KEEP_BYTES = 16 * 1024 ** 2;

function arenaOf(wasm) {
  let arena = arenas.get(wasm);
  if (!arena) arenas.set(wasm, (arena = new wasm._Arena()));
  return arena;
}

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
  const rank = Q.shape.length;
  if (rank < 2) throw new RangeError(`${caller}: q: expected at least 2 dimensions [..., queryLen, D], got ${shapeString(Q.shape)}`);
  const leading = Q.shape.slice(0, -2);
  const [Lq, D] = Q.shape.slice(-2);
  const Lk = K.shape.length === rank ? K.shape[rank - 2] : 0;
  const lead = leading.length ? `${leading.join(', ')}, ` : '';
  if (K.shape.length !== rank || K.shape[rank - 1] !== D || leading.some((d, i) => K.shape[i] !== d)) {
    throw new RangeError(`${caller}: k: expected shape [${lead}keyLen, ${D}] to match q ${shapeString(Q.shape)}, got ${shapeString(K.shape)}`);
  }
  if (V.shape.length !== rank || V.shape[rank - 2] !== Lk || leading.some((d, i) => V.shape[i] !== d)) {
    throw new RangeError(`${caller}: v: expected shape [${lead}${Lk}, valueDim] to match k ${shapeString(K.shape)}, got ${shapeString(V.shape)}`);
  }
  const mask = opts.attnMask == null ? null : maskTensor(opts.attnMask, `${caller}: attnMask`);
  if (mask) expectShape(mask.shape, leading.length ? [[Lq, Lk], [...leading, Lq, Lk]] : [[Lq, Lk]], `${caller}: attnMask`);
  const causal = booleanOption(opts.causal, `${caller}: causal`, false);
  let scale = NaN; // the binding's "default 1/√D"
  if (opts.scale !== undefined) {
    if (typeof opts.scale !== 'number') throw new TypeError(`${caller}: scale: expected a number, got ${typeof opts.scale}`);
    if (!Number.isFinite(opts.scale)) throw new RangeError(`${caller}: scale: expected a finite number, got ${opts.scale}`);
    scale = opts.scale;
  }
  const out = outBuffers(opts.out, `${caller}: options.out`);

  const call = { qShape: Q.shape, kShape: K.shape, vShape: V.shape, maskShape: mask ? mask.shape : [], mask: maskKind(wasm, mask), causal, scale };
  // Result shapes and workspace come from the C++ side.
  const plan = wasm._planScaledDotProductAttention(call);
  if (plan === null) check(wasm._lastStatus(), caller);
  const { outputShape, weightsShape } = plan;
  if (out.output) expectLength(out.output, numel(outputShape), outputShape, `${caller}: options.out.output`);
  if (out.weights) expectLength(out.weights, numel(weightsShape), weightsShape, `${caller}: options.out.weights`);
  const sizes = [Q.data.byteLength, K.data.byteLength, V.data.byteLength, mask ? mask.data.byteLength : 0, 4 * numel(outputShape), 4 * numel(weightsShape)];
  const total = sizes.reduce((a, b) => a + b, 0) + plan.workspaceBytes;
  if (total > memoryLimit()) {
    throw new RangeError(`${caller}: these shapes need ${formatBytes(total)} of WebAssembly memory, more than its ${formatBytes(memoryLimit())} limit`);
  }
  const arena = arenaOf(wasm);
  try {
    const [qAt, kAt, vAt, maskAt, outAt, weightsAt] = reserve(arena, sizes, caller);
    copyIn(qAt, Q.data);
    copyIn(kAt, K.data);
    copyIn(vAt, V.data);
    if (mask) copyIn(maskAt, mask.data);
    check(wasm._scaledDotProductAttention(call, { q: qAt, k: kAt, v: vAt, mask: maskAt, output: outAt, weights: weightsAt }), caller);
    return {
      output: { data: out.output ? copyInto(outAt, out.output) : copyOut(outAt, numel(outputShape)), shape: outputShape },
      weights: { data: out.weights ? copyInto(weightsAt, out.weights) : copyOut(weightsAt, numel(weightsShape)), shape: weightsShape },
    };
  } finally {
    if (sizes.reduce((a, b) => a + b, 0) > KEEP_BYTES) arena.trim();
  }
}
