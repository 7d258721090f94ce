// The research tools' requests as the opened model's session sees them (open/session.js): compute(state) asks the
// model Worker for what the state needs (the lens of the text, the two prompts' maps, one head patched at each
// position) and answers at once with what it last sent; each reply invalidates.

const empty = () => ({ key: null, value: null, error: null });

/** @param {{ worker: () => ReturnType<import('../open/client.js').createModelClient>, invalidate: () => void }} app */
export function createResearchRuns({ worker, invalidate }) {
  let runs = { lens: empty(), compare: empty(), patchPositions: empty() };
  let asked = { lens: null, compare: null, patchPositions: null };
  let progress = null; // { done, total } of the positions being patched

  /** Ask for `kind` of `key` unless it is asked already; the reply lands in runs[kind]. */
  function ask(kind, key, body) {
    if (asked[kind] === key || runs[kind].key === key) return;
    asked[kind] = key;
    if (kind === 'patchPositions') progress = { done: 0, total: 0 };
    worker().research(kind, body).then(
      // null: the Worker skipped this request for a newer one; that one's reply follows.
      (value) => {
        if (asked[kind] !== key || value === null) return;
        // A cancelled sweep is forgotten, so that asking again runs it.
        if (value.cancelled) { asked[kind] = null; runs[kind] = empty(); } else runs[kind] = { key, value, error: null };
        invalidate();
      },
      (error) => { if (asked[kind] === key) { runs[kind] = { key, value: null, error }; invalidate(); } },
    );
  }
  /** What `kind` holds for `key`: its value when it is that key's (else the last one, marked stale). */
  const shown = (kind, key) => ({ ...runs[kind], stale: runs[kind].key !== key, running: asked[kind] === key && runs[kind].key !== key });

  return {
    reset() {
      runs = { lens: empty(), compare: empty(), patchPositions: empty() };
      asked = { lens: null, compare: null, patchPositions: null };
      progress = null;
    },
    onProgress({ done, total }) { progress = { done, total }; invalidate(); },
    compute(state, { info, pair, ablate }) {
      const o = state.open;
      const out = { kind: info.kind, progress };
      if (info.kind === 'seq2seq') return out; // a translation model's views are open/translation.js's
      if (o.lens && o.text && info.config.hasLmHead) {
        const key = JSON.stringify([o.text, pair, ablate]);
        ask('lens', key, { text: o.text, pair, ablate });
        out.lens = shown('lens', key);
      }
      if (o.compare && o.clean && o.corrupted) {
        const key = JSON.stringify([o.clean, o.corrupted]);
        ask('compare', key, { clean: o.clean, corrupted: o.corrupted });
        out.compare = shown('compare', key);
      }
      if (o.positions && info.kind === 'causal_lm' && o.clean && o.corrupted && o.a && o.b) {
        const { layer, head } = o.positions;
        const key = JSON.stringify([o.clean, o.corrupted, o.a, o.b, layer, head]);
        ask('patchPositions', key, { clean: o.clean, corrupted: o.corrupted, answers: [o.a, o.b], layer, head });
        out.positions = shown('patchPositions', key);
      }
      return out;
    },
  };
}
