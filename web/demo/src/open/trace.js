// The steps panel of an opened model, from the package's trace(): the numbers the forward pass itself recorded for
// one layer, head and query, RoPE a step of its own (q and the strongest key before and after rotation).
import { t } from '../i18n.js';
import { $, escapeHtml } from '../dom.js';

const SHOW = 8; // dimensions of a vector written out; the rest are counted
const fmt = (x) => (Math.abs(x) >= 1000 || (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(2) : x.toFixed(4));
const vec = (data, from = 0, n = data.length) => {
  const xs = Array.from(data.subarray(from, from + Math.min(n, SHOW)), fmt).join(', ');
  return `[${xs}${n > SHOW ? `, … ${t('open.more', { n: n - SHOW })}` : ''}]`;
};
const norm = (data, from, n) => { let s = 0; for (let i = 0; i < n; i++) s += data[from + i] ** 2; return Math.sqrt(s); };

export function createOpenTraceView() {
  const root = $('#open-steps');
  return {
    name: 'openTrace',
    root,
    wants: (r) => r.kind === 'hf' && !r.empty,
    render(state, r) {
      if (r.traceError) { root.innerHTML = `<p class="error">${escapeHtml(r.traceError.message)}</p>`; return; }
      const tr = r.trace;
      // While the next trace is computed the last one stays, dimmed and marked busy: replacing it by a line would
      // change the page's height, and lay out and repaint the whole page on every click.
      const busy = !tr && !!root.querySelector('ol');
      root.setAttribute('aria-busy', String(busy));
      root.style.opacity = busy ? '0.5' : '';
      if (busy) return;
      if (!tr) { root.innerHTML = `<p class="hint">${escapeHtml(t('open.tracing'))}</p>`; return; }
      const c = r.config, E = c.hiddenSize, d = c.headDim, T = tr.ids.length, q = tr.query;
      const tok = (i) => `<b>${escapeHtml(r.rows[i])}</b><sub>${i}</sub>`;
      // The key this query weighs most: the one whose rotation the RoPE step shows.
      let best = 0;
      for (let j = 0; j < T; j++) if (tr.weights.data[j] > tr.weights.data[best]) best = j;
      // Position 0 is not rotated at all: the RoPE step shows the strongest key after it (when there is one).
      let turned = q > 0 ? 1 : 0;
      for (let j = 1; j < T; j++) if (tr.visible[j] && tr.weights.data[j] > tr.weights.data[turned]) turned = j;
      const mapRow = r.run.attention.data.subarray(((tr.layer * c.heads + tr.head) * T + q) * T, ((tr.layer * c.heads + tr.head) * T + q + 1) * T);
      let diff = 0, sum = 0;
      for (let j = 0; j < T; j++) { diff = Math.max(diff, Math.abs(mapRow[j] - tr.weights.data[j])); sum += tr.weights.data[j]; }
      const rope = c.positions.kind === 'rope';
      const visible = tr.visible.reduce((a, b) => a + b, 0);
      const steps = [
        ['open.st.input', { q: tok(q), l: tr.layer + 1 }, vec(tr.layerInput.data, q * E, E)],
        ['open.st.norm', { norm: c.postNorm ? t('open.postNorm') : c.norm === 'rmsNorm' ? 'RMSNorm' : 'LayerNorm' }, vec(tr.attentionInput.data, q * E, E)],
        ['open.st.q', { d, kv: tr.kvHead + 1 }, vec(tr.queryRaw.data)],
        ...(rope ? [['open.st.rope', { theta: c.positions.theta, k: tok(turned) },
          `q: ${vec(tr.queryRaw.data)} → ${vec(tr.queryVector.data)}<br>k${turned}: ${vec(tr.keysRaw.data, turned * d, d)} → ${vec(tr.keys.data, turned * d, d)}`
          + `<br>${escapeHtml(t('open.st.ropeNorm', { a: fmt(norm(tr.queryRaw.data, 0, d)), b: fmt(norm(tr.queryVector.data, 0, d)) }))}`]] : []),
        ...(c.qkNorm ? [['open.st.qkNorm', {}, vec(tr.queryVector.data)]] : []),
        ['open.st.scores', { n: T, k: tok(best) }, vec(tr.scores.data)],
        ['open.st.scale', { s: fmt(tr.scale), d }, ''],
        ['open.st.mask', { v: visible, n: T }, ''],
        ['open.st.softmax', { sum: sum.toFixed(6), k: tok(best), w: tr.weights.data[best].toFixed(4) }, vec(tr.weights.data)],
        ['open.st.check', { diff: diff.toExponential(1) }, ''],
        ['open.st.context', { d }, vec(tr.context.data)],
        ['open.st.out', { E }, vec(tr.headOutput.data)],
      ];
      root.innerHTML = `<ol class="open-steps-list">${steps.map(([key, vars, nums], i) => `<li data-step="${i}"><p>${t(key, vars)}</p>${nums ? `<p class="nums">${nums}</p>` : ''}</li>`).join('')}</ol>`;
      root.dataset.query = String(q);
      root.dataset.diff = String(diff);
    },
  };
}
