// The opened Hugging Face model as the scheduler sees it: compute(state) answers at once from what the model Worker
// last sent (or says what is on the way), and asks the Worker for what the state now needs; each reply invalidates.
import { createModelClient } from './client.js';
import { createResearchRuns } from '../research/runs.js';
import { mapsShown } from '../research/maps.js';

/** Heads switched off that the model has (a hand-edited hash may name others). */
const validHeads = (ablate, c) => ablate.filter((x) => x.layer < c.layers && x.head < c.heads);

/**
 * @param {{ invalidate: () => void, showProgress?: (kind: 'patch' | 'positions' | 'lens', p: { done: number, total: number }) => void }} app
 *   `showProgress`: where the patching sweeps' progress goes while they run (open/patching.js and research/compare.js
 *   draw it), so that it costs no new drawing of the page; without it, progress invalidates.
 */
export function createOpenSession({ invalidate, showProgress, createClient = createModelClient }) {
  let client = null;
  // status: 'none' | 'ask' (a link named a folder URL: nothing is fetched until the person agrees) | 'loading' | 'ready'
  // | 'error'; the memory plan, then progress while loading; info once loaded; `failed`, the error of a later load that
  // left this model open.
  const load = { status: 'none', plan: null, progress: null, error: null, info: null, source: null, wasmBytes: 0, failed: null };
  const runs = { forward: { key: null, value: null, error: null }, trace: { key: null, value: null, error: null }, predict: { key: null, value: null, error: null }, generate: { key: null, value: null }, heads: null, patch: null };
  let asked = { forward: null, trace: null, predict: null };
  // The maps' array of the last forward run a newer one replaced: handed back to the Worker (client.recycle) once
  // every view has drawn the newer run (drawn()), so that nothing on the page reads it any more. One only: while keys
  // come faster than the page draws, no drawing finishes and runs replace each other, and the Worker keeps one anyway
  // (the older arrays are left to the garbage collector). Small ones too: every opened model, the tests' small ones
  // included, goes through the same path.
  let retired = null;
  let opens = 0; // open() calls so far: a result is shown only if no newer open() began meanwhile
  // The last model shown loaded, and its found heads and patching: what a failed load that left it open shows again.
  let lastReady = null, found = { heads: null, patch: null };

  const worker = () => (client ??= createClient({
    onPlan: (plan) => {
      load.plan = plan;
      invalidate();
    },
    onProgress: (p) => {
      load.progress = p;
      if (p.wasmBytes) load.wasmBytes = p.wasmBytes;
      invalidate();
    },
    onResearchProgress: (p) => research.onProgress(p),
    onPatchProgress: ({ done, total }) => {
      if (runs.patch?.status !== 'running') return;
      runs.patch = { ...runs.patch, done, total };
      if (showProgress) showProgress('patch', runs.patch); else invalidate();
    },
    // The watchdog stopped a Worker that had stopped answering: the model it held is gone with it. (A load in
    // progress hears of it through its own rejection.)
    onStopped: (error) => {
      lastReady = null; // the model went with the Worker
      if (load.status !== 'ready') return;
      Object.assign(load, { status: 'error', error, info: null });
      invalidate();
    },
  }));

  // The logit lens, two prompts side by side, one head patched at each position (research/runs.js).
  const research = createResearchRuns({ worker, invalidate, showProgress });

  /**
   * The reply to a Find heads or Patching request (`kind` 'heads' or 'patch', `ticket` the request's own), landed
   * where that request still stands: shown, or kept with the model that a failed load left open (`found`, shown again
   * once that load fails). Another model opened meanwhile has its own: the reply is the earlier model's, and is
   * dropped.
   */
  function settle(kind, ticket, result) {
    if (runs[kind]?.ticket === ticket) {
      runs[kind] = result;
      invalidate();
    } else if (found[kind]?.ticket === ticket) {
      found[kind] = result;
    }
  }

  /** Ask the Worker for `kind` of `key` unless it is already asked; the reply lands in runs[kind]. */
  function ask(kind, key, body) {
    if (asked[kind] === key || runs[kind].key === key) return;
    asked[kind] = key;
    worker()[kind](body).then(
      // null: the Worker skipped this request for a newer one (open/worker/model-worker.js); that one's reply follows.
      (value) => {
        if (asked[kind] !== key || value === null) return;
        if (kind === 'forward') retire(runs.forward.value);
        runs[kind] = { key, value, error: null };
        invalidate();
      },
      (error) => { if (asked[kind] === key) { runs[kind] = { key, value: null, error }; invalidate(); } },
    );
  }

  /** A replaced forward run: its maps' array goes back to the Worker after the next whole drawing. */
  function retire(run) {
    const buffer = run?.attention?.data?.buffer;
    if (buffer?.byteLength) retired = buffer;
  }

  return {
    load,
    /**
     * The scheduler drew every view of `r` (main.js onDone): when that is the newest forward run, the array of the last
     * run it replaced goes back to the Worker.
     */
    drawn(r) {
      if (!retired) return;
      // Another tab's views: the array is not sent, and is let go.
      if (r?.kind !== 'hf') { retired = null; return; }
      if (!r.modelRun || r.modelRun !== runs.forward.value) return;
      if (retired.byteLength) client?.recycle(retired);
      retired = null;
    },
    /**
     * Open `source` ({ files } or { url }); resolves when loaded or failed (the page shows which) to true, or to false
     * when a newer open() replaced this one (whose result is then the one shown).
     */
    async open(source) {
      // Only the newest open's result is shown: a newer one replaces it (the Worker aborts the older load).
      const generation = ++opens;
      // The model open now, which a failed load leaves open (open/worker/model-worker.js): shown again, with the failure.
      if (load.status === 'ready') { lastReady = { ...load }; found = { heads: runs.heads, patch: runs.patch }; }
      Object.assign(load, { status: 'loading', plan: null, progress: null, error: null, failed: null, source, wasmBytes: 0 });
      runs.forward = { key: null, value: null, error: null };
      retired = null; // the new model's runs start afresh (the Worker drops its spare with the old model)
      runs.trace = { key: null, value: null, error: null };
      runs.predict = { key: null, value: null, error: null };
      runs.generate = { key: null, value: null };
      runs.heads = null;
      runs.patch = null;
      research.reset();
      asked = { forward: null, trace: null, predict: null };
      invalidate();
      try {
        const info = await worker().load(source);
        if (generation !== opens) return false;
        Object.assign(load, { info, status: 'ready', failed: null });
        // The model before it is gone: a late reply of its own has nowhere to land, and its results are let go.
        lastReady = null;
        found = { heads: null, patch: null };
      } catch (error) {
        if (generation !== opens) return false;
        if (error.kept && lastReady) {
          Object.assign(load, lastReady, { failed: error });
          Object.assign(runs, found); // its found heads and patching, still its own
        } else {
          Object.assign(load, { status: 'error', error, info: null });
          lastReady = null;
        }
      }
      invalidate();
      return true;
    },
    /** A link named `source` ({ url }): show its host and ask before anything is fetched (open/frame.js). */
    ask(source) {
      Object.assign(load, { status: 'ask', plan: null, progress: null, error: null, info: null, source, wasmBytes: 0 });
      invalidate();
    },
    /** The person declined the link's download. */
    dismiss() {
      Object.assign(load, { status: 'none', source: null });
      invalidate();
    },
    cancel: () => client?.cancel(),
    /** Scores of every head (open/worker/head-scores.js), kept until another model is opened. */
    async findHeads() {
      const ticket = {};
      runs.heads = { status: 'running', ticket };
      invalidate();
      let result;
      try { result = { status: 'done', value: await worker().findHeads() }; } catch (error) { result = { status: 'error', error }; }
      settle('heads', ticket, result);
    },
    /** The Patching tab's sweep (open/worker/patching.js): runs.patch is running (done of total), done, cancelled or an error. */
    async patching(input) {
      const ticket = {};
      runs.patch = { status: 'running', done: 0, total: 0, ticket };
      invalidate();
      let result;
      try {
        const value = await worker().patching(input);
        result = value.cancelled ? { status: 'cancelled' } : value.problem ? { status: 'problem', problem: value.problem } : { status: 'done', value };
      } catch (error) { result = { status: 'error', error }; }
      settle('patch', ticket, result);
    },
    cancelPatching: () => client?.cancelPatching(),
    cancelLens: () => client?.cancelLens(),
    research,
    /** Greedy continuation of the current text (heads that are off stay off); resolves to the new text. */
    async continueText(state, maxNewTokens) {
      const o = state.open;
      const c = load.info.config;
      const r = await worker().generate({ text: o.text, maxNewTokens, ablate: validHeads(o.ablate, c) });
      return r.text ?? '';
    },
    compute(state) {
      const o = state.open;
      const base = { kind: 'hf', load, empty: true, rows: [], cols: [], L: 0, S: 0, qi: -1 };
      if (load.status !== 'ready') return base;
      const { info } = load;
      const c = info.config;
      const ablate = validHeads(o.ablate, c);
      const pair = info.kind === 'encoder' ? o.pair : '';
      const fkey = JSON.stringify([o.text, pair, ablate]);
      // Without a tokenizer the box holds ids: spaces alone are no input, as an empty box is (a tokenizer makes
      // tokens of spaces).
      const textEmpty = !o.text || (!info.hasTokenizer && !o.text.trim());
      if (!textEmpty) ask('forward', fkey, { text: o.text, pair, ablate });
      const fw = runs.forward;
      // An empty box shows no run, so no error of the last one either.
      const out = { ...base, info, config: c, ablate, heads: runs.heads, patch: runs.patch, stale: fw.key !== fkey, error: textEmpty ? null : fw.error,
        research: research.compute(state, { info, pair, ablate }) };
      if (textEmpty || !fw.value) return { ...out, textEmpty };
      const run = fw.value;
      // A translation model's run is its translation: open/translation.js draws it; the single-stack views draw nothing.
      if (run.translation) return { ...out, translation: run.translation, ms: run.ms };
      const T = run.ids.length;
      const layer = Math.min(Math.max(0, o.layer), c.layers - 1);
      const head = Math.min(Math.max(0, o.head), c.heads - 1);
      const qi = o.query >= 0 && o.query < T ? o.query : T - 1;
      // The trace belongs to the run shown (its key names that run), so its numbers always match the maps.
      const tkey = JSON.stringify([fw.key, layer, head, qi]);
      ask('trace', tkey, { text: o.text, pair, layer, head, query: qi, ablate: JSON.parse(fw.key)[2] });
      const trace = runs.trace.key === tkey ? runs.trace.value : null;
      // With heads switched off, the predictions with every head too: the two side by side (open/frame.js).
      let allHeads = null;
      if (ablate.length && run.predictions) {
        const pkey = JSON.stringify([o.text, pair]);
        ask('predict', pkey, { text: o.text, pair });
        allHeads = runs.predict.key === pkey ? runs.predict.value?.predictions ?? null : null;
      }
      const tokens = run.tokens ?? run.ids.map((id) => `#${id}`);
      // What the maps show (research/maps.js): `run` carries the chosen maps, `modelRun` the model's own weights.
      const valueNorms = research.valueNormsOf(fw.key);
      const shown = mapsShown(o, run, valueNorms, invalidate);
      return { ...out, empty: false, run: shown.run, modelRun: run, view: shown.view, valueNorms, T, layer, head, qi, allHeads, rows: tokens, cols: tokens, L: T, S: T, trace, traceError: runs.trace.key === tkey ? runs.trace.error : null, ms: run.ms };
    },
  };
}
