// The bottleneck curves (exact match against source length for the models), read from the JSON that
// tools/measure/measure_bottleneck.py writes (web/demo/src/data/bottleneck-curves.json); none until it is there. Read at
// build time (a glob, so a missing file is no error), so it is part of the bundle and works offline.

const FOUND = import.meta.glob('../data/bottleneck-curves.json', { eager: true, import: 'default' });

export const MODEL_KEYS = ['bottleneck', 'attention', 'transformer2000', 'transformer'];

// The ids measure_bottleneck.py gives each curve (and a few other spellings), mapped to ours.
const ALIASES = {
  bottleneck: ['gru', 'bottleneck', 'none', 'dates-gru'],
  attention: ['gru_attention', 'attention', 'dot', 'gru-attention', 'dates-gru-attention'],
  transformer2000: ['transformer_2000'],
  transformer: ['transformer', 'dates-seq2seq'],
};

/** A list of numbers from [0.9, …], [{ length, exact_match }, …] or { "1": 0.9, … }, keyed by length. */
function points(v, lengths) {
  if (Array.isArray(v)) {
    return v.map((y, i) => (y == null || typeof y === 'number' ? [lengths?.[i] ?? i + 1, y] : [y.length ?? y.len ?? y.n, y.exact_match ?? y.exact ?? y.acc]))
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
  // measure_bottleneck.py: { curves: [{ id, lengths, exact_match (null where a model cannot read that long) }] }.
  const list = Array.isArray(pool) ? pool : Object.entries(pool).map(([id, v]) => ({ id, exact_match: v }));
  const series = {};
  for (const key of MODEL_KEYS) {
    const c = list.find((m) => ALIASES[key].includes(String(m.id ?? m.name ?? m.model).toLowerCase()));
    if (c) series[key] = points(c.exact_match ?? c.values ?? c.points, c.lengths ?? lengths);
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
