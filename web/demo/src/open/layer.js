// The selected layer of an opened model: its heads' maps side by side on one canvas, the selected head enlarged
// with its tokens, and the head view of that head (maps/headview.js, the one every model's page shows).
import { t, getLang } from '../i18n.js';
import { $, escapeHtml } from '../dom.js';
import { showTip, hideTip } from '../maps/tooltip.js';
import { causalMaps, headImage, mapTop, placeImage } from '../maps/paint.js';
import { cellAt, drawHeatmap, heatmapLayout, paintLegend, prepareCanvas } from '../maps/heatmap.js';
import { HeadView } from '../maps/headview.js';
import { cellSize } from './grid.js';
import { scaleNote } from '../maps/scales.js';

/** @param {{ state: object, invalidate: () => void, pick: (layer: number, head: number) => void, select: (i: number) => void }} app */
export function createOpenLayerView(app) {
  const maps = $('#open-maps');
  const strip = document.createElement('canvas');
  strip.setAttribute('role', 'img');
  const big = document.createElement('canvas');
  big.setAttribute('role', 'img');
  maps.append(strip, big);
  // One head: no toggles; a query picked on it is the page's selection, as a click on the enlarged map.
  const hv = new HeadView($('#open-hv'), { onSelect: (i) => app.select(i) });
  let width = 0, shown = null;
  // What the strip, the enlarged map and the head view last drew: a pass that changes none of them (the trace
  // arriving, another query's steps, another tool's reply) leaves them as they are.
  let stripKey = null, bigKey = null, hvKey = null;
  new ResizeObserver(([e]) => {
    const w = Math.floor(e.contentRect.width);
    if (Math.abs(w - width) > 1) { width = w; app.invalidate(); }
  }).observe(maps);

  const point = (el, e) => { const b = el.getBoundingClientRect(); return [e.clientX - b.left, e.clientY - b.top]; };
  strip.addEventListener('click', (e) => {
    if (!shown) return;
    const h = Math.floor(point(strip, e)[0] / (shown.small + 4));
    if (h >= 0 && h < shown.r.config.heads) app.pick(shown.r.layer, h);
  });
  big.addEventListener('mousemove', (e) => {
    if (!shown) return;
    const { r, layout } = shown;
    const hit = cellAt(layout, ...point(big, e));
    if (!hit) return hideTip();
    const { i, j } = hit;
    const v = r.run.attention.data[((r.layer * r.config.heads + r.head) * r.T + i) * r.T + j];
    showTip(e.clientX, e.clientY, `${t('tip.cell', { q: `<b>${escapeHtml(r.rows[i])}</b><sub>${i}</sub>`, k: `<b>${escapeHtml(r.cols[j])}</b><sub>${j}</sub>` })}<br><span class="tip-num">${v.toFixed(6)}</span>`);
  });
  big.addEventListener('mouseleave', hideTip);
  big.addEventListener('click', (e) => {
    if (!shown) return;
    const hit = cellAt(shown.layout, ...point(big, e));
    if (hit) app.select(hit.i);
  });

  /**
   * The selected head enlarged, as every model's maps are drawn (maps/heatmap.js): tokens on the axes where they fit,
   * else indices at a round step with the selected query's token, the token of any cell on hover.
   */
  function drawBig(state, r, data, offset, T, top) {
    const layout = heatmapLayout(r.rows, r.cols, { width: Math.min(Math.max(200, width || 600), 720), maxCell: 24, selected: r.qi });
    const ctx = prepareCanvas(big, layout.width, layout.height);
    drawHeatmap(ctx, layout, { data, offset, rows: r.rows, cols: r.cols, vmax: top, scale: state.scale, cmap: state.cmap, selectedRow: r.qi });
    return layout;
  }

  /**
   * The shared legend (index.html's .map-tools) for the enlarged map: its colour scale's top, and how it is scaled
   * (`firstKey`: the token of the first column, which the 'rest' scale leaves out).
   */
  function legend(state, top, firstKey) {
    const note = [scaleNote(state.scale, firstKey), t('open.scaleEach')].filter(Boolean).join(' ');
    paintLegend($('#legend'), { cmap: state.cmap, top: state.scale === 'row' ? 1 : top, note });
    $('#cmap').value = state.cmap;
    $('#scale').value = state.scale;
  }

  return {
    name: 'openLayer',
    root: maps,
    wants: (r) => r.kind === 'hf' && !r.empty,
    *render(state, r) {
      const c = r.config, H = c.heads, T = r.T;
      const data = r.run.attention.data;
      const dpr = window.devicePixelRatio || 1;
      const avail = Math.max(200, width || 600);
      // The layer's heads at the model view's cell size, each picture painted once per run (headImage): going back to
      // a layer, or picking another of its heads, paints nothing again.
      const small = Math.max(12, cellSize(avail, H, c.kvHeads));
      // A pass that changes none of the strip, the enlarged map and the head view (a reply of another tool, a sweep's
      // end) touches nothing: a canvas drawn again, even with the same picture, has the browser paint the page again.
      const stripK = [r.run, r.layer, r.head, state.cmap, state.scale, small, dpr, getLang()];
      const key = [r.run, r.layer, r.head, r.qi, state.cmap, state.scale, width, window.devicePixelRatio, getLang()];
      const hk = [r.run, r.layer, r.head, r.qi, getLang()];
      const same = (k, now) => k && k.every((x, i) => x === now[i]);
      if (same(stripKey, stripK) && same(bigKey, key) && same(hvKey, hk)) { shown = { ...shown, r, small }; return; }
      // The model view's new selection is painted first: a click's answer waits for no layer maps.
      yield 'frame';
      if (!same(stripKey, stripK)) {
        $('#open-layer-title').textContent = t('open.layerTitle', { l: r.layer + 1, h: r.head + 1 });
        const size = Math.floor(small * dpr);
        if (strip.width !== Math.ceil(H * (small + 4) * dpr) || strip.height !== Math.ceil(small * dpr)) {
          strip.width = Math.ceil(H * (small + 4) * dpr); strip.height = Math.ceil(small * dpr);
          strip.style.width = `${H * (small + 4)}px`; strip.style.height = `${small}px`;
        }
        const ctx = strip.getContext('2d');
        ctx.setTransform(1, 0, 0, 1, 0, 0);
        const whole = new ImageData(strip.width, strip.height);
        const px = new Uint32Array(whole.data.buffer);
        for (let h = 0; h < H; h++) placeImage(px, strip.width, Math.round(h * (small + 4) * dpr), 0, headImage(r.run, r.layer, h, size, { cmap: state.cmap, scale: state.scale, causal: causalMaps(r.config) }));
        ctx.putImageData(whole, 0, 0);
        ctx.scale(dpr, dpr);
        ctx.strokeStyle = '#000'; ctx.lineWidth = 2;
        ctx.strokeRect(r.head * (small + 4) + 1, 1, small - 2, small - 2);
        strip.setAttribute('aria-label', t('open.stripLabel', { l: r.layer + 1, H }));
        stripKey = stripK;
      }
      const offset = (r.layer * H + r.head) * T * T;
      if (!same(bigKey, key)) {
        yield 'paint';
        const top = mapTop(state.scale, data, offset, T);
        const layout = drawBig(state, r, data, offset, T, top);
        legend(state, top, r.cols[0]);
        big.setAttribute('aria-label', t('open.bigLabel', { l: r.layer + 1, h: r.head + 1, T }));
        shown = { r, small, layout };
        bigKey = key;
      } else shown = { ...shown, r, small };
      // The head view does not depend on the colours (nor on the width: it follows its own).
      if (same(hvKey, hk)) return;
      yield 'paint';
      yield* hv.update({ rows: r.rows, cols: r.cols, weights: data, offset, H: 1, first: r.head, off: [], selected: r.qi });
      hvKey = hk;
    },
  };
}
