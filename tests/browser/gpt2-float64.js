// A GPT-2 forward pass in float64, written from Hugging Face's modeling_gpt2.py (GPT2Attention, GPT2MLP with
// gelu_new, Conv1D weights [in, out], ln_f, the head tied to wte), for the browser tests of the research tools: the
// maps of two prompts, and a head's context replaced at one position (patching), computed independently of the core.
// Reads a fixture's model.safetensors (F32). Not a test file itself (node --test runs *.test.js only).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The tensors of a safetensors file as Float64Arrays with their shapes. */
function tensors(path) {
  const b = readFileSync(path);
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.subarray(8, 8 + n).toString('utf8'));
  const out = {};
  for (const [name, v] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (v.dtype !== 'F32') throw new Error(`${name}: ${v.dtype}, expected F32`);
    const [s, e] = v.data_offsets;
    const bytes = b.subarray(8 + n + s, 8 + n + e);
    out[name] = { data: Float64Array.from(new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length))), shape: v.shape };
  }
  return out;
}

/** x [T, din] · W [din, dout] + bias. */
function linear(x, T, din, w, bias, dout) {
  const y = new Float64Array(T * dout);
  for (let t = 0; t < T; t++) for (let o = 0; o < dout; o++) {
    let s = bias ? bias[o] : 0;
    for (let i = 0; i < din; i++) s += x[t * din + i] * w[i * dout + o];
    y[t * dout + o] = s;
  }
  return y;
}

function layerNorm(x, T, d, w, b, eps) {
  const y = new Float64Array(T * d);
  for (let t = 0; t < T; t++) {
    let m = 0, v = 0;
    for (let i = 0; i < d; i++) m += x[t * d + i];
    m /= d;
    for (let i = 0; i < d; i++) v += (x[t * d + i] - m) ** 2;
    const r = 1 / Math.sqrt(v / d + eps);
    for (let i = 0; i < d; i++) y[t * d + i] = (x[t * d + i] - m) * r * w[i] + b[i];
  }
  return y;
}

const geluNew = (x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));

/** A GPT-2 checkpoint of tests/fixtures/hf/`name` as a float64 model. */
export function gpt2(dir) {
  const c = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const w = tensors(join(dir, 'model.safetensors'));
  const d = c.n_embd, H = c.n_head, hd = d / H, L = c.n_layer, V = c.vocab_size, inner = c.n_inner ?? 4 * d, eps = c.layer_norm_epsilon;
  const p = (name) => w[`transformer.${name}`].data;
  /**
   * The pass over `ids`: `edit(layer, ctx)` may change each layer's contexts ctx[h][t] (Float64Array of hd) before the
   * output projection. Returns the last position's logits, every layer's maps [l][h][i][j] and contexts [l][h][t].
   */
  function forward(ids, edit) {
    const T = ids.length;
    let x = new Float64Array(T * d);
    for (let t = 0; t < T; t++) for (let i = 0; i < d; i++) x[t * d + i] = p('wte.weight')[ids[t] * d + i] + p('wpe.weight')[t * d + i];
    const maps = [], contexts = [];
    for (let l = 0; l < L; l++) {
      const q = `h.${l}.`;
      const a = layerNorm(x, T, d, p(q + 'ln_1.weight'), p(q + 'ln_1.bias'), eps);
      const qkv = linear(a, T, d, p(q + 'attn.c_attn.weight'), p(q + 'attn.c_attn.bias'), 3 * d);
      const ctx = [], map = [];
      for (let h = 0; h < H; h++) {
        const rows = [], cs = [];
        for (let i = 0; i < T; i++) {
          const s = new Float64Array(T).fill(-Infinity);
          let m = -Infinity;
          for (let j = 0; j <= i; j++) {
            let dot = 0;
            for (let k = 0; k < hd; k++) dot += qkv[i * 3 * d + h * hd + k] * qkv[j * 3 * d + d + h * hd + k];
            s[j] = dot / Math.sqrt(hd);
            m = Math.max(m, s[j]);
          }
          let z = 0;
          for (let j = 0; j <= i; j++) z += Math.exp(s[j] - m);
          const row = Array.from(s, (v, j) => (j <= i ? Math.exp(v - m) / z : 0));
          const cv = new Float64Array(hd);
          for (let j = 0; j <= i; j++) for (let k = 0; k < hd; k++) cv[k] += row[j] * qkv[j * 3 * d + 2 * d + h * hd + k];
          rows.push(row);
          cs.push(cv);
        }
        map.push(rows);
        ctx.push(cs);
      }
      if (edit) edit(l, ctx);
      contexts.push(ctx);
      maps.push(map);
      const merged = new Float64Array(T * d);
      for (let t = 0; t < T; t++) for (let h = 0; h < H; h++) merged.set(ctx[h][t], t * d + h * hd);
      const attn = linear(merged, T, d, p(q + 'attn.c_proj.weight'), p(q + 'attn.c_proj.bias'), d);
      for (let i = 0; i < x.length; i++) x[i] += attn[i];
      const b = layerNorm(x, T, d, p(q + 'ln_2.weight'), p(q + 'ln_2.bias'), eps);
      const up = linear(b, T, d, p(q + 'mlp.c_fc.weight'), p(q + 'mlp.c_fc.bias'), inner).map(geluNew);
      const down = linear(up, T, inner, p(q + 'mlp.c_proj.weight'), p(q + 'mlp.c_proj.bias'), d);
      for (let i = 0; i < x.length; i++) x[i] += down[i];
    }
    const f = layerNorm(x.subarray((T - 1) * d), 1, d, p('ln_f.weight'), p('ln_f.bias'), eps);
    const logits = new Float64Array(V);
    for (let v = 0; v < V; v++) for (let i = 0; i < d; i++) logits[v] += f[i] * p('wte.weight')[v * d + i];
    return { logits, maps, contexts };
  }
  return { config: { layers: L, heads: H }, forward };
}
