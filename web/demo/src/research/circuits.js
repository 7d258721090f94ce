// The circuits of an opened model: every head's QK (W_Q·W_Kᵀ) and OV (W_V·W_O) Frobenius norms as two layers × heads
// maps (model.circuitNorms() in the Worker, once per model), and the selected head's singular values of both
// (model.circuits(layer, head)), with the key/value head it reads under grouped-query attention. Asked only while
// shown; the numbers are the package's, this view draws them.
import { t, getLang } from '../i18n.js';
import { $, escapeHtml } from '../dom.js';
import { drawHeadMap, outlineHead, strongest, HEAD_LABELS_TOP } from '../open/headmap.js';

const LEFT = 30, TOP = HEAD_LABELS_TOP;
/** Singular values listed for the selected head: the largest, up to this many. */
const SHOWN = 16;
const fmt = (x) => (x >= 100 ? x.toFixed(1) : x.toFixed(4));

/** @param {{ state: object, invalidate: () => void, pick: (layer: number, head: number) => void }} app */
export function createCircuitsView(app) {
  const root = $('#open-circuits');
  const out = $('#open-circuits-out');
  const btn = $('#open-circuits-btn');
  btn.addEventListener('click', () => { app.state.open.circuits = !app.state.open.circuits; app.invalidate(); });
  out.addEventListener('click', (e) => {
    const c = e.target.closest('canvas.rs-circ-map');
    if (!c) return;
    const rect = c.getBoundingClientRect(), cell = Number(c.dataset.cell);
    const layer = Math.floor((e.clientY - rect.top - TOP) / cell), head = Math.floor((e.clientX - rect.left - LEFT) / cell);
    if (layer >= 0 && head >= 0 && layer < Number(c.dataset.layers) && head < Number(c.dataset.heads)) app.pick(layer, head);
  });
  let drawnNorms = null, drawnHead = null;

  /** The two norm maps, each scaled to its largest, and every number in a table. */
  function normsHtml(r, v) {
    const { layers: L, heads: H } = r.config;
    const max = (a) => a.reduce((m, x) => Math.max(m, x), 0);
    const caption = (kind, key) => escapeHtml(t(key, { max: fmt(max(v[kind])) }));
    const fig = (kind, key) => `<figure class="rs-circ-fig"><figcaption>${caption(kind, key)}</figcaption>
      <canvas class="rs-circ-map" data-kind="${kind}" role="img"></canvas></figure>`;
    const cell = (kind, l, h) => `<td data-kind="${kind}" data-layer="${l}" data-head="${h}" data-value="${v[kind][l * H + h]}">${
      fmt(v[kind][l * H + h])}</td>`;
    const head = Array.from({ length: H }, (_, h) => `<th scope="col">${escapeHtml(t('head', { n: h + 1 }))}</th>`).join('');
    const table = (kind, key) => `<table><caption>${caption(kind, key)}</caption><thead><tr><td></td>${head}</tr></thead><tbody>${
      Array.from({ length: L }, (_, l) => `<tr><th scope="row">${escapeHtml(t('mv.layer', { n: l + 1 }))}</th>${
        Array.from({ length: H }, (_, h) => cell(kind, l, h)).join('')}</tr>`).join('')}</tbody></table>`;
    const click = `<p class="hint rs-live">${escapeHtml(t('rs.sinkClick'))}</p>`;
    return `<div class="rs-maps">${fig('qk', 'rs.circQk')}${fig('ov', 'rs.circOv')}</div>${click}
      <details><summary>${escapeHtml(t('rs.circNorms'))}</summary>
      <div class="open-patch-table">${table('qk', 'rs.circQk')}${table('ov', 'rs.circOv')}</div></details>`;
  }

  /** The selected head's largest singular values of QK and OV as bars, and the key/value head it reads. */
  function headHtml(r, v) {
    const c = r.config, n = Math.min(SHOWN, v.qk.length);
    const bars = (kind, values) => {
      const top = values[0] || 1;
      const item = (x, i) => `<li data-kind="${kind}" data-index="${i}" data-value="${x}">
        <span class="rs-sv-bar"><span style="width:${((x / top) * 100).toFixed(1)}%"></span></span><span class="next-p">${fmt(x)}</span></li>`;
      return `<ol class="rs-sv">${Array.from(values.slice(0, n), item).join('')}</ol>`;
    };
    const kv = c.kvHeads < c.heads ? `<p>${escapeHtml(t('rs.circKv', { kv: v.kvHead + 1, n: c.kvHeads }))}</p>` : '';
    return `<h4>${escapeHtml(t('rs.circHead', { l: v.layer + 1, h: v.head + 1, n, d: v.qk.length }))}</h4>${kv}
      <div class="rs-sv-pair"><div><b>${escapeHtml(t('rs.circSvQk'))}</b>${bars('qk', v.qk)}</div>
      <div><b>${escapeHtml(t('rs.circSvOv'))}</b>${bars('ov', v.ov)}</div></div>`;
  }

  return {
    name: 'openCircuits',
    root,
    wants: (r) => r.kind === 'hf' && r.load.status === 'ready' && !r.empty && !r.translation,
    render(state, r) {
      root.hidden = false;
      const on = !!state.open.circuits;
      btn.setAttribute('aria-pressed', String(on));
      btn.textContent = t(on ? 'rs.circHide' : 'rs.circShow');
      const status = $('#open-circuits-status');
      const norms = on ? r.research?.circuitNorms : null, head = on ? r.research?.circuits : null;
      if (!on || !norms) { out.innerHTML = ''; status.textContent = ''; drawnNorms = drawnHead = null; return; }
      status.textContent = norms.error ? norms.error.message : !norms.value ? t('rs.circRunning')
        : t('rs.circDone', { n: r.config.layers * r.config.heads, ms: norms.value.ms.toFixed(0) });
      if (norms.value) status.dataset.ms = norms.value.ms.toFixed(1);
      if (!norms.value) { out.innerHTML = ''; drawnNorms = drawnHead = null; return; }
      const lang = getLang();
      // The maps and their table are built again only for new norms or words (an open table stays open); the pictures
      // for the colours and the selected head, which they outline.
      if (drawnNorms?.value !== norms.value || drawnNorms.lang !== lang) {
        out.innerHTML = `${normsHtml(r, norms.value)}<div class="rs-circ-head"></div>`;
        drawnNorms = { value: norms.value, lang, paint: '' };
        drawnHead = null;
      }
      const { layers: L, heads: H } = r.config;
      const cell = Math.max(8, Math.min(22, Math.floor(((out.clientWidth || 600) / 2 - LEFT - 20) / H)));
      const paint = [state.cmap, r.layer, r.head, cell].join('|');
      if (drawnNorms.paint !== paint) {
        for (const c of out.querySelectorAll('canvas.rs-circ-map')) {
          const values = norms.value[c.dataset.kind];
          const top = values.reduce((m, x) => Math.max(m, x), 0) || 1;
          const scaled = Float32Array.from(values, (x) => x / top);
          Object.assign(c.dataset, { cell, layers: L, heads: H });
          const ctx = drawHeadMap(c, scaled, L, H, { cell, left: LEFT, top: TOP, cmap: state.cmap });
          outlineHead(ctx, r.layer, r.head, { cell, left: LEFT, top: TOP });
          c.setAttribute('aria-label', `${t(c.dataset.kind === 'qk' ? 'rs.circQk' : 'rs.circOv', { max: fmt(top) })}: ${strongest(values, L, H)}`);
        }
        drawnNorms.paint = paint;
      }
      // The selected head's spectra: the last ones, dimmed, until the Worker answers for the newly selected head.
      const place = out.querySelector('.rs-circ-head');
      place.classList.toggle('stale', !!head?.stale);
      const v = head?.value;
      if (head?.error) { place.textContent = head.error.message; drawnHead = null; return; }
      if (!v || drawnHead === `${v.layer}.${v.head}|${lang}`) return;
      place.innerHTML = v.problem ? `<p>${escapeHtml(t(v.problem.key))}</p>` : headHtml(r, v);
      if (!v.problem) Object.assign(place.dataset, { layer: v.layer, head: v.head }); // which head it shows (the tests wait for it)
      drawnHead = `${v.layer}.${v.head}|${lang}`;
    },
  };
}
