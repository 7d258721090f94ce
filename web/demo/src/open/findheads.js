// "Find heads" of an opened model: previous-token, induction and first-token (sink) scores of every head, each a
// layers × heads map with the strongest heads ranked; a click on a map or a ranked head picks it.
import { t } from '../i18n.js';
import { $, escapeHtml } from '../dom.js';
import { colormapHex, FONT_FAMILY } from 'attnscope/figures';

const KINDS = ['previous', 'induction', 'first'];
const CELL = 14, LEFT = 30, TOP = 4;

/** The `n` heads with the highest scores, as { layer, head, score }. */
export function ranked(scores, H, n = 5) {
  return [...scores.keys()].sort((a, b) => scores[b] - scores[a]).slice(0, n).map((m) => ({ layer: Math.floor(m / H), head: m % H, score: scores[m] }));
}

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
      const dpr = window.devicePixelRatio || 1;
      for (const k of KINDS) {
        const c = out.querySelector(`canvas[data-kind="${k}"]`);
        const w = LEFT + H * CELL, h = TOP + L * CELL;
        c.width = Math.ceil(w * dpr); c.height = Math.ceil(h * dpr);
        c.style.width = `${w}px`; c.style.height = `${h}px`;
        const ctx = c.getContext('2d');
        ctx.scale(dpr, dpr);
        const v = s.value[k];
        for (let l = 0; l < L; l++) for (let hh = 0; hh < H; hh++) {
          ctx.fillStyle = colormapHex(state.cmap, Math.min(1, Math.max(0, v[l * H + hh])));
          ctx.fillRect(LEFT + hh * CELL, TOP + l * CELL, CELL - 1, CELL - 1);
        }
        ctx.font = `10px ${FONT_FAMILY}`;
        ctx.fillStyle = '#333';
        ctx.textBaseline = 'middle';
        for (let l = 0; l < L; l++) ctx.fillText(t('mv.layerShort', { n: l + 1 }), 0, TOP + l * CELL + CELL / 2);
        const best = ranked(v, H, 3).map((x) => `${t('mv.layer', { n: x.layer + 1 })} ${t('head', { n: x.head + 1 })} ${x.score.toFixed(2)}`).join(', ');
        c.setAttribute('aria-label', `${t(`open.find.${k}`)}: ${L} × ${H}; ${best}`);
      }
    },
  };
}
