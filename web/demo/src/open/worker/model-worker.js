// The module Worker that holds an opened Hugging Face model: it loads the files the page hands it, runs forward,
// trace and generate, and sends results back as transferable typed arrays, so the page stays responsive.
import { init, loadModel, memoryUsage, runtimeInfo } from 'attnscope';
import { randomIds, headScores } from './head-scores.js';
import { patchingSweep, forgetPatchingRuns } from './patching.js';
import { refusedForMemory } from '../refused.js';
import { lensOf, compareOf, patchPositions, valueNormsOf, circuitNormsOf, circuitOf, cachePlanOf, cacheOf } from './research.js';

let model = null;
// A causal model's last pass, kept while the text is typed: an input that extends it computes only its new positions.
let typing = null;
// The values' norms of the typing cache's pass, with the input and ablation they belong to: the typing pass computes
// them from the values it keeps (L · H · T norms, a small part of a pass), and the value-weighted view reads them
// from here instead of asking for a pass of its own.
let typingNorms = null;
// Forward runs are named (`seq`, unique across Workers: the page can outlive one); each run through the typing cache
// lists the runs before it whose first rows it keeps, [seq, rows] (the cache's `reused`: those rows of every map are
// the same bits). The chain reaches back UNCHANGED_KEPT runs, so the grid can repaint only the rows after them
// (open/grid.js), even for runs the page skipped.
const UNCHANGED_KEPT = 8;
const WORKER_ID = Math.random().toString(36).slice(2, 10);
let forwardSeq = 0;
let typingRun = { seq: null, unchanged: [] };
let loading = null; // the AbortController of the load in progress
// The maps of a forward pass leave with its reply (transferred), and the page sends their array back once it has
// drawn newer ones (open/session.js): the next pass copies its maps into it. A new array's first writes cost the system
// a page each: at 500 tokens of GPT-2 small, 144 MB copied in 100–150 ms, against 15 ms into memory written before.
// Dropped when no forward comes for SPARE_MS (the page holds one set of maps, this thread the other meanwhile).
let spare = null;
let spareTimer = 0;
const SPARE_MS = 3000;
let patchCancelled = false; // set by a cancelPatch message, read between the sweep's heads
let lensCancelled = false; // set by a cancelLens message, read between a chunked lens's calls
// Started by the page's first message, `start`, which names the folder of the threaded files (the page's
// attnscope-mt/: this Worker's own URL is inside assets/). Two threads where the page is cross-origin isolated (the
// Worker is too then): one helper beside this thread, which leaves the page's own thread its core.
let start;
const ready = new Promise((resolve) => { start = resolve; })
  .then(({ threadsUrl }) => init(self.crossOriginIsolated && threadsUrl ? { threads: 2, threadsUrl } : {}));

/** The most likely `k` tokens of row `t` of logits [T, V], with softmax probabilities. */
function topK(logits, t, k, model) {
  const V = logits.shape[1];
  const x = logits.data.subarray(t * V, (t + 1) * V);
  let m = -Infinity;
  for (let i = 0; i < V; i++) if (x[i] > m) m = x[i];
  let z = 0;
  for (let i = 0; i < V; i++) z += Math.exp(x[i] - m);
  const best = [];
  for (let i = 0; i < V; i++) {
    if (best.length < k || x[i] > x[best[best.length - 1]]) {
      best.push(i);
      best.sort((a, b) => x[b] - x[a]);
      if (best.length > k) best.pop();
    }
  }
  const strings = model.tokenStrings(best);
  return best.map((id, j) => ({ id, token: strings ? strings[j] : `#${id}`, p: Math.exp(x[id] - m) / z }));
}

/**
 * What the model predicts from logits [T, V] of `tokens`: a causal model, what comes after the last token; a
 * masked-LM encoder, what fills each [MASK]. Null without a language-model head.
 */
function predictionsOf(logits, tokens) {
  if (!logits) return null;
  const rows = model.kind === 'encoder' ? tokens.flatMap((s, i) => (s === '[MASK]' ? [i] : [])) : [tokens.length - 1];
  // A causal model's logits may be its last rows only (logitsToKeep): row t is then row t − (T − rows).
  const first = tokens.length - logits.shape[0];
  return rows.map((t) => ({ t, top: topK(logits, t - first, 5, model) }));
}

/** Tells the page's watchdog (open/client.js) what runs next: the checkpoint's tokenizer, or the core. */
const phase = (name) => self.postMessage({ type: 'phase', phase: name });

/** The ids, token strings and token types of the page's input, cut to the model's longest input (`total` says how long it was). */
function encode(input) {
  phase('tokenize');
  const e = encodeAll(input);
  phase('compute');
  const n = model.config.maxPositions, total = e.ids.length;
  if (total <= n) return { ...e, total };
  return { ids: e.ids.slice(0, n), tokens: e.tokens.slice(0, n), tokenTypeIds: e.tokenTypeIds?.slice(0, n) ?? null, total };
}

/** The ids, token strings and token types of the page's input (a sentence, or a pair for an encoder). */
function encodeAll({ text, pair }) {
  // Without tokenizer.json the page takes token ids, written out (`15496 11 995`).
  if (!model.hasTokenizer) {
    const words = String(text).split(/[\s,]+/).filter(Boolean);
    const ids = words.map(Number);
    const bad = ids.findIndex((x) => !Number.isInteger(x) || x < 0 || x >= model.config.vocabSize);
    if (bad >= 0) {
      // The page says it in its language, naming what was typed (open/frame.js); the message is for anyone else.
      const error = new RangeError(`token ids are whole numbers from 0 to ${model.config.vocabSize - 1}; "${words[bad].slice(0, 40)}" is not one`);
      error.badId = { word: words[bad].slice(0, 40), at: bad, max: model.config.vocabSize - 1 };
      throw error;
    }
    return { ids, tokens: ids.map(String), tokenTypeIds: null };
  }
  if (model.kind === 'encoder') return model.tokenize(text, pair ? { pair } : undefined);
  return { ...model.tokenize(text), tokenTypeIds: null };
}

/** A translation model: its greedy translation of the text and the three attentions (encoder, decoder, cross). */
function translation(text) {
  const { ids, tokens, total } = encode({ text });
  const t0 = performance.now();
  // The decoder's positions bound the steps (config is the decoder's stack).
  const r = model.translate(ids, { maxSteps: Math.min(TRANSLATE_STEPS, model.config.maxPositions) });
  const ms = performance.now() - t0;
  const maps = [r.encoderAttention, r.decoderAttention, r.crossAttention];
  return { transfer: maps.map((m) => m.data.buffer), value: { ids, tokens, total, ms, translation: { ...r, tokens } } };
}
const TRANSLATE_STEPS = 32;

function dropSpare() {
  clearTimeout(spareTimer);
  spare = null;
}

/** An array the page sent back (the larger one is kept), held for SPARE_MS. */
function keepSpare(buffer) {
  if (!(buffer instanceof ArrayBuffer) || buffer.byteLength <= (spare?.byteLength ?? 0)) return;
  spare = buffer;
  clearTimeout(spareTimer);
  spareTimer = setTimeout(dropSpare, SPARE_MS);
}

/**
 * forward()'s option that copies T tokens' maps into the spare array, which the reply then takes away. Without a
 * spare that fits, or one the maps would fill less than half of (the page would hold all of it for them), a new array
 * with room for the maps of up to the next multiple of 32 tokens above T: an array comes back two runs later, and
 * typing adds a token every few keys. Its pages past the maps are never written, so they take no memory until a
 * longer input's maps use them.
 */
function mapsInto(T) {
  const c = model.config, floats = c.layers * c.heads * T * T;
  let buffer = spare;
  dropSpare();
  if (!buffer || buffer.byteLength < floats * 4 || buffer.byteLength > floats * 8) {
    const room = Math.max(T, Math.min(c.maxPositions > 0 ? c.maxPositions : Infinity, Math.ceil((T + 1) / 32) * 32));
    try {
      buffer = new ArrayBuffer(c.layers * c.heads * room * room * 4);
    } catch {
      return {}; // no room for the larger array: forward() makes one of the maps' own size
    }
  }
  return { out: { attention: new Float32Array(buffer, 0, floats) } };
}

/** Frees the open model, the typing cache of its passes and the patching runs kept for its last prompts. */
function closeModel() {
  dropSpare();
  forgetPatchingRuns();
  typing?.dispose();
  typing = null;
  typingNorms = null;
  typingRun = { seq: null, unchanged: [] };
  model?.dispose();
  model = null;
}

const handlers = {
  async start({ threadsUrl }) {
    start({ threadsUrl });
    await ready;
    return { value: runtimeInfo() };
  },
  async load({ files, url }) {
    // The controller exists before the module is ready: a Cancel pressed while the WebAssembly still compiles (seconds
    // on a slow or busy machine) must not be dropped for want of a load to abort.
    // A newer load replaces one still running: the page has moved on to it, and two would race for `model`.
    loading?.abort(new DOMException('A newer load replaced this one.', 'AbortError'));
    const controller = new AbortController();
    loading = controller;
    const signal = controller.signal;
    let before = null;
    // The model open before this load stays open until the new one has loaded: a broken config.json, a missing file
    // or a Cancel leaves it as it was. Only when the core refuses the new model for memory, while the earlier one
    // holds its share, is that one freed and the load tried once more (a model too large even alone is then refused
    // again, and the earlier one is gone: the page says the load failed, not that a model is still open).
    const attempt = () => {
      let first = true;
      return loadModel(files ?? url, {
        signal,
        // The memory the core planned from the config and headers, before it allocates (its default: 512 tokens).
        onPlan: (plan) => self.postMessage({ type: 'plan', ...plan }),
        onProgress: (p) => {
          // The first call comes after the core allocated every parameter: the memory it holds from then on.
          self.postMessage({ type: 'progress', ...p, wasmBytes: first ? memoryUsage().wasmBytes : undefined });
          first = false;
        },
      });
    };
    let next;
    try {
      await ready;
      before = memoryUsage().wasmBytes;
      signal.throwIfAborted();
      try {
        next = await attempt();
      } catch (error) {
        if (!model || !refusedForMemory(error)) throw error;
        closeModel();
        next = await attempt();
      }
      // Finished just as a newer load replaced it: that one is the page's.
      if (signal.aborted) { next.dispose(); signal.throwIfAborted(); }
    } catch (error) {
      // What the failed load left in WebAssembly memory, which never shrinks: the page says it as it is.
      if (before !== null) error.memory = { before, after: memoryUsage().wasmBytes };
      error.kept = !!model; // the earlier model is still open
      throw error;
    } finally {
      if (loading === controller) loading = null;
    }
    closeModel();
    model = next;
    return { kind: model.kind, config: model.config, parameterBytes: model.parameterBytes, hasTokenizer: model.hasTokenizer, eosTokenId: model.eosTokenId ?? null, wasmBytes: memoryUsage().wasmBytes };
  },
  forward({ text, pair, ablate }) {
    if (model.kind === 'seq2seq') return translation(text);
    const { ids, tokens, tokenTypeIds, total } = encode({ text, pair });
    const t0 = performance.now();
    const causal = model.kind === 'causal_lm';
    // A causal model's page reads only the next token: the last row of logits, not a vocabulary's row per position
    // (at 500 tokens 100 MB copied out of WebAssembly at every key, and the head run over every new row).
    const r = model.forward(ids, { ablate, ...mapsInto(ids.length), ...(tokenTypeIds ? { tokenTypeIds } : {}), ...(causal ? { cache: typing ?? true, logitsToKeep: 1, valueNorms: true } : {}) });
    const seq = `${WORKER_ID}:${++forwardSeq}`;
    let unchanged = [];
    if (causal) {
      typing = r.cache;
      typingNorms = { ids, ablate: JSON.stringify(ablate ?? []), valueNorms: r.valueNorms };
      const rows = r.cache.reused; // of the pass the cache held: the last run through it
      if (typingRun.seq !== null) unchanged = [[typingRun.seq, rows], ...typingRun.unchanged.map(([s, n]) => [s, Math.min(n, rows)])].slice(0, UNCHANGED_KEPT);
      typingRun = { seq, unchanged };
    }
    const ms = performance.now() - t0;
    return { transfer: [r.attention.data.buffer], value: { ids, tokens, tokenTypeIds, total, attention: r.attention, predictions: predictionsOf(r.logits, tokens), ms, seq, unchanged } };
  },
  /** The predictions with every head, without the maps: the side "all heads" beside a run with heads switched off. */
  predict({ text, pair }) {
    const { ids, tokens, tokenTypeIds } = encode({ text, pair });
    const r = model.forward(ids, { needAttention: false, ...(tokenTypeIds ? { tokenTypeIds } : {}), ...(model.kind === 'causal_lm' ? { logitsToKeep: 1 } : {}) });
    return { value: { ids, predictions: predictionsOf(r.logits, tokens) } };
  },
  trace({ text, pair, layer, head, query, ablate }) {
    const { ids, tokenTypeIds } = encode({ text, pair });
    // Through the typing cache, which holds the pass the page shows: the trace starts at its layer from the input
    // that pass kept (at 500 tokens a trace of a top layer otherwise runs every layer below again, seconds a key).
    const tr = model.trace(ids, { layer, head, query, ablate, ...(tokenTypeIds ? { tokenTypeIds } : {}), ...(typing ? { cache: typing } : {}) });
    const transfer = Object.values(tr).filter((v) => v?.data instanceof Float32Array).map((v) => v.data.buffer);
    return { transfer, value: tr };
  },
  /** Every head's previous-token, induction and first-token scores on a repeated random sequence. */
  findHeads() {
    phase('compute');
    const half = Math.min(50, Math.floor(model.config.maxPositions / 2));
    const ids = randomIds(half, model.config.vocabSize);
    const r = model.forward([...ids, ...ids]);
    const s = headScores(r.attention, half);
    return { transfer: [s.previous.buffer, s.induction.buffer, s.first.buffer], value: { ...s, tokens: 2 * half } };
  },
  /** The Patching tab: every head's recovered logit difference (open/worker/patching.js), with progress messages. */
  async patching({ clean, corrupted, answers }) {
    patchCancelled = false;
    phase('compute'); // its prompts are short, and the tokenizer bounds its own time (docs/huggingface.md)
    const value = await patchingSweep(model, { clean, corrupted, answers }, {
      encode: encodeAll,
      cancelled: () => patchCancelled,
      onProgress: (done, total) => self.postMessage({ type: 'patchProgress', done, total }),
    });
    return { transfer: value.recovered ? [value.recovered.buffer] : [], value };
  },
  /**
   * The research tools (open/worker/research.js): the logit lens (through the typing cache, which holds the pass of
   * the text shown: only the head's products are left), two prompts' maps, one head patched at each position, the
   * values' norms, the circuits, a cache's plan and the cache.
   */
  lens({ id, text, pair, ablate }) {
    const of = model;
    return lensOf(model, encode({ text, pair }), ablate, typing, {
      // Each call is the core's computation: other requests answered between calls leave the page's watchdog
      // outside it, and one call of a large vocabulary's rows can take seconds.
      beforeCall: () => phase('compute'),
      cancelled: () => lensCancelled,
      // A newer lens asked for, or another model opened meanwhile: this one is no longer wanted.
      superseded: () => newest.lens !== id || model !== of,
      onProgress: (done, total) => self.postMessage({ type: 'researchProgress', kind: 'lens', id, done, total }),
    });
  },
  compare: (input) => compareOf(model, input, encode),
  valueNorms: ({ text, pair, ablate }) => valueNormsOf(model, encode({ text, pair }), ablate, typingNorms),
  circuitNorms() { phase('compute'); return circuitNormsOf(model); },
  circuits(input) { phase('compute'); return circuitOf(model, input); },
  cachePlan: ({ text, pair, hooks }) => cachePlanOf(model, encode({ text, pair }), hooks),
  exportCache: ({ text, pair, hooks }) => cacheOf(model, encode({ text, pair }), hooks),
  async patchPositions(input) {
    patchCancelled = false;
    phase('compute');
    return patchPositions(model, input, {
      encode: encodeAll,
      cancelled: () => patchCancelled,
      onProgress: (done, total) => self.postMessage({ type: 'researchProgress', kind: 'patchPositions', id: input.id, done, total }),
    });
  },
  generate({ text, maxNewTokens, ablate }) {
    const { ids } = encode({ text });
    const room = model.config.maxPositions - ids.length;
    return { value: room > 0 ? model.generate(ids, { maxNewTokens: Math.min(maxNewTokens, room), ablate }) : { ids: [], tokens: [], text: '' } };
  },
};

// The newest forward and trace asked for. At 512 tokens each is a whole forward pass of seconds; clicks and keys
// that came meanwhile have queued one each, and only the newest is still wanted: the others are answered with null
// (the page ignores replies it no longer waits for) instead of being computed.
const newest = { forward: 0, trace: 0, predict: 0, lens: 0, compare: 0, valueNorms: 0, circuits: 0, cachePlan: 0 };
/** A macrotask: messages already queued behind this one are delivered first (Chromium runs its tasks in order). */
const queued = () => new Promise((ok) => setTimeout(ok, 0));

self.onmessage = async ({ data }) => {
  if (data.type === 'ping') { self.postMessage({ type: 'pong' }); return; } // the page's watchdog: this Worker is not stuck
  if (data.type === 'cancel') { loading?.abort(new DOMException('The load was cancelled.', 'AbortError')); return; }
  if (data.type === 'cancelPatch') { patchCancelled = true; return; }
  if (data.type === 'cancelLens') { lensCancelled = true; return; }
  if (data.type === 'recycle') { keepSpare(data.buffer); return; } // maps the page has drawn newer ones than
  // Cleared as a lens request arrives, not when its handler starts a turn later: a cancel sent in between is its own.
  if (data.type === 'lens') lensCancelled = false;
  if (data.type in newest) {
    newest[data.type] = data.id;
    await queued();
    if (newest[data.type] !== data.id) { self.postMessage({ type: 'reply', id: data.id, value: null }); return; }
  }
  try {
    const out = await handlers[data.type](data);
    const { value, transfer = [] } = data.type === 'load' ? { value: out } : out;
    self.postMessage({ type: 'reply', id: data.id, value }, transfer);
  } catch (error) {
    // The kept patching runs are memory outside the model's plan: a request refused for memory frees them for the next.
    if (refusedForMemory(error)) forgetPatchingRuns();
    self.postMessage({ type: 'reply', id: data.id, error: { name: error.name, message: error.message, memory: error.memory, kept: error.kept, badId: error.badId } });
  }
};
