// The research tools' requests, run in the model Worker: the logit lens of the page's input, two prompts' maps for
// the side-by-side view, and one head patched from the clean prompt into the corrupted one at each position in turn.
// Each returns { value, transfer } as the Worker's other handlers do (open/worker/model-worker.js).
import { difference, promptIds } from './patching.js';

/** Positions patched per patchEach call: progress and Cancel between calls, the head's product shared within one. */
const POSITION_BATCH = 8;

/**
 * The lens's top tokens per layer and position: ids and probabilities `[layers + 1, T, k]`, and each id's string.
 * `cache`: a causal model's kept pass (the typing cache); when it holds this input's pass the lens reads every
 * layer's input from it instead of running the layers again (otherwise the lens runs its own pass).
 */
export function lensOf(model, { ids, tokens, tokenTypeIds, total }, ablate, cache) {
  const t0 = performance.now();
  const lens = model.logitLens(ids, { k: 10, ...(ablate?.length ? { ablate } : {}), ...(tokenTypeIds ? { tokenTypeIds } : {}), ...(cache ? { cache } : {}) });
  const ms = performance.now() - t0;
  const top = lens.topIds.data;
  // One string per distinct id: the table's cells repeat a few tokens many times.
  const distinct = [...new Set(top)];
  const strings = model.tokenStrings(distinct) ?? distinct.map((id) => `#${id}`);
  const names = Object.fromEntries(distinct.map((id, i) => [id, strings[i]]));
  const value = { ids, tokens, total, rows: lens.layers, k: lens.k, probabilities: lens.probabilities.data, topIds: top, names, ms };
  return { value, transfer: [value.probabilities.buffer, value.topIds.buffer] };
}

/** Both prompts' maps `[L, H, T, T]` (cut to the model's longest input), with their tokens. */
export function compareOf(model, { clean, corrupted }, encode) {
  const t0 = performance.now();
  const runs = [clean, corrupted].map((text) => {
    const e = encode({ text });
    const r = model.forward(e.ids, e.tokenTypeIds ? { tokenTypeIds: e.tokenTypeIds } : {});
    return { ids: e.ids, tokens: e.tokens, attention: r.attention };
  });
  const value = { runs, ms: performance.now() - t0 };
  return { value, transfer: runs.map((r) => r.attention.data.buffer) };
}

/**
 * Head (layer, head)'s context patched from the clean run into the corrupted one at one position at a time
 * (patchEach's `positions`): the recovered fraction of the logit difference per position. The runs go through a cache
 * of the corrupted run, so each starts at the head's layer and at the patched position's block (the rows before it
 * cannot change), in batches of POSITION_BATCH positions whose last rows go through the head together.
 */
export async function patchPositions(model, input, { encode, cancelled, onProgress }) {
  const ready = promptIds(model, input, encode);
  if (ready.problem) return { value: ready };
  const { cleanIds, corruptedIds, answerIds } = ready;
  const { layer, head } = input;
  const { layers: L, heads: H } = model.config;
  if (!(layer >= 0 && layer < L && head >= 0 && head < H)) return { value: { problem: { key: 'rs.badHead' } } };
  const t0 = performance.now();
  const kept = model.forward(cleanIds, { keepHeads: true, needAttention: false });
  const base = model.forward(corruptedIds, { needAttention: false, cache: true });
  try {
    const dClean = difference(kept.logits, answerIds), dCorrupted = difference(base.logits, answerIds);
    if (dClean === dCorrupted) return { value: { problem: { key: 'open.patchSame', vars: { d: dClean.toFixed(4) } } } };
    const T = cleanIds.length;
    const recovered = new Float32Array(T);
    for (let first = 0; first < T; first += POSITION_BATCH) {
      // A turn of the event loop between batches, so that a cancel message is read.
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (cancelled()) return { value: { cancelled: true } };
      const n = Math.min(POSITION_BATCH, T - first);
      const patches = Array.from({ length: n }, (_, i) => ({ layer, head, positions: [first + i] }));
      const { logits } = model.patchEach(corruptedIds, { patches, patchFrom: kept.heads, cache: base.cache });
      for (let i = 0; i < n; i++) recovered[first + i] = (difference(logits, answerIds, i) - dCorrupted) / (dClean - dCorrupted);
      onProgress(first + n, T);
    }
    const tokens = model.tokenStrings(corruptedIds) ?? corruptedIds.map(String);
    const answers = model.tokenStrings(answerIds) ?? answerIds.map((id) => `#${id}`);
    const value = { layer, head, recovered, tokens, answers, clean: dClean, corrupted: dCorrupted, ms: performance.now() - t0 };
    return { value, transfer: [recovered.buffer] };
  } finally {
    base.cache.dispose();
  }
}
