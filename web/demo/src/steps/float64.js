// The walkthrough's numbers, recomputed in plain JS (float64) from the layer's state dict and its input, so the page
// can show every head's intermediate values; the trained models' input comes from the core's trace() (the numbers of
// their own forward pass), and the panel checks the walkthrough against it.

// Projected rows, remembered per weight tensor and per input row: while someone types, most rows
// (same token at the same position) are unchanged, so only the edited ones cost E² multiply-adds.
const rowCache = new WeakMap();
const CACHE_ROWS = 4096;

/** Two 32-bit FNV-1a hashes of a row's bytes (in two orders): a collision would need both to collide. */
function rowKey(x, from, n, r0) {
  const u = new Uint32Array(x.buffer, x.byteOffset + from * 4, n);
  let a = 0x811c9dc5, b = 0x01000193 ^ r0;
  for (let k = 0; k < n; k++) {
    a = Math.imul(a ^ u[k], 0x01000193);
    b = Math.imul(b ^ u[n - 1 - k], 0x85ebca6b);
  }
  return `${r0}:${n}:${a >>> 0}:${b >>> 0}`;
}

/** Rows projected between two yields of the generators below (at embed 256, about 1 ms). */
const ROWS_PER_PIECE = 4;

/** Run a generator to its end and return its value (for callers that do not draw in pieces). */
export function drain(steps) {
  for (;;) {
    const s = steps.next();
    if (s.done) return s.value;
  }
}

/**
 * X [n, inDim] times rows r0..r0+outDim-1 of W (transposed) plus bias: the Q, K or V slice of in_proj. A generator
 * that yields every few rows it had to compute, and returns the result.
 */
function* project(x, n, inDim, w, b, r0, outDim) {
  let cache = rowCache.get(w);
  if (!cache) rowCache.set(w, (cache = new Map()));
  if (cache.size > CACHE_ROWS) cache.clear();
  const y = new Float64Array(n * outDim);
  let computed = 0;
  for (let i = 0; i < n; i++) {
    const xi = i * inDim;
    const key = x instanceof Float32Array ? rowKey(x, xi, inDim, r0) : null;
    const hit = key && cache.get(key);
    if (hit) { y.set(hit, i * outDim); continue; }
    for (let o = 0; o < outDim; o++) {
      const wo = (r0 + o) * inDim;
      let s = b ? b[r0 + o] : 0;
      for (let k = 0; k < inDim; k++) s += x[xi + k] * w[wo + k];
      y[i * outDim + o] = s;
    }
    if (key) cache.set(key, y.slice(i * outDim, (i + 1) * outDim));
    if (++computed % ROWS_PER_PIECE === 0) yield;
  }
  return y;
}

/** Everything the walkthrough shows for query row `qi` (explainQuerySteps run to its end). */
export const explainQuery = (a) => drain(explainQuerySteps(a));

/**
 * Everything the walkthrough shows for query row `qi`: a generator that yields while it projects rows (the page runs
 * it in pieces) and returns the result.
 * @param {object} a
 * @param {Record<string, {data: Float32Array, shape: number[]}>} a.stateDict
 * @param {number} a.numHeads
 * @param {{data: Float32Array, shape: number[]}} a.query  [L, E] embeddings
 * @param {{data: Float32Array, shape: number[]}} a.key    [S, E] embeddings (= value)
 * @param {number} a.qi
 * @param {boolean} a.causal
 * @param {number[]} [a.off]  heads switched off: their context is zeroed before the output projection (the package's
 *   ablation), so the output is the model's
 */
export function* explainQuerySteps({ stateDict, numHeads, query, key, qi, causal, off = [] }) {
  const [L, E] = query.shape;
  const S = key.shape[0];
  const d = E / numHeads;
  const w = stateDict.in_proj_weight.data;
  const b = stateDict.in_proj_bias?.data;
  const Q = yield* project(query.data, L, E, w, b, 0, E);
  const K = yield* project(key.data, S, E, w, b, E, E);
  const V = yield* project(key.data, S, E, w, b, 2 * E, E);
  const scale = 1 / Math.sqrt(d);

  const heads = [];
  for (let h = 0; h < numHeads; h++) {
    const masked = Uint8Array.from({ length: S }, (_, j) => (causal && j > qi ? 1 : 0));
    heads.push(headSteps({ q: Q.subarray(qi * E + h * d, qi * E + (h + 1) * d), K, V, stride: E, base: h * d, d, S, scale, masked }));
  }

  const concat = new Float64Array(E);
  heads.forEach((hd, h) => { if (!off.includes(h)) concat.set(hd.context, h * d); });
  const wo = stateDict['out_proj.weight'].data;
  const bo = stateDict['out_proj.bias']?.data;
  const output = yield* project(concat, 1, E, wo, bo, 0, E);
  return { L, S, E, d, numHeads, qi, scale, Q, K, V, heads, concat, output };
}

/**
 * One head at one query in float64: q·kⱼ, the scaling, the mask, exp(s − max), the weights and the context. Key and
 * value j are `d` numbers at `base + j * stride` of K and V (every head's columns of a [S, E] matrix, or one head's
 * [S, d] from a trace); `masked[j]` = 1 hides key j; `softcap` > 0 soft-caps the scaled scores, as the trace says.
 */
export function headSteps({ q, K, V, stride, base, d, S, scale, masked, softcap = 0 }) {
  const scores = new Float64Array(S);
  const scaled = new Float64Array(S);
  const weights = new Float64Array(S);
  let max = -Infinity;
  for (let j = 0; j < S; j++) {
    let s = 0;
    for (let c = 0; c < d; c++) s += q[c] * K[base + j * stride + c];
    scores[j] = s;
    // A soft-capped model (trace.softcap > 0: attn_logit_softcapping) squashes the scaled score first.
    scaled[j] = softcap > 0 ? softcap * Math.tanh((s * scale) / softcap) : s * scale;
    if (!masked[j]) max = Math.max(max, scaled[j]);
  }
  // exp(s − max): the same softmax, without overflow; the page shows these and their sum Σ.
  const exps = new Float64Array(S);
  let z = 0;
  for (let j = 0; j < S; j++) z += exps[j] = masked[j] ? 0 : Math.exp(scaled[j] - max);
  // A row whose keys are all masked has zero weights (the package's convention, as torch SDPA ≥ 2.5).
  for (let j = 0; j < S; j++) weights[j] = z > 0 ? exps[j] / z : 0;
  const context = new Float64Array(d);
  for (let j = 0; j < S; j++) for (let c = 0; c < d; c++) context[c] += weights[j] * V[base + j * stride + c];
  return { scores, scaled, exps, z, max, weights, masked, context };
}

/**
 * The walkthrough of a traced layer (a trained model's `trace()`): its input as the core's forward pass computed it
 * (the attention input, and cross-attention's key input), projected here with the layer's weights for every head.
 * A generator, as explainQuerySteps.
 */
export function explainTraceSteps({ trace, stateDict, numHeads, causal, off }) {
  const key = trace.keyInput ?? trace.attentionInput;
  return explainQuerySteps({ stateDict, numHeads, query: trace.attentionInput, key, qi: trace.query, causal, off });
}

/** Largest |a[i] - b[off + i]| over a's length. */
export function maxAbsDiff(a, b, off = 0) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[off + i]));
  return m;
}
