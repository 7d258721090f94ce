// Colours of the figures: colour-blind-safe colour maps, one colour per head, WCAG contrast, and the colour
// scalings (linear, per row, without the first key, log) that turn a weight into a position on the colour map.

// Ten evenly spaced stops of matplotlib's viridis and cividis (as R's viridisLite prints them); linear
// interpolation between them stays within a few RGB units of the full 256-entry tables. Both are perceptually
// uniform and readable with the common colour-vision deficiencies (cividis even for full red-green blindness).
const STOPS = {
  viridis: ['#440154', '#482878', '#3e4a89', '#31688e', '#26828e', '#1f9e89', '#35b779', '#6dcd59', '#b4de2c', '#fde725'],
  cividis: ['#00204d', '#00336f', '#39486b', '#575c6d', '#707173', '#8a8779', '#a69d75', '#c4b56c', '#e4cf5b', '#ffea46'],
};

/** Names of the colour maps. */
export const COLORMAPS = Object.freeze(Object.keys(STOPS));

/** Okabe–Ito: eight colours that stay distinct under the common colour-vision deficiencies; head h gets h mod 8. */
export const HEAD_COLORS = Object.freeze(['#0072B2', '#E69F00', '#009E73', '#D55E00', '#CC79A7', '#56B4E9', '#000000', '#C8B400']);

/** The colour scalings: what maps to the top of the colour map. */
export const SCALES = Object.freeze(['linear', 'row', 'excludeFirstKey', 'log']);

const hexToRgb = (hex) => {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
};

const rgbToHex = (rgb) => `#${rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;

// 256 entries per map, as matplotlib's own tables; a colour is one lookup.
const LUTS = Object.fromEntries(Object.entries(STOPS).map(([name, stops]) => {
  const rgb = stops.map(hexToRgb);
  return [name, Array.from({ length: 256 }, (_, i) => {
    const x = (i / 255) * (rgb.length - 1);
    const k = Math.min(rgb.length - 2, Math.floor(x));
    const f = x - k;
    return rgbToHex(rgb[k].map((c, ch) => c + (rgb[k + 1][ch] - c) * f));
  })];
}));

/** The colour (`#rrggbb`) of `t` in [0, 1] on the named colour map; t is clamped. */
export function colormapHex(name, t) {
  const i = Math.max(0, Math.min(255, Math.round(t * 255)));
  return LUTS[name][i];
}

/** WCAG 2 relative luminance of `#rrggbb`. */
function relativeLuminance(hex) {
  const lin = (c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  const [r, g, b] = hexToRgb(hex).map((c) => lin(c / 255));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2 contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrastRatio(a, b) {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** Black or white, whichever contrasts more with `background`; for any colour that is at least 4.58:1. */
export const inkOn = (background) => (contrastRatio(background, '#000000') >= contrastRatio(background, '#ffffff') ? '#000000' : '#ffffff');

/** Tick labels: "0", "0.62", "0.005". */
function formatTick(v) {
  if (v === 0) return '0';
  return String(Number(v.toPrecision(v >= 0.1 ? 2 : 1)));
}

function finiteMax(maps, keep = () => true) {
  let m = -Infinity;
  for (const { data, offset, L, S } of maps) {
    for (let i = 0; i < L; i++) for (let j = 0; j < S; j++) {
      const v = data[offset + i * S + j];
      if (Number.isFinite(v) && keep(j) && v > m) m = v;
    }
  }
  return m;
}

/** A scale's `fractions` that maps each weight alone through `fraction` (NaN weights stay NaN). */
const eachWeight = (fraction) => ({ data, offset, L, S }) => {
  const t = new Float64Array(L * S);
  for (let k = 0; k < L * S; k++) {
    const v = data[offset + k];
    t[k] = Number.isNaN(v) ? NaN : fraction(v);
  }
  return t;
};

/**
 * The colour scaling shared by a figure's maps. `maps` are `{ data, offset, L, S }`; `vmax` (every scaling but
 * 'row') and `vmin` ('log') override the top and bottom taken from the data.
 * Returns `{ kind, fractions(map) → Float64Array of t in [0, 1] (NaN for NaN weights), ticks: {t, label}[], summary }`.
 */
export function createScale(kind, maps, { vmax, vmin } = {}, caller = 'createScale') {
  if (kind === 'row') {
    return {
      kind,
      fractions: ({ data, offset, L, S }) => {
        const t = new Float64Array(L * S);
        for (let i = 0; i < L; i++) {
          let m = 0;
          for (let j = 0; j < S; j++) if (data[offset + i * S + j] > m) m = data[offset + i * S + j];
          for (let j = 0; j < S; j++) {
            const v = data[offset + i * S + j];
            t[i * S + j] = Number.isNaN(v) ? NaN : m > 0 ? Math.max(0, Math.min(1, v / m)) : 0;
          }
        }
        return t;
      },
      ticks: [{ t: 0, label: '0' }, { t: 0.5, label: '50%' }, { t: 1, label: '100%' }],
      summary: "each query's row scaled to its own largest weight",
    };
  }
  const keep = kind === 'excludeFirstKey' ? (j) => j > 0 : () => true;
  let top = vmax ?? finiteMax(maps, keep);
  // A single key column, or only zeros: fall back to the whole map, then to 1.
  if (!(top > 0) && kind === 'excludeFirstKey' && vmax === undefined) top = finiteMax(maps);
  if (!(top > 0)) top = 1;
  if (kind === 'log') {
    const bottom = vmin ?? top / 1000;
    if (!(bottom < top)) throw new RangeError(`${caller}: options.vmin: expected a value below the top of the scale (${formatTick(top)}), got ${bottom}`);
    const span = Math.log(top / bottom);
    const ticks = [{ t: 0, label: `≤ ${formatTick(bottom)}` }];
    for (let p = Math.ceil(Math.log10(bottom) + 1e-9); 10 ** p < top * (1 - 1e-9); p++) {
      const t = Math.log(10 ** p / bottom) / span;
      if (t > 0.08 && t < 0.92) ticks.push({ t, label: formatTick(10 ** p) });
    }
    ticks.push({ t: 1, label: formatTick(top) });
    return {
      kind,
      fractions: eachWeight((v) => (v <= bottom ? 0 : Math.min(1, Math.log(v / bottom) / span))),
      ticks,
      summary: `logarithmic from ${formatTick(bottom)} (and below) to ${formatTick(top)}`,
    };
  }
  const clipped = kind === 'excludeFirstKey' && maps.some(({ data, offset, L, S }) => {
    // Beyond rounding: a first key of 1.0 above a top of 0.9999 is not worth a '≥'.
    for (let i = 0; i < L; i++) if (data[offset + i * S] > top * 1.005) return true;
    return false;
  });
  return {
    kind,
    fractions: eachWeight((v) => Math.max(0, Math.min(1, v / top))),
    ticks: [{ t: 0, label: '0' }, { t: 0.5, label: formatTick(top / 2) }, { t: 1, label: `${clipped ? '≥ ' : ''}${formatTick(top)}` }],
    summary: kind === 'excludeFirstKey'
      ? `linear from 0 to ${formatTick(top)}, the largest weight outside the first key${clipped ? ' (larger first-key weights get the top colour)' : ''}`
      : `linear from 0 to ${formatTick(top)}`,
  };
}
