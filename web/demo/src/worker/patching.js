// The Patching tab's sweep, run in the model Worker: the corrupted prompt once per head with that head's context
// taken from the clean run (forward's keepHeads / patch / patchFrom), and the logit difference each recovers. Each
// patched pass goes through a cache of the corrupted run, so it starts at its head's layer.

/** The ids of `text` without the special tokens the tokenizer adds to every text (those of the empty text). */
function ownIds(model, text) {
  const added = new Set(model.tokenize('').ids);
  return model.tokenize(text).ids.filter((id) => !added.has(id));
}

/** Text → ids as the page's other inputs take them: with the tokenizer, or token ids written out without one. */
function idsOf(model, text, encode) {
  return model.hasTokenizer ? model.tokenize(text).ids : encode({ text }).ids;
}

/** logits[last, a] − logits[last, b]. */
function difference(logits, [a, b]) {
  const V = logits.shape[1], row = logits.data.length - V;
  return logits.data[row + a] - logits.data[row + b];
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
  const kept = model.forward(cleanIds, { keepHeads: true, needAttention: false });
  const base = model.forward(corruptedIds, { needAttention: false, cache: true });
  try {
    return await sweep(model, { cleanIds, answerIds, kept, base }, { onProgress, cancelled });
  } finally {
    base.cache.dispose();
  }
}

/** The sweep over every head, from the clean run's kept heads and the corrupted run `base` (its cache). */
async function sweep(model, { cleanIds, answerIds, kept, base }, { onProgress, cancelled }) {
  const dClean = difference(kept.logits, answerIds), dCorrupted = difference(base.logits, answerIds);
  if (dClean === dCorrupted) return { problem: { key: 'open.patchSame', vars: { d: dClean.toFixed(4) } } };
  const { layers: L, heads: H } = model.config;
  const recovered = new Float32Array(L * H);
  for (let layer = 0; layer < L; layer++) {
    for (let head = 0; head < H; head++) {
      // A turn of the event loop between heads, so that a cancel message is read.
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (cancelled()) return { cancelled: true };
      // Only the last row's logits: the difference reads nothing else, and the head is a vocabulary-wide row per position.
      const out = model.forward(base.ids, { needAttention: false, patch: [{ layer, head }], patchFrom: kept.heads, cache: base.cache, logitsToKeep: 1 });
      recovered[layer * H + head] = (difference(out.logits, answerIds) - dCorrupted) / (dClean - dCorrupted);
      onProgress(layer * H + head + 1, L * H);
    }
  }
  const strings = model.tokenStrings(answerIds) ?? answerIds.map((id) => `#${id}`);
  return { recovered, layers: L, heads: H, tokens: cleanIds.length, answers: strings, clean: dClean, corrupted: dCorrupted };
}
