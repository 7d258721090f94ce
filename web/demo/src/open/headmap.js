// A layers × heads map of one score per head, as Find heads and Patching draw it (cells painted as every map is,
// maps/heatmap.js, in a colour map or the caller's colours; the layers named down the left), and the heads ranked.
import { t } from '../i18n.js';
import { FONT_FAMILY } from 'attnscope/figures';
import { drawHeatmap, prepareCanvas } from '../maps/heatmap.js';

/** The `n` heads with the highest scores (scores[layer * H + head]), as { layer, head, score }. */
export function ranked(scores, H, n = 5) {
  return [...scores.keys()].sort((a, b) => scores[b] - scores[a]).slice(0, n).map((m) => ({ layer: Math.floor(m / H), head: m % H, score: scores[m] }));
}

/** For a map's aria-label: its size and its three strongest heads with their scores. */
export function strongest(scores, L, H) {
  const best = ranked(scores, H, 3).map((x) => `${t('mv.layer', { n: x.layer + 1 })} ${t('head', { n: x.head + 1 })} ${x.score.toFixed(2)}`).join(', ');
  return `${L} × ${H}; ${best}`;
}

/** An outline around head (layer, head) of a map drawHeadMap drew with `cell`, `left`, `top`: the selected one. */
export function outlineHead(ctx, layer, head, { cell, left, top }) {
  ctx.strokeStyle = '#000';
  ctx.lineWidth = 2;
  ctx.strokeRect(left + head * cell + 1, top + layer * cell + 1, cell - 2, cell - 2);
}

/** The margin above a head map that holds its heads' names (drawHeadMap's `top` at least this). */
export const HEAD_LABELS_TOP = 16;

/**
 * Draws scores[layer * H + head] on canvas `c` at the screen's pixel ratio: a `cell`-pixel square per head right of
 * `left` and below `top`, each layer's short name on its row and, when `top` is at least HEAD_LABELS_TOP, the heads'
 * names above their columns (every head's when they fit, else every fourth). A score in [0, 1] takes colour map
 * `cmap`'s colour; with `signed`, a score in [−1, 1] takes `colors` (paint.js' lutOf over [0, 1], at (score + 1) / 2),
 * a score that is not finite the middle. Returns the 2D context (CSS pixels, labels' font set) for what the caller adds.
 */
export function drawHeadMap(c, scores, L, H, { cell, left, top, cmap, colors, signed = false }) {
  const w = left + H * cell, h = top + L * cell;
  const ctx = prepareCanvas(c, w, h);
  const data = signed ? Float32Array.from(scores, (v) => (Number.isFinite(v) ? (v + 1) / 2 : 0.5)) : scores;
  drawHeatmap(ctx, { left, top, cell, L, S: H, showLabels: false }, { data, vmax: 1, scale: 'one', cmap, colors });
  ctx.font = `10px ${FONT_FAMILY}`;
  ctx.fillStyle = '#333';
  ctx.textBaseline = 'middle';
  for (let l = 0; l < L; l++) ctx.fillText(t('mv.layerShort', { n: l + 1 }), 0, top + l * cell + cell / 2);
  if (top >= HEAD_LABELS_TOP) {
    ctx.textAlign = 'center';
    const every = cell >= 24 ? 1 : 4;
    for (let hh = 0; hh < H; hh += every) ctx.fillText(t('mv.headShort', { n: hh + 1 }), left + hh * cell + cell / 2, top / 2);
    ctx.textAlign = 'start';
  }
  return ctx;
}
