// The step-by-step panel: one query token through one head, every intermediate value recomputed in float64 and
// checked against the forward pass (for the trained models, their trace() from the core, which is also where the
// layer's input comes from). Picks: the query token and the head (WAI-ARIA tabs).
import { t } from '../i18n.js';
import { $, canvasPoint, escapeHtml } from '../dom.js';
import { HEAD_COLORS } from '../maps/colors.js';
import { explainQuerySteps, explainTraceSteps } from './float64.js';
import { renderSteps, stepsTooltip, matrixTooltip } from './draw.js';
import { showTip, hideTip } from '../maps/tooltip.js';
import { sinusoidalPositions } from '../models/seeded.js';
import { attentionWeights } from '../models/weights.js';
import { traceLM, traceS2S, s2sAttentionPrefix } from '../models/trained.js';

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

  /** What the panel needs from the seeded layer: its inputs and the forward pass of the page (a generator). */
  function* seeded(state, r, head) {
    const { E, qi, L, S } = r;
    const x = r.query.data.subarray(qi * E, (qi + 1) * E);
    const pe = sinusoidalPositions(qi + 1, E).subarray(qi * E);
    const tokenVec = Float32Array.from(x, (v, c) => v - pe[c]);
    const ex = yield* explainQuerySteps({ stateDict: r.stateDict(), numHeads: r.H, query: r.query, key: r.key, qi, causal: r.causal });
    const inputs = r.cross ? [] : [
      { label: t('in.token'), values: tokenVec },
      { label: t('in.position'), values: pe },
      { label: t('in.sum'), values: x },
    ];
    const row = (head * L + qi) * S;
    return { ex, inputs, fwdWeights: r.weights.data.subarray(row, row + S), fwdOutput: r.output.data.subarray(qi * E, (qi + 1) * E) };
  }

  /** A trained model's layer from its trace (the core's forward pass): its input, LayerNorm, and the checks' numbers. */
  function* traced(r, trace, stateDict, causal, off, residualLabel) {
    yield;
    const ex = yield* explainTraceSteps({ trace, stateDict, numHeads: r.H, causal, off });
    const { qi } = r, d = r.E;
    const inputs = [
      { label: t(residualLabel), values: trace.layerInput.data.subarray(qi * d, (qi + 1) * d) },
      { label: t('in.ln'), values: trace.attentionInput.data.subarray(qi * d, (qi + 1) * d) },
    ];
    return { ex, inputs, fwdWeights: trace.weights.data, fwdOutput: trace.attentionOutput.data };
  }

  /** A layer of the trained language model, with the heads switched off on the page. */
  function trained(state, r, head) {
    const trace = traceLM(r.model, r.run.ids, { layer: r.layer, head, query: r.qi, ablate: r.ablated });
    const off = r.ablated.filter((x) => x.layer === r.layer).map((x) => x.head);
    return traced(r, trace, attentionWeights(r.bytes, `blocks.${r.layer}.attn`), true, off, 'in.residual');
  }

  /**
   * The dates model: encoder self-attention, decoder self-attention, or cross-attention (queries from the decoder,
   * keys and values from the encoder's output), teacher-forced on the steps written so far.
   */
  function* dates(state, r, head) {
    const trace = traceS2S(r.model, r.run, { attn: r.attn, layer: r.layer, head, query: r.qi, shown: r.shown });
    const cross = r.attn === 'cross';
    const out = yield* traced(r, trace, attentionWeights(r.bytes, s2sAttentionPrefix(r.attn, r.layer)), r.attn === 'dec', [], cross ? 'in.residualCross' : 'in.residual');
    return { ...out, inputNote: cross ? t('step0.cross') : '' };
  }

  const explain = (state, r, head) => (r.kind === 'lm' ? trained(state, r, head) : r.kind === 's2s' ? dates(state, r, head) : seeded(state, r, head));

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
      const { ex, inputs, fwdWeights, fwdOutput, inputNote } = yield* explain(state, r, head);
      yield;
      // The weights and output are checked against the forward pass: the page's own for the seeded layer, the
      // model's trace from the core for the trained models.
      drawnAt = width;
      const res = yield* renderSteps(steps, { ex, rows: r.rows, cols: r.cols, head, fwdWeights, fwdOutput, inputs, inputNote, width, onScreen: () => inView });
      r.steps = { qi: r.qi, head, weights: Array.from(ex.heads[head].weights), ...res };
    },
  };
}
