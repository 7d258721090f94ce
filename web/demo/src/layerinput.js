// The input of any attention layer of the trained models (the language model, and the dates model's encoder, decoder
// and cross-attention), rebuilt from their weights so the step-by-step panel can start from real numbers:
// x = token + position embeddings, then for each block before it x += attention(LN1(x)) (the package's
// MultiHeadAttention, in WebAssembly) and x += fc2(gelu(fc1(LN2(x)))) (here). The panel then checks itself: its weights
// must equal the ones the model's own forward pass returned.
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

/** y [T, out] = x [T, in] · Wᵀ + b; a generator that yields after each row (about 37k multiply-adds here). */
function* linear(x, T, inDim, W, b, outDim) {
  const y = new Float32Array(T * outDim);
  for (let i = 0; i < T; i++) {
    if (i) yield;
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
  const attn = new Map();
  let off = []; // heads switched off, per layer: [head, …]
  // A head switched off has its context zeroed before the output projection (the package's ablation): the same as
  // zeroing its d columns of out_proj.weight, which is what this layer's copy of the weights gets.
  const block = (i) => {
    const heads = off[i] ?? [];
    const key = `${i}|${heads.join(',')}`;
    if (!attn.has(key)) {
      const sd = {};
      for (const k of ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']) sd[k] = tensor(`blocks.${i}.attn.${k}`);
      if (heads.length) {
        const w = Float32Array.from(sd['out_proj.weight'].data), hd = d / c.numHeads;
        for (let o = 0; o < d; o++) for (const h of heads) w.fill(0, o * d + h * hd, o * d + (h + 1) * hd);
        sd['out_proj.weight'] = { data: w, shape: sd['out_proj.weight'].shape };
      }
      const m = new MultiHeadAttention({ embedDim: d, numHeads: c.numHeads });
      m.loadStateDict(sd);
      attn.set(key, { mha: m, stateDict: sd });
    }
    return attn.get(key);
  };
  // The last text's residual stream per layer. The model is causal, so rows of an unchanged prefix (the usual case
  // while typing at the end) are reused and only the new rows go through the MLPs.
  let cache = { ids: [], xs: [], runs: [], ablate: '' };

  return {
    /**
     * Layer `layer` on token ids `ids`: its input x [T, d], LN1(x) (what its attention reads), the attention's own
     * forward pass on it (output and weights), and its state dict; `ablate` ([{ layer, head }]) switches heads off.
     * A generator (it yields between rows of the MLPs, so the page can compute a new text in pieces); `drain` from
     * steps.js runs it at once.
     */
    *at(ids, layer, ablate = []) {
      const ablateKey = ablate.map((x) => `${x.layer}.${x.head}`).join(',');
      if (ablateKey !== cache.ablate) {
        off = [];
        for (const x of ablate) (off[x.layer] ??= []).push(x.head);
        cache = { ids: [], xs: [], runs: [], ablate: ablateKey };
      }
      const T = ids.length;
      let same = 0;
      while (same < T && same < cache.ids.length && ids[same] === cache.ids[same]) same++;
      if (same !== T || cache.ids.length !== T) {
        const tok = tensor('tok_emb.weight').data, pos = tensor('pos_emb.weight').data;
        const x = new Float32Array(T * d);
        for (let i = 0; i < T; i++) for (let k = 0; k < d; k++) x[i * d + k] = tok[ids[i] * d + k] + pos[i * d + k];
        cache = { ids: [...ids], xs: [x], runs: [], reuse: same, old: cache.xs, ablate: ablateKey };
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
          const u = yield* linear(h2, n, d, tensor(`blocks.${i}.mlp.fc1.weight`).data, tensor(`blocks.${i}.mlp.fc1.bias`).data, c.dimFeedforward);
          for (let k = 0; k < u.length; k++) u[k] = gelu(u[k]);
          const y = yield* linear(u, n, c.dimFeedforward, tensor(`blocks.${i}.mlp.fc2.weight`).data, tensor(`blocks.${i}.mlp.fc2.bias`).data, d);
          for (let k = 0; k < y.length; k++) x[from * d + k] += y[k];
        }
        cache.xs[i + 1] = x;
        yield;
      }
      const r = run(layer);
      return { x: cache.xs[layer], h: r.h, output: r.output, weights: r.weights, stateDict: block(layer).stateDict, T, d };
    },
  };
}

/**
 * The same for the dates model (tools/MODEL_FORMAT.md, kind seq2seq): the input of any encoder self-attention,
 * decoder self-attention or cross-attention, rebuilt from the weights. Encoder block: x += attn(ln1(x)),
 * x += mlp(ln2(x)); mem = enc_ln_f(x). Decoder block: y += self_attn(ln1(y), causal), y += cross_attn(ln2(y), mem, mem),
 * y += mlp(ln3(y)). Sources and outputs are a few words long, so the last pair of inputs is cached whole.
 * @param {{ config: object }} s2s  the Seq2SeqModel (for its config)
 * @param {(name: string) => { data: Float32Array, shape: number[] }} tensor  its weights by name
 */
export function createSeq2SeqInputs(s2s, tensor) {
  const c = s2s.config;
  const d = c.dModel;
  const layers = new Map();
  const attention = (prefix) => {
    if (!layers.has(prefix)) {
      const sd = {};
      for (const k of ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']) sd[k] = tensor(`${prefix}.${k}`);
      const mha = new MultiHeadAttention({ embedDim: d, numHeads: c.numHeads });
      mha.loadStateDict(sd);
      layers.set(prefix, { mha, stateDict: sd });
    }
    return layers.get(prefix);
  };
  const ln = (name, x, T) => layerNorm(x, T, d, tensor(`${name}.weight`).data, tensor(`${name}.bias`).data, c.layerNormEps);
  const embed = (which, ids) => {
    const tok = tensor(`${which}_tok_emb.weight`).data, pos = tensor(`${which}_pos_emb.weight`).data;
    const x = new Float32Array(ids.length * d);
    ids.forEach((id, i) => { for (let k = 0; k < d; k++) x[i * d + k] = tok[id * d + k] + pos[i * d + k]; });
    return x;
  };
  /** x + attention(h, kv, kv): the attention's own forward pass (WebAssembly) on its rebuilt input. */
  const attend = (prefix, h, T, kv, S, causal) => {
    const out = attention(prefix).mha.forward({ data: h, shape: [T, d] }, { data: kv, shape: [S, d] }, { data: kv, shape: [S, d] }, { causal, needWeights: false });
    return out.output.data;
  };
  function* mlp(prefix, norm, x, T) {
    const u = yield* linear(ln(`${prefix}.${norm}`, x, T), T, d, tensor(`${prefix}.mlp.fc1.weight`).data, tensor(`${prefix}.mlp.fc1.bias`).data, c.dimFeedforward);
    for (let k = 0; k < u.length; k++) u[k] = gelu(u[k]);
    const y = yield* linear(u, T, c.dimFeedforward, tensor(`${prefix}.mlp.fc2.weight`).data, tensor(`${prefix}.mlp.fc2.bias`).data, d);
    const out = Float32Array.from(x);
    for (let k = 0; k < y.length; k++) out[k] += y[k];
    return out;
  }
  let cache = { key: null, value: null };

  return {
    /**
     * The input of attention `attn` ('enc' | 'dec' | 'cross') of layer `layer`, on source ids `src` and decoder input
     * `tgtIn` (`<bos>` then the tokens written so far): x (the residual stream where the attention reads it), h (its
     * LayerNorm: the queries' input), kv (the keys' and values' input: h itself, or the encoder's output for
     * cross-attention), the attention's own output, its state dict, and whether it is causal. A generator.
     */
    *at(src, tgtIn, attn, layer) {
      const key = `${src.join(',')}|${tgtIn.join(',')}|${attn}|${layer}`;
      if (cache.key === key) return cache.value;
      const S = src.length, T = tgtIn.length;
      let x = embed('src', src);
      let found = null;
      for (let i = 0; i < c.numEncoderLayers; i++) {
        const p = `enc_blocks.${i}`;
        const h = ln(`${p}.ln1`, x, S);
        const a = attend(`${p}.attn`, h, S, h, S, false);
        if (attn === 'enc' && i === layer) found = { x, h, kv: h, L: S, S, output: a, prefix: `${p}.attn`, causal: false };
        x = x.map((v, k) => v + a[k]);
        x = yield* mlp(p, 'ln2', x, S);
      }
      if (!found) {
        const mem = ln('enc_ln_f', x, S);
        let y = embed('tgt', tgtIn);
        for (let i = 0; i < c.numDecoderLayers && !found; i++) {
          const p = `dec_blocks.${i}`;
          const h1 = ln(`${p}.ln1`, y, T);
          const a1 = attend(`${p}.self_attn`, h1, T, h1, T, true);
          if (attn === 'dec' && i === layer) { found = { x: y, h: h1, kv: h1, L: T, S: T, output: a1, prefix: `${p}.self_attn`, causal: true }; break; }
          y = y.map((v, k) => v + a1[k]);
          const h2 = ln(`${p}.ln2`, y, T);
          const a2 = attend(`${p}.cross_attn`, h2, T, mem, S, false);
          if (attn === 'cross' && i === layer) { found = { x: y, h: h2, kv: mem, L: T, S, output: a2, prefix: `${p}.cross_attn`, causal: false }; break; }
          y = y.map((v, k) => v + a2[k]);
          y = yield* mlp(p, 'ln3', y, T);
        }
      }
      if (!found) throw new RangeError(`dates model: no ${attn} attention in layer ${layer}`);
      const value = { ...found, stateDict: attention(found.prefix).stateDict, d };
      cache = { key, value };
      return value;
    },
  };
}
