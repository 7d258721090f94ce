// Pieces shared by the heat map and the model view: the cells of one map, its token labels, the colour legend,
// and the sentence describing the strongest weights.
import { colormapHex, inkOn } from './color-scale.js';
import { INK, MUTED_INK, displayToken, escapeXml, formatWeight, num, shorten, textWidth } from './svg.js';

/** Axis labels of tokens: invisible characters made visible, long tokens shortened. */
export const axisLabels = (tokens) => tokens.map((t) => shorten(displayToken(t)));

/**
 * The rects of one map at (x, y), `cell` pixels square. Each has data-q/data-k (its query and key index) and, with
 * `tooltips`, a <title> "query → key: weight". NaN weights are white.
 */
export function cellRects({ map, fractions, colormap, x, y, cell, rows, cols, tooltips, values }) {
  const { data, offset, L, S } = map;
  const out = [`<g data-role="cells"${cell >= 8 ? ' stroke="#ffffff" stroke-width="0.5"' : ''}>`];
  const labels = [];
  // Coordinates formatted once per row and column: a model view has hundreds of thousands of cells.
  const xs = Array.from({ length: S }, (_, j) => `x="${num(x + j * cell)}"`);
  const size = `width="${num(cell)}" height="${num(cell)}"`;
  for (let i = 0; i < L; i++) {
    const yq = `y="${num(y + i * cell)}" ${size}`;
    for (let j = 0; j < S; j++) {
      const v = data[offset + i * S + j];
      const t = fractions[i * S + j];
      const color = Number.isNaN(t) ? '#ffffff' : colormapHex(colormap, t);
      const attrs = `${xs[j]} ${yq} fill="${color}" data-q="${i}" data-k="${j}"`;
      out.push(tooltips ? `<rect ${attrs}><title>${escapeXml(displayToken(rows[i]))} → ${escapeXml(displayToken(cols[j]))}: ${formatWeight(v)}</title></rect>` : `<rect ${attrs}/>`);
      if (values && !Number.isNaN(v)) {
        // Black or white, whichever contrasts more with the cell (≥ 4.58:1 on any colour).
        labels.push(`<text x="${num(x + (j + 0.5) * cell)}" y="${num(y + (i + 0.5) * cell)}" dy=".35em" text-anchor="middle" font-size="${num(Math.min(12, cell * 0.32))}" fill="${inkOn(color)}" data-q="${i}" data-k="${j}">${v.toFixed(2)}</text>`);
      }
    }
  }
  out.push('</g>');
  if (labels.length) out.push('<g data-role="values" aria-hidden="true">', ...labels, '</g>');
  // One string per map: the document's final join then handles thousands of pieces, not a million.
  return [out.join('\n')];
}

/**
 * How the column labels fit: upright when they fit their cells, else turned to read upwards — all of them, unless
 * nearly all fit (characters and one '<bos>'), when only the wide ones turn. `upright` has one boolean per label.
 */
export function columnLayout(labels, cell, fontPx) {
  const widths = labels.map((s) => textWidth(s, fontPx));
  const fits = widths.map((w) => w <= cell - 2);
  const fitting = fits.filter(Boolean).length;
  const upright = fitting >= 0.8 * labels.length ? fits : fits.map(() => false);
  return { upright, height: Math.max(fontPx, ...widths.map((w, j) => (upright[j] ? fontPx : w))) + 6 };
}

export const rowLabelWidth = (labels, fontPx) => Math.max(0, ...labels.map((s) => textWidth(s, fontPx))) + 6;

/** Token labels left of the rows (right-aligned at x) and above the columns (bottom at y); `upright[j]` per column. */
export function tokenLabels({ rowLabels, colLabels, x, y, cell, fontPx, upright, rowsX = x - 6, colsY = y - 6 }) {
  const out = [`<g data-role="labels" font-size="${num(fontPx)}" fill="${INK}">`];
  rowLabels.forEach((s, i) => out.push(`<text x="${num(rowsX)}" y="${num(y + (i + 0.5) * cell)}" dy=".35em" text-anchor="end" data-axis="query">${escapeXml(s)}</text>`));
  colLabels.forEach((s, j) => {
    const cx = num(x + (j + 0.5) * cell);
    out.push(upright[j]
      ? `<text x="${cx}" y="${num(colsY)}" text-anchor="middle" data-axis="key">${escapeXml(s)}</text>`
      : `<text transform="translate(${cx} ${num(colsY)}) rotate(-90)" dy=".35em" data-axis="key">${escapeXml(s)}</text>`);
  });
  out.push('</g>');
  return out;
}

const LEGEND_BAR = 12;

/** Width the legend needs beside the map. */
export function legendWidth(scale, title, fontPx = 11) {
  return Math.max(LEGEND_BAR + 4 + Math.max(...scale.ticks.map((t) => textWidth(t.label, fontPx))), textWidth(title, fontPx));
}

/** The colour bar (bottom = 0) with its ticks and title; `id` names its gradient. */
export function legend({ scale, colormap, x, y, height, id, title, fontPx = 11 }) {
  const out = [`<defs><linearGradient id="${id}-legend" x1="0" y1="1" x2="0" y2="0">`];
  for (let k = 0; k <= 16; k++) out.push(`<stop offset="${num(k / 16)}" stop-color="${colormapHex(colormap, k / 16)}"/>`);
  out.push('</linearGradient></defs>');
  out.push(`<g data-role="legend" font-size="${fontPx}">`);
  out.push(`<text x="${num(x)}" y="${num(y - 14)}" fill="${MUTED_INK}">${escapeXml(title)}</text>`);
  out.push(`<rect x="${num(x)}" y="${num(y)}" width="${LEGEND_BAR}" height="${num(height)}" fill="url(#${id}-legend)"/>`);
  for (const { t, label } of scale.ticks) {
    const ty = y + height * (1 - t);
    out.push(`<line x1="${num(x + LEGEND_BAR)}" x2="${num(x + LEGEND_BAR + 3)}" y1="${num(ty)}" y2="${num(ty)}" stroke="${INK}"/>`);
    out.push(`<text x="${num(x + LEGEND_BAR + 5)}" y="${num(ty)}" dy=".35em" fill="${INK}">${escapeXml(label)}</text>`);
  }
  out.push('</g>');
  return out;
}

/** The `count` largest finite weights of the maps, largest first: `{ v, i, j, m }` (m = map index). */
export function strongest(maps, count = 5) {
  const best = [];
  maps.forEach(({ data, offset, L, S }, m) => {
    for (let i = 0; i < L; i++) for (let j = 0; j < S; j++) {
      const v = data[offset + i * S + j];
      if (!Number.isFinite(v) || (best.length === count && v <= best[count - 1].v)) continue;
      best.push({ v, i, j, m });
      best.sort((a, b) => b.v - a.v);
      if (best.length > count) best.pop();
    }
  });
  return best;
}

/** "“it” → “animal” 0.62" for a description; the whole token (shown visibly), never shortened. */
export const pairText = (rows, cols, { i, j, v }) => `“${displayToken(rows[i])}” → “${displayToken(cols[j])}” ${formatWeight(v)}`;
