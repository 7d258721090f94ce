// The demo page: wires the inputs, the models and the views together and recomputes on every keystroke.
// Three kinds of view: the seeded ('untrained') single layer (self- and cross-attention), the trained
// character language model, and the trained dates encoder–decoder, decoded step by step.
import { init, runtimeInfo, MultiHeadAttention } from 'attnscope';
import { tokenize, MAX_TOKENS } from './tokenize.js';
import { createSeededModel, createModelFromStateDict, tableEmbedding, seededTokenVector, sinusoidalPositions, positionalEmbedding } from './model.js';
import { explainQuery } from './steps.js';
import { HEAD_COLORS, gradientCss, divergingGradientCss } from './colors.js';
import { heatmapLayout, drawHeatmap, prepareCanvas, cellAt, heatmapPng, heatmapSvg } from './heatmap.js';
import { HeadView, escapeHtml, escapeAttr } from './headview.js';
import { renderSteps, stepsTooltip, matrixTooltip } from './stepsview.js';
import { t, setLang, browserLang, getLang, MESSAGES } from './i18n.js';
import { EMBED_SIZES, EXAMPLES, SPEEDS, defaultState, headChoices, parseHash, toHash } from './state.js';
import { ModelView } from './modelview.js';
import { renderDecode } from './decodeview.js';
import { modelEntry, runLM, runS2S, namedHeadMap, headAverage, showToken, FILE_NAMES } from './trained.js';

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
// The trained models' last runs (recomputed only when their input text changes).
let lmRun = { text: null, model: null, run: null };
let s2sRun = { text: null, model: null, run: null };
/** Characters that "Continue the text" asks the language model for. */
const CONTINUE_CHARS = 40;

/** 'seeded' (the untrained layer, self or cross), 'lm' (trained character model) or 's2s' (trained dates model). */
const kindOf = () => (state.mode === 's2s' ? 's2s' : state.mode === 'self' && state.model === 'trained' ? 'lm' : 'seeded');

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
  const kind = kindOf();
  renderLayout(kind);
  if (kind !== 'seeded') return updateTrained(kind);
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
  $('#maps-title').textContent = t('sec.maps');
  $('#maps-text').textContent = t(r.cross ? 'sec.mapsTextCross' : 'sec.mapsText');
  setI18n($('#empty'), 'empty');
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
  renderLegend(r);
}

function renderLegend(r) {
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
  const named = avg ? null : r.named?.[which];
  let subtitle = `attnscope · ${mode} · E=${r.E} H=${r.H} seed=${state.seed}${r.causal ? ' · causal' : ''} · ${t('axes')}`;
  if (r.kind === 'lm') subtitle = `attnscope · ${FILE_NAMES.lm} · ${t('attn.self')} · ${t('mv.layer', { n: r.layer + 1 })} · ${t('axes')}`;
  if (r.kind === 's2s') subtitle = `attnscope · ${FILE_NAMES.s2s} · ${t(`attn.${r.attn}`)} · ${t('mv.layer', { n: r.layer + 1 })} · ${t('axes')}`;
  return {
    data: avg ? r.average : r.weights.data,
    offset: avg ? 0 : which * r.L * r.S,
    rows: r.rows, cols: r.cols,
    vmax: vmaxOf(r), cmap: state.cmap,
    selectedRow: r.qi,
    title: (avg ? t('average') : t('head', { n: which + 1 })) + (named ? ` · ${headName(named)} (${named.score.toFixed(2)})` : ''),
    subtitle,
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
        <p class="map-badge" hidden></p><div class="canvas-wrap"><canvas tabindex="0"></canvas></div><div class="axes-note"></div>`;
      grid.append(card);
      return { which, card, canvas: card.querySelector('canvas'), layout: null, hover: null };
    });
  }
  for (const m of view.maps) {
    const avg = m.which === 'avg';
    m.card.style.setProperty('--head', avg ? '#555' : HEAD_COLORS[m.which % HEAD_COLORS.length]);
    m.card.querySelector('.map-title').textContent = avg ? t('average') : t('head', { n: m.which + 1 });
    const named = avg ? null : r.named?.[m.which];
    const badge = m.card.querySelector('.map-badge');
    badge.hidden = !named;
    badge.textContent = named ? `${headName(named)} · ${named.score.toFixed(2)}` : '';
    badge.title = named ? namedTitle(named) : '';
    m.card.classList.toggle('named', !!named);
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

// ---------------------------------------------------------------- trained models
/** Set an element's i18n key, so that a language switch re-translates it. */
function setI18n(el, key) {
  el.dataset.i18n = key;
  el.textContent = t(key);
}

/** Which inputs, controls and sections this kind of view shows. */
function renderLayout(kind) {
  const mode = state.mode;
  document.body.dataset.kind = kind;
  // Set again by renderModelStatus while the model this view needs is still on its way.
  delete document.body.dataset.loading;
  $('#self-inputs').hidden = mode !== 'self';
  $('#cross-inputs').hidden = mode !== 'cross';
  $('#s2s-inputs').hidden = mode !== 's2s';
  for (const b of document.querySelectorAll('#mode-tabs [data-mode]')) b.setAttribute('aria-selected', String(b.dataset.mode === mode));
  for (const b of document.querySelectorAll('#model-switch [data-model]')) b.setAttribute('aria-checked', String(b.dataset.model === state.model));
  for (const b of document.querySelectorAll('[data-for="lm"]')) b.hidden = kind !== 'lm';
  $('#seeded-controls').hidden = kind !== 'seeded';
  $('#model-info').hidden = kind === 'seeded';
  $('#lm-next').hidden = kind !== 'lm';
  $('#decode-section').hidden = kind !== 's2s';
  $('#model-section').hidden = kind === 'seeded';
  $('#maps-section').hidden = false;
  $('#hv-section').hidden = false;
  $('#steps-section').hidden = kind !== 'seeded';
  $('#steps-note').hidden = kind === 'seeded';
  $('#layer-pick').hidden = kind === 'seeded';
  $('#model-status').hidden = true;
  setI18n($('#honesty'), kind === 'lm' ? 'honesty.lm' : kind === 's2s' ? 'honesty.s2s' : 'honesty');
  setI18n($('#tokens-hint'), kind === 'lm' ? 'tokensHint.lm' : kind === 's2s' ? 'tokensHint.s2s' : 'tokensHint');
  for (const el of document.querySelectorAll('textarea')) autosize(el);
}

/** A named head's name in the page's language (the model files name them in English). */
function headName(n) {
  if (getLang() !== 'zh' || !MESSAGES.zh[`metric.${n.metric}`]) return n.name;
  // Heads measured on one language only say so, as the English names do ("… (Chinese text)").
  const scope = n.text === 'zh' ? '（中文文本）' : n.text === 'en' ? '（英文文本）' : '';
  return MESSAGES.zh[`metric.${n.metric}`] + scope;
}
const namedTitle = (n) => t('mv.namedTitle', { name: headName(n), metric: n.metric, score: n.score.toFixed(3), threshold: n.threshold ?? '–' });
/** What a named head's measurement is, and what a head attending uniformly would score on it. */
function metricText(model, n) {
  const key = `def.${n.metric}`;
  const def = MESSAGES[getLang()][key] ?? MESSAGES.en[key];
  // Each named head carries the score of a uniformly attending head on its own measurement.
  const base = n.baseline ?? model.training?.head_analysis?.baselines?.[n.metric];
  return [def, typeof base === 'number' ? t('mv.baseline', { x: base.toFixed(2) }) : null].filter(Boolean).join('; ');
}

/** The layer to show: the one asked for, else the deepest layer with a named head, else the last one. */
function pickLayer(want, layers, named) {
  if (want >= 0 && want < layers) return want;
  let deepest = -1;
  for (const n of named.values()) deepest = Math.max(deepest, n.layer);
  return deepest >= 0 ? deepest : layers - 1;
}

/** Heads of one layer of a [layers, H, A, B] tensor, cut to the first `rows` × `cols`: a fresh [H, rows, cols]. */
function sliceHeads(tensor, layer, rows, cols) {
  const [, H, A, B] = tensor.shape;
  const out = new Float32Array(H * rows * cols);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < rows; i++) {
      const from = ((layer * H + h) * A + i) * B;
      out.set(tensor.data.subarray(from, from + cols), (h * rows + i) * cols);
    }
  }
  return out;
}

const paramCount = (m) => m.header.tensors.reduce((a, x) => a + x.shape.reduce((p, q) => p * q, 1), 0);
const fmtInt = (n) => n.toLocaleString(getLang() === 'zh' ? 'zh-CN' : 'en-US');
const pct = (p) => (p < 0.001 ? '<0.1%' : `${(p * 100).toFixed(p >= 0.1 ? 0 : 1)}%`);

function updateTrained(kind) {
  const t0 = performance.now();
  const entry = modelEntry(kind, schedule);
  if (entry.status !== 'ready') return renderModelStatus(kind, entry);
  const r = kind === 'lm' ? computeLM(entry.model) : computeS2S(entry.model);
  last = r;
  renderTrainedTokens(r);
  renderModelInfo(r);
  $('#model-text').textContent = t(kind === 'lm' ? 'sec.modelText' : 'sec.modelTextS2S');
  $('#named-none').hidden = r.model.namedHeads.length > 0;
  if (r.sourceEmpty) {
    // No words at all: nothing to decode and nothing to draw.
    for (const id of ['#decode-section', '#model-section', '#hv-section']) $(id).hidden = true;
    setI18n($('#empty'), 'empty.s2s');
    $('#empty').hidden = false;
    $('#maps').replaceChildren();
    view.maps = [];
    $('#timing').textContent = '';
    $('#layer-pick').hidden = true;
    renderLegend(r);
    exposeForTests();
    scheduleUrl();
    return;
  }
  if (kind === 'lm') renderNext(r);
  else renderDecodePanel(r);
  if (!r.textEmpty) renderModelView(r);
  $('#model-section').hidden = !!r.textEmpty;
  renderLayerPick(r);
  $('#maps-title').textContent = kind === 'lm' ? t('sec.mapsLayer', { n: r.layer + 1 }) : t('sec.mapsAttn', { attn: t(`attn.${r.attn}`), n: r.layer + 1 });
  $('#maps-text').textContent = t(kind === 'lm' ? 'sec.mapsTextLM' : { enc: 'sec.mapsTextEnc', dec: 'sec.mapsTextDec', cross: 'sec.mapsTextS2S' }[r.attn]);
  setI18n($('#empty'), kind === 'lm' ? 'empty' : 'empty.step');
  $('#empty').hidden = !r.empty;
  renderLegend(r);
  if (r.empty) {
    $('#maps').replaceChildren();
    view.maps = [];
    $('#headview').hidden = true;
    if (view.zoomed != null && $('#zoom').open) $('#zoom').close();
  } else {
    $('#headview').hidden = false;
    renderMaps(r);
    headView.update({ rows: r.rows, cols: r.cols, weights: r.weights.data, H: r.H, off: state.off.filter((h) => h < r.H), selected: r.qi });
  }
  const timing = $('#timing');
  if (r.textEmpty) timing.textContent = '';
  else {
    timing.textContent = t(kind === 'lm' ? 'timing' : 'timing.decode', { ms: r.ms.toFixed(2) });
    timing.dataset.ms = r.ms.toFixed(4);
  }
  r.totalMs = performance.now() - t0;
  timing.title = t('timingTitle', { total: r.totalMs.toFixed(1) });
  exposeForTests();
  scheduleUrl();
}

function renderModelStatus(kind, entry) {
  for (const id of ['#model-section', '#maps-section', '#hv-section', '#decode-section', '#lm-next', '#steps-note']) $(id).hidden = true;
  const st = $('#model-status');
  st.hidden = false;
  st.classList.toggle('error', entry.status === 'error');
  st.classList.toggle('loading', entry.status === 'loading');
  st.textContent = entry.status === 'error'
    ? t('loadError', { msg: entry.error?.message ?? String(entry.error) })
    : t(entry.total ? 'loadingProgress' : 'loading', { name: FILE_NAMES[kind], done: (entry.loaded / 1e6).toFixed(1), total: (entry.total / 1e6).toFixed(1) });
  if (entry.status === 'loading') document.body.dataset.loading = kind;
  else delete document.body.dataset.loading;
  $('#tokens').replaceChildren();
  $('#timing').textContent = '';
  last = { kind, loading: entry.status === 'loading', error: entry.status === 'error' ? st.textContent : null, empty: true, rows: [], cols: [] };
  exposeForTests();
  scheduleUrl();
}

/** The language model on the sentence: the chosen layer's heads, as the views want them. */
function computeLM(lm) {
  if (lmRun.text !== state.text || lmRun.model !== lm) lmRun = { text: state.text, model: lm, run: state.text ? runLM(lm, state.text) : null };
  const run = lmRun.run;
  const c = lm.config;
  const named = namedHeadMap(lm);
  const layer = pickLayer(state.layer, c.n_layers, named);
  const base = { kind: 'lm', model: lm, layer, layers: c.n_layers, H: c.n_heads, E: c.d_model, d: c.d_model / c.n_heads, causal: true, cross: false, namedMap: named };
  base.named = [...Array(c.n_heads).keys()].map((h) => named.get(`${layer}/${h}`) ?? null);
  if (!run) return { ...base, empty: true, textEmpty: true, rows: [], cols: [], L: 0, S: 0, qi: -1, ms: 0 };
  const { H, T } = run;
  const off = layer * H * T * T;
  return {
    ...base, run,
    rows: run.labels, cols: run.labels,
    weights: { data: run.attention.subarray(off, off + H * T * T), shape: [H, T, T] },
    average: headAverage(run.attention, off, H, T, T),
    L: T, S: T,
    qi: state.query >= 0 && state.query < T ? state.query : T - 1,
    ms: run.ms,
  };
}

/** The dates model on the source sentence, cut to the steps decoded so far. */
function computeS2S(m) {
  if (s2sRun.text !== state.date || s2sRun.model !== m) s2sRun = { text: state.date, model: m, run: runS2S(m, state.date) };
  const run = s2sRun.run;
  const c = m.config;
  const attn = state.attn;
  const named = namedHeadMap(m, attn);
  const base = { kind: 's2s', model: m, attn, H: c.n_heads, E: c.d_model, d: c.d_model / c.n_heads, causal: attn === 'dec', cross: attn === 'cross' };
  if (run.empty) return { ...base, run, empty: true, sourceEmpty: true, rows: [], cols: [], L: 0, S: 0, qi: -1, ms: 0, layer: 0, layers: 0, named: [] };
  const N = run.steps.length;
  const shown = state.step < 0 || state.step > N ? N : state.step;
  const tensor = run[attn];
  const [layers, H] = tensor.shape;
  const layer = state.layer >= 0 && state.layer < layers ? state.layer : 0;
  const written = run.steps.map((s) => s.token);
  // Row t is the step that wrote output token t; its query position reads the token before (<bos> first).
  const read = ['<bos>', ...written.slice(0, -1)];
  const rows = attn === 'enc' ? run.sourceTokens : written.slice(0, shown);
  const cols = attn === 'enc' ? run.sourceTokens : attn === 'dec' ? read.slice(0, shown) : run.sourceTokens;
  const L = rows.length, S = cols.length;
  const data = sliceHeads(tensor, layer, L, S);
  // The step to look at: the one clicked, else the newest — on the finished view, the last character before <eos>.
  let focus = state.query >= 0 && state.query < shown ? state.query : shown - 1;
  if (state.query < 0 && state.step < 0 && shown > 1 && written[focus] === '<eos>') focus--;
  return {
    ...base, run, layer, layers, N, shown, focus, rows, cols, L, S,
    named: [...Array(H).keys()].map((h) => named.get(`${layer}/${h}`) ?? null),
    weights: { data, shape: [H, L, S] },
    average: headAverage(data, 0, H, L, S),
    qi: attn === 'enc' ? -1 : focus,
    ms: run.ms,
    empty: L === 0,
  };
}

function renderTrainedTokens(r) {
  const chip = (label, i, { clickable = false, selected = false, unk = false, special = false } = {}) =>
    `<button type="button" class="tok${selected ? ' selected' : ''}${unk ? ' unk' : ''}${special ? ' special' : ''}" data-i="${i}"${clickable ? '' : ' disabled'} title="${unk ? escapeAttr(t('unk')) : i}">${escapeHtml(label)}<sub>${i}</sub></button>`;
  if (r.kind === 'lm') {
    const run = r.run;
    if (!run) { $('#tokens').replaceChildren(); return; }
    const chips = run.labels.map((s, i) => chip(s, i, { clickable: true, selected: i === r.qi, unk: run.unk[i], special: i === 0 })).join('');
    $('#tokens').innerHTML = `<div class="tok-row"><span class="tok-label">${t('tokens')} <b>${run.T}</b></span><span class="tok-list" data-role="query">${chips}</span></div>` +
      (run.truncated ? `<p class="warn">${escapeHtml(t('truncated.lm', { n: r.model.config.max_len, k: r.model.config.max_len - 1, total: run.total }))}</p>` : '');
    return;
  }
  const run = r.run;
  const chips = run.sourceTokens.map((s, i) => chip(s, i, { unk: run.unk[i] })).join('');
  $('#tokens').innerHTML = run.sourceTokens.length
    ? `<div class="tok-row"><span class="tok-label">${t('dec.source')} <b>${run.sourceTokens.length}</b></span>${chips}</div>` +
      (run.truncated ? `<p class="warn">${escapeHtml(t('truncated.s2s', { n: r.model.config.max_src_len, total: run.total }))}</p>` : '')
    : '';
}

function renderModelInfo(r) {
  const m = r.model, c = m.config, tr = m.training ?? {};
  let s;
  if (r.kind === 'lm') {
    s = t('info.lm', { L: c.n_layers, H: c.n_heads, d: c.d_model, params: fmtInt(paramCount(m)), n: c.max_len });
    const loss = tr.heldout?.en?.loss;
    if (typeof loss === 'number') s += ' · ' + t('info.lmLoss', { loss: loss.toFixed(2) });
  } else {
    s = t('info.s2s', { Le: c.n_enc_layers, Ld: c.n_dec_layers, H: c.n_heads, d: c.d_model, params: fmtInt(paramCount(m)) });
    const acc = tr.test?.exact_match;
    if (typeof acc === 'number') s += ' · ' + t('info.s2sAcc', { acc: `${(acc * 100).toFixed(1)}%` });
  }
  const info = $('#model-info');
  info.textContent = s;
  info.title = `${FILE_NAMES[r.kind]}${tr.date ? ` · ${tr.date}` : ''}`;
}

/** The language model's next-character distribution, and the button that continues the text. */
function renderNext(r) {
  const run = r.run;
  $('#lm-next').hidden = !run;
  if (!run) return;
  $('#next-list').innerHTML = run.next.map((x) => {
    const label = x.token === null ? `<i>${escapeHtml(t('next.end'))}</i>` : escapeHtml(showToken(x.token));
    return `<span class="next-tok" title="${(x.p * 100).toFixed(2)}%"><b>${label}</b><span class="next-bar"><span style="width:${(x.p * 100).toFixed(1)}%"></span></span><span class="next-p">${pct(x.p)}</span></span>`;
  }).join('');
  const room = r.model.config.max_len - run.ids.length;
  const btn = $('#continue-btn');
  btn.disabled = room <= 0;
  btn.title = room <= 0 ? t('btn.continueFull', { n: r.model.config.max_len }) : t('btn.continueTitle', { n: Math.min(CONTINUE_CHARS, room) });
}

function continueText() {
  const r = last;
  if (r?.kind !== 'lm' || !r.run) return;
  const room = r.model.config.max_len - r.run.ids.length;
  if (room <= 0) return;
  const { text } = r.model.generate(r.run.ids, { maxNewTokens: Math.min(CONTINUE_CHARS, room) });
  state.text = r.run.chars.join('') + text;
  $('#text').value = state.text;
  state.query = -1;
  schedule();
}

function renderLayerPick(r) {
  const sel = $('#layer-select');
  const groups = r.kind === 'lm' ? [['self', r.layers]] : ['enc', 'dec', 'cross'].map((a) => [a, r.run[a].shape[0]]);
  const sig = `${r.kind}|${getLang()}|${groups.join('|')}`;
  if (sel.dataset.sig !== sig) {
    const opts = (attn, n) => [...Array(n).keys()].map((l) => `<option value="${attn}:${l}">${escapeHtml(t('mv.layer', { n: l + 1 }))}</option>`).join('');
    sel.innerHTML = r.kind === 'lm' ? opts('self', r.layers) : groups.map(([a, n]) => `<optgroup label="${escapeAttr(t(`attn.${a}`))}">${opts(a, n)}</optgroup>`).join('');
    sel.dataset.sig = sig;
  }
  sel.value = `${r.kind === 'lm' ? 'self' : r.attn}:${r.layer}`;
}

const modelView = new ModelView($('#modelview'), {
  onPick: (attn, layer, head) => {
    if (state.mode === 's2s') state.attn = attn;
    state.layer = layer;
    cancelAnimationFrame(frame);
    frame = 0;
    update();
    if (!last?.empty) openZoom(head);
  },
  onHover: ({ attn, layer, head, i, j }, e) => {
    const g = view.mv?.groups.find((x) => x.attn === attn);
    if (!g) return hideTip();
    const m = g.map(layer, head);
    const n = view.mv.named(attn, layer, head);
    const v = m.data[m.offset + i * m.cols.length + j];
    showTip(e.clientX, e.clientY, `<b>${escapeHtml(g.title ? `${g.title} · ` : '')}${t('mv.layer', { n: layer + 1 })} · ${t('head', { n: head + 1 })}</b>` +
      (n ? `<br>★ ${escapeHtml(n.label)}` : '') +
      `<br>${t('tip.cell', { q: `<b>${escapeHtml(m.rows[i])}</b><sub>${i}</sub>`, k: `<b>${escapeHtml(m.cols[j])}</b><sub>${j}</sub>` })}<br><span class="tip-num">${v.toFixed(6)}</span>`);
  },
  onLeave: hideTip,
});

/** The model view: every layer and head (LM), or the encoder, decoder and cross-attention (dates model). */
function renderModelView(r) {
  const badge = (n) => (n ? { label: `${headName(n)} · ${n.score.toFixed(2)}`, name: headName(n), score: n.score.toFixed(2), title: namedTitle(n), def: metricText(r.model, n) } : null);
  let groups, named;
  if (r.kind === 'lm') {
    const { run } = r;
    const T = run.T, H = run.H;
    groups = [{ attn: 'self', layers: run.layers, H, map: (l, h) => ({ data: run.attention, offset: (l * H + h) * T * T, rows: run.labels, cols: run.labels }) }];
    named = (attn, l, h) => badge(r.namedMap.get(`${l}/${h}`));
  } else {
    const { run, shown } = r;
    const written = run.steps.map((s) => s.token);
    const read = ['<bos>', ...written.slice(0, -1)];
    const src = run.sourceTokens, S = src.length, N = run.steps.length;
    const [, H] = run.cross.shape;
    const dec = [...Array(run.dec.shape[0]).keys()].map((l) => sliceHeads(run.dec, l, shown, shown));
    groups = [
      { attn: 'enc', layers: run.enc.shape[0], H, map: (l, h) => ({ data: run.enc.data, offset: (l * H + h) * S * S, rows: src, cols: src }) },
      { attn: 'dec', layers: run.dec.shape[0], H, map: (l, h) => ({ data: dec[l], offset: h * shown * shown, rows: written.slice(0, shown), cols: read.slice(0, shown) }) },
      // Rows are contiguous in [N, S]: the first `shown` rows of each head need no copy.
      { attn: 'cross', layers: run.cross.shape[0], H, map: (l, h) => ({ data: run.cross.data, offset: (l * H + h) * N * S, rows: written.slice(0, shown), cols: src }) },
    ];
    for (const g of groups) { g.title = t(`attn.${g.attn}`); g.axes = t(`attn.${g.attn}Axes`); }
    const maps = Object.fromEntries(['enc', 'dec', 'cross'].map((a) => [a, namedHeadMap(r.model, a)]));
    named = (attn, l, h) => badge(maps[attn].get(`${l}/${h}`));
  }
  let vmax = 1;
  if (state.scale !== 'one') {
    let m = 0;
    for (const g of groups) for (let l = 0; l < g.layers; l++) for (let h = 0; h < g.H; h++) {
      const x = g.map(l, h);
      const n = x.rows.length * x.cols.length;
      for (let k = 0; k < n; k++) m = Math.max(m, x.data[x.offset + k]);
    }
    vmax = Math.min(1, Math.max(0.01, Math.ceil(m * 100) / 100));
  }
  view.mv = { groups, named };
  modelView.update({ groups, selected: { attn: r.kind === 'lm' ? 'self' : r.attn, layer: r.layer }, cmap: state.cmap, vmax, named });
  $('#mv-scale .legend-bar').style.background = gradientCss(state.cmap);
  $('#mv-scale .mid').textContent = fmtTick(vmax / 2);
  $('#mv-scale .max').textContent = fmtTick(vmax);
}

// ---------------------------------------------------------------- decoding, step by step (dates model)
const player = { timer: 0 };
const isPlaying = () => player.timer !== 0;
const decodeLength = () => (s2sRun.run && !s2sRun.run.empty ? s2sRun.run.steps.length : 0);
const shownNow = () => (state.step < 0 || state.step > decodeLength() ? decodeLength() : state.step);

function stopPlaying() {
  clearInterval(player.timer);
  player.timer = 0;
}

/** One decoding step forward (the timer's tick, and the Step button). */
function advance() {
  const N = decodeLength();
  const s = shownNow();
  if (s < N) {
    state.step = s + 1;
    state.query = -1;
  }
  if (state.step >= N) stopPlaying();
  schedule();
}

function play() {
  if (!decodeLength()) return;
  if (shownNow() >= decodeLength()) state.step = 0;
  stopPlaying();
  player.timer = setInterval(advance, SPEEDS[state.speed]);
  advance();
}

function renderDecodePanel(r) {
  const run = r.run;
  const [nl, H, N, S] = run.cross.shape;
  let weights = null;
  if (r.focus >= 0) {
    // The step's cross-attention over the source words, averaged over every head of every decoder layer.
    weights = new Float32Array(S);
    for (let l = 0; l < nl; l++) for (let h = 0; h < H; h++) {
      const off = ((l * H + h) * N + r.focus) * S;
      for (let j = 0; j < S; j++) weights[j] += run.cross.data[off + j] / (nl * H);
    }
  }
  r.focusWeights = weights;
  renderDecode($('#decode'), { sourceTokens: run.sourceTokens, unk: run.unk, steps: run.steps, shown: r.shown, focus: r.focus, weights, cmap: state.cmap, ms: run.ms });
  $('#decode-text').textContent = t('sec.decodeText', { n: nl * H });
  $('#dec-counter').textContent = t('dec.counter', { t: r.shown, n: N });
  const playing = isPlaying();
  $('#dec-play').disabled = playing;
  $('#dec-pause').disabled = !playing;
  $('#dec-step').disabled = r.shown >= N;
  $('#dec-back').disabled = r.shown <= 0;
  $('#dec-reset').disabled = r.shown === 0 && !playing;
  $('#decode-section').classList.toggle('playing', playing);
  $('#dec-speed').value = state.speed;
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

function fileBase(which) {
  const part = which === 'avg' ? 'average' : `head${which + 1}`;
  if (last?.kind === 'lm') return `attnscope-lm-layer${last.layer + 1}-${part}`;
  if (last?.kind === 's2s') return `attnscope-dates-${last.attn}${last.layer + 1}-${part}`;
  return `attnscope-${state.mode}-${part}`;
}

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
    settings: r.kind === 'seeded'
      ? { embedDim: r.E, numHeads: r.H, headDim: r.d, seed: state.seed, causal: r.causal }
      : { model: FILE_NAMES[r.kind], attention: r.kind === 'lm' ? 'self' : r.attn, layer: r.layer, layers: r.layers, embedDim: r.E, numHeads: r.H, headDim: r.d, causal: r.causal },
    queryTokens: r.rows,
    keyTokens: r.cols,
    shape: [r.H, r.L, r.S],
    layout: 'weights[head][query][key]; every query row sums to 1',
    weights: Array.from({ length: r.H }, (_, h) => nest(r.weights.data, h * r.L * r.S)),
    average: nest(r.average, 0),
    forwardMs: round(r.ms),
  };
  if (r.kind === 's2s') Object.assign(doc, { sourceWords: r.run.sourceTokens, output: r.run.text, outputTokens: r.run.outputTokens });
  if (r.kind === 'lm') doc.nextCharacter = r.run.next.map((x) => ({ token: x.token ?? '<bos>', p: round(x.p) }));
  const name = r.kind === 'seeded' ? `attnscope-${state.mode}-weights.json` : `${fileBase('avg').replace(/-average$/, '')}-weights.json`;
  download(new Blob([JSON.stringify(doc, null, 1)], { type: 'application/json' }), name);
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
    last: last?.kind === 'lm' || last?.kind === 's2s' ? trainedForTests(last)
      : last && !last.empty
        ? { kind: 'seeded', rows: last.rows, cols: last.cols, H: last.H, L: last.L, S: last.S, E: last.E, causal: last.causal, qi: last.qi, ms: last.ms, totalMs: last.totalMs, weights: Array.from(last.weights.data), steps: last.steps }
        : { kind: 'seeded', rows: last?.rows ?? [], cols: last?.cols ?? [], empty: true },
    api: { init, runtimeInfo, MultiHeadAttention, tokenize, seededTokenVector, sinusoidalPositions, positionalEmbedding, createSeededModel, createModelFromStateDict, tableEmbedding },
    hash: toHash(state),
  };
}

/** The trained views' state for tests; the big arrays are getters, built only when a test reads them. */
function trainedForTests(r) {
  if (r.loading || r.error) return { kind: r.kind, loading: r.loading, error: r.error, empty: true, rows: [], cols: [] };
  const out = {
    kind: r.kind, rows: r.rows, cols: r.cols, H: r.H, L: r.L, S: r.S, E: r.E, causal: r.causal, qi: r.qi, ms: r.ms, totalMs: r.totalMs,
    empty: !!r.empty, layer: r.layer, layers: r.layers,
    config: r.model.config,
    namedHeads: r.model.namedHeads,
    named: r.named?.map((n) => n && { name: n.name, score: n.score }) ?? [],
    get weights() { return r.weights ? Array.from(r.weights.data) : []; },
  };
  if (r.kind === 'lm' && r.run) Object.assign(out, { ids: r.run.ids, truncated: r.run.truncated, total: r.run.total, next: r.run.next.map((x) => ({ token: x.token, p: x.p })) });
  if (r.kind === 's2s') {
    const run = r.run;
    Object.assign(out, { attn: r.attn, sourceTokens: run.sourceTokens, sourceEmpty: !!r.sourceEmpty });
    if (!run.empty) {
      Object.assign(out, {
        outputTokens: run.outputTokens, text: run.text, shown: r.shown, N: r.N, focus: r.focus, playing: isPlaying(),
        written: run.steps.slice(0, r.shown).filter((x) => x.token !== '<eos>').map((x) => x.token).join(''),
        probabilities: run.steps.map((x) => x.p),
        focusWeights: r.focusWeights ? Array.from(r.focusWeights) : null,
        shapes: { enc: run.enc.shape, dec: run.dec.shape, cross: run.cross.shape },
        get cross() { return Array.from(run.cross.data); },
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------- events
const headView = new HeadView($('#headview'), {
  onToggle: (off) => { state.off = off; schedule(); },
  onSelect: (i) => { state.query = i; schedule(); },
});

function bind() {
  const text = $('#text'), src = $('#src'), tgt = $('#tgt'), date = $('#date');
  text.value = state.text; src.value = state.src; tgt.value = state.tgt; date.value = state.date;
  date.addEventListener('input', () => { state.date = date.value; state.step = -1; state.query = -1; stopPlaying(); schedule(); });
  $('#date-examples').insertAdjacentHTML('beforeend', EXAMPLES.dates.map((d, i) => `<button type="button" class="link" data-date="${i}">${escapeHtml(d)}</button>`).join(''));
  $('#date-examples').addEventListener('click', (e) => {
    const b = e.target.closest('[data-date]');
    if (!b) return;
    state.date = date.value = EXAMPLES.dates[Number(b.dataset.date)];
    state.step = -1;
    state.query = -1;
    stopPlaying();
    schedule();
  });
  $('#model-switch').addEventListener('click', (e) => {
    const b = e.target.closest('[data-model]');
    if (!b || b.dataset.model === state.model) return;
    state.model = b.dataset.model;
    state.query = -1;
    schedule();
  });
  $('#show-untrained').addEventListener('click', () => {
    state.mode = 'self';
    state.model = 'untrained';
    state.query = -1;
    stopPlaying();
    schedule();
    $('.input-card').scrollIntoView({ behavior: 'smooth', block: 'start' });
  });
  $('#continue-btn').addEventListener('click', continueText);
  $('#layer-select').addEventListener('change', (e) => {
    const [attn, layer] = e.target.value.split(':');
    if (state.mode === 's2s') state.attn = attn;
    state.layer = Number(layer);
    schedule();
  });
  $('#dec-play').addEventListener('click', play);
  $('#dec-pause').addEventListener('click', () => { stopPlaying(); schedule(); });
  $('#dec-step').addEventListener('click', () => { stopPlaying(); advance(); });
  $('#dec-back').addEventListener('click', () => {
    stopPlaying();
    state.step = Math.max(0, shownNow() - 1);
    state.query = -1;
    schedule();
  });
  $('#dec-reset').addEventListener('click', () => { stopPlaying(); state.step = 0; state.query = -1; schedule(); });
  $('#dec-speed').addEventListener('change', (e) => {
    state.speed = e.target.value;
    if (isPlaying()) { stopPlaying(); player.timer = setInterval(advance, SPEEDS[state.speed]); }
    schedule();
  });
  const pickStep = (e) => {
    const g = e.target.closest('.dec-slot.done');
    if (g) { state.query = Number(g.dataset.t); schedule(); }
  };
  $('#decode').addEventListener('click', pickStep);
  $('#decode').addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pickStep(e); } });
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
    stopPlaying();
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
    stopPlaying();
    text.value = state.text; src.value = state.src; tgt.value = state.tgt; date.value = state.date;
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
  // Every core where the page is cross-origin isolated (npm start serves it so); the single-threaded build elsewhere.
  await init({ threads: 'auto' });
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
