// The walkthrough panel: score → scale → softmax → weighted sum for one query token and head,
// then the multi-head part (split, per-head contexts, concatenation, output projection).
import { HEAD_COLORS, divRgb, css, inkOn } from '../maps/colors.js';
import { prepareCanvas } from '../maps/heatmap.js';
import { t } from '../i18n.js';
import { escapeHtml, escapeAttr } from '../dom.js';
import { maxAbsDiff } from './float64.js';

let scratch = null;

/**
 * Paint a rows×cols grid of colours (the steps' signed vectors; attention maps go through heatmap.js), each cell
 * cw×rh CSS pixels, at (x, y): one pixel per cell in a scratch canvas, scaled up without smoothing. Far cheaper than
 * one fillRect (and one colour string) per cell.
 * @param {(k: number) => number[]} rgbAt  colour of cell k = i * cols + j
 */
function paintCells(ctx, rows, cols, rgbAt, x, y, cw, rh) {
  if (!rows || !cols) return;
  scratch ??= document.createElement('canvas');
  scratch.width = cols; scratch.height = rows;
  const sctx = scratch.getContext('2d');
  const img = sctx.createImageData(cols, rows);
  for (let k = 0; k < rows * cols; k++) {
    const [r, g, b] = rgbAt(k);
    img.data[k * 4] = r; img.data[k * 4 + 1] = g; img.data[k * 4 + 2] = b; img.data[k * 4 + 3] = 255;
  }
  sctx.putImageData(img, 0, 0);
  ctx.save();
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(scratch, x, y, cols * cw, rows * rh);
  ctx.restore();
}

const headColor = (h) => HEAD_COLORS[h % HEAD_COLORS.length];
const fmt = (v, n = 3) => (Object.is(v, -0) ? 0 : v).toFixed(n).replace(/^-(0\.0+)$/, '$1');
const sci = (x) => (x === 0 ? '0' : x.toExponential(1));
// Differences up to this are float32 rounding (the WASM side computes in float32, we in float64).
export const CHECK_TOL = 1e-4;

export function maxAbs(a, from = 0, to = a.length, stride = 1, width = 1) {
  let m = 1e-12;
  for (let k = from; k < to; k += stride) for (let c = 0; c < width; c++) m = Math.max(m, Math.abs(a[k + c]));
  return m;
}

/**
 * One value vector as a CSS gradient with hard stops, faded by its weight: the context vector is
 * literally the sum of these rows. (Gradients, not 64 little canvases: far cheaper per keystroke.)
 */
function valueRowStyle(V, off, d, scale, opacity) {
  const stops = [];
  for (let k = 0; k < d; k++) stops.push(`${css(divRgb(V[off + k] / scale))} ${(k * 100) / d}% ${((k + 1) * 100) / d}%`);
  return `width:${Math.max(1, Math.min(8, Math.floor(160 / d))) * d}px;opacity:${opacity.toFixed(3)};background:linear-gradient(to right,${stops.join(',')})`;
}

/** Cells with numbers on a diverging background (hover for more digits). */
export function vectorCells(values, scale, cls = '') {
  let html = `<div class="vec ${cls}">`;
  for (let c = 0; c < values.length; c++) {
    const rgb = divRgb(values[c] / scale);
    html += `<span style="background:${css(rgb)};color:${inkOn(rgb)}" title="[${c}] ${values[c].toFixed(6)}">${fmt(values[c], 2)}</span>`;
  }
  return html + '</div>';
}

/** A strip of E cells (colour only) with head blocks marked underneath; values on hover. */
export function stripCanvas(canvas, values, scale, numHeads, width) {
  const E = values.length;
  const cw = Math.max(1, Math.floor(width / E));
  const w = cw * E, h = 26;
  const ctx = prepareCanvas(canvas, w, h);
  paintCells(ctx, 1, E, (c) => divRgb(values[c] / scale), 0, 0, cw, 18);
  const d = E / numHeads;
  for (let hd = 0; hd < numHeads; hd++) {
    ctx.fillStyle = headColor(hd);
    ctx.fillRect(hd * d * cw + (hd ? 1 : 0), 21, d * cw - (hd ? 1 : 0), 5);
    if (hd) { ctx.fillStyle = '#fff'; ctx.fillRect(hd * d * cw - 1, 0, 2, 18); }
  }
  canvas.dataset.cw = cw;
  canvas._values = values;
}

/** Q, K or V as a [rows, E] colour matrix with the head blocks above and one row outlined. */
function matrixCanvas(canvas, M, rows, E, numHeads, scale, outlined, width) {
  const cw = Math.max(1, Math.floor(width / E));
  const rh = Math.max(3, Math.min(10, Math.floor(150 / Math.max(1, rows))));
  const top = 8, w = cw * E, h = top + rh * rows + 2;
  const ctx = prepareCanvas(canvas, w, h);
  paintCells(ctx, rows, E, (k) => divRgb(M[k] / scale), 0, top, cw, rh);
  const d = E / numHeads;
  for (let hd = 0; hd < numHeads; hd++) {
    ctx.fillStyle = headColor(hd);
    ctx.fillRect(hd * d * cw + (hd ? 1 : 0), 0, d * cw - (hd ? 1 : 0), 5);
    if (hd) { ctx.fillStyle = '#fff'; ctx.fillRect(hd * d * cw - 1, top, 2, rh * rows); }
  }
  if (outlined != null) {
    ctx.strokeStyle = '#111'; ctx.lineWidth = 2;
    ctx.strokeRect(1, top + outlined * rh, w - 2, rh);
  }
  Object.assign(canvas.dataset, { cw, rh, top });
  canvas._matrix = { M, rows, E };
}

/** Rows of the key table built per piece: a piece costs about 1–3 ms, so the scheduler can let input in between. */
const ROWS_PER_PIECE = 16;
/** Rows in the table before the panel goes on the page: about what its scroll window (560 px) shows. */
const FIRST_ROWS = 24;
/**
 * Above LONG_TABLE keys the table lists the STRONGEST keys by weight (the worked one and the query's own among them)
 * in position order, not every key: at 500 keys the whole table is 10,000 elements that every keystroke lays out and
 * paints again (seconds), and no reader goes through it row by row. Its sums and the check stay over every key; a
 * button lists them all, and the choice holds for the next panels.
 */
const LONG_TABLE = 96;
const STRONGEST = 32;
let everyKey = false;

/** The keys the table lists: every one, or a long input's strongest (with `also`), in position order. */
function listedKeys(weights, masked, S, also) {
  const all = Array.from({ length: S }, (_, j) => j);
  if (S <= LONG_TABLE || everyKey) return all;
  // Among the keys the query sees: a masked key's weight is 0, and would fill the list when the query sees fewer.
  const seen = all.filter((j) => !masked[j]);
  const strongest = new Set(seen.sort((a, b) => weights[b] - weights[a] || a - b).slice(0, STRONGEST));
  for (const j of also) if (j >= 0 && j < S) strongest.add(j);
  return [...strongest].sort((a, b) => a - b);
}

/**
 * The widths the canvases are drawn at, from the panel's content width alone (read by the caller without forcing a
 * layout): the multi-head part is two columns above 900 px (style.css: .mh-split is minmax(220px, 1fr) 2fr with a
 * 22 px gap; .mh-grid is 1fr 1fr), one below.
 */
function canvasWidths(width) {
  const wide = window.innerWidth > 900;
  const qkv = wide ? width - 22 - Math.max(220, (width - 22) / 3) : width;
  return {
    mat: Math.min(300, Math.max(120, Math.floor((qkv - 30) / 3))),
    half: Math.min(540, Math.max(160, Math.floor(width / 2) - 40)),
    strip: Math.max(120, Math.min(860, width - 110)),
  };
}

/**
 * One head at one query, the part every model's panel shares: q and the strongest key worked out, then the table of
 * every key (q × kⱼ, the score, the scaling, exp(s − max), the weight, the value faded by its weight), the context
 * vector and the check of the weights against the forward pass. Added to `box` (off the document); the table's first
 * rows go in here, the others by `rest` once the panel is on the page.
 * @param {(html: string) => void} add  appends to `box`
 * @param {HTMLElement} box
 * @param {object} a  { hd (steps/float64.js headSteps' result), q (the query's d numbers), K, V, stride, base (key and value
 *   j: d numbers at base + j * stride), d, S, qi, head, tok, rows, cols, fwdWeights ([S], the forward pass's row),
 *   scaleText (how the scaling is written: 1/√d unless the model scales otherwise) }
 * @returns {Generator<void, { weightSum: number, wDiff: number, rest: (onScreen: () => boolean) => Generator }>}
 */
export function* renderHeadSteps(add, box, { hd, q: qv, K, V, stride, base, d, S, qi, head, tok, rows, cols, fwdWeights, scaleText = `1/√${d}` }) {
  const maxScore = maxAbs(hd.scores);
  const maxScaled = maxAbs(hd.scaled);
  let maxW = 1e-12;
  for (let j = 0; j < S; j++) maxW = Math.max(maxW, hd.weights[j]);
  const vScale = maxAbs(V, base, V.length, stride, d);
  const weightSum = hd.weights.reduce((a, b) => a + b, 0);
  const wDiff = maxAbsDiff(hd.weights, fwdWeights);
  const sbar = (v, m) => {
    const f = Math.min(1, Math.abs(v) / m) * 50;
    return `<span class="sbar"><span class="${v < 0 ? 'neg' : 'pos'}" style="${v < 0 ? `right:50%` : `left:50%`};width:${f}%"></span></span>`;
  };
  const keyOf = (j) => K.subarray(base + j * stride, base + j * stride + d);

  // The worked example: q and one key k_j as numbers, their element-wise product, its sum, the scaling.
  let jx = 0;
  for (let j = 1; j < S; j++) if (hd.weights[j] > hd.weights[jx]) jx = j;
  const kv = keyOf(jx);
  const prod = Float64Array.from(qv, (x, c) => x * kv[c]);
  const qkScale = Math.max(maxAbs(qv), maxAbs(kv));
  add(`<div class="worked">
      <div class="vec-row"><span class="vec-label">q <span class="muted">(${escapeHtml(tok)}, ${t('head', { n: head + 1 })})</span></span>${vectorCells(qv, qkScale, 'small')}</div>
      <div class="vec-row"><span class="vec-label">k<sub>${jx}</sub> <span class="muted">(${escapeHtml(cols[jx])})</span></span>${vectorCells(kv, qkScale, 'small')}</div>
      <div class="vec-row"><span class="vec-label">q × k<sub>${jx}</sub></span>${vectorCells(prod, maxAbs(prod), 'small')}</div>
      <p class="sum-line">q · k<sub>${jx}</sub> = Σ (q × k<sub>${jx}</sub>) = <b>${fmt(hd.scores[jx], 4)}</b>; × ${scaleText} = <b>${fmt(hd.scaled[jx], 4)}</b>${hd.masked[jx] ? '' : `; exp(${fmt(hd.scaled[jx], 3)} − ${fmt(hd.max, 3)}) = <b>${fmt(hd.exps[jx], 4)}</b>; ÷ Σ ${fmt(hd.z, 4)} = <b>${fmt(hd.weights[jx], 4)}</b>`}</p>
    </div>`);
  const prodScale = maxAbs(prod) * 1.5;
  const prodRowStyle = (j) => {
    const k = keyOf(j);
    return valueRowStyle(Float64Array.from(qv, (x, c) => x * k[c]), 0, d, prodScale, 1);
  };

  add(`<div class="table-wrap" tabindex="0" role="region" aria-label="${escapeAttr(t('sec.steps'))}"><table class="steps-table" style="--head:${headColor(head)}"><thead><tr>
      <th class="k" scope="col">${t('col.key')}</th>
      <th class="vcol" scope="col">q × kⱼ</th>
      <th scope="col"><span class="num">1</span> ${t('col.score')}</th>
      <th scope="col"><span class="num">2</span> ${t('col.scaled')}</th>
      <th scope="col"><span class="num">3</span> exp(s − max)</th>
      <th scope="col">${t('col.weight')} <span class="muted">= exp ÷ Σ</span></th>
      <th class="vcol" scope="col"><span class="num">4</span> ${t('col.value')}</th></tr></thead><tbody></tbody>
      <tfoot><tr><th class="k" scope="row">${t('sum')}</th><td></td><td></td><td></td><td class="n zsum">Σ = ${fmt(hd.z, 4)}</td><td class="n wsum" data-value="${weightSum.toPrecision(12)}"><span>${weightSum.toFixed(6)}</span></td><td class="vcol"></td></tr></tfoot></table></div>`);
  const rowsHtml = (keys) => {
    let html = '';
    for (const j of keys) {
      const m = hd.masked[j];
      const w = hd.weights[j];
      html += `<tr class="${m ? 'masked' : ''}${j === qi && rows === cols ? ' self' : ''}${j === jx ? ' worked-row' : ''}">
      <th class="k" scope="row" title="${escapeAttr(cols[j])}">${escapeHtml(cols[j])}<sub>${j}</sub></th>
      <td class="vcol"><span class="vrow" style="${prodRowStyle(j)}"></span></td>
      <td class="n">${sbar(hd.scores[j], maxScore)}<span>${fmt(hd.scores[j])}</span></td>
      <td class="n">${m ? `<span class="mask-tag">${t('masked')}</span>` : sbar(hd.scaled[j], maxScaled)}<span>${m ? '−∞' : fmt(hd.scaled[j])}</span></td>
      <td class="n exp">${m ? '0' : fmt(hd.exps[j], 4)}</td>
      <td class="n w" data-value="${w.toPrecision(9)}"><span class="wbar"><span style="width:${(w / maxW) * 100}%"></span></span><span>${fmt(w, 4)}</span></td>
      <td class="vcol"><span class="vrow" style="${valueRowStyle(V, base + j * stride, d, vScale, m ? 0.06 : 0.08 + 0.92 * (w / maxW))}"></span></td></tr>`;
    }
    return html;
  };
  // The rows the table's scroll window shows at first go in before the swap; the rest follow it (rest).
  const tbody = box.lastElementChild.querySelector('tbody');
  const keys = listedKeys(hd.weights, hd.masked, S, [jx, rows === cols ? qi : -1]);
  if (S > LONG_TABLE) {
    let blocked = 0;
    for (let j = 0; j < S; j++) if (hd.masked[j]) blocked++;
    const seen = S - blocked;
    const said = (k) => t(everyKey ? 'steps.allKeys' : !blocked ? 'steps.strongest' : k >= seen ? 'steps.allSeen' : 'steps.strongestSeen', { n: S, k, m: seen, b: blocked });
    const asked = () => t(everyKey ? 'steps.strongestOnly' : 'steps.everyKey', { n: S, k: STRONGEST });
    add(`<p class="steps-keys hint"><span>${escapeHtml(said(keys.length))}</span>
      <button type="button" class="btn ghost" data-every-key>${escapeHtml(asked())}</button></p>`);
    const note = box.lastElementChild;
    note.querySelector('button').addEventListener('click', (e) => {
      everyKey = !everyKey;
      const listed = listedKeys(hd.weights, hd.masked, S, [jx, rows === cols ? qi : -1]);
      tbody.innerHTML = rowsHtml(listed);
      note.firstElementChild.textContent = said(listed.length);
      e.currentTarget.textContent = asked();
    });
  }
  const first = Math.min(keys.length, FIRST_ROWS);
  for (let i = 0; i < first; i += ROWS_PER_PIECE) {
    yield;
    tbody.insertAdjacentHTML('beforeend', rowsHtml(keys.slice(i, Math.min(first, i + ROWS_PER_PIECE))));
  }
  yield;
  add(`<div class="context-row"><div class="context-label">${t('context', { d })} <span class="muted">= Σ wⱼ vⱼ</span></div>${vectorCells(hd.context, vScale, 'ctx')}</div>
    ${check(wDiff)}`);
  // The other rows, a piece at a time into the table on the page: on screen, each piece gets its own frame, so the
  // browser lays out a few rows at a time instead of a hundred in one frame (off screen they cost nothing).
  function* rest(onScreen) {
    for (let i = first; i < keys.length; i += ROWS_PER_PIECE) {
      yield onScreen() ? 'frame' : undefined;
      tbody.insertAdjacentHTML('beforeend', rowsHtml(keys.slice(i, i + ROWS_PER_PIECE)));
    }
  }
  return { weightSum, wDiff, rest };
}

/** ✓ or ✗: a difference against the forward pass, within float32 rounding or not. */
const check = (x) => `<p class="check ${x <= CHECK_TOL ? 'ok' : 'bad'}">${x <= CHECK_TOL ? '✓ ' : '✗ '}${t(x <= CHECK_TOL ? 'checkOk' : 'checkBad', { x: sci(x) })}</p>`;

/**
 * Render the panel: a generator that builds it off the document in small pieces (yielding between them) and puts
 * it on the page in one swap at the end, so no piece is long and the page never shows half a panel. Nothing here
 * reads layout: `width` is the panel's content width, measured by the caller.
 * @param {HTMLElement} root
 * @param {object} a  { ex (explainQuery result), rows, cols, head, fwdWeights (the forward pass's weights of this
 *   head and query: [S]), fwdOutput (its attention output at this query: [E]), inputs, inputNote (where k and v come
 *   from, when not from the same input), width, onScreen (whether the panel is in view now) }
 * @returns {Generator<void, { weightSum: number, wDiff: number, oDiff: number }>}
 */
export function* renderSteps(root, { ex, rows, cols, head, fwdWeights, fwdOutput, inputs = [], inputNote = '', width, onScreen = () => false }) {
  const { S, E, d, numHeads, qi } = ex;
  const hd = ex.heads[head];
  const tok = rows[qi];
  const oDiff = maxAbsDiff(ex.output, fwdOutput);
  const box = document.createElement('div'); // off the document: building it costs no style or layout
  const add = (html) => box.insertAdjacentHTML('beforeend', html);

  add(`<ol class="step-list">
      <li><h4><span class="num">1</span>${t('step1.title')}</h4><p>${t('step1.text')}</p></li>
      <li><h4><span class="num">2</span>${t('step2.title')}</h4><p>${t('step2.text', { d, s: fmt(ex.scale, 4) })}</p></li>
      <li><h4><span class="num">3</span>${t('step3.title')}</h4><p>${t('step3.text')}${hd.masked.some((x) => x) ? ' ' + t('step3.masked') : ''}</p></li>
      <li><h4><span class="num">4</span>${t('step4.title')}</h4><p>${t('step4.text')}</p></li>
    </ol>`);
  if (inputs.length) {
    add(`<div class="step-input"><h4><span class="num">0</span>${t('step0.title', { tok: escapeHtml(tok) })}</h4></div>`);
    const at = box.lastElementChild;
    // One vector per piece: at embed 256 each is 256 cells with their own colours.
    for (const x of inputs) {
      yield;
      at.insertAdjacentHTML('beforeend', `<div class="vec-row"><span class="vec-label">${x.label}</span>${vectorCells(x.values, maxAbs(x.values), 'small')}</div>`);
    }
    at.insertAdjacentHTML('beforeend', `<p class="muted">${t('step0.then', { E, d })}${inputNote ? ` ${escapeHtml(inputNote)}` : ''}</p>`);
  }
  yield;

  const qv = ex.Q.subarray(qi * E + head * d, qi * E + (head + 1) * d);
  const { weightSum, wDiff, rest } = yield* renderHeadSteps(add, box, { hd, q: qv, K: ex.K, V: ex.V, stride: E, base: head * d, d, S, qi, head, tok, rows, cols, fwdWeights });

  const ctxScale = maxAbs(ex.concat);
  add(`<h3 class="mh-title">${t('mh.title')}</h3>
    <div class="mh-split">
      <div class="mh-step"><h4><span class="num">5</span>${t('mh.split')}</h4><p>${t('mh.splitText', { E, H: numHeads, d })}</p></div>
      <div class="qkv">
        <figure><canvas class="mat" data-m="Q"></canvas><figcaption>Q <span class="muted">[${ex.L} × ${E}]</span></figcaption></figure>
        <figure><canvas class="mat" data-m="K"></canvas><figcaption>K <span class="muted">[${S} × ${E}]</span></figcaption></figure>
        <figure><canvas class="mat" data-m="V"></canvas><figcaption>V <span class="muted">[${S} × ${E}]</span></figcaption></figure>
      </div>
    </div>
    <div class="mh-step mh-heads"><h4><span class="num">6</span>${t('mh.heads', { tok: escapeHtml(tok) })}</h4>
      ${ex.heads.map((x, h) => `<div class="head-ctx" style="--head:${headColor(h)}"><span class="head-tag">${t('head', { n: h + 1 })}</span>${d <= 24 ? vectorCells(x.context, ctxScale, 'small') : `<canvas class="strip" data-h="${h}"></canvas>`}</div>`).join('')}
    </div>
    <div class="mh-grid">
      <div class="mh-step"><h4><span class="num">7</span>${t('mh.concat')}</h4><p>${t('mh.concatText', { H: numHeads, E })}</p><canvas class="strip" data-v="concat"></canvas></div>
      <div class="mh-step"><h4><span class="num">8</span>${t('mh.out')}</h4><p>${t('mh.outText')}</p><canvas class="strip" data-v="output"></canvas>
        ${check(oDiff)}
      </div>
    </div>
    <div class="div-legend"><span class="bar"></span><span>${t('mh.legend')}</span></div>`);

  // The canvases, drawn while still off the document: one matrix per piece.
  const w = canvasWidths(width);
  const qkvScale = Math.max(maxAbs(ex.Q), maxAbs(ex.K), maxAbs(ex.V));
  for (const c of box.querySelectorAll('canvas.mat')) {
    yield;
    const m = c.dataset.m;
    matrixCanvas(c, ex[m], m === 'Q' ? ex.L : S, E, numHeads, qkvScale, m === 'Q' ? qi : null, w.mat);
  }
  yield;
  for (const c of box.querySelectorAll('canvas.strip')) {
    if (c.dataset.h != null) stripCanvas(c, ex.heads[Number(c.dataset.h)].context, ctxScale, 1, w.strip);
    else if (c.dataset.v === 'concat') stripCanvas(c, ex.concat, ctxScale, numHeads, w.half);
    else stripCanvas(c, ex.output, maxAbs(ex.output), numHeads, w.half);
  }
  yield;
  root.replaceChildren(...box.childNodes);
  yield* rest(onScreen);
  return { weightSum, wDiff, oDiff };
}

/** Hover text for the canvases of the panel (strips and matrices), or null. */
export function stepsTooltip(target, x) {
  if (target.matches('canvas.strip') && target._values) {
    const c = Math.floor(x / Number(target.dataset.cw));
    if (c >= 0 && c < target._values.length) return `[${c}] ${target._values[c].toFixed(6)}`;
  }
  return null;
}

/** Hover text for a Q/K/V matrix cell at (x, y). */
export function matrixTooltip(target, x, y, rows, cols) {
  const mtx = target._matrix;
  if (!mtx) return null;
  const c = Math.floor(x / Number(target.dataset.cw));
  const i = Math.floor((y - Number(target.dataset.top)) / Number(target.dataset.rh));
  if (c < 0 || c >= mtx.E || i < 0 || i >= mtx.rows) return null;
  const names = target.dataset.m === 'Q' ? rows : cols;
  return `${target.dataset.m}[${escapeHtml(names[i])}, ${c}] = ${mtx.M[i * mtx.E + c].toFixed(4)}`;
}
