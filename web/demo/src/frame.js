// The page frame for a result: which sections and controls show, the section headings, the token count hint, the
// seeded controls, the trained model's line, its layer picker and next-character list, the loading status, the
// timing badge and the legend. Cheap, and always drawn first.
import { t, getLang } from './i18n.js';
import { $, setI18n, escapeHtml, escapeAttr } from './dom.js';
import { paintLegend } from './maps/heatmap.js';
import { headChoices } from './state.js';
import { FILE_NAMES, showToken } from './models/trained.js';
import { scaleTop, scaleNote } from './maps/scales.js';
import { percent as pct } from './percent.js';

const paramCount = (m) => m.header.tensors.reduce((a, x) => a + x.shape.reduce((p, q) => p * q, 1), 0);
const fmtInt = (n) => n.toLocaleString(getLang() === 'zh' ? 'zh-CN' : 'en-US');

/** CSS grows the textareas where it can (field-sizing); elsewhere a script measures them. */
const cssSizing = globalThis.CSS?.supports?.('field-sizing', 'content');

/** Grow a textarea with its text (hidden ones have no height to measure). */
function autosize(el) {
  if (cssSizing || el.offsetParent === null) return;
  el.style.height = 'auto';
  el.style.height = `${el.scrollHeight + 2}px`;
}

function layout(state, r) {
  const kind = r.kind;
  const mode = state.mode;
  document.body.dataset.kind = kind;
  if (r.loading) document.body.dataset.loading = kind;
  else delete document.body.dataset.loading;
  $('#self-inputs').hidden = mode !== 'self';
  $('#cross-inputs').hidden = mode !== 'cross';
  $('#s2s-inputs').hidden = mode !== 's2s';
  for (const b of document.querySelectorAll('#mode-tabs [data-mode]')) {
    const on = b.dataset.mode === mode;
    b.setAttribute('aria-selected', String(on));
    b.tabIndex = on ? 0 : -1;
  }
  for (const b of document.querySelectorAll('#model-switch [data-model]')) {
    const on = b.dataset.model === state.model;
    b.setAttribute('aria-checked', String(on));
    b.tabIndex = on ? 0 : -1;
  }
  for (const b of document.querySelectorAll('[data-for="lm"]')) b.hidden = kind !== 'lm';
  const waiting = !!(r.entry);
  $('#seeded-controls').hidden = kind !== 'seeded';
  $('#model-info').hidden = kind === 'seeded' || waiting;
  $('#lm-next').hidden = kind !== 'lm' || waiting || !r.run;
  $('#ablation').hidden = kind !== 'lm' || waiting || !r.run;
  $('#decode-section').hidden = kind !== 's2s' || waiting || !!r.sourceEmpty;
  $('#model-section').hidden = kind === 'seeded' || waiting || !!r.textEmpty || !!r.sourceEmpty;
  $('#maps-section').hidden = waiting;
  $('#hv-section').hidden = waiting || !!r.sourceEmpty;
  $('#steps-section').hidden = waiting || !!r.textEmpty || !!r.sourceEmpty;
  $('#layer-pick').hidden = kind === 'seeded' || waiting || !!r.sourceEmpty;
  $('#cross-note').hidden = !(kind === 'seeded' && r.cross);
  setI18n($('#honesty'), kind === 'lm' ? 'honesty.lm' : kind === 's2s' ? 'honesty.s2s' : 'honesty');
  setI18n($('#tokens-hint'), kind === 'lm' ? 'tokensHint.lm' : kind === 's2s' ? 'tokensHint.s2s' : 'tokensHint');
  for (const el of document.querySelectorAll('textarea')) autosize(el);
}

function status(r) {
  const st = $('#model-status');
  st.hidden = !r.entry;
  if (!r.entry) return;
  const entry = r.entry;
  st.classList.toggle('error', entry.status === 'error');
  st.classList.toggle('loading', entry.status === 'loading');
  st.textContent = entry.status === 'error'
    ? t('loadError', { msg: entry.error?.message ?? String(entry.error) })
    : t(entry.total ? 'loadingProgress' : 'loading', { name: FILE_NAMES[r.kind], done: (entry.loaded / 1e6).toFixed(1), total: (entry.total / 1e6).toFixed(1) });
}

function seededControls(state, r) {
  const causal = $('#causal');
  causal.disabled = r.cross;
  causal.checked = state.causal && !r.cross;
  $('#causal-label').title = t(r.cross ? 'ctl.causalCross' : 'ctl.causalTitle');
  $('#causal-label').classList.toggle('disabled', r.cross);
  const hs = $('#num-heads');
  if (hs.dataset.for !== String(state.embedDim)) {
    hs.innerHTML = headChoices(state.embedDim).map((h) => `<option value="${h}">${h}</option>`).join('');
    hs.dataset.for = state.embedDim;
  }
  hs.value = state.numHeads;
  $('#embed-dim').value = state.embedDim;
  if (document.activeElement !== $('#seed')) $('#seed').value = state.seed;
}

function headings(r) {
  const kind = r.kind;
  if (kind === 'seeded') {
    $('#maps-title').textContent = t('sec.maps');
    $('#maps-text').textContent = t(r.cross ? 'sec.mapsTextCross' : 'sec.mapsText');
  } else if (!r.entry && !r.sourceEmpty) {
    $('#maps-title').textContent = kind === 'lm' ? t('sec.mapsLayer', { n: r.layer + 1 }) : t('sec.mapsAttn', { attn: t(`attn.${r.attn}`), n: r.layer + 1 });
    $('#maps-text').textContent = t(kind === 'lm' ? 'sec.mapsTextLM' : { enc: 'sec.mapsTextEnc', dec: 'sec.mapsTextDec', cross: 'sec.mapsTextS2S' }[r.attn]);
    $('#model-text').textContent = t(kind === 'lm' ? 'sec.modelText' : 'sec.modelTextS2S');
    $('#named-none').hidden = r.model.namedHeads.length > 0;
  }
  setI18n($('#empty'), r.sourceEmpty ? 'empty.s2s' : kind === 's2s' ? 'empty.step' : 'empty');
  $('#empty').hidden = !r.empty || !!r.entry;
}

function modelInfo(r) {
  const m = r.model, c = m.config, tr = m.training ?? {};
  let s;
  if (r.kind === 'lm') {
    s = t('info.lm', { L: c.numLayers, H: c.numHeads, d: c.dModel, params: fmtInt(paramCount(m)), n: c.maxLen });
    // The training record's held-out losses: English fortunes and Chinese prose, then the everyday Chinese sentences
    // (tools/data/zh_everyday_heldout.py) when the record has them.
    const en = tr.heldout?.en?.loss, zh = tr.heldout?.zh_prose?.loss, day = tr.everyday?.loss;
    if (typeof en === 'number' && typeof zh === 'number') {
      s += ' · ' + t('info.lmLoss', { en: en.toFixed(2), zh: zh.toFixed(2) });
      if (typeof day === 'number') s += t('info.lmLossEveryday', { day: day.toFixed(2) });
    }
  } else {
    s = t('info.s2s', { Le: c.numEncoderLayers, Ld: c.numDecoderLayers, H: c.numHeads, d: c.dModel, params: fmtInt(paramCount(m)) });
    const acc = tr.heldout_generator?.exact_match ?? tr.test?.exact_match; // the independent held-out dates when measured
    if (typeof acc === 'number') s += ' · ' + t('info.s2sAcc', { acc: `${(acc * 100).toFixed(1)}%` });
  }
  const info = $('#model-info');
  info.textContent = s;
  info.title = `${FILE_NAMES[r.kind]}${tr.date ? ` · ${tr.date}` : ''}`;
}

/** The language model's next-character distribution, and the button that continues the text. */
function next(r, continueChars) {
  const run = r.run;
  $('#next-list').innerHTML = run.next.map((x) => {
    const label = x.token === null ? `<i>${escapeHtml(t('next.end'))}</i>` : escapeHtml(showToken(x.token));
    return `<span class="next-tok" title="${(x.p * 100).toFixed(2)}%"><b>${label}</b><span class="next-bar"><span style="width:${(x.p * 100).toFixed(1)}%"></span></span><span class="next-p">${pct(x.p)}</span></span>`;
  }).join('');
  const room = r.model.config.maxLen - run.ids.length;
  // Greedy continuation writes the most likely character first: when that is the end of text it writes nothing, so
  // the button is off and says why, as it does when the text fills the model's length (a title alone is not seen on
  // a phone).
  const ends = run.next[0]?.token === null;
  const why = room <= 0 ? t('btn.continueFull', { n: r.model.config.maxLen }) : ends ? t('btn.continueEnds') : '';
  const btn = $('#continue-btn');
  btn.disabled = !!why;
  btn.title = why || t('btn.continueTitle', { n: Math.min(continueChars, room) });
  const note = $('#continue-note');
  note.hidden = !why;
  if (note.textContent !== why) note.textContent = why;
}

function layerPick(r) {
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

function legend(state, r) {
  // The maps' own top (maps/mapspec.js): the layer's weights, the first column left out under 'rest'.
  paintLegend($('#legend'), { cmap: state.cmap, top: r.empty ? 1 : scaleTop(state.scale, r.weights.data, r.S), note: scaleNote(state.scale, r.empty ? undefined : r.cols?.[0]) });
  $('#cmap').value = state.cmap;
  $('#scale').value = state.scale;
}

function timing(r) {
  const el = $('#timing');
  if (r.empty || r.entry) { el.textContent = ''; return; }
  el.textContent = t(r.kind === 's2s' ? 'timing.decode' : 'timing', { ms: r.ms.toFixed(2) });
  el.dataset.ms = r.ms.toFixed(4);
}

export function createFrameView({ continueChars }) {
  return {
    name: 'frame',
    render(state, r) {
      layout(state, r);
      status(r);
      headings(r);
      timing(r);
      if (r.kind === 'seeded') seededControls(state, r);
      if (r.entry) return;
      if (r.kind !== 'seeded' && !r.sourceEmpty) { modelInfo(r); layerPick(r); }
      if (r.kind === 'lm' && r.run) next(r, continueChars);
      legend(state, r);
    },
  };
}
