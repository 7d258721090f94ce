// Colour scales of the demo, from attnscope/figures (the same colours its exported figures use): the sequential
// maps for weights, one colour per head; and the one thing figures has no use for, a diverging map for signed
// vectors (the steps panel's q, k and v).
import { COLORMAPS, HEAD_COLORS, colormapHex } from 'attnscope/figures';

export { COLORMAPS, HEAD_COLORS };

// ColorBrewer RdBu (11 classes, reversed: blue = negative, red = positive); rated colour-blind safe.
const DIVERGING = ['#053061', '#2166ac', '#4393c3', '#92c5de', '#d1e5f0', '#f7f7f7', '#fddbc7', '#f4a582', '#d6604d', '#b2182b', '#67001f'];

function hexToRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function buildLut(stops, size = 256) {
  const rgb = stops.map(hexToRgb);
  const lut = new Uint8ClampedArray(size * 3);
  for (let i = 0; i < size; i++) {
    const t = (i / (size - 1)) * (rgb.length - 1);
    const k = Math.min(rgb.length - 2, Math.floor(t));
    const f = t - k;
    for (let c = 0; c < 3; c++) lut[i * 3 + c] = rgb[k][c] + (rgb[k + 1][c] - rgb[k][c]) * f;
  }
  return lut;
}

// figures' own 256-entry tables, unpacked once into bytes: the canvases look a colour up per cell.
const LUTS = Object.fromEntries(COLORMAPS.map((name) => [name, buildLut(Array.from({ length: 256 }, (_, i) => colormapHex(name, i / 255)))]));
const DIV_LUT = buildLut(DIVERGING);

/** Colour of t in [0, 1] under the named sequential map, as [r, g, b]. */
export function seqRgb(name, t) {
  const lut = LUTS[name] ?? LUTS.viridis;
  const i = Math.max(0, Math.min(255, Math.round(t * 255))) * 3;
  return [lut[i], lut[i + 1], lut[i + 2]];
}

/** Colour of t in [-1, 1] under the diverging map, as [r, g, b]. */
export function divRgb(t) {
  const i = Math.max(0, Math.min(255, Math.round((t + 1) * 127.5))) * 3;
  return [DIV_LUT[i], DIV_LUT[i + 1], DIV_LUT[i + 2]];
}

export const css = ([r, g, b]) => `rgb(${r | 0},${g | 0},${b | 0})`;

/** WCAG relative luminance of [r, g, b]. */
function luminance(rgb) {
  const [r, g, b] = rgb.map((c) => { const x = c / 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Black or white text, whichever has the higher WCAG contrast on [r, g, b]: at least 4.58:1 on any colour. */
export function inkOn(rgb) {
  const l = luminance(rgb);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? '#000' : '#fff';
}

/** CSS linear-gradient of a sequential map, for legends (eleven stops of figures' table). */
export function gradientCss(name, dir = 'to right') {
  const map = COLORMAPS.includes(name) ? name : 'viridis';
  return `linear-gradient(${dir}, ${Array.from({ length: 11 }, (_, k) => colormapHex(map, k / 10)).join(', ')})`;
}

export const divergingGradientCss = (dir = 'to right') => `linear-gradient(${dir}, ${DIVERGING.join(', ')})`;
