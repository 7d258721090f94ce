// The logit lens of an opened model: a layers × positions table of each row's most probable token (shaded by its
// probability), from the embeddings down to the model's own output; a click on a cell lists its ten most probable
// tokens. The numbers are the core's (model.logitLens, in the Worker, a few rows a call); this view only draws them,
// and while they come, how many rows are done (hiding the lens then stops it).
import { t } from '../i18n.js';
import { $, escapeHtml, escapeAttr, setText } from '../dom.js';
import { percent } from '../percent.js';

/** Sky blue (Okabe–Ito), mixed with white by the probability: black text keeps a contrast above 8:1 on it. */
const SKY = [86, 180, 233];
export const shade = (p) => `rgb(${SKY.map((c) => Math.round(255 + (c - 255) * Math.max(0, Math.min(1, p)))).join(',')})`;

/** Row `l` of the lens (0 … layers) as the page names it: the embeddings, after a layer, the model's output. */
export function rowName(l, rows) {
  if (l === 0) return t('rs.lensEmbed');
  return l === rows - 1 ? t('rs.lensOutput', { n: l }) : t('rs.lensAfter', { n: l });
}

/** @param {{ state: object, invalidate: () => void, cancel?: () => void }} app `cancel`: stop the lens being computed. */
export function createLensView(app) {
  const root = $('#open-lens');
  const out = $('#open-lens-out');
  const btn = $('#open-lens-btn');
  const status = $('#open-lens-status');
  const o = () => app.state.open;
  let running = false; // a lens of the text shown is being computed: its progress goes to the status line alone
  btn.addEventListener('click', () => {
    o().lens = !o().lens;
    if (!o().lens) {
      o().lensCell = null;
      if (running) app.cancel?.(); // hidden before it is done: the Worker stops at its next call
    }
    app.invalidate();
  });
  const progressText = ({ done, total }) => (total ? t('rs.lensRunning', { done, total }) : t('open.computing'));
  out.addEventListener('click', (e) => {
    const b = e.target.closest('button[data-l]');
    if (!b) return;
    o().lensCell = { layer: Number(b.dataset.l), position: Number(b.dataset.p) };
    app.invalidate();
  });
  let drawn = { value: null, lang: '' };

  /** The table of top-1 tokens: a row per layer, a column per position. */
  function table(v) {
    const { rows, k, probabilities: pr, topIds: ids, names, tokens } = v;
    const T = tokens.length;
    const head = tokens.map((s, i) => `<th scope="col" title="${escapeAttr(`${i}: ${s}`)}">${escapeHtml(s)}<sub>${i}</sub></th>`).join('');
    const body = Array.from({ length: rows }, (_, l) => {
      const cells = Array.from({ length: T }, (_, p) => {
        const at = (l * T + p) * k, id = ids[at], prob = pr[at], name = names[id];
        return `<td><button type="button" data-l="${l}" data-p="${p}" data-id="${id}" data-prob="${prob}" style="background:${shade(prob)}" title="${escapeAttr(`${name} ${percent(prob)}`)}">${escapeHtml(name)}</button></td>`;
      }).join('');
      return `<tr><th scope="row">${escapeHtml(rowName(l, rows))}</th>${cells}</tr>`;
    }).join('');
    return `<div class="rs-lens-table" role="region" tabindex="0" aria-label="${escapeAttr(t('rs.lensTable'))}"><table><thead><tr><td></td>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
  }

  /** The ten most probable tokens of one cell, as a list with bars. */
  function topTen(v, cell) {
    const { rows, k, probabilities: pr, topIds: ids, names, tokens } = v;
    const T = tokens.length;
    if (!cell || cell.layer >= rows || cell.position >= T) return `<p class="hint rs-live">${escapeHtml(t('rs.lensPick'))}</p>`;
    const at = (cell.layer * T + cell.position) * k;
    const items = Array.from({ length: k }, (_, i) => {
      const p = pr[at + i];
      return `<li data-id="${ids[at + i]}" data-prob="${p}"><b>${escapeHtml(names[ids[at + i]])}</b><span class="next-bar"><span style="width:${(p * 100).toFixed(1)}%"></span></span><span class="next-p">${percent(p)}</span></li>`;
    }).join('');
    const where = t('rs.lensCell', { row: rowName(cell.layer, rows), token: tokens[cell.position], i: cell.position });
    return `<div class="rs-lens-top" id="open-lens-top"><p>${escapeHtml(where)}</p><ol>${items}</ol></div>`;
  }

  return {
    name: 'openLens',
    root,
    /** Rows done of the lens being computed: the status line alone, not a new drawing of the page. */
    showProgress(p) { if (running) setText(status, progressText(p)); },
    wants: (r) => r.kind === 'hf' && r.load.status === 'ready' && !r.empty,
    render(state, r) {
      const has = r.config.hasLmHead && r.info.kind !== 'seq2seq';
      root.hidden = !has;
      if (!has) return;
      btn.setAttribute('aria-pressed', String(!!state.open.lens));
      btn.textContent = t(state.open.lens ? 'rs.lensHide' : 'rs.lensShow');
      $('#open-lens-note').textContent = t(r.info.kind === 'encoder' ? 'rs.lensTextMlm' : 'rs.lensTextCausal');
      const s = r.research?.lens;
      running = !!(state.open.lens && s?.running);
      if (!state.open.lens || !s) { out.innerHTML = ''; status.textContent = ''; drawn = { value: null, lang: '' }; return; }
      setText(status, s.error ? s.error.message : s.running ? progressText(r.research.lensProgress ?? { done: 0, total: 0 })
        : s.stale ? t('open.computing') : t('rs.lensDone', { n: s.value.rows, T: s.value.tokens.length, ms: s.value.ms.toFixed(0) }));
      root.dataset.ms = s.value ? s.value.ms.toFixed(1) : '';
      // Whether the lens read the typing pass (only the head ran) or ran a pass of its own: for tests and benches.
      root.dataset.fromCache = s.value ? String(s.value.fromCache) : '';
      if (!s.value) { out.innerHTML = ''; return; }
      out.classList.toggle('stale', s.stale);
      if (drawn.value !== s.value || drawn.lang !== state.lang) {
        out.innerHTML = `${table(s.value)}<div id="open-lens-cell"></div>`;
        drawn = { value: s.value, lang: state.lang };
        drawn.cell = null;
      }
      const cellKey = JSON.stringify(state.open.lensCell);
      if (drawn.cell !== cellKey) {
        $('#open-lens-cell').innerHTML = topTen(s.value, state.open.lensCell);
        for (const b of out.querySelectorAll('button[aria-pressed="true"]')) b.setAttribute('aria-pressed', 'false');
        const c = state.open.lensCell;
        out.querySelector(c ? `button[data-l="${c.layer}"][data-p="${c.position}"]` : 'x-none')?.setAttribute('aria-pressed', 'true');
        drawn.cell = cellKey;
      }
    },
  };
}
