// A read-only window on the page for the browser tests and `npm run bench:demo`: window.__attnscopeDemo. Installed
// once; every field is a getter, so nothing is copied unless a test reads it (no cost per keystroke).
import { init, runtimeInfo, MultiHeadAttention } from 'attnscope';
import { tokenize } from './models/tokenize.js';
import { createSeededModel, createModelFromStateDict, tableEmbedding, seededTokenVector, sinusoidalPositions, positionalEmbedding } from './models/seeded.js';
import { toHash } from './state.js';
import { focusWeights } from './decode/view.js';
import { exportDocument } from './maps/exporting.js';
import { lastRun, rnnEntry } from './why/rnn.js';
import { setCurvesForTests } from './why/curves.js';
import { isPlaying as whyPlaying } from './why/player.js';

function seededForTests(r) {
  if (r.empty) return { kind: 'seeded', rows: r.rows, cols: r.cols, empty: true };
  return { kind: 'seeded', rows: r.rows, cols: r.cols, H: r.H, L: r.L, S: r.S, E: r.E, causal: r.causal, qi: r.qi, ms: r.ms, weights: Array.from(r.weights.data), steps: r.steps };
}

function trainedForTests(r, isPlaying) {
  if (r.entry) return { kind: r.kind, loading: r.loading, error: r.error ? String(r.error.message ?? r.error) : null, empty: true, rows: [], cols: [] };
  const out = {
    kind: r.kind, rows: r.rows, cols: r.cols, H: r.H, L: r.L, S: r.S, E: r.E, causal: r.causal, qi: r.qi, ms: r.ms,
    empty: !!r.empty, layer: r.layer, layers: r.layers,
    config: r.model.config,
    namedHeads: r.model.namedHeads,
    named: r.named?.map((n) => n && { name: n.name, score: n.score }) ?? [],
    weights: r.weights ? Array.from(r.weights.data) : [],
    steps: r.steps,
  };
  if (r.kind === 'lm' && r.run) Object.assign(out, { ablated: r.ablated, ids: r.run.ids, truncated: r.run.truncated, total: r.run.total, next: r.run.next.map((x) => ({ token: x.token, p: x.p })) });
  if (r.kind === 's2s') {
    const run = r.run;
    Object.assign(out, { attn: r.attn, sourceTokens: run.sourceTokens, sourceEmpty: !!r.sourceEmpty });
    if (!run.empty) {
      const fw = focusWeights(r);
      Object.assign(out, {
        outputTokens: run.outputTokens, text: run.text, shown: r.shown, N: r.N, focus: r.focus, playing: isPlaying(),
        written: run.steps.slice(0, r.shown).filter((x) => x.token !== '<eos>').map((x) => x.token).join(''),
        probabilities: run.steps.map((x) => x.p),
        focusWeights: fw ? Array.from(fw) : null,
        shapes: { enc: run.enc.shape, dec: run.dec.shape, cross: run.cross.shape },
        cross: Array.from(run.cross.data),
      });
    }
  }
  return out;
}

/**
 * An opened checkpoint's result, briefly: its maps can be hundreds of megabytes, and `openMaps` gives them to the
 * tests that read them.
 */
function openedForTests(r) {
  return { kind: 'hf', empty: !!r.empty, loading: r.load?.status !== 'ready', status: r.load?.status ?? null, translation: !!r.translation, rows: [], cols: [],
    // The forward run shown: its name and the rows it shares with the runs before it (open/worker/model-worker.js).
    run: r.modelRun ? { seq: r.modelRun.seq ?? null, unchanged: r.modelRun.unchanged ?? [] } : null };
}

/** The text input of the current mode (what a keystroke changes). */
const textOf = (s) => (s.mode === 's2s' ? s.date : s.mode === 'cross' ? s.tgt + '\u0000' + s.src : s.text);

export function installTestHooks({ state, scheduler, isPlaying }) {
  const status = scheduler.status;
  const api = { init, runtimeInfo, MultiHeadAttention, tokenize, seededTokenVector, sinusoidalPositions, positionalEmbedding, createSeededModel, createModelFromStateDict, tableEmbedding };
  const hooks = {
    get state() { return JSON.parse(JSON.stringify(state)); },
    get last() {
      const r = status.result;
      if (!r) return { kind: 'seeded', rows: [], cols: [], empty: true };
      if (r.kind === 'hf') return openedForTests(r);
      return r.kind === 'seeded' ? seededForTests(r) : trainedForTests(r, isPlaying);
    },
    get hash() { return toHash(state); },
    /** What the "Why attention" section drew: both GRU runs, and whether they are the stand-in. */
    get why() {
      const run = lastRun();
      const m = rnnEntry();
      const one = (x) => x && { tokens: x.tokens, text: x.text, context: Array.from(x.context), weights: x.weights?.map((w) => Array.from(w)) ?? null };
      return { standIn: m.standIn, status: m.status, playing: whyPlaying(), empty: !!run?.empty, sourceTokens: run?.sourceTokens, bottleneck: one(run?.bottleneck), attention: one(run?.attention) };
    },
    /**
     * An opened model's maps as its views draw them (the weights, or the view chosen: research/maps.js) with the
     * view's description; null without an opened model's maps.
     */
    get openMaps() {
      const r = status.result;
      if (r?.kind !== 'hf' || r.empty || !r.run?.attention) return null;
      return { view: r.view, shape: r.run.attention.shape, data: Array.from(r.run.attention.data) };
    },
    /** openMaps without the maps (a copy of GPT-2 small's at 512 tokens takes seconds): the view and the shape. */
    get openView() {
      const r = status.result;
      return r?.kind === 'hf' && !r.empty && r.run?.attention ? { view: r.view, shape: r.run.attention.shape } : null;
    },
    /** The guided path's live numbers (steps 3–6), as the guide drew them. */
    get guide() { return status.result?.guide ?? null; },
    /** Every view has drawn the current state (on screen and off). */
    get idle() { return status.consistentVersion === scheduler.version && status.result != null; },
    get timings() { return { ...status.timings }; },
    /**
     * Where the scheduler is (the state's version, the last drawn on screen and everywhere) and what the last result
     * holds of an opened model's logit lens: what a test that waited in vain reports.
     */
    get progress() {
      const lens = status.result?.research?.lens;
      return { version: scheduler.version, visible: status.visibleVersion, consistent: status.consistentVersion,
        lens: lens ? { stale: lens.stale, running: lens.running, value: !!lens.value, error: lens.error?.message ?? null } : null };
    },
    /** The JSON export of the current view, as the download would hold it. */
    get exported() { return status.result && !status.result.empty ? exportDocument(state, status.result, toHash(state)) : null; },
    /**
     * When the views on screen had drawn the state whose text is `text` (performance.now() time), or null if they
     * have not yet. For the benchmark: the time from the last keystroke to a consistent page.
     */
    consistentAt(text, { all = false } = {}) {
      if (text != null && textOf(state) !== text && state.text !== text) return null;
      if (all) return status.consistentVersion === scheduler.version ? status.consistentAt : null;
      return status.visibleVersion === scheduler.version ? status.visibleAt : null;
    },
  };
  // For the tests: bottleneck curves to draw instead of the build's (none are in it before the GRU models are).
  api.setWhyCurves = (json) => { setCurvesForTests(json); scheduler.invalidate(); };
  // Functions cannot cross page.evaluate; the API stays reachable from code run in the page.
  Object.defineProperty(hooks, 'api', { value: api, enumerable: false });
  window.__attnscopeDemo = hooks;
}
