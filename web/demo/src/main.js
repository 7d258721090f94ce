// The demo page: wires the inputs, the model and the views together and recomputes on every keystroke.
import { init, MultiHeadAttention } from 'attnscope';
import { tokenize, MAX_TOKENS } from './tokenize.js';
import { createSeededModel, createModelFromStateDict, tableEmbedding, seededTokenVector, sinusoidalPositions, positionalEmbedding } from './model.js';
import { explainQuery } from './steps.js';
import { HEAD_COLORS, gradientCss, divergingGradientCss } from './colors.js';
import { heatmapLayout, drawHeatmap, prepareCanvas, cellAt, heatmapPng, heatmapSvg } from './heatmap.js';
import { HeadView, escapeHtml } from './headview.js';
import { renderSteps, stepsTooltip, matrixTooltip } from './stepsview.js';
import { t, setLang, browserLang } from './i18n.js';
import { EMBED_SIZES, EXAMPLES, defaultState, headChoices, parseHash, toHash } from './state.js';

const $ = (sel) => document.querySelector(sel);
/** Mouse position in the canvas's own CSS pixels (it may be drawn smaller by max-width: 100%). */
function canvasPoint(canvas, e) {
  const rect = canvas.getBoundingClientRect();
  const k = (parseFloat(canvas.style.width) || rect.width) / (rect.width || 1);
  return [(e.clientX - rect.left) * k, (e.clientY - rect.top) * k];
}
const state = parseHash(location.hash, defaultState(browserLang()));
if (!location.hash.includes('text=') && !location.hash.includes('lang=')) state.text = state.lang === 'zh' ? EXAMPLES.zh : EXAMPLES.en;

let model = null;
let modelKey = '';
let last = null; // the most recent computation, also exposed for tests
const view = { maps: [], zoomed: null };

// ---------------------------------------------------------------- tooltip
const tip = $('#tooltip');
function showTip(x, y, html) {
  tip.innerHTML = html;
  tip.hidden = false;
  const r = tip.getBoundingClientRect();
  const left = Math.min(window.innerWidth - r.width - 8, x + 14);
  const top = y + 18 + r.height > window.innerHeight ? y - r.height - 10 : y + 18;
  tip.style.transform = `translate(${Math.max(4, left)}px, ${Math.max(4, top)}px)`;
}
const hideTip = () => { tip.hidden = true; };

// ---------------------------------------------------------------- model
function ensureModel() {
  const key = `${state.embedDim}/${state.numHeads}/${state.seed}`;
  if (key !== modelKey) {
    model?.dispose();
    model = createSeededModel({ embedDim: state.embedDim, numHeads: state.numHeads, seed: state.seed });
    modelKey = key;
  }
  return model;
}

const PRONOUNS = new Set(['it', 'he', 'she', 'they', 'him', 'her', 'them', 'its', '它', '他', '她', 'il', 'elle']);
function defaultQuery(tokens) {
  const p = tokens.findIndex((s) => PRONOUNS.has(s.toLowerCase()));
  if (p >= 0) return p;
  for (let i = tokens.length - 1; i >= 0; i--) if (/[\p{L}\p{N}]/u.test(tokens[i])) return i;
  return Math.max(0, tokens.length - 1);
}

// ---------------------------------------------------------------- compute + render
function compute() {
  const cross = state.mode === 'cross';
  const q = tokenize(cross ? state.tgt : state.text);
  const k = cross ? tokenize(state.src) : q;
  const rows = q.tokens, cols = k.tokens;
  const m = ensureModel();
  const causal = !cross && state.causal;
  if (!rows.length || !cols.length) return { rows, cols, q, k, empty: true, causal, cross };
  const { query, key, output, weights, ms } = m.run(rows, cross ? cols : null, { causal });
  const H = m.numHeads, L = rows.length, S = cols.length;
  const average = new Float32Array(L * S);
  for (let h = 0; h < H; h++) for (let x = 0; x < L * S; x++) average[x] += weights.data[h * L * S + x] / H;
  const qi = state.query >= 0 && state.query < L ? state.query : defaultQuery(rows);
  return { rows, cols, q, k, cross, causal, query, key, output, weights, average, ms, H, L, S, qi, E: m.embedDim, d: m.headDim };
}

function update() {
  const t0 = performance.now();
  const r = compute();
  renderTokens(r);
  renderControls(r);
  $('#empty').hidden = !r.empty;
  if (r.empty) {
    $('#maps').replaceChildren();
    view.maps = [];
    $('#headview').hidden = true;
    $('#steps').replaceChildren();
    $('#timing').textContent = '';
    last = { ...r };
    exposeForTests();
    scheduleUrl();
    return;
  }
  $('#headview').hidden = false;
  last = r;
  renderMaps(r);
  headView.update({ rows: r.rows, cols: r.cols, weights: r.weights.data, H: r.H, off: state.off.filter((h) => h < r.H), selected: r.qi });
  const timing = $('#timing');
  timing.textContent = t('timing', { ms: r.ms.toFixed(2) });
  timing.dataset.ms = r.ms.toFixed(4);
  scheduleUrl();
  // The walkthrough (float64 re-computation + a long table) goes in the next frame, so the maps
  // are on screen first and fast typing skips straight to the latest text.
  const firstMs = performance.now() - t0;
  cancelAnimationFrame(stepsFrame);
  stepsFrame = requestAnimationFrame(() => {
    if (last !== r) return;
    const t1 = performance.now();
    renderStepsPanel(r);
    r.totalMs = firstMs + performance.now() - t1;
    timing.title = t('timingTitle', { total: r.totalMs.toFixed(1) });
    exposeForTests();
  });
  exposeForTests();
}

let stepsFrame = 0;
let frame = 0;
function schedule() {
  if (!frame) frame = requestAnimationFrame(() => { frame = 0; update(); });
}

let urlTimer = 0;
function scheduleUrl() {
  // Debounced: Chromium throttles pages that call replaceState on every keystroke.
  clearTimeout(urlTimer);
  urlTimer = setTimeout(() => history.replaceState(null, '', toHash(state)), 150);
}

function renderTokens(r) {
  const chips = (toks, clickable, selected) =>
    toks.map((s, i) => `<button type="button" class="tok${i === selected ? ' selected' : ''}" data-i="${i}"${clickable ? '' : ' disabled'} title="${i}">${escapeHtml(s)}<sub>${i}</sub></button>`).join('');
  const note = (x) => (x.truncated ? `<p class="warn">${t('truncated', { n: MAX_TOKENS, total: x.total })}</p>` : '');
  const sel = r.empty ? -1 : r.qi;
  $('#tokens').innerHTML = r.cross
    ? `<div class="tok-row"><span class="tok-label">${t('tokens.source')} <b>${r.cols.length}</b></span>${chips(r.cols, false, -1)}</div>${note(r.k)}` +
      `<div class="tok-row"><span class="tok-label">${t('tokens.target')} <b>${r.rows.length}</b></span><span class="tok-list" data-role="query">${chips(r.rows, true, sel)}</span></div>${note(r.q)}`
    : `<div class="tok-row"><span class="tok-label">${t('tokens')} <b>${r.rows.length}</b></span><span class="tok-list" data-role="query">${chips(r.rows, true, sel)}</span></div>${note(r.q)}`;
}

/** Grow a textarea with its text (hidden ones have no height to measure). */
function autosize(el) {
  if (el.offsetParent === null) return;
  el.style.height = 'auto';
  el.style.height = `${el.scrollHeight + 2}px`;
}

function renderControls(r) {
  $('#self-inputs').hidden = r.cross;
  $('#cross-inputs').hidden = !r.cross;
  for (const el of document.querySelectorAll('textarea')) autosize(el);
  for (const b of document.querySelectorAll('#mode-tabs [data-mode]')) b.setAttribute('aria-selected', String(b.dataset.mode === state.mode));
  $('#maps-text').textContent = t(r.cross ? 'sec.mapsTextCross' : 'sec.mapsText');
  const causal = $('#causal');
  causal.disabled = r.cross;
  causal.checked = state.causal && !r.cross;
  $('#causal-label').title = t(r.cross ? 'ctl.causalCross' : 'ctl.causalTitle');
  $('#causal-label').classList.toggle('disabled', r.cross);
  const hs = $('#num-heads');
  const choices = headChoices(state.embedDim);
  if (hs.dataset.for !== String(state.embedDim)) {
    hs.innerHTML = choices.map((h) => `<option value="${h}">${h}</option>`).join('');
    hs.dataset.for = state.embedDim;
  }
  hs.value = state.numHeads;
  const q = $('#query-select');
  const opts = r.rows.map((s, i) => `<option value="${i}">${i}: ${escapeHtml(s)}</option>`).join('');
  if (q.dataset.sig !== opts) { q.innerHTML = opts; q.dataset.sig = opts; }
  if (!r.empty) q.value = r.qi;
  const head = Math.min(state.head, state.numHeads - 1);
  $('#head-tabs').innerHTML = `<span class="pick-label">${t('steps.head')}</span>` +
    [...Array(state.numHeads).keys()].map((h) => `<button type="button" role="tab" class="head-tab" data-head="${h}" aria-selected="${h === head}" style="--head:${HEAD_COLORS[h % HEAD_COLORS.length]}">${h + 1}</button>`).join('');
  $('#legend .legend-bar').style.background = gradientCss(state.cmap);
  const vmax = r.empty ? 1 : vmaxOf(r);
  $('#legend-mid').textContent = fmtTick(vmax / 2);
  $('#legend-max').textContent = fmtTick(vmax);
}

const fmtTick = (v) => v.toFixed(v >= 0.1 ? 2 : 3);

/** Top of the colour scale: 1, or the largest weight shown (rounded up so the legend reads well). */
function vmaxOf(r) {
  if (state.scale === 'one') return 1;
  let m = 0;
  for (const w of r.weights.data) m = Math.max(m, w);
  return Math.min(1, Math.max(0.01, Math.ceil(m * 100) / 100));
}

function mapSpec(r, which) {
  const avg = which === 'avg';
  const mode = r.cross ? (state.lang === 'zh' ? '交叉注意力' : 'cross-attention') : state.lang === 'zh' ? '自注意力' : 'self-attention';
  return {
    data: avg ? r.average : r.weights.data,
    offset: avg ? 0 : which * r.L * r.S,
    rows: r.rows, cols: r.cols,
    vmax: vmaxOf(r), cmap: state.cmap,
    selectedRow: r.qi,
    title: avg ? t('average') : t('head', { n: which + 1 }),
    subtitle: `attnscope · ${mode} · E=${r.E} H=${r.H} seed=${state.seed}${r.causal ? ' · causal' : ''} · ${t('axes')}`,
  };
}

function renderMaps(r) {
  const grid = $('#maps');
  const want = ['avg', ...Array(r.H).keys()];
  if (view.maps.length !== want.length) {
    grid.replaceChildren();
    view.maps = want.map((which) => {
      const card = document.createElement('figure');
      card.className = 'map-card' + (which === 'avg' ? ' avg' : '');
      card.dataset.head = which;
      card.innerHTML = `<figcaption><span class="swatch"></span><span class="map-title"></span>
        <span class="map-actions"><button type="button" class="mini" data-export="png"></button><button type="button" class="mini" data-export="svg"></button></span></figcaption>
        <div class="canvas-wrap"><canvas tabindex="0"></canvas></div><div class="axes-note"></div>`;
      grid.append(card);
      return { which, card, canvas: card.querySelector('canvas'), layout: null, hover: null };
    });
  }
  for (const m of view.maps) {
    const avg = m.which === 'avg';
    m.card.style.setProperty('--head', avg ? '#555' : HEAD_COLORS[m.which % HEAD_COLORS.length]);
    m.card.querySelector('.map-title').textContent = avg ? t('average') : t('head', { n: m.which + 1 });
    m.card.querySelector('[data-export="png"]').textContent = 'PNG';
    m.card.querySelector('[data-export="svg"]').textContent = 'SVG';
    m.card.querySelector('[data-export="png"]').title = t('export.pngTitle');
    m.card.querySelector('[data-export="svg"]').title = t('export.svgTitle');
    m.card.querySelector('.axes-note').textContent = t('axes');
    m.canvas.title = t('enlarge');
    drawMap(m, r);
  }
  if (view.zoomed != null && $('#zoom').open) drawZoom();
}

function drawMap(m, r = last) {
  const width = m.card.querySelector('.canvas-wrap').clientWidth || 240;
  const maxCell = m.which === 'avg' ? 40 : 24;
  m.layout = heatmapLayout(r.rows, r.cols, { width, maxCell });
  const ctx = prepareCanvas(m.canvas, m.layout.width, m.layout.height);
  drawHeatmap(ctx, m.layout, { ...mapSpec(r, m.which), hover: m.hover });
}

function mapTooltip(r, which, i, j) {
  const v = which === 'avg' ? r.average[i * r.S + j] : r.weights.data[(which * r.L + i) * r.S + j];
  const name = which === 'avg' ? t('average') : t('head', { n: which + 1 });
  return `<b>${escapeHtml(name)}</b><br>${t('tip.cell', { q: `<b>${escapeHtml(r.rows[i])}</b><sub>${i}</sub>`, k: `<b>${escapeHtml(r.cols[j])}</b><sub>${j}</sub>` })}<br><span class="tip-num">${v.toFixed(6)}</span>`;
}

// ---------------------------------------------------------------- zoom dialog + export
function openZoom(which) {
  view.zoomed = which;
  const dlg = $('#zoom');
  // A modal dialog sits in the top layer, above everything else: the tooltip must live inside it meanwhile.
  dlg.append(tip);
  if (!dlg.open) dlg.showModal();
  drawZoom();
}

function drawZoom() {
  const r = last;
  const which = view.zoomed;
  if (!r || r.empty || (which !== 'avg' && which >= r.H)) { $('#zoom').close(); return; }
  const spec = mapSpec(r, which);
  $('#zoom-title').textContent = spec.title;
  $('#zoom-sub').textContent = spec.subtitle.replace(/^attnscope · /, '');
  $('#zoom .legend-bar').style.background = gradientCss(state.cmap);
  $('#zoom .legend-ticks .mid').textContent = fmtTick(spec.vmax / 2);
  $('#zoom .legend-ticks .max').textContent = fmtTick(spec.vmax);
  const canvas = $('#zoom-canvas');
  const width = Math.min(920, window.innerWidth - 80);
  const layout = heatmapLayout(r.rows, r.cols, { width, maxCell: 44, fontPx: 13, labels: true });
  view.zoomLayout = layout;
  const ctx = prepareCanvas(canvas, layout.width, layout.height);
  drawHeatmap(ctx, layout, { ...spec, hover: view.zoomHover });
}

function download(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

const fileBase = (which) => `attnscope-${state.mode}-${which === 'avg' ? 'average' : `head${which + 1}`}`;

async function exportMap(which, kind) {
  // Exported figures are clean: no hover frame, no walkthrough row marker.
  const spec = { ...mapSpec(last, which), selectedRow: null, legendTitle: t('legend') };
  if (kind === 'png') download(await heatmapPng(spec), `${fileBase(which)}.png`);
  else download(new Blob([heatmapSvg(spec)], { type: 'image/svg+xml' }), `${fileBase(which)}.svg`);
}

function exportJson() {
  const r = last;
  if (!r || r.empty) return;
  const round = (x) => Number(x.toPrecision(7));
  const nest = (data, off) => Array.from({ length: r.L }, (_, i) => Array.from(data.subarray(off + i * r.S, off + (i + 1) * r.S), round));
  const doc = {
    generator: 'attnscope demo',
    url: location.origin + location.pathname + toHash(state),
    mode: state.mode,
    settings: { embedDim: r.E, numHeads: r.H, headDim: r.d, seed: state.seed, causal: r.causal },
    queryTokens: r.rows,
    keyTokens: r.cols,
    shape: [r.H, r.L, r.S],
    layout: 'weights[head][query][key]; every query row sums to 1',
    weights: Array.from({ length: r.H }, (_, h) => nest(r.weights.data, h * r.L * r.S)),
    average: nest(r.average, 0),
    forwardMs: round(r.ms),
  };
  download(new Blob([JSON.stringify(doc, null, 1)], { type: 'application/json' }), `attnscope-${state.mode}-weights.json`);
}

// ---------------------------------------------------------------- steps panel
function renderStepsPanel(r) {
  const head = Math.min(state.head, r.H - 1);
  const ex = explainQuery({ stateDict: model.stateDict(), numHeads: r.H, query: r.query, key: r.key, qi: r.qi, causal: r.causal });
  const res = renderSteps($('#steps'), { ex, rows: r.rows, cols: r.cols, head, fwdWeights: r.weights.data, fwdOutput: r.output.data });
  r.steps = { qi: r.qi, head, weights: Array.from(ex.heads[head].weights), ...res };
}

// ---------------------------------------------------------------- tests and debugging
function exposeForTests() {
  // A read-only window on the last computation (tests compare it with their own forward pass).
  window.__attnscopeDemo = {
    state: JSON.parse(JSON.stringify(state)),
    last: last && !last.empty
      ? { rows: last.rows, cols: last.cols, H: last.H, L: last.L, S: last.S, E: last.E, causal: last.causal, qi: last.qi, ms: last.ms, totalMs: last.totalMs, weights: Array.from(last.weights.data), steps: last.steps }
      : { rows: last?.rows ?? [], cols: last?.cols ?? [], empty: true },
    api: { init, MultiHeadAttention, tokenize, seededTokenVector, sinusoidalPositions, positionalEmbedding, createSeededModel, createModelFromStateDict, tableEmbedding },
    hash: toHash(state),
  };
}

// ---------------------------------------------------------------- events
const headView = new HeadView($('#headview'), {
  onToggle: (off) => { state.off = off; schedule(); },
  onSelect: (i) => { state.query = i; schedule(); },
});

function bind() {
  const text = $('#text'), src = $('#src'), tgt = $('#tgt');
  text.value = state.text; src.value = state.src; tgt.value = state.tgt;
  text.addEventListener('input', () => { state.text = text.value; state.query = -1; schedule(); });
  src.addEventListener('input', () => { state.src = src.value; schedule(); });
  tgt.addEventListener('input', () => { state.tgt = tgt.value; state.query = -1; schedule(); });
  for (const b of document.querySelectorAll('[data-example]')) {
    b.addEventListener('click', () => {
      const ex = EXAMPLES[b.dataset.example];
      if (typeof ex === 'string') { state.text = text.value = ex; }
      else { state.src = src.value = ex.src; state.tgt = tgt.value = ex.tgt; }
      state.query = -1;
      schedule();
    });
  }
  $('#mode-tabs').addEventListener('click', (e) => {
    const b = e.target.closest('[data-mode]');
    if (!b || b.dataset.mode === state.mode) return;
    state.mode = b.dataset.mode;
    state.query = -1;
    schedule();
  });
  const ed = $('#embed-dim');
  ed.innerHTML = EMBED_SIZES.map((e) => `<option value="${e}">${e}</option>`).join('');
  ed.value = state.embedDim;
  ed.addEventListener('change', () => {
    state.embedDim = Number(ed.value);
    const ch = headChoices(state.embedDim);
    if (!ch.includes(state.numHeads)) state.numHeads = ch.filter((h) => h <= state.numHeads).pop() ?? 1;
    schedule();
  });
  $('#num-heads').addEventListener('change', (e) => {
    state.numHeads = Number(e.target.value);
    state.head = Math.min(state.head, state.numHeads - 1);
    state.off = state.off.filter((h) => h < state.numHeads);
    schedule();
  });
  const seed = $('#seed');
  seed.value = state.seed;
  seed.addEventListener('input', () => {
    const v = Number(seed.value);
    if (Number.isInteger(v) && v >= 0 && v < 2 ** 31) { state.seed = v; schedule(); }
  });
  $('#causal').addEventListener('change', (e) => { state.causal = e.target.checked; schedule(); });
  const cmap = $('#cmap'), scale = $('#scale');
  cmap.value = state.cmap; scale.value = state.scale;
  cmap.addEventListener('change', () => { state.cmap = cmap.value; schedule(); });
  scale.addEventListener('change', () => { state.scale = scale.value; schedule(); });
  $('#query-select').addEventListener('change', (e) => { state.query = Number(e.target.value); schedule(); });
  $('#head-tabs').addEventListener('click', (e) => {
    const b = e.target.closest('[data-head]');
    if (b) { state.head = Number(b.dataset.head); schedule(); }
  });
  $('#tokens').addEventListener('click', (e) => {
    const b = e.target.closest('[data-role="query"] .tok');
    if (b) { state.query = Number(b.dataset.i); schedule(); }
  });
  $('#lang-btn').addEventListener('click', () => {
    state.lang = state.lang === 'zh' ? 'en' : 'zh';
    setLang(state.lang);
    schedule();
  });
  $('#copy-link').addEventListener('click', async () => {
    const url = location.origin + location.pathname + location.search + toHash(state);
    history.replaceState(null, '', toHash(state));
    const btn = $('#copy-link');
    btn.dataset.url = url;
    try {
      await navigator.clipboard.writeText(url);
      btn.textContent = t('btn.linkDone');
    } catch {
      // No clipboard here (plain http, no permission): the address bar holds the same link.
      btn.textContent = t('btn.linkInBar');
    }
    setTimeout(() => { btn.textContent = t('btn.link'); }, 1500);
  });
  $('#export-json').addEventListener('click', exportJson);

  const grid = $('#maps');
  grid.addEventListener('click', (e) => {
    const card = e.target.closest('.map-card');
    if (!card) return;
    const which = card.dataset.head === 'avg' ? 'avg' : Number(card.dataset.head);
    const exp = e.target.closest('[data-export]');
    if (exp) exportMap(which, exp.dataset.export);
    else if (e.target.closest('canvas')) openZoom(which);
  });
  grid.addEventListener('keydown', (e) => {
    const card = e.target.closest('.map-card');
    if (card && e.target.matches('canvas') && (e.key === 'Enter' || e.key === ' ')) {
      e.preventDefault();
      openZoom(card.dataset.head === 'avg' ? 'avg' : Number(card.dataset.head));
    }
  });
  grid.addEventListener('mousemove', (e) => {
    const canvas = e.target.closest('canvas');
    const m = view.maps.find((x) => x.canvas === canvas);
    for (const other of view.maps) if (other !== m && other.hover) { other.hover = null; drawMap(other); }
    if (!m || !last || last.empty) return hideTip();
    const c = cellAt(m.layout, ...canvasPoint(canvas, e));
    if (c?.i !== m.hover?.i || c?.j !== m.hover?.j) { m.hover = c; drawMap(m); }
    c ? showTip(e.clientX, e.clientY, mapTooltip(last, m.which, c.i, c.j)) : hideTip();
  });
  grid.addEventListener('mouseleave', () => {
    hideTip();
    for (const m of view.maps) if (m.hover) { m.hover = null; drawMap(m); }
  });

  const zoom = $('#zoom');
  $('#zoom-close').addEventListener('click', () => zoom.close());
  zoom.addEventListener('click', (e) => {
    if (e.target === zoom) zoom.close(); // a click on the backdrop
    const exp = e.target.closest('[data-export]');
    if (exp) exportMap(view.zoomed, exp.dataset.export);
  });
  zoom.addEventListener('close', () => { view.zoomed = null; view.zoomHover = null; hideTip(); document.body.append(tip); });
  const zc = $('#zoom-canvas');
  zc.addEventListener('mousemove', (e) => {
    const c = cellAt(view.zoomLayout, ...canvasPoint(zc, e));
    if (c?.i !== view.zoomHover?.i || c?.j !== view.zoomHover?.j) { view.zoomHover = c; drawZoom(); }
    c ? showTip(e.clientX, e.clientY, mapTooltip(last, view.zoomed, c.i, c.j)) : hideTip();
  });
  zc.addEventListener('mouseleave', () => { view.zoomHover = null; hideTip(); drawZoom(); });
  zc.addEventListener('click', (e) => {
    const c = cellAt(view.zoomLayout, ...canvasPoint(zc, e));
    if (c) { state.query = c.i; schedule(); }
  });

  const steps = $('#steps');
  steps.addEventListener('mousemove', (e) => {
    const c = e.target.closest('canvas.strip, canvas.mat');
    if (!c || !last) return hideTip();
    const [x, y] = canvasPoint(c, e);
    const html = c.matches('.mat') ? matrixTooltip(c, x, y, last.rows, last.cols) : stepsTooltip(c, x);
    html ? showTip(e.clientX, e.clientY, html) : hideTip();
  });
  steps.addEventListener('mouseleave', hideTip);

  let lastWidth = window.innerWidth;
  window.addEventListener('resize', () => {
    if (window.innerWidth !== lastWidth) { lastWidth = window.innerWidth; schedule(); }
  });
  window.addEventListener('hashchange', () => {
    if (location.hash === toHash(state)) return;
    Object.assign(state, parseHash(location.hash, state));
    text.value = state.text; src.value = state.src; tgt.value = state.tgt;
    ed.value = state.embedDim; seed.value = state.seed; cmap.value = state.cmap; scale.value = state.scale;
    setLang(state.lang);
    schedule();
  });
}

async function main() {
  setLang(state.lang);
  $('#legend .legend-bar').style.background = gradientCss(state.cmap);
  document.documentElement.style.setProperty('--diverging', divergingGradientCss());
  bind();
  await init();
  update();
  document.body.classList.add('ready');
}

main().catch((err) => {
  console.error(err);
  const p = document.createElement('p');
  p.className = 'fatal';
  p.textContent = `attnscope could not start: ${err.message}`;
  document.querySelector('main').prepend(p);
});
