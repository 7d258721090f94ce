// The Patching tab's sweep, run in the model Worker: the corrupted prompt once per head with that head's context
// taken from the clean run (forward's keepHeads, then patchEach), and the logit difference each recovers. The heads of
// a layer go in one patchEach call through a cache of the corrupted run: each run starts at its head's layer, and the
// head's product runs once for the layer's runs.

/** The ids of `text` without the special tokens the tokenizer adds to every text (those of the empty text). */
function ownIds(model, text) {
  const added = new Set(model.tokenize('').ids);
  return model.tokenize(text).ids.filter((id) => !added.has(id));
}

/** Text → ids as the page's other inputs take them: with the tokenizer, or token ids written out without one. */
function idsOf(model, text, encode) {
  return model.hasTokenizer ? model.tokenize(text).ids : encode({ text }).ids;
}

/** logits[row, a] − logits[row, b]; by default the last row. */
export function difference(logits, [a, b], row = logits.shape[0] - 1) {
  const V = logits.shape[1];
  return logits.data[row * V + a] - logits.data[row * V + b];
}

/**
 * `{ problem }` (a message key of the page and its values) when the two prompts cannot be patched (not a causal model
 * with its head, lengths that differ, an answer that is not one token), else their ids and the answers' ids.
 */
export function promptIds(model, { clean, corrupted, answers }, encode) {
  if (model.kind !== 'causal_lm' || !model.config.hasLmHead) return { problem: { key: 'open.patchCausal' } };
  const cleanIds = idsOf(model, clean, encode), corruptedIds = idsOf(model, corrupted, encode);
  if (cleanIds.length !== corruptedIds.length) return { problem: { key: 'open.patchLengths', vars: { a: cleanIds.length, b: corruptedIds.length } } };
  const answerIds = [];
  for (const text of answers) {
    const ids = model.hasTokenizer ? ownIds(model, text) : encode({ text }).ids;
    if (ids.length !== 1) return { problem: { key: 'open.patchAnswer', vars: { text, n: ids.length, tokens: (model.tokenStrings(ids) ?? ids).join(' ') } } };
    answerIds.push(ids[0]);
  }
  return { cleanIds, corruptedIds, answerIds };
}

/**
 * `{ problem }` (a message key of the page and its values) when the input cannot be patched, else the recovered
 * fraction of every head, [layers × heads] row-major: (patched − corrupted) / (clean − corrupted).
 * @param {{ clean: string, corrupted: string, answers: [string, string] }} input
 * @param {{ onProgress: (done: number, total: number) => void, cancelled: () => boolean, encode: Function }} hooks
 */
export async function patchingSweep(model, { clean, corrupted, answers }, { onProgress, cancelled, encode }) {
  const ready = promptIds(model, { clean, corrupted, answers }, encode);
  if (ready.problem) return ready;
  const { cleanIds, corruptedIds, answerIds } = ready;
  const runs = patchingRuns(model, cleanIds, corruptedIds, answerIds);
  try {
    return await sweep(model, { cleanIds, answerIds, ...runs }, { onProgress, cancelled });
  } finally {
    runs.release();
  }
}

const KEEP_BYTES = 64 * 2 ** 20;
let last = null; // { model, cleanIds, corruptedIds, kept, base, users }

const sameIds = (a, b) => a.length === b.length && a.every((id, i) => id === b[i]);
// Requests interleave in the Worker (each awaits between its calls): runs replaced while a request still uses them
// are freed when that request releases them.
const freeIfUnused = (runs) => { if (runs !== last && runs.users === 0) runs.base.cache.dispose(); };

/**
 * The two runs patching starts from: the clean one with its heads kept, then the corrupted one through the clean
 * one's cache, which reuses the blocks of 32 positions before the first token they differ in and then holds the
 * corrupted pass that patchEach resumes from (`base.cache`). Both keep only the last position's logits, the ones the
 * logit difference reads: the head's product over the other rows would be about a third of GPT-2 small's pass at 128
 * tokens. With their logit differences, and `fraction(logits, row)`: the fraction of it a patched run recovers, from
 * patchEach's logits of the two answers (`logitIds: answerIds`).
 *
 * The runs of the last prompts are kept for the next request with the same model and ids: a reader sweeps every head
 * and then looks at one of them position by position, or at one head after another, and patched calls leave the
 * corrupted run's cache as it was (patchEach). Other ids or another model replace them; forgetPatchingRuns() frees
 * them. For GPT-2 small at 128 tokens that is the two passes, a quarter to a half of a per-position request
 * (bench/records/2026-12-05-kept-patching-runs.md), not done again, for about 19 MB kept (the cache's keys, values
 * and layer inputs, 14 MB, and the clean run's heads; more after the two prompts' view: comparedMaps). Runs larger
 * than `keepBytes` are not kept: the cache is WebAssembly memory, outside the model's memory plan, and a larger
 * model's long prompts would hold hundreds of MB that its next pass may need (a request the core refuses for memory
 * also lets the kept runs go: model-worker.js). The caller calls `release()` when done, which frees runs that are
 * not (or no longer) kept.
 */
export function patchingRuns(model, cleanIds, corruptedIds, answerIds, { keepBytes = KEEP_BYTES } = {}) {
  const same = last && last.model === model && sameIds(last.cleanIds, cleanIds) && sameIds(last.corruptedIds, corruptedIds);
  const runs = same ? last : newRuns(model, cleanIds, corruptedIds, { keepBytes });
  const { kept, base } = runs;
  const dClean = difference(kept.logits, answerIds), dCorrupted = difference(base.logits, answerIds);
  runs.users++;
  const fraction = (logits, row) => (difference(logits, [0, 1], row) - dCorrupted) / (dClean - dCorrupted);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    runs.users--;
    freeIfUnused(runs);
  };
  return { kept, base, dClean, dCorrupted, fraction, release };
}

/** The two passes of patchingRuns, kept as the last prompts' runs if small enough. */
function newRuns(model, cleanIds, corruptedIds, { keepBytes = KEEP_BYTES } = {}) {
  forgetPatchingRuns();
  const kept = model.forward(cleanIds, { keepHeads: true, needAttention: false, logitsToKeep: 1, cache: true });
  const base = throughClean(model, kept, corruptedIds, false);
  return keepIfSmall({ model, cleanIds: [...cleanIds], corruptedIds: [...corruptedIds], kept, base, users: 0 }, keepBytes);
}

/** The corrupted prompt's pass through the clean pass's cache (which it then holds); the cache is freed if it fails. */
function throughClean(model, kept, corruptedIds, needAttention) {
  try {
    return model.forward(corruptedIds, { needAttention, cache: kept.cache, logitsToKeep: 1 });
  } catch (error) {
    kept.cache.dispose();
    throw error;
  }
}

/** `runs`, kept as the last prompts' when within `keepBytes` (the caller frees them otherwise). */
function keepIfSmall(runs, keepBytes) {
  if (runs.base.cache.bytes + runs.kept.heads.data.byteLength <= keepBytes) last = runs;
  return runs;
}

/**
 * The two prompts' maps `[L, H, T, T]` for the side-by-side view (a causal model with its head, prompts of one
 * length), from patching's two passes with their maps: kept as the last prompts' runs, a patching request on the same
 * prompts then starts at its sweep. The maps are the page's (their buffers are transferred). Kept, the runs also hold
 * the corrupted pass's maps in its cache, which the size limit counts (GPT-2 small: 28 MB at 128 tokens, over 64 MiB
 * from about 235). When the clean pass's runs alone are over the limit, nothing would be kept: its cache is freed
 * before the corrupted prompt runs as a plain pass, so no cache is held beside the second pass's maps.
 */
export function comparedMaps(model, cleanIds, corruptedIds, { keepBytes = KEEP_BYTES } = {}) {
  forgetPatchingRuns();
  const kept = model.forward(cleanIds, { keepHeads: true, needAttention: true, logitsToKeep: 1, cache: true });
  if (kept.cache.bytes + kept.heads.data.byteLength > keepBytes) {
    kept.cache.dispose();
    return [kept.attention, model.forward(corruptedIds, { logitsToKeep: 1 }).attention];
  }
  const base = throughClean(model, kept, corruptedIds, true);
  const runs = { model, cleanIds: [...cleanIds], corruptedIds: [...corruptedIds], kept: { ...kept, attention: null }, base: { ...base, attention: null }, users: 0 };
  freeIfUnused(keepIfSmall(runs, keepBytes));
  return [kept.attention, base.attention];
}

/** Lets the kept runs of the last prompts go: freed now, or when the last request using them releases them. */
export function forgetPatchingRuns() {
  const runs = last;
  last = null;
  if (runs) freeIfUnused(runs);
}

/** The sweep over every head, from the clean run's kept heads and the corrupted run `base` (its cache). */
async function sweep(model, { cleanIds, answerIds, kept, base, dClean, dCorrupted, fraction }, { onProgress, cancelled }) {
  if (dClean === dCorrupted) return { problem: { key: 'open.patchSame', vars: { d: dClean.toFixed(4) } } };
  const { layers: L, heads: H } = model.config;
  const recovered = new Float32Array(L * H);
  for (let layer = 0; layer < L; layer++) {
    // A turn of the event loop between layers, so that a cancel message is read.
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (cancelled()) return { cancelled: true };
    const patches = Array.from({ length: H }, (_, head) => ({ layer, head }));
    const { logits } = model.patchEach(base.ids, { patches, patchFrom: kept.heads, cache: base.cache, logitIds: answerIds });
    for (let head = 0; head < H; head++) recovered[layer * H + head] = fraction(logits, head);
    onProgress((layer + 1) * H, L * H);
  }
  const strings = model.tokenStrings(answerIds) ?? answerIds.map((id) => `#${id}`);
  return { recovered, layers: L, heads: H, tokens: cleanIds.length, answers: strings, clean: dClean, corrupted: dCorrupted };
}
