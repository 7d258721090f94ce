// "Find heads" of an opened model: previous-token, induction and first-token (sink) scores of every head, each a
// layers × heads map with the strongest heads ranked; a click on a map or a ranked head picks it.
import { t } from '../i18n.js';
import { $, escapeHtml } from '../dom.js';
import { drawHeadMap, ranked, strongest, HEAD_LABELS_TOP } from './headmap.js';

const KINDS = ['previous', 'induction', 'first'];
const CELL = 14, LEFT = 30, TOP = HEAD_LABELS_TOP;

/** @param {{ pick: (layer: number, head: number) => void, run: () => void }} app */
export function createFindHeadsView(app) {
  const root = $('#open-find');
  const out = $('#open-find-out');
  $('#open-find-btn').addEventListener('click', () => app.run());
  out.addEventListener('click', (e) => {
    const b = e.target.closest('[data-layer]');
    if (b) { app.pick(Number(b.dataset.layer), Number(b.dataset.head)); return; }
    const c = e.target.closest('canvas[data-kind]');
    if (!c) return;
    const rect = c.getBoundingClientRect();
    const layer = Math.floor((e.clientY - rect.top - TOP) / CELL), head = Math.floor((e.clientX - rect.left - LEFT) / CELL);
    if (layer >= 0 && head >= 0 && layer < Number(c.dataset.layers) && head < Number(c.dataset.heads)) app.pick(layer, head);
  });
  let drawn = null;
  // The view's shape (name, root, wants, render) is the scheduler's, which is why the Open tab's views look alike.
  return {
    name: 'openFind',
    root,
    wants: (r) => r.kind === 'hf' && r.load.status === 'ready',
    render(state, r) {
      const s = r.heads;
      $('#open-find-btn').disabled = s?.status === 'running';
      $('#open-find-status').textContent = !s ? '' : s.status === 'running' ? t('open.findRunning') : s.status === 'error' ? s.error.message : t('open.findDone', { n: s.value.tokens });
      if (s?.status !== 'done') { if (!s) { out.innerHTML = ''; drawn = null; } return; }
      if (drawn === s.value && out.dataset.lang === state.lang) return;
      drawn = s.value;
      out.dataset.lang = state.lang;
      const { layers: L, heads: H } = r.config;
      out.innerHTML = KINDS.map((k) => `<figure class="open-find-map"><figcaption><b>${escapeHtml(t(`open.find.${k}`))}</b><br><span class="hint">${escapeHtml(t(`open.find.${k}Def`))}</span></figcaption>
        <canvas data-kind="${k}" data-layers="${L}" data-heads="${H}" role="img"></canvas>
        <ol>${ranked(s.value[k], H).map((x) => `<li><button type="button" class="link" data-layer="${x.layer}" data-head="${x.head}">${escapeHtml(t('mv.layer', { n: x.layer + 1 }))} ${escapeHtml(t('head', { n: x.head + 1 }))}</button> <span class="open-score">${x.score.toFixed(3)}</span></li>`).join('')}</ol></figure>`).join('');
      for (const k of KINDS) {
        const c = out.querySelector(`canvas[data-kind="${k}"]`);
        drawHeadMap(c, s.value[k], L, H, { cell: CELL, left: LEFT, top: TOP, cmap: state.cmap });
        c.setAttribute('aria-label', `${t(`open.find.${k}`)}: ${strongest(s.value[k], L, H)}`);
      }
    },
  };
}
