// The step-by-step panel: one query token through one head, every intermediate value recomputed in float64 and
// checked against the forward pass. Picks: the query token and the head (WAI-ARIA tabs).
import { t } from '../i18n.js';
import { $, canvasPoint, escapeHtml } from '../dom.js';
import { HEAD_COLORS } from '../colors.js';
import { explainQuerySteps } from '../steps.js';
import { renderSteps, stepsTooltip, matrixTooltip } from '../draw/stepsview.js';
import { showTip, hideTip } from '../tooltip.js';
import { sinusoidalPositions } from '../model.js';
import { modelTensors } from '../modelweights.js';
import { createLayerInputs, createSeq2SeqInputs } from '../layerinput.js';

export function createStepsView(app) {
  const steps = $('#steps');
  steps.addEventListener('mousemove', (e) => {
    const c = e.target.closest('canvas.strip, canvas.mat');
    const r = app.result();
    if (!c || !r) return hideTip();
    const [x, y] = canvasPoint(c, e);
    const html = c.matches('.mat') ? matrixTooltip(c, x, y, r.rows, r.cols) : stepsTooltip(c, x);
    html ? showTip(e.clientX, e.clientY, html) : hideTip();
  });
  steps.addEventListener('mouseleave', hideTip);
  $('#query-select').addEventListener('change', (e) => { app.state.query = Number(e.target.value); app.invalidate(); });
  const tabs = $('#head-tabs');
  const pickHead = (h, focus) => {
    app.state.head = h;
    app.invalidate();
    if (focus) tabs.querySelector(`[data-head="${h}"]`)?.focus();
  };
  tabs.addEventListener('click', (e) => {
    const b = e.target.closest('[data-head]');
    if (b) pickHead(Number(b.dataset.head));
  });
  tabs.addEventListener('keydown', (e) => {
    const b = e.target.closest('[data-head]');
    if (!b) return;
    const n = tabs.querySelectorAll('[data-head]').length;
    const h = Number(b.dataset.head);
    const to = { ArrowLeft: (h + n - 1) % n, ArrowRight: (h + 1) % n, Home: 0, End: n - 1 }[e.key];
    if (to == null) return;
    e.preventDefault();
    // The tabs are rebuilt by the next pass; move the focus now so the key is never lost.
    b.tabIndex = -1;
    const next = tabs.querySelector(`[data-head="${to}"]`);
    next.tabIndex = 0;
    next.focus();
    pickHead(to, true);
  });

  function controls(state, r) {
    const q = $('#query-select');
    const opts = r.rows.map((s, i) => `<option value="${i}">${i}: ${escapeHtml(s)}</option>`).join('');
    if (q.dataset.sig !== opts) { q.innerHTML = opts; q.dataset.sig = opts; }
    if (!r.empty) q.value = r.qi;
    const head = Math.min(state.head, r.H - 1);
    const sig = `${r.H}|${head}|${t('steps.head')}`;
    if (tabs.dataset.sig !== sig) {
      const focused = tabs.contains(document.activeElement);
      tabs.innerHTML = [...Array(r.H).keys()].map((h) => `<button type="button" role="tab" id="head-tab-${h}" class="head-tab" data-head="${h}" aria-selected="${h === head}" aria-controls="steps" tabindex="${h === head ? 0 : -1}" aria-label="${t('head', { n: h + 1 })}" style="--head:${HEAD_COLORS[h % HEAD_COLORS.length]}">${h + 1}</button>`).join('');
      tabs.dataset.sig = sig;
      if (focused) tabs.querySelector(`[data-head="${head}"]`)?.focus();
    }
    $('#head-tabs-label').textContent = t('steps.head');
    steps.setAttribute('role', 'tabpanel');
    steps.setAttribute('aria-labelledby', `head-tab-${head}`);
  }

  let layerInputs = { model: null, at: null };
  let datesInputs = { model: null, at: null };

  /** What the panel needs from the seeded layer: its inputs and the forward pass of the page (a generator). */
  function* seeded(state, r) {
    const { E, qi } = r;
    const x = r.query.data.subarray(qi * E, (qi + 1) * E);
    const pe = sinusoidalPositions(qi + 1, E).subarray(qi * E);
    const tokenVec = Float32Array.from(x, (v, c) => v - pe[c]);
    const ex = yield* explainQuerySteps({ stateDict: r.stateDict(), numHeads: r.H, query: r.query, key: r.key, qi, causal: r.causal });
    const inputs = r.cross ? [] : [
      { label: t('in.token'), values: tokenVec },
      { label: t('in.position'), values: pe },
      { label: t('in.sum'), values: x },
    ];
    return { ex, inputs, fwdOutput: r.output.data };
  }

  /** The same for a layer of the trained language model: its input rebuilt from the weights, then LayerNorm. */
  function* trained(state, r) {
    if (layerInputs.model !== r.model) layerInputs = { model: r.model, at: createLayerInputs(r.model, modelTensors(r.bytes)) };
    const a = yield* layerInputs.at.at(r.run.ids, r.layer, r.ablated);
    const { T, d } = a, qi = r.qi;
    const h = { data: a.h, shape: [T, d] };
    const ex = yield* explainQuerySteps({ stateDict: a.stateDict, numHeads: r.H, query: h, key: h, qi, causal: true });
    const inputs = [
      { label: t('in.residual'), values: a.x.subarray(qi * d, (qi + 1) * d) },
      { label: t('in.ln'), values: a.h.subarray(qi * d, (qi + 1) * d) },
    ];
    return { ex, inputs, fwdOutput: a.output };
  }

  /**
   * The same for the dates model: encoder self-attention, decoder self-attention, or cross-attention (queries from
   * the decoder, keys and values from the encoder's output), rebuilt from the weights for the steps written so far.
   */
  function* dates(state, r) {
    if (datesInputs.model !== r.model) datesInputs = { model: r.model, at: createSeq2SeqInputs(r.model, modelTensors(r.bytes)) };
    const { run, qi } = r;
    // Row t of the decoder's maps is the step that wrote token t: its input is <bos> and the tokens before it.
    const tgtIn = [r.model.vocab.targetBosId, ...run.steps.slice(0, Math.max(0, r.shown - 1)).map((s) => s.id)];
    const a = yield* datesInputs.at.at(run.sourceIds, tgtIn, r.attn, r.layer);
    const { d } = a;
    const ex = yield* explainQuerySteps({ stateDict: a.stateDict, numHeads: r.H, query: { data: a.h, shape: [a.L, d] }, key: { data: a.kv, shape: [a.S, d] }, qi, causal: a.causal });
    const cross = r.attn === 'cross';
    const inputs = [
      { label: t(cross ? 'in.residualCross' : 'in.residual'), values: a.x.subarray(qi * d, (qi + 1) * d) },
      { label: t('in.ln'), values: a.h.subarray(qi * d, (qi + 1) * d) },
    ];
    return { ex, inputs, fwdOutput: a.output, inputNote: cross ? t('step0.cross') : '' };
  }

  const explain = (state, r) => (r.kind === 'lm' ? trained(state, r) : r.kind === 's2s' ? dates(state, r) : seeded(state, r));

  // The panel's content width, kept by a ResizeObserver (its callback runs with the layout already done), so drawing
  // never has to ask for a layout in the middle of a pass.
  // Whether the panel is in view (the last rows of its table then go in one frame per piece).
  let inView = false;
  new IntersectionObserver((entries) => { inView = entries[entries.length - 1].isIntersecting; }).observe(steps);
  let width = 0, drawnAt = 0;
  new ResizeObserver((entries) => {
    width = entries[entries.length - 1].contentRect.width;
    // Shown after being hidden (or narrowed by a scrollbar): the canvases were sized for another width.
    if (drawnAt && Math.abs(width - drawnAt) > 40) app.invalidate();
  }).observe(steps);

  return {
    name: 'steps',
    root: $('#steps-section'),
    wants: (r) => !r.entry && !r.textEmpty && !r.sourceEmpty,
    // A generator: the numbers first, then the panel in pieces (renderSteps), with input let in between.
    *render(state, r) {
      if (r.empty) { steps.replaceChildren(); r.steps = null; return; }
      controls(state, r);
      const head = Math.min(state.head, r.H - 1);
      yield;
      const { ex, inputs, fwdOutput, inputNote } = yield* explain(state, r);
      yield;
      // The weights are checked against the forward pass that drew the maps (the model's own, for the trained model).
      drawnAt = width;
      const res = yield* renderSteps(steps, { ex, rows: r.rows, cols: r.cols, head, fwdWeights: r.weights.data, fwdOutput, inputs, inputNote, width, onScreen: () => inView });
      r.steps = { qi: r.qi, head, weights: Array.from(ex.heads[head].weights), ...res };
    },
  };
}
