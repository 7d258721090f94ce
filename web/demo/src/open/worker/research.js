// The research tools' requests, run in the model Worker: the logit lens of the page's input, two prompts' maps for
// the side-by-side view, one head patched from the clean prompt into the corrupted one at each position in turn, the
// values' norms (value-weighted maps), the heads' circuits, and a cache of the input for Python.
// Each returns { value, transfer } as the Worker's other handlers do (open/worker/model-worker.js).
import { cachePlan, exportCache } from 'attnscope';
import { comparedMaps, patchingRuns, promptIds } from './patching.js';

/**
 * Rows above the patched layer per patchEach call, about: a run patched at position p computes the T − p rows from
 * p on, so a call takes more of the late positions than of the early ones. Progress and Cancel come between calls
 * (about 0.2 s each for GPT-2 small at 128 tokens); within one, the runs share each layer's products, and a call
 * also projects the unchanged rows of the layer above the head's once, so fewer, larger calls do a little less work.
 */
const ROWS_PER_CALL = 1024;

/** Positions 0..T − 1 in consecutive groups of about `rows` rows of T − p each (at least one position a group). */
export function positionGroups(T, rows) {
  const groups = [];
  for (let first = 0; first < T;) {
    let end = first, sum = 0;
    while (end < T && (end === first || sum + T - end <= rows)) sum += T - end++;
    groups.push({ first, n: end - first });
    first = end;
  }
  return groups;
}

/**
 * Floating-point operations of the head's products per call of a chunked lens: about 0.4-0.5 s on two threads, so the
 * page's progress moves about twice a second (each call costs its own blocks' setup and a turn of the event loop).
 */
const LENS_FLOP_PER_CALL = 40e9;

/**
 * Lens rows per logitLens call: about LENS_FLOP_PER_CALL of the head's products (GPT-2 small at 128 tokens: 4 rows of
 * 13; a vocabulary of 128,256 at 2048 wide: 1 row), and at most a quarter of the rows, so that even a small model's
 * lens reports its progress (a call per row for a model of a few layers).
 */
export function lensRowsPerCall(rows, T, hiddenSize, vocabSize) {
  const perRow = 2 * T * hiddenSize * vocabSize;
  return Math.max(1, Math.min(Math.ceil(rows / 4), Math.floor(LENS_FLOP_PER_CALL / perRow)));
}

/**
 * The lens's top tokens per layer and position: ids and probabilities `[layers + 1, T, k]`, and each id's string.
 * `cache`: a causal model's kept pass (the typing cache); when it holds this input's pass the lens reads every
 * layer's input from it instead of running the layers again (otherwise the lens runs its own pass); `fromCache` says
 * which it was. Through a cache, the rows go in calls of lensRowsPerCall (logitLens's `layers`), each row with the
 * bits it has in one call: between calls `onProgress(rows done, rows)` is sent, and the lens stops when `cancelled()`
 * (a `{ cancelled: true }` value) or when `superseded()` (a newer lens was asked for: null, as a request skipped for a
 * newer one); `beforeCall()` before each call (the Worker says it is in the core's computation). A call that could
 * not read the cache (the typing pass changed meanwhile) ran its own pass, so the rows left go in one more call.
 * Without a cache (an encoder's lens) one call runs the pass and every row.
 */
export async function lensOf(model, { ids, tokens, tokenTypeIds, total }, ablate, cache,
  { cancelled = () => false, superseded = () => false, onProgress = () => {}, beforeCall = () => {} } = {}) {
  const t0 = performance.now();
  const options = { k: 10, ...(ablate?.length ? { ablate } : {}), ...(tokenTypeIds ? { tokenTypeIds } : {}), ...(cache ? { cache } : {}) };
  const { layers, hiddenSize, vocabSize } = model.config;
  const rows = layers + 1;
  const step = cache ? lensRowsPerCall(rows, ids.length, hiddenSize, vocabSize) : rows;
  const parts = [];
  for (let start = 0; start < rows;) {
    const end = parts.length && !parts.at(-1).fromCache ? rows : Math.min(rows, start + step);
    beforeCall();
    parts.push(model.logitLens(ids, { ...options, ...(end - start < rows ? { layers: [start, end] } : {}) }));
    start = end;
    onProgress(start, rows);
    if (start === rows) break;
    // A turn of the event loop between calls, so that a cancel message or a newer request is read.
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (superseded()) return { value: null };
    if (cancelled()) return { value: { cancelled: true } };
  }
  const ms = performance.now() - t0;
  const k = parts[0].k;
  // The calls' rows, one after another.
  const join = (Type, data) => {
    const out = new Type(rows * ids.length * k);
    let at = 0;
    for (const part of parts) { const rowsOfPart = data(part); out.set(rowsOfPart, at); at += rowsOfPart.length; }
    return out;
  };
  const top = join(Int32Array, (part) => part.topIds.data), probabilities = join(Float32Array, (part) => part.probabilities.data);
  // One string per distinct id: the table's cells repeat a few tokens many times.
  const distinct = [...new Set(top)];
  const strings = model.tokenStrings(distinct) ?? distinct.map((id) => `#${id}`);
  const names = Object.fromEntries(distinct.map((id, i) => [id, strings[i]]));
  const fromCache = parts.every((part) => part.fromCache);
  const value = { ids, tokens, total, rows, k, probabilities, topIds: top, names, ms, fromCache, calls: parts.length };
  return { value, transfer: [value.probabilities.buffer, value.topIds.buffer] };
}

/**
 * Both prompts' maps `[L, H, T, T]` (cut to the model's longest input), with their tokens. A causal model with its
 * head computes no logits beyond the last row, which the view does not read, and runs prompts of one length as
 * patching's two passes (patching.js comparedMaps): the same maps, bit for bit, and a patching request on the same
 * prompts then starts at its sweep. `keepBytes`: patching's size limit, for the tests.
 */
export function compareOf(model, { clean, corrupted }, encode, { keepBytes } = {}) {
  const t0 = performance.now();
  const encoded = [clean, corrupted].map((text) => encode({ text }));
  const [c, k] = encoded;
  const causal = model.kind === 'causal_lm' && model.config.hasLmHead;
  const maps = causal && c.ids.length === k.ids.length
    ? comparedMaps(model, c.ids, k.ids, { keepBytes })
    : encoded.map((e) => model.forward(e.ids, { ...(e.tokenTypeIds ? { tokenTypeIds: e.tokenTypeIds } : {}), ...(causal ? { logitsToKeep: 1 } : {}) }).attention);
  const runs = encoded.map((e, i) => ({ ids: e.ids, tokens: e.tokens, attention: maps[i] }));
  const value = { runs, ms: performance.now() - t0 };
  return { value, transfer: runs.map((r) => r.attention.data.buffer) };
}

/**
 * Head (layer, head)'s context patched from the clean run into the corrupted one at one position at a time
 * (patchEach's `positions`): the recovered fraction of the logit difference per position. The runs go through a cache
 * of the corrupted run, so each computes only what its patch changes (from the head's layer, the rows from its
 * position), in calls of about ROWS_PER_CALL rows whose runs share each layer's products; the head computes only the
 * two answers' logits. The two runs are the last prompts' when they are the same (patchingRuns keeps them).
 */
export async function patchPositions(model, input, { encode, cancelled, onProgress }) {
  const ready = promptIds(model, input, encode);
  if (ready.problem) return { value: ready };
  const { cleanIds, corruptedIds, answerIds } = ready;
  const { layer, head } = input;
  const { layers: L, heads: H } = model.config;
  if (!(layer >= 0 && layer < L && head >= 0 && head < H)) return { value: { problem: { key: 'rs.badHead' } } };
  const t0 = performance.now();
  const { kept, base, dClean, dCorrupted, fraction, release } = patchingRuns(model, cleanIds, corruptedIds, answerIds);
  try {
    if (dClean === dCorrupted) return { value: { problem: { key: 'open.patchSame', vars: { d: dClean.toFixed(4) } } } };
    const T = cleanIds.length;
    const recovered = new Float32Array(T);
    for (const { first, n } of positionGroups(T, ROWS_PER_CALL)) {
      // A turn of the event loop between calls, so that a cancel message is read.
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (cancelled()) return { value: { cancelled: true } };
      const patches = Array.from({ length: n }, (_, i) => ({ layer, head, positions: [first + i] }));
      const { logits } = model.patchEach(corruptedIds, { patches, patchFrom: kept.heads, cache: base.cache, logitIds: answerIds });
      for (let i = 0; i < n; i++) recovered[first + i] = fraction(logits, i);
      onProgress(first + n, T);
    }
    const tokens = model.tokenStrings(corruptedIds) ?? corruptedIds.map(String);
    const answers = model.tokenStrings(answerIds) ?? answerIds.map((id) => `#${id}`);
    const value = { layer, head, recovered, tokens, answers, clean: dClean, corrupted: dCorrupted, ms: performance.now() - t0 };
    return { value, transfer: [recovered.buffer] };
  } finally {
    release();
  }
}

/**
 * ‖v_j‖ of the values each query head reads, `[layers, heads, T]` (forward's `valueNorms`, the core's), for the
 * value-weighted maps and the sink table. `kept`: the typing pass's norms with its input and ablation (a causal
 * model's page); when they are this request's, a copy of them, else a pass of its own without the maps.
 */
export function valueNormsOf(model, { ids, tokenTypeIds }, ablate, kept) {
  const t0 = performance.now();
  if (kept && kept.ids.length === ids.length && kept.ids.every((id, i) => id === ids[i]) && kept.ablate === JSON.stringify(ablate ?? [])) {
    const valueNorms = { shape: [...kept.valueNorms.shape], data: kept.valueNorms.data.slice() };
    return { value: { valueNorms, ms: performance.now() - t0 }, transfer: [valueNorms.data.buffer] };
  }
  const r = model.forward(ids, {
    needAttention: false, valueNorms: true, ...(ablate?.length ? { ablate } : {}), ...(tokenTypeIds ? { tokenTypeIds } : {}),
    ...(model.kind === 'causal_lm' ? { logitsToKeep: 1 } : {}),
  });
  const value = { valueNorms: r.valueNorms, ms: performance.now() - t0 };
  return { value, transfer: [r.valueNorms.data.buffer] };
}

/** The Frobenius norms of every head's QK and OV circuits, `[layers, heads]` each (model.circuitNorms()). */
export function circuitNormsOf(model) {
  const t0 = performance.now();
  const { qk, ov } = model.circuitNorms();
  const value = { qk: qk.data, ov: ov.data, ms: performance.now() - t0 };
  return { value, transfer: [qk.data.buffer, ov.data.buffer] };
}

/**
 * One head's circuits (model.circuits): the singular values of its QK and OV matrices, largest first, and the
 * key/value head it reads. The [d, d] matrices themselves stay in the Worker: the page shows their spectra.
 */
export function circuitOf(model, { layer, head }) {
  const { layers: L, heads: H } = model.config;
  if (!(layer >= 0 && layer < L && head >= 0 && head < H)) return { value: { problem: { key: 'rs.badHead' } } };
  const t0 = performance.now();
  const c = model.circuits(layer, head);
  const value = { layer, head, kvHead: c.kvHead, qk: c.qkSingularValues.data, ov: c.ovSingularValues.data, ms: performance.now() - t0 };
  return { value, transfer: [value.qk.buffer, value.ov.buffer] };
}

/**
 * What a cache of the input would hold (cachePlan): every hook the model has with its bytes, and the exact size of
 * the file of the hook kinds asked for, before anything runs.
 */
export function cachePlanOf(model, { ids }, hooks) {
  const all = cachePlan(model, ids);
  const chosen = cachePlan(model, ids, { hooks });
  return { value: { T: ids.length, all: all.hooks, hooks: chosen.hooks.map((h) => h.name), bytes: chosen.bytes } };
}

/**
 * The cache of the input (exportCache): a safetensors file of the hook kinds asked for, under TransformerLens's names,
 * and its JSON config. The model's own pass: heads the page switched off are on in it (the config could not say so).
 */
export function cacheOf(model, { ids, tokenTypeIds }, hooks) {
  const t0 = performance.now();
  const { file, config } = exportCache(model, ids, { hooks, ...(tokenTypeIds ? { tokenTypeIds } : {}) });
  const value = { file, config, ms: performance.now() - t0 };
  return { value, transfer: [file.buffer] };
}
