// The trained models of the page (models/*.safetensors, see tools/MODEL_FORMAT.md): fetched on first
// use with progress, run by attnscope's LanguageModel / Seq2SeqModel, and turned into what the views draw.
import { loadModel } from 'attnscope';

// Vite emits the files as assets; each is fetched only when its page needs it. The one place that names them.
const FILES = {
  lm: new URL('../../../../models/char-lm.safetensors', import.meta.url),
  s2s: new URL('../../../../models/dates-seq2seq.safetensors', import.meta.url),
};
export const FILE_NAMES = { lm: 'char-lm.safetensors', s2s: 'dates-seq2seq.safetensors' };

const entries = new Map();

/**
 * The model `name` ('lm' or 's2s'): `{ status: 'loading' | 'ready' | 'error', loaded, total, model, error }`.
 * The first call starts the download; `onChange` runs on progress and when it is done.
 */
export function modelEntry(name, onChange) {
  let e = entries.get(name);
  if (e) return e;
  e = { name, status: 'loading', loaded: 0, total: 0, model: null, error: null };
  entries.set(name, e);
  (async () => {
    const res = await fetch(FILES[name]);
    if (!res.ok) throw new Error(`${FILE_NAMES[name]}: HTTP ${res.status}`);
    e.total = Number(res.headers.get('content-length')) || 0;
    let bytes;
    if (res.body?.getReader) {
      const chunks = [];
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        e.loaded += value.length;
        onChange();
      }
      bytes = new Uint8Array(e.loaded);
      let at = 0;
      for (const c of chunks) { bytes.set(c, at); at += c.length; }
    } else {
      bytes = new Uint8Array(await res.arrayBuffer());
      e.loaded = bytes.length;
    }
    e.model = await loadModel(bytes);
    e.bytes = bytes; // the step-by-step panel's walkthrough reads the attention weights from here (models/weights.js)
    e.status = 'ready';
  })()
    .catch((err) => { e.status = 'error'; e.error = err; console.error(err); })
    .finally(onChange);
  return e;
}

/** Forget downloads that failed (offline, server down), so the next request fetches again. True if there were any. */
export function retryFailed() {
  let any = false;
  for (const [name, e] of entries) if (e.status === 'error') { entries.delete(name); any = true; }
  return any;
}

/** How a token is drawn: spaces and line breaks made visible. */
export const showToken = (tok) => (tok === ' ' ? '␣' : tok === '\n' ? '↵' : tok === '\t' ? '⇥' : tok);

/** Average over heads of one layer: [H, L, S] at `offset` → [L, S]. */
export function headAverage(data, offset, H, L, S) {
  const avg = new Float32Array(L * S);
  for (let h = 0; h < H; h++) for (let x = 0; x < L * S; x++) avg[x] += data[offset + h * L * S + x] / H;
  return avg;
}

/** The k most likely entries of softmax(logits[row]): [{ id, p }]. */
export function topK(logits, row, k) {
  const V = logits.shape[1];
  const x = logits.data.subarray(row * V, (row + 1) * V);
  let m = -Infinity;
  for (const v of x) m = Math.max(m, v);
  let z = 0;
  for (const v of x) z += Math.exp(v - m);
  const ids = [...Array(V).keys()].sort((a, b) => x[b] - x[a]).slice(0, k);
  return ids.map((id) => ({ id, p: Math.exp(x[id] - m) / z }));
}

/**
 * The named heads of one attention of a model, by `${layer}/${head}`.
 * `attn`: undefined for the language model, 'enc' | 'dec' | 'cross' for the dates model.
 */
export function namedHeadMap(model, attn) {
  const want = { enc: 'enc_self', dec: 'dec_self', cross: 'dec_cross' }[attn];
  const map = new Map();
  for (const n of model.namedHeads ?? []) {
    if (want && n.attn !== want) continue;
    map.set(`${n.layer}/${n.head}`, n);
  }
  return map;
}

/**
 * The language model on `text`: `<bos>` + the first max_len − 1 characters, every layer's attention,
 * and the distribution of the next character; `ablate` ([{ layer, head }]) switches heads off.
 */
export function runLM(lm, text, ablate = []) {
  const chars = Array.from(text);
  const room = lm.config.maxLen - 1;
  const used = chars.slice(0, room);
  const { ids } = lm.tokenize(used.join(''));
  const t0 = performance.now();
  const out = lm.forward(ids, { needAttention: true, ...(ablate.length ? { ablate } : {}) });
  const ms = performance.now() - t0;
  const [layers, H, T] = out.attention.shape;
  const { unkId: unk, bosId: bos, tokens } = lm.vocab;
  const next = topK(out.logits, T - 1, 5).map(({ id, p }) => ({ id, p, token: id === bos ? null : tokens[id] }));
  return {
    ids,
    labels: ['<bos>', ...used.map(showToken)],
    unk: ids.map((id, i) => i > 0 && id === unk),
    chars: used,
    total: chars.length,
    truncated: chars.length > room,
    attention: out.attention.data,
    layers, H, T, ms, next,
  };
}

/**
 * The dates model on `text`: greedy decoding (KV cache, in the core) with every attention map, plus the
 * probability of each step's choice from a teacher-forced pass over the same tokens.
 */
export function runS2S(s2s, text) {
  const src = s2s.tokenizeSource(text);
  const total = src.wordCount; // before the max_src_len cut
  if (!src.ids.length) return { empty: true, sourceTokens: [], total };
  const t0 = performance.now();
  const tr = s2s.translate(text);
  const ms = performance.now() - t0;
  const { targetBosId: bos, sourceUnkId: unk, targetTokens: tgtTokens } = s2s.vocab;
  // Row t of every decoder map is the step that wrote output token t (its query is the token before).
  const forced = s2s.forward(src.ids, [bos, ...tr.outputIds.slice(0, -1)], { needAttention: false });
  const steps = tr.outputIds.map((id, t) => {
    const top = topK(forced.logits, t, 3);
    const alt = top.find((x) => x.id !== id);
    return { id, token: tgtTokens[id], p: top.find((x) => x.id === id)?.p ?? 0, alt: alt ? { token: tgtTokens[alt.id], p: alt.p } : null };
  });
  return {
    sourceTokens: tr.sourceTokens,
    sourceIds: tr.sourceIds,
    unk: tr.sourceIds.map((id) => id === unk),
    outputTokens: tr.outputTokens,
    text: tr.text,
    steps,
    total,
    truncated: total > s2s.config.maxSourceLen,
    enc: tr.encoderAttention, dec: tr.decoderAttention, cross: tr.crossAttention,
    ms,
  };
}

// The last trace of each model: the steps panel and the guide ask for the same one, and a pass that changes nothing
// they show (another view's setting) costs no call.
const traces = new WeakMap();
function cachedTrace(model, key, trace) {
  const last = traces.get(model);
  if (last?.key === key) return last.trace;
  const value = trace();
  traces.set(model, { key, trace: value });
  return value;
}

/**
 * One head of the language model at one query: `lm.trace`, recorded by the core's own forward pass (the layer's
 * input, its LayerNorm, the head's numbers, the attention's output), with the heads in `ablate` switched off.
 * Called by the step-by-step panel when it draws, not on every keystroke.
 */
export function traceLM(lm, ids, { layer, head, query, ablate = [] }) {
  const key = `${ids.join(',')}|${layer}|${head}|${query}|${ablate.map((x) => `${x.layer}.${x.head}`).join(',')}`;
  return cachedTrace(lm, key, () => lm.trace(ids, { layer, head, query, ...(ablate.length ? { ablate } : {}) }));
}

/** The package's names of the dates model's three attentions, and where each one's weights are in the file. */
const S2S_ATTENTION = { enc: 'encoder', dec: 'decoder', cross: 'cross' };
export const s2sAttentionPrefix = (attn, layer) =>
  ({ enc: `enc_blocks.${layer}.attn`, dec: `dec_blocks.${layer}.self_attn`, cross: `dec_blocks.${layer}.cross_attn` })[attn];

/**
 * One head of the dates model at one query (`s2s.trace`, teacher-forced by the core): `attn` 'enc' | 'dec' | 'cross',
 * `query` a source word for 'enc', else the output step, on the decoder's input for the `shown` steps of `run`
 * (`<bos>` and the tokens written before the last shown one: row t of the decoder's maps is the step that wrote
 * token t).
 */
export function traceS2S(s2s, run, { attn, layer, head, query, shown }) {
  const target = [s2s.vocab.targetBosId, ...run.steps.slice(0, Math.max(0, shown - 1)).map((s) => s.id)];
  const key = `${run.sourceIds.join(',')}|${attn === 'enc' ? '' : target.join(',')}|${attn}|${layer}|${head}|${query}`;
  return cachedTrace(s2s, key, () => s2s.trace(run.sourceIds, {
    attention: S2S_ATTENTION[attn], ...(attn === 'enc' ? {} : { target }), layer, head, query,
  }));
}
