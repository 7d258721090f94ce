// The steps panel of an opened model, from the package's trace(): the numbers the forward pass itself recorded for
// one layer, head and query. The model's own steps first (its input, its norm, q, RoPE a step of its own: q and the
// strongest key before and after rotation), then the table every model's panel shares (steps/draw.js), worked
// out again in float64 from the traced q, keys and values and checked against the forward pass, then the head's
// output.
import { t } from '../i18n.js';
import { $, canvasPoint, escapeHtml } from '../dom.js';
import { headSteps } from '../steps/float64.js';
import { maxAbs, renderHeadSteps, stepsTooltip, stripCanvas, vectorCells } from '../steps/draw.js';
import { showTip, hideTip } from '../maps/tooltip.js';

const fmt = (x) => (Math.abs(x) >= 1000 || (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(2) : x.toFixed(4));
const norm = (data, from, n) => { let s = 0; for (let i = 0; i < n; i++) s += data[from + i] ** 2; return Math.sqrt(s); };
/** Vectors up to this long are cells with their numbers; longer ones a strip of colours, the numbers on hover. */
const CELLS = 64;

export function createOpenTraceView() {
  const root = $('#open-steps');
  let width = 0;
  new ResizeObserver(([e]) => { width = Math.floor(e.contentRect.width); }).observe(root);
  root.addEventListener('mousemove', (e) => {
    const c = e.target.closest('canvas.strip');
    if (!c) return hideTip();
    const html = stepsTooltip(c, canvasPoint(c, e)[0]);
    html ? showTip(e.clientX, e.clientY, html) : hideTip();
  });
  root.addEventListener('mouseleave', hideTip);
  // What the panel shows: every other click on the tab (the logit lens's button, a research reply) invalidates the
  // page too, and rebuilding the panel from the same trace took about a quarter of a second there.
  let shown = null;

  return {
    name: 'openTrace',
    root,
    wants: (r) => r.kind === 'hf' && !r.empty,
    *render(state, r) {
      if (r.traceError) { root.innerHTML = `<p class="error">${escapeHtml(r.traceError.message)}</p>`; shown = null; return; }
      const tr = r.trace;
      // While the next trace is computed the last one stays, dimmed and marked busy: replacing it by a line would
      // change the page's height, and lay out and repaint the whole page on every click.
      const busy = !tr && !!root.querySelector('ol');
      root.setAttribute('aria-busy', String(busy));
      root.style.opacity = busy ? '0.5' : '';
      if (busy) return;
      if (!tr) { root.innerHTML = `<p class="hint">${escapeHtml(t('open.tracing'))}</p>`; shown = null; return; }
      if (shown && shown.tr === tr && shown.rows === r.rows && shown.lang === state.lang && shown.width === width) return;
      shown = null; // until the new panel is whole (a newer state may abandon this one half-way)
      const c = r.config, E = c.hiddenSize, d = c.headDim, T = tr.ids.length, q = tr.query;
      const tok = (i) => `<b>${escapeHtml(r.rows[i])}</b><sub>${i}</sub>`;
      const box = document.createElement('div'); // off the document until it is whole
      const add = (html) => box.insertAdjacentHTML('beforeend', html);
      const strips = [];
      /** A vector as cells with numbers (short) or a strip of colours (long, drawn below). */
      const vec = (data, from = 0, n = data.length) => {
        const values = data.subarray(from, from + n);
        if (n <= CELLS) return vectorCells(values, maxAbs(values), 'small');
        strips.push(values);
        return `<canvas class="strip" data-s="${strips.length - 1}"></canvas>`;
      };
      // Position 0 is not rotated at all: the RoPE step shows the strongest key after it (when there is one).
      let turned = q > 0 ? 1 : 0;
      for (let j = 1; j < T; j++) if (tr.visible[j] && tr.weights.data[j] > tr.weights.data[turned]) turned = j;
      // The model's own map (r.modelRun), not a view of it the maps may show.
      const mapRow = r.modelRun.attention.data.subarray(((tr.layer * c.heads + tr.head) * T + q) * T, ((tr.layer * c.heads + tr.head) * T + q + 1) * T);
      let diff = 0;
      for (let j = 0; j < T; j++) diff = Math.max(diff, Math.abs(mapRow[j] - tr.weights.data[j]));
      const rope = c.positions.kind === 'rope';
      const visible = tr.visible.reduce((a, b) => a + b, 0);
      const item = (i, key, vars, nums = '') => `<li data-step="${i}"><p>${t(key, vars)}</p>${nums ? `<div class="nums">${nums}</div>` : ''}</li>`;
      const before = [
        ['open.st.input', { q: tok(q), l: tr.layer + 1 }, vec(tr.layerInput.data, q * E, E)],
        ['open.st.norm', { norm: c.postNorm ? t('open.postNorm') : c.norm === 'rmsNorm' ? 'RMSNorm' : 'LayerNorm' }, vec(tr.attentionInput.data, q * E, E)],
        ['open.st.q', { d, kv: tr.kvHead + 1 }, vec(tr.queryRaw.data)],
        ...(rope ? [['open.st.rope', { theta: c.positions.theta, k: tok(turned) },
          `<div class="vec-row"><span class="vec-label">q</span>${vec(tr.queryRaw.data)}</div><div class="vec-row"><span class="vec-label">→</span>${vec(tr.queryVector.data)}</div>`
          + `<div class="vec-row"><span class="vec-label">k<sub>${turned}</sub></span>${vec(tr.keysRaw.data, turned * d, d)}</div><div class="vec-row"><span class="vec-label">→</span>${vec(tr.keys.data, turned * d, d)}</div>`
          + `<p>${escapeHtml(t('open.st.ropeNorm', { a: fmt(norm(tr.queryRaw.data, 0, d)), b: fmt(norm(tr.queryVector.data, 0, d)) }))}</p>`]] : []),
        ...(c.qkNorm ? [['open.st.qkNorm', {}, vec(tr.queryVector.data)]] : []),
        ['open.st.scale', { s: fmt(tr.scale), d }],
        ['open.st.mask', { v: visible, n: T }],
      ];
      add(`<ol class="open-steps-list">${before.map(([key, vars, nums], i) => item(i, key, vars, nums)).join('')}</ol>`);
      yield;
      // The shared table, from the traced q, keys and values, in float64: its weights are checked against the map's.
      const masked = Uint8Array.from(tr.visible, (v) => (v ? 0 : 1));
      const hd = headSteps({ q: tr.queryVector.data, K: tr.keys.data, V: tr.values.data, stride: d, base: 0, d, S: T, scale: tr.scale, masked, softcap: tr.softcap ?? 0 });
      const { rest } = yield* renderHeadSteps(add, box, {
        hd, q: tr.queryVector.data, K: tr.keys.data, V: tr.values.data, stride: d, base: 0, d, S: T, qi: q, head: tr.head,
        tok: r.rows[q], rows: r.rows, cols: r.cols, fwdWeights: tr.weights.data, scaleText: fmt(tr.scale),
      });
      add(`<ol class="open-steps-list" start="${before.length + 1}">${[
        item(before.length, 'open.st.check', { diff: diff.toExponential(1) }),
        item(before.length + 1, 'open.st.context', { d }, vec(tr.context.data)),
        item(before.length + 2, 'open.st.out', { E }, vec(tr.headOutput.data)),
      ].join('')}</ol>`);
      yield;
      const w = Math.max(120, Math.min(860, (width || 600) - 110));
      for (const s of box.querySelectorAll('canvas.strip[data-s]')) stripCanvas(s, strips[Number(s.dataset.s)], maxAbs(strips[Number(s.dataset.s)]), 1, w);
      root.replaceChildren(...box.childNodes);
      // Which head and query the panel shows (the tests wait for them; a dimmed panel still shows the last ones).
      root.dataset.layer = String(tr.layer);
      root.dataset.head = String(tr.head);
      root.dataset.query = String(q);
      root.dataset.diff = String(diff);
      yield* rest(() => true);
      shown = { tr, rows: r.rows, lang: state.lang, width };
    },
  };
}
