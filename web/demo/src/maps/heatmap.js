// The demo's heat maps on canvas, for every model (ours and opened checkpoints): the layout with labelled axes, one
// map's cells (through paint.js, the one painter of pixels), its marks, the legend every map section shows, and the
// PNG export (the SVG export is attnscope/figures).
import { FONT_FAMILY } from 'attnscope/figures';
import { seqRgb, css, gradientCss } from './colors.js';
import { fmtTick as legendTick } from '../dom.js';
import { paintMap } from './paint.js';

// The figures' font stack: the page's maps and the exported SVGs set tokens in the same fonts.
export { FONT_FAMILY };
const font = (px, weight = 400) => `${weight} ${px}px ${FONT_FAMILY}`;

let measureCtx = null;
export function textWidth(s, px, weight) {
  measureCtx ??= document.createElement('canvas').getContext('2d');
  measureCtx.font = font(px, weight);
  return measureCtx.measureText(s).width;
}
const maxWidth = (labels, px) => labels.reduce((m, s) => Math.max(m, textWidth(s, px, 600)), 0);

/** Truncate long tokens on the axes (the tooltip always shows the whole token). */
export const axisLabel = (s) => (s.length > 12 ? s.slice(0, 11) + '…' : s);

/** Smallest room (CSS px) between two labels of a sparsely labelled axis, at SPARSE_FONT_PX. */
const SPARSE_FONT_PX = 8, SPARSE_GAP = 10;

/** The smallest round step (1, 2, 5, 10, 20, …) whose labels are at least `room` CSS pixels apart on `cell`-pixel cells. */
export function tickStep(cell, room) {
  for (let s = 1; ; s *= 10) for (const k of [1, 2, 5]) if (s * k * cell >= room) return s * k;
}

/**
 * A cell's side for `n` cells in `avail` CSS pixels: whole pixels from 10 up, where the cells are drawn apart by
 * hairlines; finer below, so a long map fills its width (paint.js paints cells of any size).
 */
const cellFor = (avail, n, maxCell) => {
  const raw = Math.min(maxCell, avail / Math.max(1, n));
  return raw >= 10 ? Math.floor(raw) : Math.max(0.25, raw);
};

/** The selected row's label on an axis of indices: its token and its index. */
const selectedLabel = (rows, i) => `${axisLabel(rows[i])} ${i}`;

/**
 * Where things go for an L×S map that should fit `width` CSS pixels.
 * labels: true, false or 'auto'. With 'auto', cells too small to carry every label get 8 px labels; too small for
 * those, the axes carry indices at a round step (`step` > 1, `index` true; the token is on hover), and the selected
 * row (`selected`) its token and index (see labelledRows).
 */
export function heatmapLayout(rows, cols, { width, maxCell = 30, minLabelCell = 11, fontPx = 11, labels = 'auto', pad = 4, selected = -1 }) {
  const L = rows.length, S = cols.length;
  const withLabels = (px) => {
    const left = Math.ceil(maxWidth(rows.map(axisLabel), px)) + 10;
    const colWs = cols.map((s) => textWidth(axisLabel(s), px, 600));
    const cell = cellFor(width - left - pad, S, maxCell);
    // Column labels that fit their cell (single characters, short words) stay upright; longer ones are
    // turned to read upwards — all of them, unless nearly every label fits (characters and a '<bos>').
    let fits = colWs.map((w) => w <= cell - 2);
    const nFit = fits.filter(Boolean).length;
    const upright = nFit === S;
    const mixed = !upright && nFit >= 0.8 * S;
    // Mixed, a label a little wider than its cell (an 'm' among letters) still reads better upright.
    if (mixed) fits = colWs.map((w) => w <= cell + 2);
    const turned = Math.ceil(Math.max(0, ...colWs.filter((w, j) => !mixed || !fits[j])));
    return { left, top: upright ? px + 10 : Math.max(turned, px) + 10, cell, upright, uprightCols: mixed ? fits : null, fontPx: px, step: 1, index: false };
  };
  // Indices at a round step, upright, far enough apart for the widest; the selected row's token beside its index.
  const withIndices = (px) => {
    const widest = textWidth(String(Math.max(L, S) - 1), px, 600);
    const sel = selected >= 0 && selected < L ? textWidth(selectedLabel(rows, selected), px, 700) : 0;
    const left = Math.ceil(Math.max(widest, sel)) + 10;
    const cell = cellFor(width - left - pad, S, maxCell);
    const step = tickStep(cell, Math.max(SPARSE_GAP, widest + 4));
    return { left, top: px + 10, cell, upright: true, uprightCols: null, fontPx: px, step, index: true };
  };
  let g = labels ? withLabels(fontPx) : null;
  if (g && labels === 'auto' && g.cell < minLabelCell) {
    // Small cells: 8 px labels, which still read; smaller still, indices at a round step, spaced to be legible.
    g = withLabels(SPARSE_FONT_PX);
    if (g.cell < SPARSE_GAP) g = withIndices(SPARSE_FONT_PX);
  }
  const showLabels = !!g;
  if (!g) g = { left: pad, top: pad, cell: cellFor(width - 2 * pad, S, maxCell), upright: false, uprightCols: null, fontPx, step: 1, index: false };
  return { ...g, L, S, showLabels, pad, width: Math.ceil(g.left + S * g.cell + pad), height: Math.ceil(g.top + L * g.cell + pad) };
}

/**
 * The rows that carry a label: all of them, or every step-th with the selected row in place of its neighbours
 * (closer than a step), so the row the page is about is always named.
 */
export function labelledRows(layout, selected) {
  const { L, step } = layout;
  const rows = [];
  for (let i = 0; i < L; i++) {
    if (i === selected || (i % step === 0 && !(selected >= 0 && selected < L && Math.abs(i - selected) < step))) rows.push(i);
  }
  return rows;
}

/** Which cell (row i, column j) is at CSS pixel (x, y), or null. */
export function cellAt(layout, x, y) {
  const j = Math.floor((x - layout.left) / layout.cell);
  const i = Math.floor((y - layout.top) / layout.cell);
  return i >= 0 && j >= 0 && i < layout.L && j < layout.S ? { i, j } : null;
}

/** Which row (query) is at CSS pixel (x, y): on its cells or its label left of them, else null. */
export function rowAt(layout, x, y) {
  const i = Math.floor((y - layout.top) / layout.cell);
  return i >= 0 && i < layout.L && x >= 0 && x < layout.left + layout.S * layout.cell ? i : null;
}

/**
 * Draw the map into ctx (already scaled to CSS pixels) at (ox, oy): its cells at the screen's resolution (paint.js),
 * then the marks and labels. spec: { data, offset, rows, cols, vmax, scale, cmap, selectedRow, hover: {i, j} };
 * `scale` as the page's picker says (default 'max': 0 … vmax; 'row': each row 0 … its largest; vmax is the top);
 * `colors` (paint.js' lutOf) in place of the colour map for a map of other values (a difference, a score).
 */
export function drawHeatmap(ctx, layout, spec, ox = 0, oy = 0) {
  const { L, S, cell, left, top } = layout;
  const { data, offset = 0, vmax = 1, scale = 'max', cmap, colors } = spec;
  const ratio = ctx.getTransform().a || 1;
  const w = Math.max(1, Math.round(S * cell * ratio)), h = Math.max(1, Math.round(L * cell * ratio));
  const img = ctx.createImageData(w, h);
  paintMap(new Uint32Array(img.data.buffer), w, 0, 0, w, h, data, offset, L, S, { cmap, colors, scale, top: vmax });
  ctx.putImageData(img, Math.round((ox + left) * ratio), Math.round((oy + top) * ratio));
  // Where the cells are and who painted them, for the tests (the same on every map of the page).
  if (ctx.canvas?.dataset) {
    Object.assign(ctx.canvas.dataset, { painter: 'heatmap', cellPx: String(cell), cellsLeft: String(ox + left), cellsTop: String(oy + top) });
  }
  ctx.save();
  if (cell >= 10) {
    // Hairline gaps between cells read as a table rather than a blur.
    ctx.strokeStyle = 'rgba(255,255,255,0.55)';
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let j = 1; j < S; j++) { ctx.moveTo(ox + left + j * cell, oy + top); ctx.lineTo(ox + left + j * cell, oy + top + L * cell); }
    for (let i = 1; i < L; i++) { ctx.moveTo(ox + left, oy + top + i * cell); ctx.lineTo(ox + left + S * cell, oy + top + i * cell); }
    ctx.stroke();
  }
  const sel = spec.selectedRow;
  if (sel != null && sel >= 0 && sel < L) {
    // The row the walkthrough explains: a white frame with a dark edge reads on every colour.
    ctx.strokeStyle = '#fff'; ctx.lineWidth = 2;
    ctx.strokeRect(ox + left + 1, oy + top + sel * cell + 1, S * cell - 2, cell - 2);
    ctx.strokeStyle = '#111'; ctx.lineWidth = 1;
    ctx.strokeRect(ox + left - 0.5, oy + top + sel * cell - 0.5, S * cell + 1, cell + 1);
  }
  if (spec.hover) {
    const { i, j } = spec.hover;
    ctx.strokeStyle = '#fff'; ctx.lineWidth = 2;
    ctx.strokeRect(ox + left + j * cell + 1, oy + top + i * cell + 1, cell - 2, cell - 2);
    ctx.strokeStyle = '#111'; ctx.lineWidth = 1;
    ctx.strokeRect(ox + left + j * cell + 0.5, oy + top + i * cell + 0.5, cell - 1, cell - 1);
  }
  if (layout.showLabels) {
    ctx.fillStyle = '#333';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'right';
    for (const i of labelledRows(layout, sel)) {
      ctx.font = font(layout.fontPx, i === sel ? 700 : 400);
      ctx.fillStyle = i === sel ? '#000' : '#444';
      const label = !layout.index ? axisLabel(spec.rows[i]) : i === sel ? selectedLabel(spec.rows, i) : String(i);
      ctx.fillText(label, ox + left - 6, oy + top + (i + 0.5) * cell);
    }
    ctx.font = font(layout.fontPx);
    ctx.fillStyle = '#444';
    spec.cols.forEach((s, j) => {
      if (j % layout.step) return;
      const up = layout.uprightCols ? layout.uprightCols[j] : layout.upright;
      ctx.save();
      ctx.textAlign = up ? 'center' : 'left';
      ctx.translate(ox + left + (j + 0.5) * cell, oy + top - (up ? layout.fontPx / 2 + 4 : 6));
      if (!up) ctx.rotate(-Math.PI / 2);
      ctx.fillText(layout.index ? String(j) : axisLabel(s), 0, 0);
      ctx.restore();
    });
  }
  ctx.restore();
}

/**
 * The legend of a map section (index.html's `.legend`: a bar, ticks 0, mid and top, an optional note), the same
 * element and classes for every model's maps: `top` is the top of the maps' colour scale.
 */
export function paintLegend(root, { cmap, top, note }) {
  root.querySelector('.legend-bar').style.background = gradientCss(cmap);
  root.querySelector('.legend-ticks .mid').textContent = legendTick(top / 2);
  root.querySelector('.legend-ticks .max').textContent = legendTick(top);
  const noteEl = root.querySelector('.legend-note');
  if (noteEl && note !== undefined) noteEl.textContent = note;
  Object.assign(root.dataset, { painter: 'heatmap', cmap, top: String(top) });
}

/** A map of `L`×`S` cells of `cell` CSS pixels with no labels (small multiples, a head's scores), as drawHeatmap places it. */
export const plainLayout = (L, S, cell, pad = 0) => ({
  left: pad, top: pad, cell, L, S, showLabels: false, pad, width: Math.ceil(2 * pad + S * cell), height: Math.ceil(2 * pad + L * cell),
});

/** Size a canvas for `layout` at the screen's pixel ratio and return its scaled 2D context. */
export function prepareCanvas(canvas, w, h, ratio = window.devicePixelRatio || 1) {
  canvas.width = Math.round(w * ratio);
  canvas.height = Math.round(h * ratio);
  canvas.style.width = `${w}px`;
  canvas.style.height = `${h}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return ctx;
}

const LEGEND_W = 16, LEGEND_GAP = 56;

/** Layout of a standalone figure (title + map + legend) used by both PNG and SVG export. */
function figureLayout(spec) {
  // Cells of 28 px for short sentences, shrinking so a 64-token map stays about 1000 px wide.
  const map = heatmapLayout(spec.rows, spec.cols, { width: 200 + Math.min(28 * spec.cols.length, 900), maxCell: 28, fontPx: 13, labels: true });
  const titleH = 44;
  const w = map.width + LEGEND_GAP + LEGEND_W + 90;
  const h = Math.max(titleH + map.height + 20, titleH + 220);
  return { map, titleH, w, h, legendX: map.width + LEGEND_GAP / 2, legendY: titleH + map.top, legendH: Math.max(120, map.L * map.cell) };
}

/** A PNG (2× pixel ratio) of one map with its title, axis note and legend. */
export function heatmapPng(spec) {
  const f = figureLayout(spec);
  const canvas = document.createElement('canvas');
  const ctx = prepareCanvas(canvas, f.w, f.h, 2);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, f.w, f.h);
  ctx.fillStyle = '#111'; ctx.font = font(16, 700); ctx.textBaseline = 'alphabetic'; ctx.textAlign = 'left';
  ctx.fillText(spec.title, 12, 22);
  ctx.fillStyle = '#666'; ctx.font = font(12);
  ctx.fillText(spec.subtitle ?? '', 12, 38);
  drawHeatmap(ctx, f.map, { ...spec, hover: null }, 0, f.titleH);
  const grad = ctx.createLinearGradient(0, f.legendY + f.legendH, 0, f.legendY);
  for (let k = 0; k <= 10; k++) grad.addColorStop(k / 10, css(seqRgb(spec.cmap, k / 10)));
  ctx.fillStyle = grad;
  ctx.fillRect(f.legendX, f.legendY, LEGEND_W, f.legendH);
  ctx.fillStyle = '#333'; ctx.font = font(11); ctx.textBaseline = 'middle';
  for (const v of [0, 0.5, 1]) ctx.fillText(fmtTick(v * spec.vmax), f.legendX + LEGEND_W + 4, f.legendY + f.legendH * (1 - v));
  if (spec.legendTitle) {
    ctx.textBaseline = 'alphabetic'; ctx.fillStyle = '#666';
    ctx.fillText(spec.legendTitle, f.legendX - 8, f.legendY - 10);
  }
  return new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
}

const fmtTick = (v) => (v === 0 ? '0' : v.toFixed(v >= 0.1 ? 2 : 3));
