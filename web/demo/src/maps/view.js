// The heat maps: the average and one map per head of the current layer, each with a text alternative (the
// strongest weights as its label, and the full table on demand), hover values, the enlarged view and exports. A row
// clicked on any of them (or ↑ ↓ on a focused map) is the selected query, as the chips and the scrubber make it.
import { t } from '../i18n.js';
import { $, canvasPoint, escapeHtml } from '../dom.js';
import { HEAD_COLORS } from './colors.js';
import { heatmapLayout, drawHeatmap, prepareCanvas, cellAt, rowAt, paintLegend } from './heatmap.js';
import { mapSpec } from './mapspec.js';
import { headName, namedTitle, strongest } from '../heads/names.js';
import { showTip, hideTip, moveTipInto } from './tooltip.js';

const whichOf = (el) => (el.dataset.head === 'avg' ? 'avg' : Number(el.dataset.head));

/** The values of one map as an HTML table (rows: queries, columns: keys). */
export function valuesTable(spec) {
  const S = spec.cols.length;
  let html = `<table class="values"><caption>${escapeHtml(spec.title)}</caption><thead><tr><th scope="col">${escapeHtml(t('table.corner'))}</th>`;
  for (const c of spec.cols) html += `<th scope="col">${escapeHtml(c)}</th>`;
  html += '</tr></thead><tbody>';
  spec.rows.forEach((r, i) => {
    html += `<tr><th scope="row">${escapeHtml(r)}</th>`;
    for (let j = 0; j < S; j++) html += `<td>${spec.data[spec.offset + i * S + j].toFixed(3)}</td>`;
    html += '</tr>';
  });
  return html + '</tbody></table>';
}

/**
 * @param {{ state: object, result: () => object, invalidate: () => void, exportMap: (which: 'avg' | number, kind: string) => void }} app
 */
export function createMapsView(app) {
  const grid = $('#maps');
  const cards = []; // { which, card, canvas, layout, hover }
  let zoomed = null, zoomHover = null, zoomLayout = null;
  const current = () => app.result();

  function spec(which) { return mapSpec(app.state, current(), which); }

  function draw(m) {
    const r = current();
    const width = m.card.querySelector('.canvas-wrap').clientWidth || 240;
    m.layout = heatmapLayout(r.rows, r.cols, { width, maxCell: m.which === 'avg' ? 40 : 24, selected: r.qi });
    // Which tokens carry a label (every one, every step-th, or none), for the tests.
    Object.assign(m.canvas.dataset, { labelStep: m.layout.showLabels ? m.layout.step : 0, labelLeft: m.layout.left, labelTop: m.layout.top });
    const ctx = prepareCanvas(m.canvas, m.layout.width, m.layout.height);
    drawHeatmap(ctx, m.layout, { ...spec(m.which), hover: m.hover });
  }

  function drawZoom() {
    const r = current();
    const which = zoomed;
    if (!r || r.empty || (which !== 'avg' && which >= r.H)) { $('#zoom').close(); return; }
    const s = spec(which);
    $('#zoom-title').textContent = s.title;
    $('#zoom-sub').textContent = s.subtitle.replace(/^attnscope · /, '');
    paintLegend($('#zoom .legend'), { cmap: app.state.cmap, top: s.vmax });
    const canvas = $('#zoom-canvas');
    const width = Math.min(920, window.innerWidth - 80);
    zoomLayout = heatmapLayout(r.rows, r.cols, { width, maxCell: 44, fontPx: 13, minLabelCell: 14, selected: r.qi });
    canvas.setAttribute('aria-label', `${s.title}. ${t('a11y.strongest')}: ${strongest(s.data, s.offset, s.rows, s.cols)}`);
    const ctx = prepareCanvas(canvas, zoomLayout.width, zoomLayout.height);
    drawHeatmap(ctx, zoomLayout, { ...s, hover: zoomHover });
  }

  function openZoom(which) {
    zoomed = which;
    const dlg = $('#zoom');
    moveTipInto(dlg);
    if (!dlg.open) dlg.showModal();
    drawZoom();
  }

  function tooltipHtml(which, i, j) {
    const r = current();
    const v = which === 'avg' ? r.average[i * r.S + j] : r.weights.data[(which * r.L + i) * r.S + j];
    const name = which === 'avg' ? t('average') : t('head', { n: which + 1 });
    return `<b>${escapeHtml(name)}</b><br>${t('tip.cell', { q: `<b>${escapeHtml(r.rows[i])}</b><sub>${i}</sub>`, k: `<b>${escapeHtml(r.cols[j])}</b><sub>${j}</sub>` })}<br><span class="tip-num">${v.toFixed(6)}</span>`;
  }

  /** The selected query: the same state the chips and the scrubber set (the URL and the steps panel follow it). */
  function pickQuery(i) {
    const r = current();
    if (!r || r.empty || i < 0 || i >= r.L || i === app.state.query) return;
    app.state.query = i;
    app.invalidate();
  }

  // ------------------------------------------------------------ events
  grid.addEventListener('click', (e) => {
    const card = e.target.closest('.map-card');
    if (!card) return;
    const exp = e.target.closest('[data-export]');
    const canvas = e.target.closest('canvas');
    if (exp) app.exportMap(whichOf(card), exp.dataset.export);
    else if (e.target.closest('[data-zoom]')) openZoom(whichOf(card));
    else if (canvas) {
      // A row (its cells or its label) picks that query.
      const m = cards.find((x) => x.canvas === canvas);
      const i = m?.layout ? rowAt(m.layout, ...canvasPoint(canvas, e)) : null;
      if (i != null) pickQuery(i);
    }
  });
  grid.addEventListener('dblclick', (e) => {
    const card = e.target.closest('.map-card');
    if (card && e.target.closest('canvas')) openZoom(whichOf(card));
  });
  grid.addEventListener('keydown', (e) => {
    const card = e.target.closest('.map-card');
    if (!card || !e.target.matches('canvas')) return;
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      openZoom(whichOf(card));
    } else if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
      // Row by row, as on the scrubber; the focus stays on this map.
      e.preventDefault();
      const r = current();
      if (!r || r.empty) return;
      // From the query asked for last (the state), not the one drawn: keys faster than the page each move a row.
      const at = app.state.query >= 0 && app.state.query < r.L ? app.state.query : r.qi;
      pickQuery(Math.max(0, Math.min(r.L - 1, at + (e.key === 'ArrowUp' ? -1 : 1))));
    }
  });
  grid.addEventListener('toggle', (e) => {
    // The full table is built when someone opens it, from the maps as they are then.
    const det = e.target;
    if (!det.matches?.('details.map-values') || !det.open) return;
    det.querySelector('.values-body').innerHTML = valuesTable(spec(whichOf(det.closest('.map-card'))));
  }, true);
  grid.addEventListener('mousemove', (e) => {
    const canvas = e.target.closest('canvas');
    const m = cards.find((x) => x.canvas === canvas);
    for (const other of cards) if (other !== m && other.hover) { other.hover = null; draw(other); }
    const r = current();
    if (!m || !r || r.empty) return hideTip();
    const c = cellAt(m.layout, ...canvasPoint(canvas, e));
    if (c?.i !== m.hover?.i || c?.j !== m.hover?.j) { m.hover = c; draw(m); }
    c ? showTip(e.clientX, e.clientY, tooltipHtml(m.which, c.i, c.j)) : hideTip();
  });
  grid.addEventListener('mouseleave', () => {
    hideTip();
    for (const m of cards) if (m.hover) { m.hover = null; draw(m); }
  });

  const zoom = $('#zoom');
  $('#zoom-close').addEventListener('click', () => zoom.close());
  zoom.addEventListener('click', (e) => {
    if (e.target === zoom) zoom.close(); // a click on the backdrop
    const exp = e.target.closest('[data-export]');
    if (exp) app.exportMap(zoomed, exp.dataset.export);
  });
  zoom.addEventListener('close', () => { zoomed = null; zoomHover = null; hideTip(); moveTipInto(document.body); });
  const zc = $('#zoom-canvas');
  zc.addEventListener('mousemove', (e) => {
    const c = cellAt(zoomLayout, ...canvasPoint(zc, e));
    if (c?.i !== zoomHover?.i || c?.j !== zoomHover?.j) { zoomHover = c; drawZoom(); }
    c ? showTip(e.clientX, e.clientY, tooltipHtml(zoomed, c.i, c.j)) : hideTip();
  });
  zc.addEventListener('mouseleave', () => { zoomHover = null; hideTip(); drawZoom(); });
  zc.addEventListener('click', (e) => {
    const i = rowAt(zoomLayout, ...canvasPoint(zc, e));
    if (i != null) pickQuery(i);
  });

  return {
    name: 'maps',
    root: $('#maps-section'),
    wants: (r) => !r.entry,
    openZoom,
    // A generator: the scheduler may let input in between two maps.
    *render(state, r) {
      if (r.empty) {
        grid.replaceChildren();
        cards.length = 0;
        if (zoomed != null && zoom.open) zoom.close();
        return;
      }
      const want = ['avg', ...Array(r.H).keys()];
      if (cards.length !== want.length) {
        grid.replaceChildren();
        cards.length = 0;
        for (const which of want) {
          const card = document.createElement('figure');
          card.className = 'map-card' + (which === 'avg' ? ' avg' : '');
          card.dataset.head = which;
          card.innerHTML = `<figcaption><span class="swatch"></span><span class="map-title"></span>
            <span class="map-actions"><button type="button" class="mini" data-zoom></button><button type="button" class="mini" data-export="png">PNG</button><button type="button" class="mini" data-export="svg">SVG</button></span></figcaption>
            <p class="map-badge" hidden></p><div class="canvas-wrap"><canvas tabindex="0" role="img"></canvas></div><div class="axes-note"></div>
            <details class="map-values"><summary></summary><div class="values-body" tabindex="0"></div></details>`;
          grid.append(card);
          cards.push({ which, card, canvas: card.querySelector('canvas'), layout: null, hover: null });
        }
      }
      for (const m of cards) {
        const avg = m.which === 'avg';
        const s = spec(m.which);
        m.card.style.setProperty('--head', avg ? '#555' : HEAD_COLORS[m.which % HEAD_COLORS.length]);
        m.card.querySelector('.map-title').textContent = avg ? t('average') : t('head', { n: m.which + 1 });
        const named = avg ? null : r.named?.[m.which];
        const badge = m.card.querySelector('.map-badge');
        badge.hidden = !named;
        badge.textContent = named ? `${headName(named)} · ${named.score.toFixed(2)}` : '';
        badge.title = named ? namedTitle(named) : '';
        m.card.classList.toggle('named', !!named);
        const name = avg ? t('average') : t('head', { n: m.which + 1 });
        const zoomBtn = m.card.querySelector('[data-zoom]');
        zoomBtn.textContent = t('map.enlarge');
        zoomBtn.setAttribute('aria-label', `${name}: ${t('map.enlargeTitle')}`);
        zoomBtn.title = t('map.enlargeTitle');
        m.card.querySelector('[data-export="png"]').title = t('export.pngTitle');
        m.card.querySelector('[data-export="svg"]').title = t('export.svgTitle');
        m.card.querySelector('[data-export="png"]').setAttribute('aria-label', `${name}: ${t('export.pngTitle')}`);
        m.card.querySelector('[data-export="svg"]').setAttribute('aria-label', `${name}: ${t('export.svgTitle')}`);
        m.card.querySelector('.axes-note').textContent = t('axes');
        m.card.querySelector('.map-values summary').textContent = t('a11y.table');
        const det = m.card.querySelector('.map-values');
        if (det.open) det.querySelector('.values-body').innerHTML = valuesTable(s);
        m.canvas.title = t('map.pick');
        m.canvas.setAttribute('aria-label', `${s.title}. ${t('a11y.strongest')}: ${strongest(s.data, s.offset, s.rows, s.cols)}. ${t('map.pickKeys')}`);
        draw(m);
        yield;
      }
      if (zoomed != null && zoom.open) drawZoom();
    },
  };
}
