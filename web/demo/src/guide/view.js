// The guided path, in the tutorial's order: 1 the bottleneck, 2 attention, 3 Q, K and V, 4 score, softmax, weighted
// sum, 5 self-attention, 6 multi-head. Each step: a short text and one live view of the reader's sentence with its
// numbers written into the formulas. The step is state.guide (0: closed), so it is in the URL.
import { t, getLang } from '../i18n.js';
import { $, escapeHtml } from '../dom.js';
import { explainTraceSteps } from '../steps/float64.js';
import { attentionWeights } from '../models/weights.js';
import { traceLM, traceS2S, s2sAttentionPrefix } from '../models/trained.js';
import { rnnModels, rnnRun } from '../why/rnn.js';
import { bindPlayer, playerButtons, updateButtons, shownStep, focusIndex, counterText, isPlaying } from '../why/player.js';
import { bottleneckFormula, attentionFormula, qkvFormula, threeStepsFormula, everyQueryFormula, multiHeadFormula } from './formulas.js';

export const GUIDE_STEPS = 6;

/** What each step shows of the dates model (steps 3–6): which attention, so the page's panels show it too. */
export const GUIDE_ATTN = { 3: 'cross', 4: 'cross', 5: 'enc', 6: 'enc' };

/** Whether the page shows the trained character model (the guide then stays on the reader's sentence). */
const onLm = (s) => s.mode === 'self' && s.model === 'trained';

export function createGuideView(app) {
  const root = $('#guide-section');
  let built = '';
  let focusNext = false;
  let drawn = { sig: '', run: null, guide: null };
  let switchedFrom = null; // the tab the guide moved the page from to show the dates model (closing goes back)

  /**
   * Go to step n (0 closes the guide). Steps 3–6 follow the reader's own sentence in the trained character model;
   * from a view without a trained model (or the dates view itself) they put the page on the dates model's attention.
   */
  function goTo(n, focus = true) {
    const s = app.state;
    s.guide = Math.max(0, Math.min(GUIDE_STEPS, n));
    if (GUIDE_ATTN[s.guide] && !onLm(s)) {
      // The reader's tab, left for the dates model's: said in the guide, and gone back to when it closes.
      if (s.mode !== 's2s' && switchedFrom === null) switchedFrom = s.mode;
      app.setMode('s2s');
      s.attn = GUIDE_ATTN[s.guide];
      s.step = -1;
      // Self-attention starts from the last source word (often the year), not from a filler word at the start.
      const words = app.result()?.run?.sourceTokens;
      s.query = s.attn === 'enc' && words?.length ? words.length - 1 : -1;
    }
    if (s.guide === 0 && switchedFrom !== null) {
      if (s.mode === 's2s') app.setMode(switchedFrom);
      switchedFrom = null;
    }
    // The focus follows to the new step's heading once it is drawn (the button pressed is replaced).
    focusNext = focus;
    app.invalidate();
  }

  root.addEventListener('click', (e) => {
    const b = e.target.closest('[data-guide]');
    if (!b || b.disabled) return;
    const s = app.state.guide;
    const to = { start: 1, prev: s - 1, next: s + 1, close: 0, dates: s }[b.dataset.guide] ?? Number(b.dataset.guide);
    if (b.dataset.guide === 'dates') app.setMode('s2s'); // asked for: the dates model, not the sentence of the view
    goTo(to);
  });
  bindPlayer(root);

  function frame(state) {
    const lm = onLm(state);
    const moved = switchedFrom !== null && state.mode === 's2s' ? switchedFrom : '';
    const key = `${getLang()}|${state.guide}|${lm}|${moved}`;
    if (built === key) return;
    built = key;
    drawn = { sig: '', run: null, guide: null };
    const n = state.guide;
    if (!n) {
      root.innerHTML = `<div class="guide-start"><button type="button" class="btn primary" id="guide-start" data-guide="start">${t('guide.start')}</button><span class="muted">${t('guide.startHint')}</span></div>`;
      return;
    }
    const steps = [...Array(GUIDE_STEPS).keys()].map((i) => `<li><button type="button" class="guide-dot" data-guide="${i + 1}"${i + 1 === n ? ' aria-current="step"' : ''}><span class="num">${i + 1}</span> <span class="label">${t(`guide.s${i + 1}.title`)}</span></button></li>`).join('');
    root.innerHTML = `
      <div class="guide-head"><h2 id="guide-title">${t('guide.title')}</h2><span class="muted">${t('guide.of', { n, total: GUIDE_STEPS })}</span>
        <button type="button" class="btn ghost" data-guide="close">${t('guide.close')}</button></div>
      <nav aria-labelledby="guide-nav-label"><span id="guide-nav-label" class="sr-only">${t('guide.nav')}</span><ol class="guide-steps">${steps}</ol></nav>
      <h3 id="guide-step-title" tabindex="-1"><span class="num">${n}</span> ${t(`guide.s${n}.title`)}</h3>
      <p class="guide-text">${t(lm && (n === 3 || n === 5) ? `guide.s${n}.textLm` : `guide.s${n}.text`)}</p>
      ${moved ? `<p class="hint guide-moved">${escapeHtml(t('guide.moved', { to: t('mode.s2s'), from: t(`mode.${moved}`) }))}</p>` : ''}
      ${n === 2 ? playerButtons('guide', t) : ''}
      <div class="guide-live" id="guide-live" aria-live="off"></div>
      <div class="guide-nav">
        <button type="button" class="btn" data-guide="prev" id="guide-prev"${n <= 1 ? ' disabled' : ''}><span aria-hidden="true">←</span> ${t('guide.prev')}</button>
        <button type="button" class="btn primary" data-guide="next" id="guide-next"${n >= GUIDE_STEPS ? ' disabled' : ''}>${t('guide.next')} <span aria-hidden="true">→</span></button>
      </div>`;
  }

  /**
   * The walkthrough's numbers for the page's dates-model result: the same trace (the core's forward pass, shared
   * with the step-by-step panel through models/trained.js) and the same float64 walkthrough as the panel's.
   */
  function* explain(r, head) {
    if (r.kind === 'lm') {
      // The character model as the step-by-step panel traces it, with the heads switched off on the page.
      const trace = traceLM(r.model, r.run.ids, { layer: r.layer, head, query: r.qi, ablate: r.ablated });
      yield;
      const off = r.ablated.filter((x) => x.layer === r.layer).map((x) => x.head);
      return yield* explainTraceSteps({ trace, stateDict: attentionWeights(r.bytes, `blocks.${r.layer}.attn`), numHeads: r.H, causal: true, off });
    }
    const trace = traceS2S(r.model, r.run, { attn: r.attn, layer: r.layer, head, query: r.qi, shown: r.shown });
    yield;
    return yield* explainTraceSteps({ trace, stateDict: attentionWeights(r.bytes, s2sAttentionPrefix(r.attn, r.layer)), numHeads: r.H, causal: r.attn === 'dec' });
  }

  return {
    name: 'guide',
    root,
    *render(state, r) {
      // The reader left the dates tab the guide moved them to: the tab they chose is theirs, not one to go back from.
      if (switchedFrom !== null && state.mode !== 's2s') switchedFrom = null;
      frame(state);
      if (focusNext) { focusNext = false; (state.guide ? $('#guide-step-title') : $('#guide-start'))?.focus(); }
      const n = state.guide;
      if (!n) return;
      // Nothing this step shows changed (typing in another part of the page): no DOM work. r.guide stays as drawn.
      const sig = n <= 2
        ? `${getLang()}|${n}|${state.date}|${state.wstep}|${state.cmap}|${isPlaying()}|${rnnModels(() => app.invalidate()).status}`
        : `${getLang()}|${n}|${r.kind}|${state.head}|${state.cmap}|${r.qi}|${r.layer}|${r.attn}|${r.shown}|${!!r.entry}`;
      if (sig === drawn.sig && (n <= 2 || drawn.run === r.run)) { if (drawn.guide) r.guide = drawn.guide; return; }
      // Noted as drawn only at the end: a pass abandoned at a yield must not count.
      drawn = { sig: '', run: null, guide: null };
      const done = (guide = null) => { drawn = { sig, run: r.run, guide }; };
      const live = $('#guide-live');
      if (n <= 2) {
        const models = rnnModels(() => app.invalidate());
        if (models.status !== 'ready') { live.textContent = t('why.loading'); return; }
        yield;
        const run = rnnRun(models, state.date);
        if (run.empty) { live.textContent = t('why.empty'); return; }
        const steps = run.attention.weights?.length ?? 0;
        const s = shownStep(state, steps);
        const cur = focusIndex(state, run.attention.tokens, s);
        // Which sentence these two steps read: the date of "Why attention?", not the one typed at the top.
        const reading = `<p class="hint guide-reading">${escapeHtml(t('guide.reading', { text: run.sourceTokens.join(' ') }))}</p>`;
        live.innerHTML = (models.standIn ? `<p class="note why-standin">${t('why.standIn')}</p>` : '') + reading + (n === 1 ? bottleneckFormula(run) : attentionFormula(run, s, cur, state.cmap));
        // The section's counter, word for word: the step whose weights the formula shows.
        if (n === 2) updateButtons(root, state, steps, counterText(state, steps, cur, t));
        done();
        return;
      }
      if (r.kind !== 's2s' && !(r.kind === 'lm' && r.run)) { live.innerHTML = `<button type="button" class="btn" data-guide="dates">${t('guide.useDates')}</button>`; return; }
      if (r.entry) { live.textContent = t('guide.wait'); return; }
      if (r.empty) { live.textContent = t('why.empty'); return; }
      const h = Math.min(state.head, r.H - 1);
      yield;
      const ex = yield* explain(r, h);
      const note = r.kind === 'lm' ? 'guide.pickNoteLm' : r.attn === 'enc' ? 'guide.pickNoteEnc' : 'guide.pickNote';
      const pick = `<p class="muted">${t(note, { tok: r.rows[r.qi], h: h + 1, H: r.H, d: ex.d, l: r.layer + 1 })}</p>`;
      const body = n === 3 ? qkvFormula(ex, r.rows, r.cols, h)
        : n === 5 ? everyQueryFormula(r, h, state.cmap)
          : n === 6 ? multiHeadFormula(ex, r.cols, state.cmap)
            : threeStepsFormula(ex, r.rows, r.cols, h, state.cmap);
      live.innerHTML = pick + body + `<p class="muted"><a href="#steps-section">${t('guide.seeAll')}</a></p>`;
      r.guide = { step: n, qi: r.qi, head: h, weights: Array.from(ex.heads[h].weights), context: Array.from(ex.heads[h].context), scaled: Array.from(ex.heads[h].scaled) };
      done(r.guide);
    },
  };
}
