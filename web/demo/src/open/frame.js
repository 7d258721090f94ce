// The frame of an opened model: the load's status (progress, memory, a refusal and why), the model's line, the
// inputs that fit its kind (a sentence pair for an encoder), its tokens, the next-token or [MASK] predictions, the layer
// and head pickers. Also hides the sections of the included models while this tab is shown.
import { supportedFamilies } from 'attnscope';
import { t, getLang } from '../i18n.js';
import { $, escapeHtml, escapeAttr, morph, setText } from '../dom.js';
import { createChipFold } from '../tokens/fold.js';
import { refusedForMemory } from './refused.js';
import { percent as pct } from '../percent.js';

// The guided path and Why attention are about the included models: drawn for them only, so in this tab they would
// stand as empty cards above it. The included model's tokens, next character and head switches too: their views
// skip this tab, so they would show the hidden model's (its own views show them again when its tab comes back).
const OTHER_SECTIONS = ['#guide-section', '#intro-guide', '#why-section', '#honesty', '#tokens-hint', '#tokens', '#tokens-toggle', '#lm-next', '#ablation', '#self-inputs', '#cross-inputs', '#s2s-inputs', '#decode-section', '#model-section', '#maps-section', '#hv-section', '#steps-section', '#layer-pick', '#seeded-controls', '#model-info', '#model-status', '#export-json'];
/** Bytes as MB (KB below one MB: the test checkpoints are tiny). */
const mb = (n) => {
  const fmt = (x) => x.toLocaleString(getLang() === 'zh' ? 'zh-CN' : 'en-US', { maximumFractionDigits: 1 });
  return n < 2 ** 20 ? `${fmt(n / 1024)} KB` : `${fmt(n / 2 ** 20)} MB`;
};
/** Sentences after one another: a space between them in English, none in Chinese. */
const sentences = (parts) => parts.filter(Boolean).join(getLang() === 'zh' ? '' : ' ');
/**
 * The core's message inside a sentence of the page's: without the call it names (`loadModel: `, which the page made,
 * not the person), and ended as a sentence, so that the next one does not run into it.
 */
const coreSentence = (msg) => {
  const s = String(msg).replace(/^loadModel: /, '').trim();
  return /[.!?。！？]$/.test(s) ? s : `${s}${getLang() === 'zh' ? '。' : '.'}`;
};
/** A failed load in words: cancelled, stopped, refused for memory or failed, and the memory it left. */
const failureText = (e) => (e.name === 'AbortError' ? t('open.cancelled') : e.name === 'WorkerStopped' ? t('open.stopped', { s: e.seconds })
  : sentences([t(refusedForMemory(e) ? 'open.refused' : 'open.failed', { msg: coreSentence(e.message) }), e.memory && memoryText(e.memory)]));
/** A parameter count as people say it: 124.4M, 1.2亿. */
const count = (n) => n.toLocaleString(getLang() === 'zh' ? 'zh-CN' : 'en-US', { notation: 'compact', maximumFractionDigits: 1 });

/** The core's memory plan (loadModel's onPlan): the parameters, a forward pass's workspace, what is left. */
const planText = (plan) => t('open.plan', { total: mb(plan.bytes), n: count(plan.parameters), params: mb(plan.parameterBytes), work: mb(plan.workspaceBytes), T: plan.tokens, free: mb(plan.availableBytes) });

/** What a failed load left in WebAssembly memory, measured in the Worker (memory never shrinks: say so when it grew). */
const memoryText = ({ before, after }) => (after > before ? t('open.memoryGrew', { grown: mb(after - before), wasm: mb(after) })
  : t('open.memoryKept', { wasm: mb(after) }));

/** The host of a folder URL as people read it (an internationalized domain in its own script). */
const hostOf = (url) => { try { return new URL(url).host; } catch { return url; } };

function status(load, fromFiles) {
  const st = $('#open-status');
  const row = $('#open-progress-row');
  row.hidden = load.status !== 'loading';
  // A link's folder URL: its host and the whole URL, and a question before any byte is fetched.
  const ask = $('#open-link');
  ask.hidden = load.status !== 'ask';
  if (load.status === 'ask') setText($('#open-link-text'), t('open.linkAsk', { host: hostOf(load.source.url), url: load.source.url }));
  st.classList.toggle('error', load.status === 'error' || (load.status === 'ready' && !!load.failed));
  if (load.status === 'loading') {
    const p = load.progress;
    const done = p ? p.loaded / Math.max(1, p.total) : 0;
    $('#open-progress').value = done;
    $('#open-progress-text').textContent = p
      ? t('open.progress', { file: p.file, done: mb(p.loaded), total: mb(p.total), pct: Math.floor(done * 100) })
      : t('open.reading');
    // The plan first, before anything is allocated; then what the loader allocated once it had checked the headers.
    const parts = load.plan ? [planText(load.plan)] : [t('open.checking')];
    if (load.wasmBytes) parts.push(t('open.allocated', { mb: mb(load.wasmBytes) }));
    setText(st, sentences(parts));
  } else if (load.status === 'error') {
    setText(st, failureText(load.error));
  } else if (load.status === 'ready' && load.failed) {
    // A later load failed and left this model open: the failure, and that this model is still here.
    setText(st, sentences([failureText(load.failed), t('open.keptPrevious')]));
  } else if (load.status === 'ready') {
    setText(st, sentences([load.plan && planText(load.plan), t('open.loaded', { mb: mb(load.info.parameterBytes), wasm: mb(load.info.wasmBytes) }),
      !load.info.hasTokenizer && t('open.loadedNoTokenizer')]));
  }
  else setText(st, fromFiles ? t('open.linkFiles') : '');
}

// A family by its registry's label, as it spells itself: config.json's model_type is a code name.
const familyLabel = (type) => supportedFamilies().find((f) => f.modelType === type)?.label ?? type;

function info(r) {
  const c = r.config;
  const kind = c.positions.kind;
  const pos = kind === 'rope' ? t('open.rope', { theta: c.positions.theta }) : t(kind === 'sinusoidal' ? 'open.sinusoidal' : kind === 'relative' ? 'open.relative' : 'open.learned');
  // How the heads share keys and values, in words (not MHA / MQA / GQA).
  const attn = c.kvHeads === c.heads ? t('open.attn.mha') : c.kvHeads === 1 ? t('open.attn.mqa') : t('open.attn.gqa', { H: c.heads, kv: c.kvHeads });
  const el = $('#open-info');
  el.hidden = false;
  // The norm and the MLP in words; a kind the words do not know yet keeps its own name rather than a missing key.
  const word = (key, name) => (t(key) === key ? name : t(key));
  const norm = word(`open.norm.${c.norm}`, c.norm), mlp = word(`open.mlp.${c.mlp}`, c.mlp);
  setText(el, t('open.info', { family: familyLabel(c.family), L: c.layers, H: c.heads, attn, d: c.hiddenSize, dh: c.headDim, pos, norm, mlp, n: c.maxPositions }));
}

function selects(r) {
  const c = r.config;
  const sig = `${c.layers}x${c.heads}|${getLang()}`;
  const ls = $('#open-layer'), hs = $('#open-head');
  if (ls.dataset.sig !== sig) {
    ls.innerHTML = [...Array(c.layers).keys()].map((l) => `<option value="${l}">${escapeHtml(t('mv.layer', { n: l + 1 }))}</option>`).join('');
    hs.innerHTML = [...Array(c.heads).keys()].map((h) => `<option value="${h}">${escapeHtml(t('head', { n: h + 1 }))}${c.kvHeads < c.heads ? ` · KV${Math.floor(h / (c.heads / c.kvHeads)) + 1}` : ''}</option>`).join('');
    ls.dataset.sig = hs.dataset.sig = sig;
  }
  ls.value = String(r.layer);
  hs.value = String(r.head);
  const off = r.ablate.some((x) => x.layer === r.layer && x.head === r.head);
  const b = $('#open-ablate');
  b.setAttribute('aria-pressed', String(off));
  setText(b, t(off ? 'open.headOn' : 'open.headOff', { l: r.layer + 1, h: r.head + 1 }));
}

let tokensShown = { run: null, qi: -1, label: '' };
/**
 * The token chips, patched only when the run, the query or the language (the group's label) changed: at 512 tokens
 * a rebuild costs a frame.
 */
function tokens(r) {
  const label = t('tok.pick');
  if (tokensShown.run === r.run && tokensShown.qi === r.qi && tokensShown.label === label && $('#open-tokens').childElementCount) return;
  tokensShown = { run: r.run, qi: r.qi, label };
  const types = r.run.tokenTypeIds;
  morph($('#open-tokens'), `<div class="tok-row" role="group" aria-label="${escapeAttr(label)}">${r.rows.map((s, i) => `<button type="button" class="tok${i === r.qi ? ' selected' : ''}${types?.[i] ? ' type-b' : ''}" data-i="${i}" aria-pressed="${i === r.qi}" title="${escapeAttr(`${i}: ${s}`)}">${escapeHtml(s)}</button>`).join('')}</div>`);
}

/** HTML written only when it changed (text: dom.js's setText): a click re-renders this view, and a needless write costs a layout. */
const written = new WeakMap();
const html = (el, s) => { if (written.get(el) !== s) { el.innerHTML = s; written.set(el, s); } };

/** Heads as the page names them: L2 H1. */
const shortHeads = (heads) => heads.map((x) => t('abl.short', { l: x.layer + 1, h: x.head + 1 })).join(', ');

function predictions(r, continueTokens) {
  const el = $('#open-predict');
  const p = r.run.predictions;
  if (!p) { html(el, `<p class="hint">${escapeHtml(t('open.noHead'))}</p>`); return; }
  const list = (top) => top.map((x) => `<span class="next-tok" title="${(x.p * 100).toFixed(2)}%"><b>${escapeHtml(x.token)}</b><span class="next-bar"><span style="width:${(x.p * 100).toFixed(1)}%"></span></span><span class="next-p">${pct(x.p)}</span></span>`).join('');
  const enc = r.info.kind === 'encoder';
  /** One model's predictions: the next token, or each [MASK]'s filling. */
  const rows = (preds) => (enc
    ? preds.map((x) => `<div class="open-fill"><span>${escapeHtml(t('open.maskAt', { i: x.t }))}</span> ${list(x.top)}</div>`).join('')
    : `<div class="open-fill"><span>${escapeHtml(t('open.next'))}</span> ${list(preds[0].top)}</div>`);
  let body;
  if (enc && !p.length) body = `<p class="hint">${escapeHtml(t('open.maskHint'))}</p>`;
  else if (r.ablate.length) {
    // Heads switched off: the model with every head beside the one without them, as for the included model.
    const all = r.allHeads ? rows(r.allHeads) : `<p class="hint">${escapeHtml(t('open.computing'))}</p>`;
    body = `<div class="ablation-compare open-compare"><div class="abl-side"><b>${escapeHtml(t('abl.all'))}</b>${all}</div>`
      + `<div class="abl-side off"><b>${escapeHtml(t('abl.without', { list: shortHeads(r.ablate) }))}</b>${rows(p)}</div></div>`;
  } else body = rows(p);
  html(el, body + (enc ? '' : `<button type="button" class="btn" id="open-continue">${escapeHtml(t('open.continue', { n: continueTokens }))}</button>`));
}

export function createOpenFrameView({ continueTokens }) {
  const fold = createChipFold($('#open-tokens'), $('#open-tokens-toggle'));
  return {
    name: 'openFrame',
    render(state, r) {
      const isOpen = state.mode === 'open';
      $('#open-inputs').hidden = !isOpen;
      // One colour map and scale picker with its legend for every model: in this tab it stands over the opened
      // model's maps (open/layer.js writes its ticks), elsewhere over the included models' maps.
      const tools = $('.map-tools'), home = isOpen ? $('#open-tools') : $('#maps-section .section-head');
      if (tools.parentElement !== home) home.append(tools);
      if (!isOpen) {
        $('#open-section').hidden = true;
        for (const sel of ['#export-json', '#honesty', '#tokens-hint', '#guide-section', '#intro-guide', '#why-section']) $(sel).hidden = false;
        return;
      }
      for (const sel of OTHER_SECTIONS) { const el = $(sel); if (el) el.hidden = true; }
      for (const b of document.querySelectorAll('#mode-tabs [data-mode]')) {
        const on = b.dataset.mode === 'open';
        b.setAttribute('aria-selected', String(on));
        b.tabIndex = on ? 0 : -1;
      }
      document.body.dataset.kind = 'hf';
      // The header's badge times the opened model's pass in its Worker, as it times the included models' own.
      const badge = $('#timing'), ms = r.load.status === 'ready' && Number.isFinite(r.ms) ? r.ms : null;
      setText(badge, ms === null ? '' : t(r.translation ? 'timing.decode' : 'timing', { ms: ms.toFixed(1) }));
      if (ms !== null) badge.dataset.ms = ms.toFixed(4);
      status(r.load, !!state.open.fromFiles);
      const ready = r.load.status === 'ready';
      $('#open-text-row').hidden = !ready;
      $('#open-section').hidden = !ready || r.empty;
      if (!ready) { $('#open-info').hidden = true; return; }
      info(r);
      const enc = r.info.kind === 'encoder';
      $('#open-pair-row').hidden = !enc;
      const s2s = r.info.kind === 'seq2seq';
      const noTokenizer = r.load.source?.spm ? 'open.spmOnly' : 'open.noTokenizer';
      setText($('#open-hint'), sentences([t(enc ? 'open.hintBert' : s2s ? 'open.hintS2s' : 'open.hintLm'), !r.info.hasTokenizer && t(noTokenizer)]));
      if (document.activeElement !== $('#open-text')) $('#open-text').value = state.open.text;
      if (document.activeElement !== $('#open-pair')) $('#open-pair').value = state.open.pair;
      // The model loaded: an input it cannot run (ids out of range) is said as such, beside the text box, not as a failed load.
      const bad = $('#open-input-error');
      bad.hidden = !r.error;
      if (r.error) setText(bad, t('open.inputError', { msg: r.error.badId ? t('open.badId', r.error.badId) : r.error.message }));
      // The maps shown are of an older input while the Worker computes the newest: dimmed, and said, after 200 ms (CSS).
      // Set before an empty text returns: a box cleared while a pass computed is not left dimmed with nothing to wait on.
      const busy = !r.empty && !!r.stale;
      const sec = $('#open-section');
      sec.classList.toggle('busy', busy);
      sec.setAttribute('aria-busy', String(busy));
      $('#open-text-row').classList.toggle('busy', busy);
      for (const sel of ['#open-tokens', '#open-predict']) $(sel).setAttribute('aria-busy', String(busy));
      setText($('#open-busy'), busy ? t('open.computing') : '');
      if (r.empty) { $('#open-tokens').innerHTML = ''; fold(); html($('#open-predict'), ''); tokensShown = { run: null, qi: -1 }; return; }
      setText($('#open-model-text'), t('open.modelText', { T: r.T, ms: r.ms.toFixed(1) }));
      tokens(r);
      fold();
      $('#open-truncated').hidden = !(r.run.total > r.T);
      if (r.run.total > r.T) $('#open-truncated').textContent = t('open.truncated', { n: r.T, total: r.run.total });
      predictions(r, continueTokens);
      selects(r);
    },
  };
}
