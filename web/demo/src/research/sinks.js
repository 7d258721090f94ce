// Attention sinks of an opened model: every head's sink mass on one key (the first token, or the key picked beside
// the maps) as a layers × heads map with the heads ranked, as Find heads draws its scores, and the selected head's
// row at the selected query four ways: its weights, the row with that key hidden and renormalised, the values'
// norms, and value-weighted α·‖v‖. Plain arithmetic over the maps (the package's sinkMass, hideKeys, valueWeighted),
// computed only while shown.
import { t } from '../i18n.js';
import { $, escapeHtml, escapeAttr } from '../dom.js';
import { drawHeadMap, outlineHead, ranked, strongest, HEAD_LABELS_TOP } from '../open/headmap.js';
import { rowViews, shownKey, sinkMassOf } from './maps.js';

const LEFT = 30, TOP = HEAD_LABELS_TOP;
const fmt = (x) => x.toFixed(3);

/** @param {{ state: object, invalidate: () => void, pick: (layer: number, head: number) => void }} app */
export function createSinksView(app) {
  const root = $('#open-sinks');
  const out = $('#open-sinks-out');
  const btn = $('#open-sinks-btn');
  btn.addEventListener('click', () => { app.state.open.sinks = !app.state.open.sinks; app.invalidate(); });
  out.addEventListener('click', (e) => {
    const b = e.target.closest('button[data-layer]');
    if (b) { app.pick(Number(b.dataset.layer), Number(b.dataset.head)); return; }
    const c = e.target.closest('canvas.rs-sink-map');
    if (!c) return;
    const rect = c.getBoundingClientRect(), cell = Number(c.dataset.cell);
    const layer = Math.floor((e.clientY - rect.top - TOP) / cell), head = Math.floor((e.clientX - rect.left - LEFT) / cell);
    if (layer >= 0 && head >= 0 && layer < Number(c.dataset.layers) && head < Number(c.dataset.heads)) app.pick(layer, head);
  });
  let drawn = null;

  /** The layers × heads map of the sink mass, the five heads with the most, and every number in a table. */
  function massMap(r, key, mass) {
    const { layers: L, heads: H } = r.config;
    const name = t('rs.sinkMap', { i: key, token: r.cols[key] });
    const cell = (l, h) => `<td data-layer="${l}" data-head="${h}" data-value="${mass[l * H + h]}">${fmt(mass[l * H + h])}</td>`;
    const rows = Array.from({ length: L }, (_, l) => `<tr><th scope="row">${escapeHtml(t('mv.layer', { n: l + 1 }))}</th>${
      Array.from({ length: H }, (_, h) => cell(l, h)).join('')}</tr>`).join('');
    const head = Array.from({ length: H }, (_, h) => `<th scope="col">${escapeHtml(t('head', { n: h + 1 }))}</th>`).join('');
    const click = `<br><span class="hint rs-live">${escapeHtml(t('rs.sinkClick'))}</span>`;
    const headName = (x) => `${escapeHtml(t('mv.layer', { n: x.layer + 1 }))} ${escapeHtml(t('head', { n: x.head + 1 }))}`;
    const top = ranked(mass, H).map((x) => `<li><button type="button" class="link" data-layer="${x.layer}" data-head="${x.head}">${headName(x)}</button>
      <span class="open-score">${fmt(x.score)}</span></li>`).join('');
    return `<figure class="rs-sink-fig"><figcaption>${escapeHtml(name)}${click}</figcaption>
      <div class="rs-sink-side"><canvas class="rs-sink-map" role="img"></canvas><ol class="rs-sink-top">${top}</ol></div></figure>
      <details><summary>${escapeHtml(t('open.patchNumbers'))}</summary>
      <div class="open-patch-table"><table><thead><tr><td></td>${head}</tr></thead><tbody>${rows}</tbody></table></div></details>`;
  }

  /** The selected head's row at the selected query: weights, hidden, value norms, value-weighted, a column per key. */
  function rowTable(r, key, v) {
    const T = r.T;
    const mark = (j) => (j === key ? ' class="rs-key"' : '');
    const head = r.cols.map((s, j) => `<th scope="col" title="${escapeAttr(`${j}: ${s}`)}"${mark(j)}>${escapeHtml(s)}<sub>${j}</sub></th>`).join('');
    const line = (kind, label, values) => `<tr><th scope="row">${escapeHtml(label)}</th>${Array.from({ length: T }, (_, j) => (values
      ? `<td data-kind="${kind}" data-key="${j}" data-value="${values[j]}"${mark(j)}>${fmt(values[j])}</td>`
      : `<td data-kind="${kind}" data-key="${j}">…</td>`)).join('')}</tr>`;
    return `<h4>${escapeHtml(t('rs.sinkRowTitle', { l: r.layer + 1, h: r.head + 1, q: r.qi, token: r.rows[r.qi] }))}</h4>
      <p class="hint">${escapeHtml(t('rs.sinkRowText', { i: key }))}</p>
      <div class="rs-row-table" role="region" tabindex="0" aria-label="${escapeAttr(t('rs.sinkRowTable'))}"><table>
      <thead><tr><th scope="row">${escapeHtml(t('rs.key'))}</th>${head}</tr></thead><tbody>
      ${line('weights', t('rs.rowWeights'), v.weights)}${line('hidden', t('rs.rowHidden', { i: key }), v.hidden)}
      ${line('norms', t('rs.rowNorms'), v.norms)}${line('value', t('rs.rowValue'), v.value)}</tbody></table></div>`;
  }

  return {
    name: 'openSinks',
    root,
    wants: (r) => r.kind === 'hf' && r.load.status === 'ready' && !r.empty && !r.translation,
    render(state, r) {
      root.hidden = false;
      const on = !!state.open.sinks;
      btn.setAttribute('aria-pressed', String(on));
      btn.textContent = t(on ? 'rs.sinkHide' : 'rs.sinkShow');
      if (!on) { out.innerHTML = ''; drawn = null; return; }
      const run = r.modelRun; // the sink mass is the model's, whatever view the maps show
      const key = shownKey(state.open.key, r.T);
      const { layers: L, heads: H } = r.config;
      // Three parts, each drawn again only when what it shows changed, so that an open table stays open: the map and
      // its numbers (the run, the key, the words), its picture (colours, the selected head, the width), the row.
      if (drawn?.run !== run || drawn.key !== `${key}|${state.lang}`) {
        const mass = sinkMassOf(run.attention, key, r.config.causal);
        out.innerHTML = `${massMap(r, key, mass)}<div class="rs-sink-row"></div>`;
        drawn = { run, key: `${key}|${state.lang}`, mass, paint: '', row: null };
      }
      const cell = Math.max(8, Math.min(22, Math.floor(((out.clientWidth || 600) - LEFT - 10) / H)));
      const paint = [state.cmap, r.layer, r.head, cell].join('|');
      if (drawn.paint !== paint) {
        const c = out.querySelector('canvas.rs-sink-map');
        Object.assign(c.dataset, { cell, layers: L, heads: H });
        const ctx = drawHeadMap(c, drawn.mass, L, H, { cell, left: LEFT, top: TOP, cmap: state.cmap });
        outlineHead(ctx, r.layer, r.head, { cell, left: LEFT, top: TOP });
        c.setAttribute('aria-label', `${t('rs.sinkMap', { i: key, token: r.cols[key] })}: ${strongest(drawn.mass, L, H)}`);
        drawn.paint = paint;
      }
      const row = [r.layer, r.head, r.qi].join('|');
      if (drawn.row !== row || drawn.norms !== r.valueNorms) {
        out.querySelector('.rs-sink-row').innerHTML = rowTable(r, key, rowViews(run.attention, r.layer, r.head, r.qi, key, r.valueNorms));
        Object.assign(drawn, { row, norms: r.valueNorms });
      }
    },
  };
}
