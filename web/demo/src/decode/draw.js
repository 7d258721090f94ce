// The decoding panel of the dates model: the source words on top, the output characters below, and
// lines from the character of the chosen step to every source word, as wide and opaque as its
// cross-attention weight; the words are coloured by the same weights.
import { seqRgb, css, inkOn } from '../maps/colors.js';
import { textWidth, FONT_FAMILY } from '../maps/heatmap.js';
import { t } from '../i18n.js';
import { escapeHtml } from '../dom.js';
import { percent as pct } from '../percent.js';

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const MONO = 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';

const WORD_PX = 17, WORD_PAD = 11, WORD_GAP = 18, WORD_Y = 8, WORD_H = 38;
const SLOT_W = 36, SLOT_GAP = 8, SLOT_Y = 168, SLOT_H = 40, BOS_W = 60;
const HEIGHT = 234;

/** The least the drawing is scaled by: its 17 px words stay 14 px, its 36 px output boxes 29 px wide. */
const MIN_SCALE = 0.8;

/**
 * @param {HTMLElement} root
 * @param {{ sourceTokens: string[], unk: boolean[], steps: { token: string, p: number, alt: { token: string, p: number } | null }[],
 *           shown: number, focus: number, weights: Float32Array | null, cmap: string, heads: number, ms: number, text: string }} d
 *   shown: output tokens decoded so far; focus: the step whose cross-attention is drawn (-1: none);
 *   weights: that step's cross-attention over the source words (average of all heads and layers).
 */
export function renderDecode(root, d) {
  const S = d.sourceTokens.length, N = d.steps.length;
  const wordW = d.sourceTokens.map((w) => Math.ceil(textWidth(w, WORD_PX, 500)) + 2 * WORD_PAD);
  const wordsW = wordW.reduce((a, b) => a + b, 0) + WORD_GAP * Math.max(0, S - 1);
  const slotsW = BOS_W + 14 + N * SLOT_W + Math.max(0, N - 1) * SLOT_GAP;
  const panel = Math.max(200, root.clientWidth || 900);
  // Too many words for the panel: the whole drawing is scaled down, to MIN_SCALE at most (on a phone, further would
  // leave 6 px text and 18 px boxes to tap); below that it keeps MIN_SCALE and the panel scrolls sideways.
  const VW = Math.max(panel, wordsW + 16, slotsW + 16);
  const scale = Math.max(MIN_SCALE, panel / VW);
  const width = Math.round(VW * scale);

  let x = (VW - wordsW) / 2;
  const wordX = wordW.map((w) => { const c = x + w / 2; x += w + WORD_GAP; return c; });
  const slot0 = (VW - slotsW) / 2 + BOS_W + 14;
  const slotX = (k) => slot0 + k * (SLOT_W + SLOT_GAP) + SLOT_W / 2;
  const bosX = (VW - slotsW) / 2 + BOS_W / 2;
  const w = d.weights;
  const focus = d.focus;

  const out = [];
  out.push(`<svg class="dec-svg" width="${width}" height="${Math.round(HEIGHT * scale)}" viewBox="0 0 ${VW} ${HEIGHT}" role="group" aria-label="${esc(t('sec.decode'))}" font-family='${FONT_FAMILY.replace(/'/g, '')}'>`);
  // Lines first, under the boxes.
  if (w && focus >= 0) {
    const xo = slotX(focus);
    // Faint ones first, so the strong lines are drawn on top.
    const order = [...Array(S).keys()].sort((a, b) => w[a] - w[b]);
    for (const j of order) {
      const xs = wordX[j];
      out.push(`<path class="dec-line" data-j="${j}" d="M${xo.toFixed(1)},${SLOT_Y} C${xo.toFixed(1)},${SLOT_Y - 46} ${xs.toFixed(1)},${WORD_Y + WORD_H + 66} ${xs.toFixed(1)},${WORD_Y + WORD_H + 24}" fill="none" stroke="#3e4a89" stroke-linecap="round" stroke-width="${(1 + 9 * w[j]).toFixed(2)}" stroke-opacity="${Math.max(0.1, w[j]).toFixed(3)}"/>`);
    }
  }
  d.sourceTokens.forEach((word, j) => {
    const has = w && focus >= 0;
    const rgb = has ? seqRgb(d.cmap, w[j]) : [247, 248, 251];
    const x0 = wordX[j] - wordW[j] / 2;
    out.push(`<g class="dec-word${d.unk[j] ? ' unk' : ''}" data-j="${j}"><title>${esc(word)}${has ? ` — ${w[j].toFixed(4)}` : ''}${d.unk[j] ? ` (${esc(t('unk'))})` : ''}</title>`);
    const stroke = d.unk[j] ? 'stroke="#8a4b00" stroke-dasharray="4 3" stroke-width="1.5"' : `stroke="${has ? 'none' : '#d6dae3'}"`;
    out.push(`<rect x="${x0}" y="${WORD_Y}" width="${wordW[j]}" height="${WORD_H}" rx="6" fill="${css(rgb)}" ${stroke}/>`);
    out.push(`<text x="${wordX[j]}" y="${WORD_Y + WORD_H / 2 + 1}" text-anchor="middle" dominant-baseline="middle" font-size="${WORD_PX}" font-weight="500" fill="${has ? inkOn(rgb) : '#1b2230'}">${esc(word)}</text>`);
    if (has) out.push(`<text x="${wordX[j]}" y="${WORD_Y + WORD_H + 15}" text-anchor="middle" font-size="12" font-family="${MONO}" fill="#5d6676">${w[j].toFixed(2)}</text>`);
    out.push('</g>');
  });
  // <bos>, then one slot per output token: decoded ones with their character and probability.
  out.push(`<g class="dec-bos"><rect x="${bosX - BOS_W / 2}" y="${SLOT_Y}" width="${BOS_W}" height="${SLOT_H}" rx="6" fill="#eef0f4"/>`);
  out.push(`<text x="${bosX}" y="${SLOT_Y + SLOT_H / 2 + 1}" text-anchor="middle" dominant-baseline="middle" font-size="13" font-family="${MONO}" fill="#5d6676">&lt;bos&gt;</text></g>`);
  d.steps.forEach((s, k) => {
    const xc = slotX(k), x0 = xc - SLOT_W / 2;
    if (k >= d.shown) {
      out.push(`<rect class="dec-slot todo" x="${x0}" y="${SLOT_Y}" width="${SLOT_W}" height="${SLOT_H}" rx="6" fill="none" stroke="#cfd4de" stroke-dasharray="3 3"/>`);
      return;
    }
    const on = k === focus;
    const eos = s.token === '<eos>';
    out.push(`<g class="dec-slot done${on ? ' focus' : ''}" data-t="${k}" tabindex="0" role="button"><title>${esc(t('tip.output', { t: k + 1, tok: s.token }))} · ${pct(s.p)}</title>`);
    out.push(`<rect x="${x0}" y="${SLOT_Y}" width="${SLOT_W}" height="${SLOT_H}" rx="6" fill="${on ? '#3e4a89' : '#fff'}" stroke="${on ? '#3e4a89' : '#9aa3b5'}"/>`);
    out.push(`<text x="${xc}" y="${SLOT_Y + SLOT_H / 2 + 1}" text-anchor="middle" dominant-baseline="middle" font-family="${MONO}" font-size="${eos ? 11 : 21}" font-weight="600" fill="${on ? '#fff' : '#1b2230'}">${eos ? 'eos' : esc(s.token)}</text>`);
    out.push(`<text x="${xc}" y="${SLOT_Y + SLOT_H + 16}" text-anchor="middle" font-size="10.5" font-family="${MONO}" fill="#8b93a1">${pct(s.p)}</text></g>`);
  });
  out.push('</svg>');

  // Under the drawing: the result so far, and what the chosen step did.
  const decoded = d.steps.slice(0, d.shown).filter((s) => s.token !== '<eos>').map((s) => s.token).join('');
  // The model's own answers that are not a date to print: `invalid` (no such day) and `--MM-DD` (no year given).
  const done = d.shown >= N;
  const written = done && decoded === 'invalid' ? t('dec.invalid') : done && decoded.startsWith('--') ? `${decoded} ${t('dec.noYear')}` : decoded;
  let say;
  if (focus < 0 || !w) say = escapeHtml(t('dec.start'));
  else {
    const s = d.steps[focus];
    let best = 0;
    for (let j = 1; j < S; j++) if (w[j] > w[best]) best = j;
    say = t('dec.stepText', {
      t: focus + 1,
      prev: escapeHtml(focus === 0 ? '<bos>' : d.steps[focus - 1].token),
      tok: escapeHtml(s.token),
      p: pct(s.p),
      word: escapeHtml(d.sourceTokens[best]),
      w: w[best].toFixed(2),
    }) + (s.alt ? ` <span class="muted">(${t('dec.alt', { tok: escapeHtml(s.alt.token), p: pct(s.alt.p) })})</span>` : '');
  }
  root.innerHTML = `<div class="dec-figure">${out.join('')}</div>
    <div class="dec-result${done ? ' done' : ''}"><span class="dec-label">${done ? t('dec.done') : t('dec.output')}</span><output id="dec-text">${escapeHtml(written)}</output>${done ? '' : '<span class="caret" aria-hidden="true"></span>'}
      ${done ? `<span class="muted dec-note">${t('dec.doneNote', { ms: d.ms.toFixed(2) })}</span>` : ''}</div>
    <p class="dec-say" id="dec-say">${say}</p>`;
}
