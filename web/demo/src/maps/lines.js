// Which lines a head view draws of a long input's map: its strongest weights, at most a fixed number. No DOM here (the
// JS tests run it in Node).

/**
 * At most this many lines in a head view's faint background, over every head shown: beyond it the browser's
 * rasterising, not the script, sets the time (ARCHITECTURE.md, "Speed while typing").
 */
export const MAX_LINES = 1500;

/**
 * The `max` strongest (query, key, weight) of an L×S map's nonzero weights (`data` from `offset`, row-major), strongest
 * first; `of` counts every nonzero weight. O(L·S): a histogram of the weights gives a threshold, and only the cells
 * above it, plus the strongest of the bin it falls in, are sorted.
 */
export function strongestLines(data, offset, L, S, max) {
  const n = L * S;
  const triple = (k) => [Math.floor(k / S), k % S, data[offset + k]];
  const byWeight = (a, b) => data[offset + b] - data[offset + a] || a - b;
  let of = 0;
  for (let k = 0; k < n; k++) if (data[offset + k] > 0) of++;
  if (of <= max) {
    const all = [];
    for (let k = 0; k < n; k++) if (data[offset + k] > 0) all.push(k);
    return { lines: all.sort(byWeight).map(triple), of };
  }
  const BINS = 1024;
  const bin = (w) => Math.min(BINS - 1, Math.floor(w * BINS));
  const bins = new Uint32Array(BINS);
  for (let k = 0; k < n; k++) if (data[offset + k] > 0) bins[bin(data[offset + k])]++;
  // Bins from the top while they fit whole; bin `b` is the one that does not.
  let b = BINS - 1, count = 0;
  while (count + bins[b] <= max) count += bins[b--];
  const above = [], at = [];
  for (let k = 0; k < n; k++) {
    const w = data[offset + k];
    if (!(w > 0)) continue;
    const c = bin(w);
    if (c > b) above.push(k);
    else if (c === b) at.push(k);
  }
  // The rest from bin b, which can hold most of the map (a flat head at 512 tokens): its need-th largest weight found
  // by a typed array's native sort, then only the cells at or above it kept.
  const need = max - above.length;
  const cut = Float32Array.from(at, (k) => data[offset + k]).sort()[at.length - need];
  const rest = at.filter((k) => data[offset + k] > cut);
  for (let x = 0; x < at.length && rest.length < need; x++) if (data[offset + at[x]] === cut) rest.push(at[x]);
  return { lines: above.sort(byWeight).concat(rest.sort(byWeight)).map(triple), of };
}
