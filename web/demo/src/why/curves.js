// The bottleneck curves (exact match against source length for the three models), read from the JSON that the GRU
// training writes into models/; none until it is there. Read at build time, so it is part of the bundle (offline too).

const FOUND = import.meta.glob(['../../../../models/*curve*.json', '../../../../models/*bottleneck*.json'], { eager: true, import: 'default' });

export const MODEL_KEYS = ['bottleneck', 'attention', 'transformer'];

// Names the training may use for each curve, mapped to ours.
const ALIASES = {
  bottleneck: ['bottleneck', 'none', 'gru', 'dates-gru', 'rnn', 'fixed'],
  attention: ['attention', 'dot', 'gru-attention', 'dates-gru-attention', 'luong', 'rnn_attention'],
  transformer: ['transformer', 'dates-seq2seq', 'seq2seq'],
};

/** A list of numbers from [0.9, …], [{ length, exact_match }, …] or { "1": 0.9, … }, keyed by length. */
function points(v, lengths) {
  if (Array.isArray(v)) {
    return v.map((y, i) => (typeof y === 'number' ? [lengths?.[i] ?? i + 1, y] : [y.length ?? y.len ?? y.n, y.exact_match ?? y.exact ?? y.acc]))
      .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  }
  if (v && typeof v === 'object') return Object.entries(v).map(([x, y]) => [Number(x), Number(y)]).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)).sort((a, b) => a[0] - b[0]);
  return [];
}

/** { lengths, series: { bottleneck: [[len, exact], …], … } } from the file's JSON, or null if nothing fits. */
export function normaliseCurves(json) {
  if (!json || typeof json !== 'object') return null;
  const lengths = json.lengths ?? json.source_lengths ?? json.x;
  const pool = json.curves ?? json.models ?? json.series ?? json;
  const byName = Array.isArray(pool) ? Object.fromEntries(pool.map((m) => [m.name ?? m.model, m.exact_match ?? m.values ?? m.points])) : pool;
  const series = {};
  for (const key of MODEL_KEYS) {
    const name = Object.keys(byName).find((n) => ALIASES[key].includes(String(n).toLowerCase()));
    if (name != null) series[key] = points(byName[name], lengths);
  }
  // Exact match as a fraction (0–1); a file in percent is scaled down.
  for (const key of Object.keys(series)) if (series[key].some(([, y]) => y > 1)) series[key] = series[key].map(([x, y]) => [x, y / 100]);
  return Object.values(series).some((s) => s.length) ? { series } : null;
}

let override = null;
/** For the browser tests only (testhooks.js): curves to draw instead of the build's. */
export const setCurvesForTests = (json) => { override = json; };

/** The curves to draw, or null when this build has none. */
export function bottleneckCurves() {
  if (override) return normaliseCurves(override);
  for (const json of Object.values(FOUND)) {
    const c = normaliseCurves(json);
    if (c) return c;
  }
  return null;
}
