// Copying over a repeated part: for each character of the text's second copy, whether the language model's most
// likely next character (at the position before) is that character, with every head and with the heads off, as a row
// of marks per position and the counts. Pure: ids and logits in, HTML out (ablation.js draws it).
import { escapeAttr, escapeHtml } from '../dom.js';
import { t } from '../i18n.js';
import { showToken } from '../models/trained.js';
import './copying.css';

/** The shortest repeated part worth marking: below it a "copy" is as likely a common bigram. */
export const MIN_REPEAT = 8;

/**
 * The longest end of `ids` that also occurs, whole, earlier (not overlapping it): `{ start, length }`, or null when
 * it is shorter than MIN_REPEAT. The Z-function of the reversed ids gives, at each i, how far the text ending at
 * T-1-i matches the text's end, in one pass.
 */
export function repeatedPart(ids) {
  const r = Array.from(ids).reverse(), T = r.length, z = new Int32Array(T);
  let best = 0;
  for (let i = 1, l = 0, h = 0; i < T; i++) {
    if (i < h) z[i] = Math.min(h - i, z[i - l]);
    while (i + z[i] < T && r[z[i]] === r[i + z[i]]) z[i]++;
    if (i + z[i] > h) { l = i; h = i + z[i]; }
    best = Math.max(best, Math.min(z[i], i)); // an earlier copy ends T-1-i, so at most i long to stay clear of the end
  }
  return best >= MIN_REPEAT ? { start: T - best, length: best } : null;
}

/** For each position p from `start` to the end: is the argmax of logits row p-1 (a [T, V] tensor) the id at p? */
export function copyMarks(ids, logits, start) {
  const V = logits.shape[1], out = [];
  for (let p = start; p < ids.length; p++) {
    const row = logits.data.subarray((p - 1) * V, p * V);
    let best = 0;
    for (let k = 1; k < V; k++) if (row[k] > row[best]) best = k;
    out.push(best === ids[p]);
  }
  return out;
}

const count = (marks) => marks.reduce((n, ok) => n + (ok ? 1 : 0), 0);

/** One strip: each character of the repeated part with a mark under it (✓ copied, ✗ not), and its count. */
function strip(chars, marks, label, { cls = '', lost = null } = {}) {
  const n = count(marks);
  const title = t('copy.count', { label, n, of: marks.length });
  const cells = chars.map((ch, i) => `<span class="cp-cell ${marks[i] ? 'ok' : 'bad'}${lost?.[i] ? ' lost' : ''}" data-ok="${+marks[i]}">`
    + `<span class="cp-ch">${escapeHtml(showToken(ch))}</span><span class="cp-m">${marks[i] ? '✓' : '✗'}</span></span>`).join('');
  return `<div class="cp-row ${cls}"><p class="cp-label"><b>${escapeHtml(label)}</b> <span class="cp-count" data-n="${n}" data-of="${marks.length}">`
    + `${escapeHtml(t('copy.nOf', { n, of: marks.length }))}</span></p><div class="cp-cells" role="img" aria-label="${escapeAttr(title)}">${cells}</div></div>`;
}

/**
 * The whole block: what is marked, then one strip with every head and one without the heads off; the positions that
 * the heads' absence turned wrong are outlined.
 */
export function copyingHtml({ chars, all, without, allLabel, withoutLabel }) {
  const lost = all.map((ok, i) => ok && !without[i]);
  return `<div class="cp" id="copying"><p class="cp-title"><b>${escapeHtml(t('copy.title'))}</b> `
    + `<span class="muted">${escapeHtml(t('copy.what', { n: chars.length, lost: count(lost) }))}</span></p>`
    + strip(chars, all, allLabel) + strip(chars, without, withoutLabel, { cls: 'off', lost }) + '</div>';
}
