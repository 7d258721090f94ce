// The model view of an opened model: every layer × head on one canvas at the screen's resolution (not a canvas per
// head), heads that share a key/value head grouped under one bracket; hover names the cell, click picks the head.
import { t, getLang } from '../i18n.js';
import { $, escapeHtml } from '../dom.js';
import { showTip, hideTip } from '../maps/tooltip.js';
import { FONT_FAMILY } from 'attnscope/figures';
import { causalMaps, foldsMap, paintMapScaled } from '../maps/paint.js';

/** The model view's layout in CSS pixels: the row labels' margin, the top margin, the gaps between heads and groups. */
const LEFT = 34, TOP = 18, GAP = 2, GROUP_GAP = 8;

/**
 * The side of one head's map in the model view, in CSS pixels, for `avail` pixels of width. The layer's strip uses
 * it too, so a head looks the same in both.
 */
export function cellSize(avail, heads, kvHeads) {
  const groupsExtra = (kvHeads - 1) * (GROUP_GAP - GAP);
  return Math.max(6, Math.min(72, Math.floor((avail - LEFT - groupsExtra) / heads - GAP)));
}

/** Where each head's column starts, in CSS pixels, for `cell`-wide maps grouped by key/value head. */
function columns(H, group, cell) {
  const xs = [];
  let x = LEFT;
  for (let h = 0; h < H; h++) {
    if (h && h % group === 0) x += GROUP_GAP - GAP;
    xs.push(x);
    x += cell + GAP;
  }
  return { xs, width: x };
}

/** The layers' names, and the heads' (or one bracket per key/value head over the query heads that share it). */
function labels(ctx, c, xs, cell, dpr) {
  const H = c.heads, group = H / c.kvHeads;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.font = `11px ${FONT_FAMILY}`;
  ctx.fillStyle = '#333';
  ctx.textBaseline = 'middle';
  for (let l = 0; l < c.layers; l++) ctx.fillText(t('mv.layerShort', { n: l + 1 }), 2, TOP + l * (cell + GAP) + cell / 2);
  if (group > 1) {
    ctx.strokeStyle = '#595959';
    for (let g = 0; g < c.kvHeads; g++) {
      const x0 = xs[g * group], x1 = xs[g * group + group - 1] + cell;
      ctx.beginPath(); ctx.moveTo(x0, TOP - 3); ctx.lineTo(x0, TOP - 7); ctx.lineTo(x1, TOP - 7); ctx.lineTo(x1, TOP - 3); ctx.stroke();
      if (x1 - x0 > 30) ctx.fillText(`KV${g + 1}`, x0 + 2, TOP - 13);
    }
  } else {
    // Every head's name where it fits over its map, else every k-th (H1, H5, H9 …): the columns stay findable on a phone.
    const every = Math.ceil(ctx.measureText(t('mv.headShort', { n: H })).width / (cell + GAP) + 0.2);
    for (let h = 0; h < H; h += every) ctx.fillText(t('mv.headShort', { n: h + 1 }), xs[h] + 1, TOP - 8);
  }
}

/**
 * The rows of `run`'s maps that are those of the forward run `seq` (of `T` tokens too), bit for bit: all of them for
 * the same run, the Worker's count for an earlier one it still lists (open/worker/model-worker.js), else none.
 */
export function unchangedRows(run, seq, T) {
  if (seq === null || seq === undefined) return 0;
  if (seq === run.seq) return T;
  return run.unchanged?.find(([s]) => s === seq)?.[1] ?? 0;
}

/** @param {{ state: object, invalidate: () => void, pick: (layer: number, head: number) => void }} app */
export function createOpenGridView(app) {
  const root = $('#open-grid');
  const canvas = document.createElement('canvas');
  canvas.setAttribute('role', 'img');
  canvas.tabIndex = 0;
  root.append(canvas);
  let width = 0;
  let shown = null; // { r, cell, xs } of the last drawing, for hover and click
  const base = document.createElement('canvas'); // the maps and labels, off the page (see render)
  let cache = { run: null, key: '', ms: 0, wall: 0 };
  // Each map's pixel maxima as last folded (paintMapScaled's `folded`), for the model's own weights, and per layer
  // the forward run (`seq`) they are of: a pass abandoned between layers leaves each layer's right. A next run of the
  // same length that keeps the first rows of that one (a causal model's text edited near its end: the Worker's
  // `unchanged`) reads only the rows after them; a run of another length moves every pixel row's rows, and is
  // folded whole.
  let kept = null;
  new ResizeObserver(([e]) => {
    const w = Math.floor(e.contentRect.width);
    if (Math.abs(w - width) > 1) { width = w; app.invalidate(); }
  }).observe(root);

  /** The layer, head and cell under (x, y) CSS pixels, or null. */
  function hit(x, y) {
    if (!shown) return null;
    const { r, cell, xs } = shown;
    const layer = Math.floor((y - TOP) / (cell + GAP));
    if (y < TOP || layer >= r.config.layers || (y - TOP) % (cell + GAP) >= cell) return null;
    const head = xs.findIndex((x0) => x >= x0 && x < x0 + cell);
    if (head < 0) return null;
    const i = Math.min(r.T - 1, Math.floor(((y - TOP - layer * (cell + GAP)) / cell) * r.T));
    const j = Math.min(r.T - 1, Math.floor(((x - xs[head]) / cell) * r.T));
    return { layer, head, i, j };
  }
  const point = (e) => { const b = canvas.getBoundingClientRect(); return [e.clientX - b.left, e.clientY - b.top]; };
  canvas.addEventListener('mousemove', (e) => {
    const h = hit(...point(e));
    if (!h) return hideTip();
    const { r } = shown;
    const c = r.config, T = r.T;
    const v = r.run.attention.data[((h.layer * c.heads + h.head) * T + h.i) * T + h.j];
    const kv = Math.floor(h.head / (c.heads / c.kvHeads));
    showTip(e.clientX, e.clientY, `<b>${t('mv.layer', { n: h.layer + 1 })} · ${t('head', { n: h.head + 1 })}</b>`
      + (c.kvHeads < c.heads ? ` · ${escapeHtml(t('open.kvHead', { n: kv + 1 }))}` : '')
      + `<br>${t('tip.cell', { q: `<b>${escapeHtml(r.rows[h.i])}</b><sub>${h.i}</sub>`, k: `<b>${escapeHtml(r.cols[h.j])}</b><sub>${h.j}</sub>` })}<br><span class="tip-num">${v.toFixed(6)}</span>`);
  });
  canvas.addEventListener('mouseleave', hideTip);
  canvas.addEventListener('click', (e) => { const h = hit(...point(e)); if (h) app.pick(h.layer, h.head); });

  return {
    name: 'openGrid',
    root: $('#open-section'),
    wants: (r) => r.kind === 'hf' && !r.empty,
    *render(state, r) {
      const c = r.config, H = c.heads, L = c.layers, T = r.T;
      const group = H / c.kvHeads;
      const avail = Math.max(200, width || root.clientWidth || 600);
      const cell = cellSize(avail, H, c.kvHeads);
      const { xs, width: w } = columns(H, group, cell);
      const dpr = window.devicePixelRatio || 1;
      const h = TOP + L * (cell + GAP);
      // Resized only when the size changes: a resize clears the canvas, which would blank it between pieces.
      if (canvas.width !== Math.ceil(w * dpr) || canvas.height !== Math.ceil(h * dpr)) {
        canvas.width = Math.ceil(w * dpr);
        canvas.height = Math.ceil(h * dpr);
        canvas.style.width = `${w}px`;
        canvas.style.height = `${h}px`;
      }
      const ctx = canvas.getContext('2d');
      // The maps, their labels and brackets depend on the run, the colours, the size and the language only: they are
      // drawn once on a canvas off the page, and a click (another head picked or switched off) copies that picture
      // and draws the marks over it, whatever T and the number of heads.
      const key = `${state.cmap}|${state.scale}|${canvas.width}x${canvas.height}|${cell}|${getLang()}`;
      if (cache.run !== r.run || cache.key !== key) {
        const size = Math.max(1, Math.floor(cell * dpr));
        const whole = new ImageData(canvas.width, canvas.height);
        const px = new Uint32Array(whole.data.buffer);
        const data = r.run.attention.data;
        const causal = causalMaps(c); // keys after their query hold 0: not read
        const own = r.run === r.modelRun && r.modelRun.seq !== undefined; // not a view of research/maps.js
        const keptKey = `${state.scale}|${size}|${T}|${L}x${H}`;
        if (!own || !foldsMap(T, size, state.scale)) kept = null;
        else if (kept?.key !== keptKey) {
          kept = { key: keptKey, seq: new Array(L).fill(null), blocks: new Float32Array(L * H * size * size), rowTops: new Float32Array(L * H * size) };
        }
        const t0 = performance.now();
        let ms = 0, keptRows = T;
        // Painted straight into one image of the whole view (a picture per head, then copied in, measured 2–2.5×
        // slower here), a layer's row of maps per piece: input gets its turn between them.
        for (let l = 0; l < L; l++) {
          const t1 = performance.now();
          const fromRow = kept ? unchangedRows(r.modelRun, kept.seq[l], T) : 0;
          keptRows = Math.min(keptRows, fromRow);
          for (let hh = 0; hh < H; hh++) {
            const m = l * H + hh;
            const maps = kept && { blocks: kept.blocks.subarray(m * size * size, (m + 1) * size * size), rowTops: kept.rowTops.subarray(m * size, (m + 1) * size) };
            paintMapScaled(px, canvas.width, Math.round(xs[hh] * dpr), Math.round((TOP + l * (cell + GAP)) * dpr), size, data, m * T * T, T,
              { cmap: state.cmap, scale: state.scale, causal, folded: maps, fromRow });
          }
          if (kept) kept.seq[l] = r.modelRun.seq;
          ms += performance.now() - t1;
          yield;
        }
        base.width = canvas.width;
        base.height = canvas.height;
        const b = base.getContext('2d');
        b.putImageData(whole, 0, 0);
        // The copy of the whole picture (about 1,200 × 1,200 pixels for GPT-2 small on a 1280-pixel page), the labels,
        // and the copy onto the page in pieces of their own: in one piece they took 12–25 ms at 128 tokens on the
        // loaded 2-core machine (bench:demo --typing).
        yield;
        labels(b, c, xs, cell, dpr);
        cache = { run: r.run, key, ms, wall: performance.now() - t0, keptRows };
        yield;
      }
      // The script time of the maps' pixels, and its wall time with the pieces' waits (bench/demo-open.mjs reads them).
      canvas.dataset.paintMs = cache.ms.toFixed(1);
      canvas.dataset.keptRows = String(cache.keptRows ?? 0); // the rows of every map not read again (tests, bench)
      canvas.dataset.paintWallMs = cache.wall.toFixed(1);
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, canvas.width, canvas.height); // the last marks go (the picture has transparent gaps)
      ctx.drawImage(base, 0, 0);
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      // Heads switched off: a cross; the selected one: an outline.
      ctx.lineWidth = 1.5;
      ctx.strokeStyle = '#d55e00';
      for (const a of r.ablate) {
        const x = xs[a.head], y = TOP + a.layer * (cell + GAP);
        ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(x + cell, y + cell); ctx.moveTo(x + cell, y); ctx.lineTo(x, y + cell); ctx.stroke();
      }
      ctx.strokeStyle = '#000';
      ctx.lineWidth = 2;
      ctx.strokeRect(xs[r.head] - 1, TOP + r.layer * (cell + GAP) - 1, cell + 2, cell + 2);
      shown = { r, cell, xs };
      canvas.setAttribute('aria-label', t('open.gridLabel', { L, H, kv: c.kvHeads, l: r.layer + 1, h: r.head + 1 }));
      $('#open-grid-note').textContent = c.kvHeads < c.heads ? t('open.gqaNote', { H, kv: c.kvHeads, g: group }) : t('open.mhaNote');
      canvas.dataset.drawn = String(performance.now());
    },
  };
}
