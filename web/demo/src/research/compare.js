// Two prompts of an opened model: the selected head's maps of both side by side with their difference, how far every
// head's weights moved (a layers × heads map), and for a causal model the selected head patched from the clean prompt
// into the corrupted one at one position at a time. The prompts are the Patching form's fields (open/patching.js).
import { t, getLang } from '../i18n.js';
import { $, escapeHtml, escapeAttr, setText } from '../dom.js';
import { drawHeadMap, strongest, HEAD_LABELS_TOP } from '../open/headmap.js';
import { colour, nearWarning, PATCH_COLORS, showProgressBar } from '../open/patching.js';
import { drawHeatmap, heatmapLayout, paintLegend, prepareCanvas } from '../maps/heatmap.js';

/**
 * Per head ([layers × heads]), how far its weights moved between two maps `[L, H, T, T]` of the same T: the mean over
 * query rows of half the sum of |a − b| (the total-variation distance of the two rows), from 0 (the same) to 1.
 */
export function movedPerHead(a, b, L, H, T) {
  const out = new Float64Array(L * H);
  for (let m = 0; m < L * H; m++) {
    let sum = 0;
    for (let i = 0; i < T; i++) {
      const row = (m * T + i) * T;
      let d = 0;
      for (let j = 0; j < T; j++) d += Math.abs(a[row + j] - b[row + j]);
      sum += d / 2;
    }
    out[m] = sum / T;
  }
  return out;
}

/**
 * One map of `tokens` (queries and keys) drawn on a canvas as every map is (maps/heatmap.js), within `width` CSS
 * pixels, 0 … 1: the tokens on its axes where they fit, else indices at a round step.
 */
function drawMap(canvas, data, offset, tokens, width, colours) {
  const layout = heatmapLayout(tokens, tokens, { width, maxCell: 36 });
  drawHeatmap(prepareCanvas(canvas, layout.width, layout.height), layout, { data, offset, rows: tokens, cols: tokens, vmax: 1, scale: 'one', ...colours });
}

/** The layers × heads map's margins: layer names at its left, head names above it. */
const MOVED_LEFT = 30, MOVED_TOP = HEAD_LABELS_TOP;

/** @param {{ state: object, invalidate: () => void, pick: (layer: number, head: number) => void, cancel: () => void }} app */
export function createCompareView(app) {
  const o = () => app.state.open;
  const fields = { clean: '#open-patch-clean', corrupted: '#open-patch-corrupted', a: '#open-patch-a', b: '#open-patch-b' };
  const read = () => { for (const [k, sel] of Object.entries(fields)) o()[k] = $(sel).value; };
  for (const [k, sel] of Object.entries(fields)) {
    $(sel).addEventListener('input', (e) => { o()[k] = e.target.value; if (o().compare || o().positions) app.invalidate(); });
  }
  $('#open-compare-btn').addEventListener('click', () => { read(); o().compare = !o().compare; app.invalidate(); });
  $('#open-patchpos-btn').addEventListener('click', () => {
    read();
    const { layer, head } = o();
    o().positions = { layer, head };
    app.invalidate();
  });
  // Cancel stops the sweep at its next position (the Worker's cancelPatch message); it is forgotten, not kept.
  $('#open-patch-cancel').addEventListener('click', () => { if (o().positions) { o().positions = null; app.cancel(); app.invalidate(); } });
  const moved = $('#open-compare-out');
  moved.addEventListener('click', (e) => {
    const c = e.target.closest('canvas.rs-moved-map');
    if (!c) return;
    const rect = c.getBoundingClientRect(), cell = Number(c.dataset.cell);
    const layer = Math.floor((e.clientY - rect.top - MOVED_TOP) / cell), head = Math.floor((e.clientX - rect.left - MOVED_LEFT) / cell);
    if (layer >= 0 && head >= 0 && layer < Number(c.dataset.layers) && head < Number(c.dataset.heads)) app.pick(layer, head);
  });
  let drawnCompare = null, drawnPositions = null;

  function renderCompare(state, r, s) {
    const out = $('#open-compare-out');
    if (!s?.value) { out.innerHTML = ''; drawnCompare = null; return; }
    const key = [s.value, r.layer, r.head, state.lang, state.cmap].map(String).join('|');
    if (drawnCompare?.value === s.value && drawnCompare.key === key) return;
    drawnCompare = { value: s.value, key };
    const [A, B] = s.value.runs;
    const { layers: L, heads: H } = r.config;
    const Ta = A.ids.length, Tb = B.ids.length, same = Ta === Tb;
    const names = [t('rs.clean', { l: r.layer + 1, h: r.head + 1 }), t('rs.corrupted', { l: r.layer + 1, h: r.head + 1 })];
    const fig = (name, cls) => `<figure><figcaption>${escapeHtml(name)}</figcaption><canvas class="${cls}" role="img"></canvas></figure>`;
    let html = same ? '' : `<p class="warn">${escapeHtml(t('rs.compareLengths', { a: Ta, b: Tb }))}</p>`;
    html += `<div class="rs-maps">${fig(names[0], 'rs-a')}${fig(names[1], 'rs-b')}${same ? fig(t('rs.diff'), 'rs-d') : ''}</div>`;
    if (same) html += `<p class="hint">${escapeHtml(t('rs.diffScale'))}</p>`;
    let scores = null;
    if (same) {
      scores = movedPerHead(A.attention.data, B.attention.data, L, H, Ta);
      const rows = Array.from({ length: L }, (_, l) => `<tr><th scope="row">${escapeHtml(t('mv.layer', { n: l + 1 }))}</th>${
        Array.from({ length: H }, (_, h) => `<td data-layer="${l}" data-head="${h}" data-value="${scores[l * H + h]}">${scores[l * H + h].toFixed(3)}</td>`).join('')}</tr>`).join('');
      const head = Array.from({ length: H }, (_, h) => `<th scope="col">${escapeHtml(t('head', { n: h + 1 }))}</th>`).join('');
      // The click hint is apart so that the HTML export, which has no script, leaves it out.
      const click = `<span class="rs-live">${getLang() === 'zh' ? '' : ' '}${escapeHtml(t('rs.movedClick'))}</span>`;
      // Its colours are the colour map's over 0 … 1, as the key under it says.
      const key = `<div class="legend rs-moved-legend" aria-hidden="true"><span class="legend-bar"></span><span class="legend-ticks"><span>0</span><span class="mid"></span><span class="max"></span></span></div>`;
      html += `<figure class="rs-moved"><figcaption>${escapeHtml(t('rs.moved'))}${click}</figcaption><canvas class="rs-moved-map" role="img"></canvas>${key}</figure>
        <details><summary>${escapeHtml(t('open.patchNumbers'))}</summary><div class="open-patch-table"><table><thead><tr><td></td>${head}</tr></thead><tbody>${rows}</tbody></table></div></details>`;
    }
    out.innerHTML = html;
    const avail = Math.min(300, Math.max(160, (out.clientWidth || 600) - 10));
    const at = (run) => (r.layer * H + r.head) * run.ids.length ** 2;
    for (const [run, cls, name] of [[A, 'rs-a', names[0]], [B, 'rs-b', names[1]]]) {
      const c = out.querySelector(`canvas.${cls}`);
      drawMap(c, run.attention.data, at(run), run.tokens, avail, { cmap: state.cmap });
      c.setAttribute('aria-label', t('rs.mapLabel', { name: `${name} (${run.tokens.join(' ')})`, T: run.ids.length }));
    }
    if (!same) return;
    const d = new Float32Array(Ta * Ta), a0 = at(A);
    for (let k = 0; k < d.length; k++) d[k] = A.attention.data[a0 + k] - B.attention.data[a0 + k];
    let top = 0;
    for (const x of d) top = Math.max(top, Math.abs(x));
    for (let k = 0; k < d.length; k++) d[k] = (d[k] / (top || 1) + 1) / 2;
    const dc = out.querySelector('canvas.rs-d');
    // Patching's scale, white at 0: a difference in [−1, 1] of its top, stored as (d + 1) / 2.
    drawMap(dc, d, 0, B.tokens, avail, { colors: PATCH_COLORS });
    dc.setAttribute('aria-label', t('rs.mapLabel', { name: t('rs.diff'), T: Ta }));
    const mc = out.querySelector('canvas.rs-moved-map');
    const mcell = Math.max(14, Math.min(36, Math.floor(320 / H)));
    Object.assign(mc.dataset, { cell: mcell, layers: L, heads: H });
    drawHeadMap(mc, scores, L, H, { cell: mcell, left: MOVED_LEFT, top: MOVED_TOP, cmap: state.cmap });
    paintLegend(out.querySelector('.rs-moved-legend'), { cmap: state.cmap, top: 1 });
    mc.setAttribute('aria-label', `${t('rs.moved')} ${strongest(scores, L, H)}`);
  }

  function renderPositions(state, s) {
    const out = $('#open-positions-out');
    const v = s?.value;
    if (!v || v.problem || v.cancelled) { out.innerHTML = ''; drawnPositions = null; return; }
    if (drawnPositions === v && out.dataset.lang === state.lang) return;
    drawnPositions = v;
    out.dataset.lang = state.lang;
    const head = v.tokens.map((s, i) => `<th scope="col" title="${escapeAttr(`${i}: ${s}`)}">${escapeHtml(s)}<sub>${i}</sub></th>`).join('');
    const cells = Array.from(v.recovered, (x, p) => `<td data-position="${p}" data-value="${x}" style="background:${colour(x)}">${x.toFixed(3)}</td>`).join('');
    out.innerHTML = `<h4>${escapeHtml(t('rs.posTitle', { l: v.layer + 1, h: v.head + 1 }))}</h4><p class="hint">${escapeHtml(t('rs.posText'))} ${escapeHtml(t('open.patchScale'))}</p>${nearWarning(v)}
      <div class="rs-positions-table" role="region" tabindex="0" aria-label="${escapeAttr(t('rs.posTable'))}"><table><thead><tr><th scope="row">${escapeHtml(t('rs.position'))}</th>${head}</tr></thead>
      <tbody><tr><th scope="row">${escapeHtml(t('rs.recovered'))}</th>${cells}</tr></tbody></table></div>`;
  }

  // The status line: the two prompts' part (from the last drawing), then the sweep's.
  let comparePart = null, sweeping = false;
  const showStatus = (posPart) => {
    setText($('#open-research-status'), [comparePart, posPart].filter((p) => p != null).join(getLang() === 'zh' ? '' : ' '));
  };
  function showProgress({ done, total }) {
    showProgressBar({ done, total });
    showStatus(t('rs.posRunning', { done: done ?? 0, total: total || '…' }));
  }

  return {
    name: 'openCompare',
    root: $('#open-patch'),
    /** The sweep's progress between two drawings (the session's, not the scheduler's): the bar and the status. */
    showProgress(p) { if (sweeping) showProgress(p); },
    wants: (r) => r.kind === 'hf' && r.load.status === 'ready' && !r.empty,
    render(state, r) {
      const rs = r.research ?? {};
      const causal = r.info.kind === 'causal_lm' && r.config.hasLmHead;
      for (const [k, sel] of Object.entries(fields)) if (state.open[k] && document.activeElement !== $(sel) && $(sel).value !== state.open[k]) $(sel).value = state.open[k];
      const cb = $('#open-compare-btn');
      cb.setAttribute('aria-pressed', String(!!state.open.compare));
      setText(cb, t(state.open.compare ? 'rs.compareHide' : 'rs.compareBtn'));
      const pb = $('#open-patchpos-btn');
      pb.hidden = !causal;
      setText(pb, t('rs.posBtn', { l: r.layer + 1, h: r.head + 1 }));
      const pos = causal && state.open.positions ? rs.positions : null;
      // Running: asked and not answered yet, even while the reply shown is another head's or prompts' (research/runs.js).
      const running = !!pos?.running;
      pb.disabled = running;
      // The Patching form's cancel, progress and status serve the sweep per position too while it runs.
      if (running) {
        $('#open-patch-cancel').hidden = false;
        $('#open-patch-progress').hidden = false;
      }
      const v = pos?.value;
      comparePart = state.open.compare && rs.compare
        ? (rs.compare.error ? rs.compare.error.message : rs.compare.stale ? t('open.computing') : t('rs.compareDone', { ms: rs.compare.value.ms.toFixed(0) }))
        : null;
      sweeping = running;
      if (running) showProgress(rs.progress ?? { done: 0, total: 0 });
      else {
        const posPart = !pos ? null : pos.error ? pos.error.message : v.problem ? t(v.problem.key, v.problem.vars) : v.cancelled ? t('open.patchCancelled')
          : t('rs.posDone', { l: v.layer + 1, h: v.head + 1, T: v.recovered.length, ms: v.ms.toFixed(0) });
        showStatus(posPart);
      }
      if (v?.ms) $('#open-research-status').dataset.positionsMs = v.ms.toFixed(1);
      renderCompare(state, r, state.open.compare ? rs.compare : null);
      renderPositions(state, running ? null : pos);
    },
  };
}
