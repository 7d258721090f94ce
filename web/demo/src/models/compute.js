// What the views draw, computed from the state: the seeded ('untrained') layer, the trained language model or the
// trained dates model. Pure apart from its caches (the seeded model of the current sizes, the last trained runs),
// which make a pass after a change of head, layer or query cost no forward pass.
import { tokenize } from './tokenize.js';
import { createSeededModel } from './seeded.js';
import { modelEntry, runLM, runS2S, namedHeadMap, headAverage } from './trained.js';

/** 'seeded' (the untrained layer, self or cross), 'lm' (trained character model) or 's2s' (trained dates model). */
export const kindOf = (state) => (state.mode === 's2s' ? 's2s' : state.mode === 'self' && state.model === 'trained' ? 'lm' : 'seeded');

const PRONOUNS = new Set(['it', 'he', 'she', 'they', 'him', 'her', 'them', 'its', '它', '他', '她', 'il', 'elle']);
/** The walkthrough's default query: the pronoun if there is one, else the last word. */
export function defaultQuery(tokens) {
  const p = tokens.findIndex((s) => PRONOUNS.has(s.toLowerCase()));
  if (p >= 0) return p;
  for (let i = tokens.length - 1; i >= 0; i--) if (/[\p{L}\p{N}]/u.test(tokens[i])) return i;
  return Math.max(0, tokens.length - 1);
}

/** Heads of one layer of a [layers, H, A, B] tensor, cut to the first `rows` × `cols`: a fresh [H, rows, cols]. */
export function sliceHeads(tensor, layer, rows, cols) {
  const [, H, A, B] = tensor.shape;
  const out = new Float32Array(H * rows * cols);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < rows; i++) {
      const from = ((layer * H + h) * A + i) * B;
      out.set(tensor.data.subarray(from, from + cols), (h * rows + i) * cols);
    }
  }
  return out;
}

/**
 * The layer to show: the one asked for, else the first layer with a named head, else the last one. The first screen
 * shows it: in the character model that is layer 1, whose previous-token and current-token heads draw a pattern that
 * explains itself on any sentence; the deeper named heads (line start, induction) look at the first token until the
 * text has what they look for, which on the default sentence painted one bright column.
 */
function pickLayer(want, layers, named) {
  if (want >= 0 && want < layers) return want;
  let first = Infinity;
  for (const n of named.values()) first = Math.min(first, n.layer);
  return Number.isFinite(first) ? first : layers - 1;
}

/** Computes results for states; `onModel` runs when a trained model has loaded (or made progress). */
export function createComputer({ onModel }) {
  let seeded = null, seededKey = '';
  let seededRun = { key: null, r: null };
  let lmRun = { text: null, model: null, run: null };
  let s2sRun = { text: null, model: null, run: null };

  function seededModel(state) {
    const key = `${state.embedDim}/${state.numHeads}/${state.seed}`;
    if (key !== seededKey) {
      seeded?.dispose();
      seeded = createSeededModel({ embedDim: state.embedDim, numHeads: state.numHeads, seed: state.seed });
      seededKey = key;
    }
    return seeded;
  }

  function computeSeeded(state) {
    const cross = state.mode === 'cross';
    const q = tokenize(cross ? state.tgt : state.text);
    const k = cross ? tokenize(state.src) : q;
    const rows = q.tokens, cols = k.tokens;
    const causal = !cross && state.causal;
    const base = { kind: 'seeded', rows, cols, q, k, cross, causal, seed: state.seed };
    if (!rows.length || !cols.length) return { ...base, empty: true, L: rows.length, S: cols.length, qi: -1 };
    const m = seededModel(state);
    // The forward pass depends on the tokens and settings only: a change of head or query reuses it.
    const key = `${seededKey}|${causal}|${cross}|${rows.join('\u0000')}|${cols.join('\u0000')}`;
    let run = seededRun.key === key ? seededRun.r : null;
    if (!run) {
      const { query, key: keyEmb, output, weights, ms } = m.run(rows, cross ? cols : null, { causal });
      const H = m.numHeads, L = rows.length, S = cols.length;
      const average = headAverage(weights.data, 0, H, L, S);
      run = { query, key: keyEmb, output, weights, average, ms, H, L, S, E: m.embedDim, d: m.headDim, stateDict: () => m.stateDict() };
      seededRun = { key, r: run };
    }
    const qi = state.query >= 0 && state.query < run.L ? state.query : defaultQuery(rows);
    return { ...base, ...run, qi };
  }

  /** The language model on the sentence: the chosen layer's heads, as the views want them. */
  function computeLM(state, lm) {
    const c = lm.config;
    // Heads switched off that this model has (a hand-edited hash may name others: they are left out).
    const ablated = state.ablate.filter((x) => x.layer < c.numLayers && x.head < c.numHeads);
    const ablateKey = ablated.map((x) => `${x.layer}.${x.head}`).join(',');
    if (lmRun.text !== state.text || lmRun.model !== lm || lmRun.ablateKey !== ablateKey) {
      lmRun = { text: state.text, model: lm, ablateKey, run: state.text ? runLM(lm, state.text, ablated) : null };
    }
    const run = lmRun.run;
    const named = namedHeadMap(lm);
    const layer = pickLayer(state.layer, c.numLayers, named);
    const base = { kind: 'lm', model: lm, ablated, layer, layers: c.numLayers, H: c.numHeads, E: c.dModel, d: c.dModel / c.numHeads, causal: true, cross: false, namedMap: named };
    base.named = [...Array(c.numHeads).keys()].map((h) => named.get(`${layer}/${h}`) ?? null);
    if (!run) return { ...base, empty: true, textEmpty: true, rows: [], cols: [], L: 0, S: 0, qi: -1, ms: 0 };
    const { H, T } = run;
    const off = layer * H * T * T;
    if (!run.averages) run.averages = [];
    return {
      ...base, run,
      rows: run.labels, cols: run.labels,
      weights: { data: run.attention.subarray(off, off + H * T * T), shape: [H, T, T] },
      average: (run.averages[layer] ??= headAverage(run.attention, off, H, T, T)),
      L: T, S: T,
      qi: state.query >= 0 && state.query < T ? state.query : T - 1,
      ms: run.ms,
    };
  }

  /** The dates model on the source sentence, cut to the steps decoded so far. */
  function computeS2S(state, m) {
    if (s2sRun.text !== state.date || s2sRun.model !== m) s2sRun = { text: state.date, model: m, run: runS2S(m, state.date) };
    const run = s2sRun.run;
    const c = m.config;
    const attn = state.attn;
    const named = namedHeadMap(m, attn);
    const base = { kind: 's2s', model: m, attn, H: c.numHeads, E: c.dModel, d: c.dModel / c.numHeads, causal: attn === 'dec', cross: attn === 'cross' };
    if (run.empty) return { ...base, run, empty: true, sourceEmpty: true, rows: [], cols: [], L: 0, S: 0, qi: -1, ms: 0, layer: 0, layers: 0, named: [] };
    const N = run.steps.length;
    // Every step shown is the finished view, whichever way it was asked for: step −1, or a link's step=N (the page
    // itself never keeps N: main.js advance() turns it into −1).
    const finished = state.step < 0 || state.step >= N;
    const shown = finished ? N : state.step;
    const tensor = run[attn];
    const [layers, H] = tensor.shape;
    const layer = state.layer >= 0 && state.layer < layers ? state.layer : 0;
    const written = run.steps.map((s) => s.token);
    // Row t is the step that wrote output token t; its query position reads the token before (<bos> first).
    const read = ['<bos>', ...written.slice(0, -1)];
    const rows = attn === 'enc' ? run.sourceTokens : written.slice(0, shown);
    const cols = attn === 'enc' ? run.sourceTokens : attn === 'dec' ? read.slice(0, shown) : run.sourceTokens;
    const L = rows.length, S = cols.length;
    const data = sliceHeads(tensor, layer, L, S);
    // The step to look at: the one clicked, else the newest — on the finished view, the last character before <eos>.
    let focus = state.query >= 0 && state.query < shown ? state.query : shown - 1;
    if (state.query < 0 && finished && shown > 1 && written[focus] === '<eos>') focus--;
    return {
      ...base, run, layer, layers, N, shown, finished, focus, rows, cols, L, S,
      named: [...Array(H).keys()].map((h) => named.get(`${layer}/${h}`) ?? null),
      weights: { data, shape: [H, L, S] },
      average: headAverage(data, 0, H, L, S),
      // The encoder's rows are source words: the one picked for the step-by-step panel, else the first.
      qi: attn === 'enc' ? (state.query >= 0 && state.query < S ? state.query : 0) : focus,
      ms: run.ms,
      empty: L === 0,
    };
  }

  return {
    /** The result of `state` for the views. */
    compute(state) {
      const kind = kindOf(state);
      if (kind === 'seeded') return computeSeeded(state);
      const entry = modelEntry(kind, onModel);
      if (entry.status !== 'ready') return { kind, entry, loading: entry.status === 'loading', error: entry.status === 'error' ? entry.error : null, empty: true, rows: [], cols: [], L: 0, S: 0, qi: -1 };
      // The file's bytes go along: the step-by-step panel reads the weights from them.
      return { ...(kind === 'lm' ? computeLM(state, entry.model) : computeS2S(state, entry.model)), bytes: entry.bytes };
    },
    /** The dates model's run for the current source sentence (the decoding player needs its length). */
    s2sRun: () => s2sRun.run,
  };
}
