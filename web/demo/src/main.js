// The demo page's core: the state, the scheduler that turns it into drawings, and the routing of input to state.
// Input handlers only change the state and call invalidate(); the views (a view.js in each feature's folder) each draw one part of the
// page from the latest result with render(state, result), and never call each other.
import { init, supportedFamilies } from 'attnscope';
import { t, setLang, browserLang, pageVars } from './i18n.js';
import { $, escapeHtml } from './dom.js';
import { EMBED_SIZES, EXAMPLES, SPEEDS, defaultState, headChoices, parseHash, toHash } from './state.js';
import { gradientCss, divergingGradientCss } from './maps/colors.js';
import { createScheduler } from './scheduler.js';
import { createComputer } from './models/compute.js';
import { exportMap, exportJson } from './maps/exporting.js';
import { createFrameView } from './frame.js';
import { createTokensView } from './tokens/view.js';
import { createDecodeView } from './decode/view.js';
import { createModelView } from './model-view/view.js';
import { createQueryScrubView } from './maps/query-scrub.js';
import { createMapsView } from './maps/view.js';
import { createHeadsView } from './heads/view.js';
import { createStepsView } from './steps/view.js';
import { createAblationView } from './heads/ablation.js';
import { createWhyView } from './why/view.js';
import { createGuideView } from './guide/view.js';
import { createGlanceView } from './model-view/glance.js';
import { installTestHooks } from './testhooks.js';
import { watchOffline } from './offline.js';
import { createOpenSession } from './open/session.js';
import { createOpenFrameView } from './open/frame.js';
import { createOpenGridView } from './open/grid.js';
import { createOpenLayerView } from './open/layer.js';
import { createOpenTraceView } from './open/trace.js';
import { createFindHeadsView } from './open/findheads.js';
import { createPatchingView } from './open/patching.js';
import { bindOpenPanel } from './open/panel.js';
import { exportOpenFigure } from './open/export.js';
import { createOpenTranslationView } from './open/translation.js';
import { openTextFor } from './open/hash.js';
import { createLensView } from './research/lens.js';
import { createCompareView } from './research/compare.js';
import { createShowsView } from './research/shows.js';
import { createSinksView } from './research/sinks.js';
import { createCircuitsView } from './research/circuits.js';
import { createCacheView } from './research/cache.js';
import { exportViewHtml } from './research/html-export.js';

/** Characters that "Continue the text" asks the language model for. */
const CONTINUE_CHARS = 40;

const state = parseHash(location.hash, defaultState(browserLang()));
const computer = createComputer({ onModel: () => scheduler.invalidate() });
const player = { timer: 0 };
const isPlaying = () => player.timer !== 0;
let zoomAfterPass = null; // a model-view click opens its map enlarged once the maps show that layer

const app = {
  state,
  result: () => scheduler.status.result,
  invalidate: () => scheduler.invalidate(),
  isPlaying,
  exportMap: (which, kind) => exportMap(state, app.result(), which, kind),
  setMode: (mode) => setMode(mode),
  pick: (attn, layer, head) => {
    if (state.mode === 's2s') state.attn = attn;
    state.layer = layer;
    zoomAfterPass = head;
    scheduler.invalidate();
  },
};

// An opened Hugging Face model: its session (the model Worker) and its views; the included models' views skip it.
const OPEN_CONTINUE_TOKENS = 20;
const session = createOpenSession({
  invalidate: () => scheduler.invalidate(),
  showProgress: (kind, p) => ({ patch: patchingView, positions: compareView, lens: lensView })[kind].showProgress(p),
});
const openApp = {
  state,
  invalidate: () => scheduler.invalidate(),
  pick: (layer, head) => { state.open.layer = layer; state.open.head = head; scheduler.invalidate(); },
  select: (i) => { state.open.query = i; scheduler.invalidate(); },
};
const patchingView = createPatchingView({ run: (input) => session.patching(input), cancel: () => session.cancelPatching() });
const compareView = createCompareView({ ...openApp, cancel: () => session.cancelPatching() });
const lensView = createLensView({ ...openApp, cancel: () => session.cancelLens() });
const notOpen = (view) => ({ ...view, render: view.render.bind(view), wants: (r) => r.kind !== 'hf' && (!view.wants || view.wants(r)) });

const maps = createMapsView(app);
const includedViews = [
  createFrameView({ continueChars: CONTINUE_CHARS }),
  createGuideView(app),
  createWhyView(app),
  createTokensView(app),
  createGlanceView(app),
  createAblationView({ ...app, continueChars: CONTINUE_CHARS }),
  createDecodeView(app),
  createModelView(app),
  maps,
  createHeadsView(app),
  createStepsView(app),
];
const views = [
  ...includedViews.map(notOpen),
  createOpenFrameView({ continueTokens: OPEN_CONTINUE_TOKENS }),
  createQueryScrubView(app),
  createShowsView(openApp),
  createOpenGridView(openApp),
  createOpenLayerView(openApp),
  createOpenTraceView(),
  createOpenTranslationView(openApp),
  createFindHeadsView({ pick: openApp.pick, run: () => session.findHeads() }),
  createCircuitsView(openApp),
  patchingView,
  lensView,
  createSinksView(openApp),
  compareView,
  createCacheView({ ...openApp, exportCache: (body) => session.research.exportCache(body) }),
];

let urlTimer = 0;
let openPanel = null; // bindOpenPanel's: a link's sample model opens through it
const scheduler = createScheduler({
  getState: () => state,
  compute: () => (state.mode === 'open' ? session.compute(state) : computer.compute(state)),
  views,
  onDone: (r) => {
    session.drawn(r);
    // Debounced: Chromium throttles pages that call replaceState on every keystroke.
    clearTimeout(urlTimer);
    urlTimer = setTimeout(() => history.replaceState(null, '', toHash(state)), 150);
    if (zoomAfterPass != null && !r.empty) maps.openZoom(zoomAfterPass);
    zoomAfterPass = null;
  },
});

// ---------------------------------------------------------------- decoding, step by step (dates model)
const decodeLength = () => { const run = computer.s2sRun(); return run && !run.empty ? run.steps.length : 0; };
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
  // The last step reached is the finished view (step −1), the same as a date shown whole (models/compute.js focuses
  // its last character before <eos>), however it was reached.
  if (state.step >= N) { state.step = -1; stopPlaying(); }
  scheduler.invalidate();
}

function play() {
  if (!decodeLength()) return;
  if (shownNow() >= decodeLength()) state.step = 0;
  stopPlaying();
  player.timer = setInterval(advance, SPEEDS[state.speed]);
  advance();
}

function continueText() {
  const r = app.result();
  if (r?.kind !== 'lm' || !r.run) return;
  const room = r.model.config.maxLen - r.run.ids.length;
  if (room <= 0) return;
  // With the heads that are switched off still off.
  const { text } = r.model.generate(r.run.ids, { maxNewTokens: Math.min(CONTINUE_CHARS, room), ...(r.ablated.length ? { ablate: r.ablated } : {}) });
  state.text = r.run.chars.join('') + text;
  $('#text').value = state.text;
  state.query = -1;
  scheduler.invalidate();
}

// ---------------------------------------------------------------- input → state
function setMode(mode) {
  if (mode === state.mode) return;
  state.mode = mode;
  state.query = -1;
  stopPlaying();
  scheduler.invalidate();
}

/** The inputs show the state (at start, and after the hash changed by hand). */
function showState() {
  $('#text').value = state.text; $('#src').value = state.src; $('#tgt').value = state.tgt; $('#date').value = state.date;
  $('#embed-dim').value = state.embedDim; $('#seed').value = state.seed; $('#cmap').value = state.cmap; $('#scale').value = state.scale;
}

function bind() {
  openPanel = bindOpenPanel({
    state, session, continueTokens: OPEN_CONTINUE_TOKENS,
    invalidate: () => scheduler.invalidate(),
    exportFigure: (kind) => (kind === 'html'
      ? exportViewHtml(state, scheduler.status.result, location.origin + location.pathname + toHash(state))
      : exportOpenFigure(state, scheduler.status.result, kind)),
    onError: (key) => { $('#open-status').textContent = t(key); $('#open-status').classList.add('error'); },
  });
  const on = (sel, type, fn) => $(sel).addEventListener(type, fn);
  const change = (fn) => (e) => { fn(e); scheduler.invalidate(); };

  // Text: the handler only stores the text; drawing follows after the character is painted.
  on('#text', 'input', change((e) => { state.text = e.target.value; state.query = -1; }));
  on('#src', 'input', change((e) => { state.src = e.target.value; }));
  on('#tgt', 'input', change((e) => { state.tgt = e.target.value; state.query = -1; }));
  on('#date', 'input', change((e) => { state.date = e.target.value; state.step = -1; state.query = -1; stopPlaying(); }));
  $('#date-examples').insertAdjacentHTML('beforeend', EXAMPLES.dates.map((d, i) => `<button type="button" class="link" data-date="${i}">${escapeHtml(d)}</button>`).join(''));
  on('#date-examples', 'click', (e) => {
    const b = e.target.closest('[data-date]');
    if (!b) return;
    state.date = $('#date').value = EXAMPLES.dates[Number(b.dataset.date)];
    state.step = -1;
    state.query = -1;
    stopPlaying();
    scheduler.invalidate();
  });
  for (const b of document.querySelectorAll('[data-example]')) {
    b.addEventListener('click', () => {
      // An example with a Chinese version (Repetition) gives it on the Chinese page.
      const name = b.dataset.example;
      const ex = EXAMPLES[state.lang === 'zh' && EXAMPLES[`${name}Zh`] ? `${name}Zh` : name];
      if (typeof ex === 'string') state.text = $('#text').value = ex;
      else { state.src = $('#src').value = ex.src; state.tgt = $('#tgt').value = ex.tgt; }
      state.query = -1;
      scheduler.invalidate();
    });
  }

  // Mode tabs (WAI-ARIA tabs: arrow keys move and select, Home/End jump).
  on('#mode-tabs', 'click', (e) => { const b = e.target.closest('[data-mode]'); if (b) setMode(b.dataset.mode); });
  on('#mode-tabs', 'keydown', (e) => {
    const tabs = [...document.querySelectorAll('#mode-tabs [data-mode]')];
    const i = tabs.indexOf(e.target.closest('[data-mode]'));
    if (i < 0) return;
    const to = { ArrowLeft: (i + tabs.length - 1) % tabs.length, ArrowRight: (i + 1) % tabs.length, Home: 0, End: tabs.length - 1 }[e.key];
    if (to == null) return;
    e.preventDefault();
    for (const b of tabs) b.tabIndex = b === tabs[to] ? 0 : -1;
    tabs[to].focus();
    setMode(tabs[to].dataset.mode);
  });
  const pickModel = (model) => {
    if (model === state.model) return;
    state.model = model;
    state.query = -1;
    scheduler.invalidate();
  };
  on('#model-switch', 'click', (e) => {
    const b = e.target.closest('[data-model]');
    if (b) pickModel(b.dataset.model);
  });
  // A radio group: one Tab stop (the checked radio, frame.js), and the arrow keys move and check.
  on('#model-switch', 'keydown', (e) => {
    const radios = [...document.querySelectorAll('#model-switch [data-model]')];
    const i = radios.indexOf(e.target.closest('[data-model]'));
    if (i < 0) return;
    const n = radios.length;
    const to = { ArrowLeft: (i + n - 1) % n, ArrowUp: (i + n - 1) % n, ArrowRight: (i + 1) % n, ArrowDown: (i + 1) % n }[e.key];
    if (to == null) return;
    e.preventDefault();
    radios[to].focus();
    pickModel(radios[to].dataset.model);
  });
  on('#continue-btn', 'click', continueText);
  // The intro's way to the guided path, about 1,700 px down on a desktop: there, with the focus on its first button.
  on('#intro-guide', 'click', () => {
    $('#guide-section').scrollIntoView({ block: 'start' });
    ($('#guide-start') ?? $('#guide-step-title'))?.focus({ preventScroll: true });
  });
  on('#layer-select', 'change', change((e) => {
    const [attn, layer] = e.target.value.split(':');
    if (state.mode === 's2s') state.attn = attn;
    state.layer = Number(layer);
  }));

  // The decoding player.
  on('#dec-play', 'click', play);
  on('#dec-pause', 'click', change(stopPlaying));
  on('#dec-step', 'click', () => { stopPlaying(); advance(); });
  on('#dec-back', 'click', change(() => { stopPlaying(); state.step = Math.max(0, shownNow() - 1); state.query = -1; }));
  on('#dec-reset', 'click', change(() => { stopPlaying(); state.step = 0; state.query = -1; }));
  on('#dec-speed', 'change', change((e) => {
    state.speed = e.target.value;
    if (isPlaying()) { stopPlaying(); player.timer = setInterval(advance, SPEEDS[state.speed]); }
  }));
  const pickStep = (e) => {
    const g = e.target.closest('.dec-slot.done');
    if (g) { state.query = Number(g.dataset.t); scheduler.invalidate(); }
  };
  on('#decode', 'click', pickStep);
  on('#decode', 'keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pickStep(e); } });

  // The untrained layer's settings.
  const ed = $('#embed-dim');
  ed.innerHTML = EMBED_SIZES.map((e) => `<option value="${e}">${e}</option>`).join('');
  ed.addEventListener('change', change(() => {
    state.embedDim = Number(ed.value);
    const ch = headChoices(state.embedDim);
    if (!ch.includes(state.numHeads)) state.numHeads = ch.filter((h) => h <= state.numHeads).pop() ?? 1;
  }));
  on('#num-heads', 'change', change((e) => {
    state.numHeads = Number(e.target.value);
    state.head = Math.min(state.head, state.numHeads - 1);
    state.off = state.off.filter((h) => h < state.numHeads);
  }));
  on('#seed', 'input', (e) => {
    const v = Number(e.target.value);
    if (Number.isInteger(v) && v >= 0 && v < 2 ** 31) { state.seed = v; scheduler.invalidate(); }
  });
  on('#causal', 'change', change((e) => { state.causal = e.target.checked; }));
  on('#cmap', 'change', change((e) => { state.cmap = e.target.value; }));
  on('#scale', 'change', change((e) => { state.scale = e.target.value; }));

  on('#lang-btn', 'click', change(() => {
    state.lang = state.lang === 'zh' ? 'en' : 'zh';
    setLang(state.lang);
    // Open a model's first sentence follows the language (one the reader typed stays).
    state.open = { ...state.open, text: openTextFor(state.open.text, state.lang, session.load.info?.kind === 'encoder') };
  }));
  on('#copy-link', 'click', async () => {
    const url = location.origin + location.pathname + location.search + toHash(state);
    history.replaceState(null, '', toHash(state));
    const btn = $('#copy-link');
    btn.dataset.url = url;
    // A model opened from files on a disk: the link carries its text, not the files, and says so.
    const withoutFiles = state.mode === 'open' && !state.open.url && !state.open.sample && session.load.status === 'ready';
    try {
      await navigator.clipboard.writeText(url);
      btn.textContent = t(withoutFiles ? 'open.linkCopiedFiles' : 'btn.linkDone');
    } catch {
      // No clipboard here (plain http, no permission): the address bar holds the same link.
      btn.textContent = t('btn.linkInBar');
    }
    if (withoutFiles && btn.textContent === t('btn.linkInBar')) btn.textContent = t('open.linkCopiedFiles');
    setTimeout(() => { btn.textContent = t('btn.link'); }, withoutFiles ? 4000 : 1500);
  });
  on('#export-json', 'click', () => exportJson(state, app.result(), location.origin + location.pathname + toHash(state)));

  let lastWidth = window.innerWidth;
  window.addEventListener('resize', () => {
    if (window.innerWidth !== lastWidth) { lastWidth = window.innerWidth; scheduler.invalidate(); }
  });
  window.addEventListener('hashchange', (e) => {
    // The event's own URL: a debounced replaceState (onDone) may already have written the old state's hash back.
    const hash = new URL(e.newURL).hash;
    if (hash === toHash(state)) return;
    clearTimeout(urlTimer);
    // A hand-edited hash is read over the defaults, not over the current view: what it leaves out is reset.
    Object.assign(state, parseHash(hash, defaultState(state.lang)));
    stopPlaying();
    showState();
    setLang(state.lang);
    scheduler.invalidate();
  });
}

async function main() {
  setLang(state.lang);
  $('#legend .legend-bar').style.background = gradientCss(state.cmap);
  document.documentElement.style.setProperty('--diverging', divergingGradientCss());
  bind();
  showState();
  installTestHooks({ state, scheduler, stopPlaying, isPlaying });
  watchOffline(() => scheduler.invalidate());
  // Every core where the page is cross-origin isolated (npm start serves it so); the single-threaded build elsewhere.
  // The threaded files are not in the bundle: vite.config.js emits them into attnscope-mt/.
  await init({ threads: 'auto', threadsUrl: './attnscope-mt/' });
  // The families the page can open are the core's registry, not a list of the page's own.
  const labels = supportedFamilies().map((f) => f.label);
  pageVars.families = { en: labels.join(', '), zh: labels.join('、') };
  setLang(state.lang);
  // A link to a model opened from a folder URL offers to reopen it from that URL: a link never downloads by itself.
  if (state.mode === 'open' && state.open.url) { $('#open-url').value = state.open.url; session.ask({ url: state.open.url, fromLink: true }); }
  // A link made with the sample model opens it as its button does: its files are served with the page.
  else if (state.mode === 'open' && state.open.sample) openPanel.openSample(true);
  // A link made with a model from files on a disk: it says the files must be picked again (open/frame.js).
  else if (state.mode === 'open' && /[#&]otext=/.test(location.hash)) state.open.fromFiles = true;
  scheduler.invalidate();
  await new Promise((ok) => { const wait = () => (scheduler.status.consistentVersion === scheduler.version ? ok() : setTimeout(wait, 10)); wait(); });
  document.body.classList.add('ready');
}

main().catch((err) => {
  console.error(err);
  const p = document.createElement('p');
  p.className = 'fatal';
  p.textContent = `attnscope could not start: ${err.message}`;
  document.querySelector('main').prepend(p);
});
