// Colour scaling of the heat maps, chosen by a control, so that an attention sink (a column such as <bos> that
// takes most of every row's weight) cannot leave the rest of a map dark:
//   max  — 0 … the largest weight shown;      one — 0 … 1;
//   rest — 0 … the largest weight outside the first column (the first column is clipped at the top);
//   row  — each row 0 … its own largest weight.
import { t } from '../i18n.js';

export const SCALES = ['rest', 'max', 'row', 'one'];

/** Round up to two decimals so the legend reads well, and never below 0.01. */
const nice = (m) => Math.min(1, Math.max(0.01, Math.ceil(m * 100) / 100));

/**
 * The top of the scale for the legend (per-row scaling has no single top: 1 stands for "the row's largest").
 * @param {string} scale
 * @param {Float32Array} data  maps of S columns each (rows × S), any number of them
 * @param {number} [S]  columns, needed for 'rest'
 */
export function scaleTop(scale, data, S = 0) {
  if (scale === 'one' || scale === 'row') return 1;
  let m = 0;
  if (scale === 'rest' && S > 1) { for (let k = 0; k < data.length; k++) if (k % S) m = Math.max(m, data[k]); }
  else for (let k = 0; k < data.length; k++) m = Math.max(m, data[k]);
  return nice(m);
}

/**
 * The legend's note for `scale`: under 'rest', the first column named by its token `firstKey` (a word, in the dates
 * and cross-attention maps, is no attention sink), or said in general without it.
 */
export function scaleNote(scale, firstKey) {
  if (scale === 'rest' && firstKey !== undefined) return t('scaleNote.restTok', { tok: firstKey });
  return t(`scaleNote.${scale}`);
}
