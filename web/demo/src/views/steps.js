// The step-by-step panel: one query token through one head, every intermediate value recomputed in float64 and
// checked against the forward pass. Picks: the query token and the head (WAI-ARIA tabs).
import { t } from '../i18n.js';
import { $, canvasPoint } from '../dom.js';
import { HEAD_COLORS } from '../colors.js';
import { explainQuery } from '../steps.js';
import { renderSteps, stepsTooltip, matrixTooltip } from '../stepsview.js';
import { escapeHtml } from '../headview.js';
import { showTip, hideTip } from '../tooltip.js';

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

  return {
    name: 'steps',
    root: $('#steps-section'),
    wants: (r) => r.kind === 'seeded' && !r.entry,
    render(state, r) {
      if (r.empty) { steps.replaceChildren(); r.steps = null; return; }
      controls(state, r);
      const head = Math.min(state.head, r.H - 1);
      const ex = explainQuery({ stateDict: r.stateDict(), numHeads: r.H, query: r.query, key: r.key, qi: r.qi, causal: r.causal });
      const res = renderSteps(steps, { ex, rows: r.rows, cols: r.cols, head, fwdWeights: r.weights.data, fwdOutput: r.output.data });
      r.steps = { qi: r.qi, head, weights: Array.from(ex.heads[head].weights), ...res };
    },
  };
}
