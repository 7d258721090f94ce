// The research tools' requests as the opened model's session sees them (open/session.js): compute(state) asks the
// model Worker for what the state needs (the lens of the text, the two prompts' maps, one head patched at each
// position, the values' norms, the circuits, a cache's plan) and answers at once with what it last sent; each reply
// invalidates. Each is asked only while its tool is shown.

const empty = () => ({ key: null, value: null, error: null });
const KINDS = ['lens', 'compare', 'patchPositions', 'valueNorms', 'circuitNorms', 'circuits', 'cachePlan'];
const fresh = () => Object.fromEntries(KINDS.map((k) => [k, empty()]));
/** The kinds whose Worker reports progress, and the name showProgress knows each by. */
const PROGRESS = { patchPositions: 'positions', lens: 'lens' };

/**
 * @param {{ worker: () => ReturnType<import('../open/client.js').createModelClient>, invalidate: () => void,
 *   showProgress?: (kind: 'positions' | 'lens', p: { done: number, total: number }) => void }} app
 *   `showProgress`: where a per-position sweep's or a lens's progress goes between its start and its reply (else a
 *   new drawing of the page).
 */
export function createResearchRuns({ worker, invalidate, showProgress }) {
  let runs = fresh();
  let asked = Object.fromEntries(KINDS.map((k) => [k, null]));
  // The last cache exported: { status: 'running' } | { status: 'done', value: { safetensors, json (Blobs), config,
  // bytes, ms } } | { status: 'error', error }.
  let exported = null;
  // { done, total } of each run that reports it while it runs (PROGRESS: the positions patched, the lens's rows).
  let progress = {};

  /** Ask for `kind` of `key` unless it is asked already; the reply lands in runs[kind]. */
  function ask(kind, key, body) {
    if (asked[kind] === key || runs[kind].key === key) return;
    asked[kind] = key;
    if (kind in PROGRESS) progress[kind] = { done: 0, total: 0 };
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
      runs = fresh();
      asked = Object.fromEntries(KINDS.map((k) => [k, null]));
      progress = {};
      exported = null;
    },
    /** The values' norms of the forward pass whose key is `key` (the session's), or null until they arrive. */
    valueNormsOf: (key) => (runs.valueNorms.key === key ? runs.valueNorms.value?.valueNorms ?? null : null),
    /** The cache of `body` ({ text, pair, hooks }) from the Worker's exportCache; resolves to it (null on a failure). */
    async exportCache(body) {
      exported = { status: 'running' };
      invalidate();
      try {
        const { file, config, ms } = await worker().research('exportCache', body);
        // As Blobs at once: the page keeps no second copy of the bytes (a cache of a long input is hundreds of MB).
        const json = new Blob([`${JSON.stringify(config, null, 1)}\n`], { type: 'application/json' });
        exported = { status: 'done', value: { safetensors: new Blob([file], { type: 'application/octet-stream' }), json, config, bytes: file.byteLength, ms } };
      } catch (error) { exported = { status: 'error', error }; }
      invalidate();
      return exported.value ?? null;
    },
    // Only the bar and the status change: a new drawing of every view on each message kept the main thread busy for
    // about a second of a 2-second sweep, on a 2-core machine whose cores the Worker's two threads needed
    // (bench/records/2026-12-06-demo-main-thread.md). Progress counts only while a sweep is awaited: a message of one
    // no longer asked for (another head's, another model's) changes nothing.
    onProgress({ kind = 'patchPositions', done, total }) {
      if (!asked[kind] || runs[kind].key === asked[kind]) return;
      progress[kind] = { done, total };
      if (showProgress) showProgress(PROGRESS[kind], progress[kind]); else invalidate();
    },
    compute(state, { info, pair, ablate }) {
      const o = state.open;
      const out = { kind: info.kind, progress: progress.patchPositions ?? null };
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
      // The values' norms: for value-weighted maps, and the sink table's row.
      if (o.text && (o.shows === 'value' || o.sinks)) {
        const key = JSON.stringify([o.text, pair, ablate]);
        ask('valueNorms', key, { text: o.text, pair, ablate });
        out.valueNorms = shown('valueNorms', key);
      }
      if (o.circuits) {
        const { layers: L, heads: H } = info.config;
        const layer = Math.min(Math.max(0, o.layer), L - 1), head = Math.min(Math.max(0, o.head), H - 1);
        ask('circuitNorms', 'model', {}); // the weights' only: once per model
        ask('circuits', JSON.stringify([layer, head]), { layer, head });
        out.circuitNorms = shown('circuitNorms', 'model');
        out.circuits = shown('circuits', JSON.stringify([layer, head]));
      }
      if (o.cache && o.text) {
        const key = JSON.stringify([o.text, pair, o.cache]);
        ask('cachePlan', key, { text: o.text, pair, hooks: o.cache });
        out.cachePlan = shown('cachePlan', key);
        out.exported = exported;
      }
      if (o.positions && info.kind === 'causal_lm' && o.clean && o.corrupted && o.a && o.b) {
        const { layer, head } = o.positions;
        const key = JSON.stringify([o.clean, o.corrupted, o.a, o.b, layer, head]);
        ask('patchPositions', key, { clean: o.clean, corrupted: o.corrupted, answers: [o.a, o.b], layer, head });
        out.positions = shown('patchPositions', key);
      }
      // Read after the asks: a sweep asked just now starts at 0 of …, not at the last sweep's end.
      out.progress = progress.patchPositions ?? null;
      out.lensProgress = progress.lens ?? null;
      return out;
    },
  };
}
