// The "Why attention" section: a date read by two GRU encoder–decoders, the fixed context vector of the one
// without attention and its answer, the weights of the one with attention step by step, and the measured curve.
import { t, getLang } from '../i18n.js';
import { $, escapeHtml, escapeAttr, tabStopWhileScrolling } from '../dom.js';
import { EXAMPLES } from '../state.js';
import { rnnModels, rnnRun } from './rnn.js';
import { bottleneckCurves } from './curves.js';
import { vectorCells, weightWords, answerChars, curvePlot, fmt } from './draw.js';
import { LONG_EXAMPLES, compareHtml, withTenMoreWords } from './compare.js';
import { attachPlayer, bindPlayer, playerButtons, updateButtons, shownStep, focusIndex, counterText, pause, isPlaying } from './player.js';
import './why.css';

/** The link into the transformer's dates view for the same sentence. */
export const s2sHash = (state) => `#${new URLSearchParams({ lang: state.lang, mode: 's2s', date: state.date })}`;

/** A long example's first words, for the picker. */
const shorten = (text) => `${text.split(' ').slice(0, 5).join(' ')} … (${t('why.nWords', { n: text.split(' ').length })})`;

/** The picker's options: the dates model's examples, then the long sentences (values L0, L1, …). */
const exampleOptions = () => '<option value="">—</option>'
  + EXAMPLES.dates.map((d, i) => `<option value="${i}">${escapeHtml(d)}</option>`).join('')
  + `<optgroup label="${escapeAttr(t('why.exLong'))}">`
  + LONG_EXAMPLES.map((e, i) => `<option value="L${i}">${escapeHtml(shorten(e.text))}</option>`).join('') + '</optgroup>';

export function createWhyView(app) {
  const root = $('#why-section');
  attachPlayer(app);
  let skeletonLang = '';
  let curveHtml = '';
  let checkCurveStop = () => {};
  let drawnFor = { sig: '', models: null };

  function skeleton() {
    root.innerHTML = `
      <h2 id="why-title">${t('why.title')}</h2>
      <p class="lead">${t('why.lead')}</p>
      <p class="note why-standin" id="why-standin" role="note" hidden>${t('why.standIn')}</p>
      <label for="why-date" class="field-label">${t('why.input')}</label>
      <textarea id="why-date" rows="1" spellcheck="false" autocomplete="off"></textarea>
      <div class="examples why-examples"><label>${t('input.examples')} <select id="why-examples">${exampleOptions()}</select></label>
        <button type="button" class="btn ghost" id="why-more">${t('why.more')}</button></div>
      <p class="note why-hint">${t('why.hint')}</p>
      <p class="status" id="why-status" role="status" hidden></p>
      <div class="why-words" id="why-words"></div>
      <div class="why-compare" id="why-compare" role="group" aria-label="${escapeAttr(t('why.cmpTitle'))}"></div>
      <div class="why-grid">
        <div class="why-panel" id="why-none">
          <h3>${t('why.ctxTitle')}</h3>
          <p class="lead" id="why-ctx-text"></p>
          <div id="why-ctx"></div>
          <p class="why-line"><b>${t('why.answerNone')}</b> <span id="why-none-answer"></span></p>
        </div>
        <div class="why-panel" id="why-attn">
          <h3>${t('why.attnTitle')}</h3>
          <p class="lead">${t('why.attnText')}</p>
          ${playerButtons('why', t)}
          <div id="why-attn-row"></div>
          <p class="why-line"><b>${t('why.answerAttn')}</b> <span id="why-attn-answer"></span></p>
        </div>
      </div>
      <h3 class="why-curve-title">${t('why.curveTitle')}</h3>
      <p class="lead">${t('why.curveText')}</p>
      <div id="why-curve" role="region" aria-label="${escapeAttr(t('why.curveLabel'))}"></div>
      <p><a id="why-to-s2s" class="why-link" href="#">${t('why.toS2S')}</a></p>
      <p><a id="why-to-open" class="why-link" href="#">${t('why.toOpen')}</a></p>`;
    skeletonLang = getLang();
    // The curve scrolls on a phone (a Tab stop then, for the arrow keys), and fits on a desktop (no stop).
    checkCurveStop.disconnect?.(); // the old curve's region, replaced with the skeleton
    checkCurveStop = tabStopWhileScrolling($('#why-curve'));
    curveHtml = '';
    drawnFor = { sig: '', models: null };
    // The handlers only change the state (the dates view's own input shows the same sentence) and ask for a redraw.
    $('#why-date').addEventListener('input', (e) => { setDate(e.target.value); });
    // One control for the examples, not a button each: the page keeps few Tab stops (a11y.test.js).
    $('#why-examples').addEventListener('change', (e) => {
      const v = e.target.value;
      if (v !== '') setDate(v[0] === 'L' ? LONG_EXAMPLES[Number(v.slice(1))].text : EXAMPLES.dates[Number(v)]);
    });
    // The user's own sentence, made longer until the fixed vector loses it (the words are ones the models skip).
    $('#why-more').addEventListener('click', () => {
      const words = app.state.date.trim() ? app.state.date.trim().split(/\s+/).length : 0;
      setDate(withTenMoreWords(app.state.date, words));
    });
    $('#why-to-s2s').addEventListener('click', (e) => {
      e.preventDefault();
      app.setMode('s2s');
      $('#s2s-inputs').closest('section').scrollIntoView({ block: 'start' });
    });
    $('#why-to-open').addEventListener('click', (e) => {
      e.preventDefault();
      app.setMode('open');
      $('#open-inputs').scrollIntoView({ block: 'start' });
    });
  }

  function setDate(text) {
    pause();
    app.state.date = text;
    app.state.wstep = -1;
    app.state.step = -1;
    app.state.query = -1;
    // Both inputs of the sentence show it at once (the render leaves a focused input alone).
    for (const el of [$('#date'), $('#why-date')]) if (el && el.value !== text) el.value = text;
    app.invalidate();
  }

  bindPlayer(root);
  // A hand-edited or followed link sets its own step: a running player would walk away from it.
  window.addEventListener('hashchange', pause);

  return {
    name: 'why',
    root,
    *render(state) {
      if (skeletonLang !== getLang()) skeleton();
      const input = $('#why-date');
      if (document.activeElement !== input && input.value !== state.date) input.value = state.date;
      $('#why-to-s2s').href = s2sHash(state);
      $('#why-to-open').href = `#${new URLSearchParams({ lang: state.lang, mode: 'open' })}`;
      const ex = EXAMPLES.dates.indexOf(state.date), long = LONG_EXAMPLES.findIndex((e) => e.text === state.date);
      $('#why-examples').value = ex >= 0 ? String(ex) : long >= 0 ? `L${long}` : '';
      const models = rnnModels(() => app.invalidate());
      const st = $('#why-status');
      st.hidden = models.status === 'ready';
      st.textContent = models.status === 'error' ? t('why.loadError', { msg: models.error?.message ?? '' }) : t('why.loading');
      $('#why-standin').hidden = !models.standIn;
      root.dataset.wired = models.standIn ? 'stand-in' : 'trained';
      // Drawn again only when it changes: a redraw per keystroke would close its table if the reader opened it.
      const curves = bottleneckCurves();
      const html = curves ? curvePlot(curves) : `<p class="note" id="why-curve-none">${t('why.curveNone')}</p>`;
      if (curveHtml !== html) { $('#why-curve').innerHTML = html; curveHtml = html; checkCurveStop(); }
      if (models.status !== 'ready') return;
      // Typing elsewhere on the page changes nothing here: skip the DOM work then.
      // (Noted only once drawn: a pass abandoned at the yield below must not count as drawn.)
      const sig = `${getLang()}|${state.date}|${state.wstep}|${state.cmap}|${isPlaying()}`;
      if (sig === drawnFor.sig && drawnFor.models === models.attention) return;
      drawnFor = { sig: '', models: null };
      yield; // the two RNNs run after the keystroke's frame, coalesced by the scheduler
      const run = rnnRun(models, state.date);
      const grid = root.querySelector('.why-grid');
      grid.hidden = !!run.empty;
      $('#why-compare').hidden = !!run.empty;
      if (run.empty) { $('#why-words').textContent = t('why.empty'); return; }
      $('#why-compare').innerHTML = compareHtml(run, state.date);
      $('#why-words').innerHTML = `<b>${t('why.words')}</b> ${run.sourceTokens.map((w) => `<span class="tok">${escapeHtml(w)}</span>`).join(' ')}`;

      const none = run.bottleneck;
      const c = none.context;
      $('#why-ctx-text').textContent = t('why.ctxText', { n: c.length });
      $('#why-ctx').innerHTML = vectorCells(c, { label: t('why.ctxLabel', { n: c.length, min: fmt(Math.min(...c)), max: fmt(Math.max(...c)) }) });
      $('#why-none-answer').innerHTML = answerChars(none.tokens);

      const at = run.attention;
      const n = at.weights?.length ?? 0;
      const s = shownStep(state, n);
      const cur = focusIndex(state, at.tokens, s);
      const tok = at.tokens[cur] === '<eos>' ? t('why.eos') : at.tokens[cur] ?? '';
      $('#why-attn-row').innerHTML = cur >= 0
        ? `<p class="why-step">${escapeHtml(t('why.writing', { tok }))}</p>${weightWords(run.sourceTokens, at.weights[cur], { cmap: state.cmap, label: t('why.weightsLabel', { t: cur + 1, tok }) })}`
        : '';
      $('#why-attn-answer').innerHTML = answerChars(at.tokens, { shown: s, current: cur });
      // One step counter, the step whose weights are shown (finished, the last character before <eos>).
      updateButtons(root, state, n, counterText(state, n, cur, t));
      drawnFor = { sig, models: models.attention };
    },
  };
}
