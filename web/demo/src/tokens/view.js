// The token chips under the input: what the model reads, with the query token of the walkthrough selected. The
// clickable row is one Tab stop (arrow keys move along it), not one per token.
import { t } from '../i18n.js';
import { $, morph, escapeHtml, escapeAttr } from '../dom.js';
import { MAX_TOKENS } from '../models/tokenize.js';
import { createChipFold } from './fold.js';

function chip(label, i, { clickable = false, selected = false, unk = false, special = false, focus = false } = {}) {
  const title = unk ? t('unk') : special ? t('tok.bos') : `${i}`;
  return `<button type="button" class="tok${selected ? ' selected' : ''}${unk ? ' unk' : ''}${special ? ' special' : ''}" data-i="${i}"`
    + `${clickable ? ` tabindex="${focus ? 0 : -1}" aria-pressed="${selected}"` : ' disabled'} title="${escapeAttr(title)}">${escapeHtml(label)}<sub>${i}</sub></button>`;
}

const row = (label, n, chips, query) => `<div class="tok-row"><span class="tok-label">${label} <b>${n}</b></span>${query ? `<span class="tok-list" data-role="query" role="group" aria-label="${escapeAttr(t('tok.pick'))}">${chips}</span>` : chips}</div>`;

function html(r) {
  if (r.entry) return '';
  if (r.kind === 'seeded') {
    const note = (x) => (x.truncated ? `<p class="warn">${t('truncated', { n: MAX_TOKENS, total: x.total })}</p>` : '');
    const sel = r.empty ? -1 : r.qi;
    const q = r.rows.map((s, i) => chip(s, i, { clickable: true, selected: i === sel, focus: i === Math.max(0, sel) })).join('');
    if (!r.cross) return row(t('tokens'), r.rows.length, q, true) + note(r.q);
    return row(t('tokens.source'), r.cols.length, r.cols.map((s, i) => chip(s, i)).join(''), false) + note(r.k)
      + row(t('tokens.target'), r.rows.length, q, true) + note(r.q);
  }
  if (r.kind === 'lm') {
    const run = r.run;
    if (!run) return '';
    const chips = run.labels.map((s, i) => chip(s, i, { clickable: true, selected: i === r.qi, focus: i === r.qi, unk: run.unk[i], special: i === 0 })).join('');
    return row(t('tokens'), run.T, chips, true)
      + (run.truncated ? `<p class="warn">${escapeHtml(t('truncated.lm', { n: r.model.config.maxLen, k: r.model.config.maxLen - 1, total: run.total }))}</p>` : '');
  }
  const run = r.run;
  if (!run.sourceTokens.length) return '';
  return row(t('dec.source'), run.sourceTokens.length, run.sourceTokens.map((s, i) => chip(s, i, { unk: run.unk[i] })).join(''), false)
    + (run.truncated ? `<p class="warn">${escapeHtml(t('truncated.s2s', { n: r.model.config.maxSourceLen, total: run.total }))}</p>` : '');
}

export function createTokensView(app) {
  const root = $('#tokens');
  const fold = createChipFold(root, $('#tokens-toggle'));
  root.addEventListener('click', (e) => {
    const b = e.target.closest('[data-role="query"] .tok');
    if (b) { app.state.query = Number(b.dataset.i); app.invalidate(); }
  });
  root.addEventListener('keydown', (e) => {
    const b = e.target.closest('[data-role="query"] .tok');
    if (!b) return;
    const all = [...b.parentElement.querySelectorAll('.tok')];
    const i = all.indexOf(b);
    const to = { ArrowLeft: i - 1, ArrowRight: i + 1, ArrowUp: i - 1, ArrowDown: i + 1, Home: 0, End: all.length - 1 }[e.key];
    if (to == null || !all[to]) return;
    e.preventDefault();
    b.tabIndex = -1;
    all[to].tabIndex = 0;
    all[to].focus();
  });
  let last = '';
  return {
    name: 'tokens',
    render(state, r) {
      const h = html(r);
      if (h === last) { fold(); return; } // a change of head or layer leaves the chips alone (and the focus where it is)
      const focused = root.contains(document.activeElement) ? document.activeElement.dataset.i : null;
      morph(root, h); // only the chips that changed (typing at the end: the new one and the selection)
      last = h;
      fold();
      if (focused != null && !root.contains(document.activeElement)) root.querySelector(`[data-role="query"] .tok[data-i="${focused}"]`)?.focus();
    },
  };
}
