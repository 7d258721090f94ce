// The input of any layer of the trained language model, rebuilt from its weights so the step-by-step panel can start
// from real numbers: x = token + position embeddings, then for each block before it
// x += attention(LN1(x)) (the package's MultiHeadAttention, in WebAssembly) and x += fc2(gelu(fc1(LN2(x)))) (here).
// The panel then checks itself: its weights must equal the ones the model's own forward pass returned.
import { MultiHeadAttention } from 'attnscope';

/** erf to 1.5e-7 (Abramowitz & Stegun 7.1.26): enough for GELU here, where results are shown to 3 decimals. */
function erf(x) {
  const s = Math.sign(x), a = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * a);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-a * a);
  return s * y;
}
const gelu = (x) => 0.5 * x * (1 + erf(x / Math.SQRT2));

/** LayerNorm of each row of x [T, d]. */
export function layerNorm(x, T, d, w, b, eps) {
  const y = new Float32Array(T * d);
  for (let i = 0; i < T; i++) {
    let m = 0, v = 0;
    for (let c = 0; c < d; c++) m += x[i * d + c];
    m /= d;
    for (let c = 0; c < d; c++) v += (x[i * d + c] - m) ** 2;
    const inv = 1 / Math.sqrt(v / d + eps);
    for (let c = 0; c < d; c++) y[i * d + c] = (x[i * d + c] - m) * inv * w[c] + b[c];
  }
  return y;
}

/** y [T, out] = x [T, in] · Wᵀ + b. */
function linear(x, T, inDim, W, b, outDim) {
  const y = new Float32Array(T * outDim);
  for (let i = 0; i < T; i++) {
    for (let o = 0; o < outDim; o++) {
      let s = b[o];
      const wo = o * inDim, xi = i * inDim;
      for (let k = 0; k < inDim; k++) s += x[xi + k] * W[wo + k];
      y[i * outDim + o] = s;
    }
  }
  return y;
}

/**
 * @param {{ config: object }} lm  the LanguageModel (for its config)
 * @param {(name: string) => { data: Float32Array, shape: number[] }} tensor  its weights by name
 */
export function createLayerInputs(lm, tensor) {
  const c = lm.config;
  const d = c.dModel;
  const attn = [];
  const block = (i) => {
    if (!attn[i]) {
      const sd = {};
      for (const k of ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']) sd[k] = tensor(`blocks.${i}.attn.${k}`);
      const m = new MultiHeadAttention({ embedDim: d, numHeads: c.numHeads });
      m.loadStateDict(sd);
      attn[i] = { mha: m, stateDict: sd };
    }
    return attn[i];
  };
  // The last text's residual stream per layer. The model is causal, so rows of an unchanged prefix (the usual case
  // while typing at the end) are reused and only the new rows go through the MLPs.
  let cache = { ids: [], xs: [], runs: [] };

  return {
    /**
     * Layer `layer` on token ids `ids`: its input x [T, d], LN1(x) (what its attention reads), the attention's own
     * forward pass on it (output and weights), and its state dict.
     */
    at(ids, layer) {
      const T = ids.length;
      let same = 0;
      while (same < T && same < cache.ids.length && ids[same] === cache.ids[same]) same++;
      if (same !== T || cache.ids.length !== T) {
        const tok = tensor('tok_emb.weight').data, pos = tensor('pos_emb.weight').data;
        const x = new Float32Array(T * d);
        for (let i = 0; i < T; i++) for (let k = 0; k < d; k++) x[i * d + k] = tok[ids[i] * d + k] + pos[i * d + k];
        cache = { ids: [...ids], xs: [x], runs: [], reuse: same, old: cache.xs };
      }
      const ln = (i, which, x, from = 0) => layerNorm(x.subarray(from * d), T - from, d, tensor(`blocks.${i}.${which}.weight`).data, tensor(`blocks.${i}.${which}.bias`).data, c.layerNormEps);
      const run = (i) => {
        if (!cache.runs[i]) {
          const h = ln(i, 'ln1', cache.xs[i]);
          const out = block(i).mha.forward({ data: h, shape: [T, d] }, undefined, undefined, { causal: true, needWeights: true, averageWeights: false });
          cache.runs[i] = { h, output: out.output.data, weights: out.weights.data };
        }
        return cache.runs[i];
      };
      for (let i = cache.xs.length - 1; i < layer; i++) {
        // Block i: attention then MLP, each added to the residual stream; rows before `from` are the last text's.
        const from = Math.min(cache.reuse ?? 0, cache.old?.[i + 1] ? T : 0);
        const x = new Float32Array(T * d);
        if (from) x.set(cache.old[i + 1].subarray(0, from * d));
        const a = run(i).output, xi = cache.xs[i];
        for (let k = from * d; k < x.length; k++) x[k] = xi[k] + a[k];
        if (from < T) {
          const n = T - from;
          const h2 = ln(i, 'ln2', x, from);
          const u = linear(h2, n, d, tensor(`blocks.${i}.mlp.fc1.weight`).data, tensor(`blocks.${i}.mlp.fc1.bias`).data, c.dimFeedforward);
          for (let k = 0; k < u.length; k++) u[k] = gelu(u[k]);
          const y = linear(u, n, c.dimFeedforward, tensor(`blocks.${i}.mlp.fc2.weight`).data, tensor(`blocks.${i}.mlp.fc2.bias`).data, d);
          for (let k = 0; k < y.length; k++) x[from * d + k] += y[k];
        }
        cache.xs[i + 1] = x;
      }
      const r = run(layer);
      return { x: cache.xs[layer], h: r.h, output: r.output, weights: r.weights, stateDict: block(layer).stateDict, T, d };
    },
  };
}
