// The selected layer of an opened model: its heads' maps side by side on one canvas, the selected head enlarged
// with its tokens, and the head view of that head, thinned to its strongest lines (and saying so).
import { t, getLang } from '../i18n.js';
import { $, escapeHtml } from '../dom.js';
import { HEAD_COLORS, FONT_FAMILY } from 'attnscope/figures';
import { showTip, hideTip } from '../maps/tooltip.js';
import { headImage, mapTop, placeImage } from '../maps/paint.js';
import { cellAt, drawHeatmap, heatmapLayout, paintLegend, prepareCanvas } from '../maps/heatmap.js';
import { cellSize } from './grid.js';

/** At most this many lines in the head view: beyond it the browser's rasterising, not the script, sets the time. */
export const MAX_LINES = 1500;

/** The `max` strongest (query, key, weight) of a T×T map's nonzero weights, strongest first; `of` counts them all. */
export function strongestLines(data, offset, T, max) {
  const n = T * T;
  let of = 0;
  for (let k = 0; k < n; k++) if (data[offset + k] > 0) of++;
  const triple = (k) => [Math.floor(k / T), k % T, data[offset + k]];
  if (of <= max) {
    const all = [];
    for (let k = 0; k < n; k++) if (data[offset + k] > 0) all.push(k);
    return { lines: all.sort((a, b) => data[offset + b] - data[offset + a]).map(triple), of };
  }
  // A threshold from a histogram of the weights, then only the cells above it are sorted: O(T²), not O(T² log T²).
  const bins = new Uint32Array(1024);
  for (let k = 0; k < n; k++) bins[Math.min(1023, Math.floor(data[offset + k] * 1024))]++;
  let b = 1023, count = 0;
  while (b > 0 && count + bins[b] <= max) count += bins[b--];
  const cut = (b + 1) / 1024;
  const keep = [];
  for (let k = 0; k < n; k++) if (data[offset + k] >= cut) keep.push(k);
  return { lines: keep.sort((a, c) => data[offset + c] - data[offset + a]).slice(0, max).map(triple), of };
}

/** @param {{ state: object, invalidate: () => void, pick: (layer: number, head: number) => void, select: (i: number) => void }} app */
export function createOpenLayerView(app) {
  const maps = $('#open-maps');
  const strip = document.createElement('canvas');
  strip.setAttribute('role', 'img');
  const big = document.createElement('canvas');
  big.setAttribute('role', 'img');
  maps.append(strip, big);
  const hv = $('#open-hv');
  hv.setAttribute('role', 'img');
  let width = 0, shown = null;
  // What the enlarged map and the head view last drew: a pass that changes neither (the trace arriving, another
  // query's steps) leaves them as they are.
  let bigKey = null, hvKey = null, linesOf = null;
  const hvBase = { canvas: document.createElement('canvas'), key: null };
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

  /** The shared legend (index.html's .map-tools) for the enlarged map: its colour scale's top, and how it is scaled. */
  function legend(state, top) {
    const note = [t(`scaleNote.${state.scale}`), t('open.scaleEach')].filter(Boolean).join(' ');
    paintLegend($('#legend'), { cmap: state.cmap, top: state.scale === 'row' ? 1 : top, note });
    $('#cmap').value = state.cmap;
    $('#scale').value = state.scale;
  }

  /**
   * The head view of `lines` (strongestLines' result) on its canvas, at most about 600 px tall whatever T: every line
   * faint, the selected query's in the head's colour over them, with its token and its strongest keys' tokens written
   * beside them (all tokens where rows are tall enough).
   */
  function drawHeadView(r, { lines, of }, T, data, offset) {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.min(Math.max(200, width || 600), 560), rowH = Math.min(16, 600 / T), h = rowH * T + 8;
    hv.width = Math.ceil(w * dpr); hv.height = Math.ceil(h * dpr);
    hv.style.width = `${w}px`; hv.style.height = `${h}px`;
    const ctx = hv.getContext('2d');
    const x0 = 120, x1 = w - 120, y = (i) => 4 + (i + 0.5) * rowH;
    const colour = HEAD_COLORS[r.head % HEAD_COLORS.length];
    // Every line, faint, drawn once per run, head and size on a canvas off the page: another query only copies it.
    const baseKey = [lines, hv.width, hv.height];
    if (!hvBase.key || hvBase.key.some((x, i) => x !== baseKey[i])) {
      hvBase.canvas.width = hv.width; hvBase.canvas.height = hv.height;
      const b = hvBase.canvas.getContext('2d');
      b.scale(dpr, dpr);
      b.strokeStyle = colour;
      // Opacity in 32 steps: one path per step, not one stroke per line.
      const levels = Array.from({ length: 32 }, () => []);
      for (const [i, j, v] of lines) levels[Math.min(31, Math.floor(v * 32))].push([i, j]);
      b.lineWidth = T > 128 ? 1 / dpr : 1.5;
      levels.forEach((ls, k) => {
        if (!ls.length) return;
        b.globalAlpha = ((k + 1) / 32) * 0.45;
        b.beginPath();
        for (const [i, j] of ls) { b.moveTo(x0, y(i)); b.lineTo(x1, y(j)); }
        b.stroke();
      });
      hvBase.key = baseKey;
    }
    ctx.drawImage(hvBase.canvas, 0, 0);
    ctx.scale(dpr, dpr);
    ctx.strokeStyle = colour;
    // The selected query: every key it weighs, at full strength.
    const row = data.subarray(offset + r.qi * T, offset + (r.qi + 1) * T);
    ctx.lineWidth = 2;
    for (let j = 0; j < T; j++) {
      if (!(row[j] > 0.005)) continue;
      ctx.globalAlpha = Math.min(1, 0.15 + row[j]);
      ctx.beginPath(); ctx.moveTo(x0, y(r.qi)); ctx.lineTo(x1, y(j)); ctx.stroke();
    }
    ctx.globalAlpha = 1;
    ctx.fillStyle = '#333';
    ctx.textBaseline = 'middle';
    const label = (side, i, s, bold) => {
      ctx.font = `${bold ? 'bold ' : ''}${Math.max(9, Math.min(12, rowH - 1))}px ${FONT_FAMILY}`;
      ctx.textAlign = side === 'q' ? 'right' : 'left';
      ctx.fillText(s, side === 'q' ? x0 - 4 : x1 + 4, y(i));
    };
    if (rowH >= 8) {
      for (let i = 0; i < T; i++) { label('q', i, r.rows[i].slice(0, 14), i === r.qi); label('k', i, r.cols[i].slice(0, 14), false); }
    } else {
      // Rows too thin for text: the query's token and the keys it weighs most, apart enough to read.
      label('q', r.qi, `${r.rows[r.qi].slice(0, 12)} ${r.qi}`, true);
      const best = [...row.keys()].sort((a, b) => row[b] - row[a]).slice(0, 8).filter((j) => row[j] > 0.02);
      const placed = [];
      for (const j of best) {
        if (placed.some((p) => Math.abs(y(p) - y(j)) < 12)) continue;
        placed.push(j);
        label('k', j, `${j} ${r.cols[j].slice(0, 10)}`, false);
      }
    }
    $('#open-hv-note').textContent = lines.length < of
      ? t('open.hvThinned', { n: lines.length.toLocaleString(), total: of.toLocaleString() })
      : t('open.hvAll');
    hv.setAttribute('aria-label', t('open.hvLabel', { l: r.layer + 1, h: r.head + 1, n: lines.length }));
  }

  return {
    name: 'openLayer',
    root: maps,
    wants: (r) => r.kind === 'hf' && !r.empty,
    *render(state, r) {
      // The model view's new selection is painted first: a click's answer waits for no layer maps.
      yield 'frame';
      const c = r.config, H = c.heads, T = r.T;
      const data = r.run.attention.data;
      $('#open-layer-title').textContent = t('open.layerTitle', { l: r.layer + 1, h: r.head + 1 });
      const dpr = window.devicePixelRatio || 1;
      const avail = Math.max(200, width || 600);
      // The layer's heads at the model view's cell size, each picture painted once per run (headImage): going back to
      // a layer, or picking another of its heads, paints nothing again.
      const small = Math.max(12, cellSize(avail, H, c.kvHeads));
      const size = Math.floor(small * dpr);
      if (strip.width !== Math.ceil(H * (small + 4) * dpr) || strip.height !== Math.ceil(small * dpr)) {
        strip.width = Math.ceil(H * (small + 4) * dpr); strip.height = Math.ceil(small * dpr);
        strip.style.width = `${H * (small + 4)}px`; strip.style.height = `${small}px`;
      }
      const ctx = strip.getContext('2d');
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      const whole = new ImageData(strip.width, strip.height);
      const px = new Uint32Array(whole.data.buffer);
      for (let h = 0; h < H; h++) placeImage(px, strip.width, Math.round(h * (small + 4) * dpr), 0, headImage(r.run, r.layer, h, size, { cmap: state.cmap, scale: state.scale }));
      ctx.putImageData(whole, 0, 0);
      ctx.scale(dpr, dpr);
      ctx.strokeStyle = '#000'; ctx.lineWidth = 2;
      ctx.strokeRect(r.head * (small + 4) + 1, 1, small - 2, small - 2);
      strip.setAttribute('aria-label', t('open.stripLabel', { l: r.layer + 1, H }));
      const offset = (r.layer * H + r.head) * T * T;
      const key = [r.run, r.layer, r.head, r.qi, state.cmap, state.scale, width, window.devicePixelRatio, getLang()];
      const same = (k) => k && k.every((x, i) => x === key[i]);
      if (!same(bigKey)) {
        yield 'paint';
        const top = mapTop(state.scale, data, offset, T);
        const layout = drawBig(state, r, data, offset, T, top);
        legend(state, top);
        big.setAttribute('aria-label', t('open.bigLabel', { l: r.layer + 1, h: r.head + 1, T }));
        shown = { r, small, layout };
        bigKey = key;
      } else shown = { ...shown, r, small };
      // The head view does not depend on the colours; the strongest lines not on the query either.
      const hk = [r.run, r.layer, r.head, r.qi, width, window.devicePixelRatio, getLang()];
      if (hvKey && hvKey.every((x, i) => x === hk[i])) return;
      yield 'paint';
      if (linesOf?.key.some((x, i) => x !== hk[i] && i !== 3) ?? true) linesOf = { key: hk, lines: strongestLines(data, offset, T, MAX_LINES) };
      yield; // the lines' choice and their drawing in two pieces
      drawHeadView(r, linesOf.lines, T, data, offset);
      hvKey = hk;
    },
  };
}
