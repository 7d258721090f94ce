// A layers × heads map of one score per head, as Find heads and Patching draw it (cells coloured by the caller's
// scale, the layers named down the left), and the heads ranked by that score.
import { t } from '../i18n.js';
import { FONT_FAMILY } from 'attnscope/figures';

/** The `n` heads with the highest scores (scores[layer * H + head]), as { layer, head, score }. */
export function ranked(scores, H, n = 5) {
  return [...scores.keys()].sort((a, b) => scores[b] - scores[a]).slice(0, n).map((m) => ({ layer: Math.floor(m / H), head: m % H, score: scores[m] }));
}

/** For a map's aria-label: its size and its three strongest heads with their scores. */
export function strongest(scores, L, H) {
  const best = ranked(scores, H, 3).map((x) => `${t('mv.layer', { n: x.layer + 1 })} ${t('head', { n: x.head + 1 })} ${x.score.toFixed(2)}`).join(', ');
  return `${L} × ${H}; ${best}`;
}

/**
 * Draws scores[layer * H + head] on canvas `c` at the screen's pixel ratio: a `cell`-pixel square per head (`colour`
 * of its score) right of `left` and below `top`, each layer's short name on its row. Returns the 2D context (CSS
 * pixels, labels' font set) for what the caller adds.
 */
export function drawHeadMap(c, scores, L, H, { cell, left, top, colour }) {
  const dpr = window.devicePixelRatio || 1;
  const w = left + H * cell, h = top + L * cell;
  c.width = Math.ceil(w * dpr); c.height = Math.ceil(h * dpr);
  c.style.width = `${w}px`; c.style.height = `${h}px`;
  const ctx = c.getContext('2d');
  ctx.scale(dpr, dpr);
  for (let l = 0; l < L; l++) for (let hh = 0; hh < H; hh++) {
    ctx.fillStyle = colour(scores[l * H + hh]);
    ctx.fillRect(left + hh * cell, top + l * cell, cell - 1, cell - 1);
  }
  ctx.font = `10px ${FONT_FAMILY}`;
  ctx.fillStyle = '#333';
  ctx.textBaseline = 'middle';
  for (let l = 0; l < L; l++) ctx.fillText(t('mv.layerShort', { n: l + 1 }), 0, top + l * cell + cell / 2);
  return ctx;
}
