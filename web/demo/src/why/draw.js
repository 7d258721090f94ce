// HTML pieces of the "Why attention" section and the guided path: a vector as numbered cells, weights over the
// source words, an answer as characters, the bottleneck curve as an SVG plot. Pure: strings from numbers.
import { divRgb, seqRgb, css, inkOn } from '../maps/colors.js';
import { escapeHtml, escapeAttr } from '../dom.js';
import { t } from '../i18n.js';
import { MODEL_KEYS } from './curves.js';

export const fmt = (v, n = 2) => (Object.is(v, -0) || Math.abs(v) < 0.5 * 10 ** -n ? 0 : v).toFixed(n);
/** A signed number in a formula: negatives in brackets, so "× (−0.41)" reads as one term. */
export const term = (v, n = 2) => (v < 0 && fmt(v, n) !== fmt(0, n) ? `(−${fmt(-v, n)})` : fmt(v, n));
const maxAbs = (a) => a.reduce((m, v) => Math.max(m, Math.abs(v)), 1e-12);

/** Every number of a vector as a cell on a diverging scale (blue negative, red positive), with its legend. */
export function vectorCells(values, { label }) {
  const m = maxAbs(values);
  let html = `<div class="why-vec" role="img" aria-label="${escapeAttr(label)}">`;
  for (let i = 0; i < values.length; i++) {
    const rgb = divRgb(values[i] / m);
    html += `<span style="background:${css(rgb)};color:${inkOn(rgb)}" title="[${i}] ${values[i].toFixed(5)}">${fmt(values[i])}</span>`;
  }
  return `${html}</div><div class="why-scale" aria-hidden="true"><span>−${fmt(m)}</span><span class="bar"></span><span>+${fmt(m)}</span></div>`;
}

/** The first `n` numbers of a vector in brackets: "[0.12, −0.40, 0.33, …]". */
export function head(values, n = 4) {
  const shown = Array.from(values.slice(0, n), (v) => fmt(v).replace('-', '−'));
  return `[${shown.join(', ')}${values.length > n ? ', …' : ''}]`;
}

/** Source words coloured by their weights, each with its number; the strongest outlined. */
export function weightWords(tokens, weights, { cmap = 'viridis', label }) {
  let best = 0;
  for (let j = 1; j < weights.length; j++) if (weights[j] > weights[best]) best = j;
  const top = Math.max(1e-12, weights[best]);
  const cells = tokens.map((tok, j) => {
    const rgb = seqRgb(cmap, weights[j] / top);
    return `<li class="${j === best ? 'best' : ''}" style="background:${css(rgb)};color:${inkOn(rgb)}"><span class="w-tok">${escapeHtml(tok)}</span><span class="w-val">${fmt(weights[j])}</span></li>`;
  }).join('');
  return `<ol class="why-weights" aria-label="${escapeAttr(label)}">${cells}</ol>`;
}

/** An answer as characters; the first `shown` are written, `current` is outlined. */
export function answerChars(tokens, { shown = tokens.length, current = -1 } = {}) {
  return `<span class="why-answer">${tokens.map((tok, i) => {
    const text = tok === '<eos>' ? t('why.eos') : tok;
    const cls = [i >= shown ? 'todo' : '', i === current ? 'current' : '', tok === '<eos>' ? 'eos' : ''].join(' ').trim();
    return `<span class="${cls}">${escapeHtml(i >= shown ? '·' : text)}</span>`;
  }).join('')}</span>`;
}

// One colour and one marker per model (Okabe–Ito, and shapes, so the lines differ without colour too).
const STYLE = { bottleneck: ['#D55E00', 'circle'], attention: ['#0072B2', 'square'], transformer2000: ['#CC79A7', 'triangle'], transformer: ['#009E73', 'diamond'] };

function marker(kind, x, y, color) {
  if (kind === 'circle') return `<circle cx="${x}" cy="${y}" r="3.5" fill="${color}"/>`;
  if (kind === 'square') return `<rect x="${x - 3.2}" y="${y - 3.2}" width="6.4" height="6.4" fill="${color}"/>`;
  if (kind === 'triangle') return `<path d="M${x} ${y - 4.5}L${x + 4.5} ${y + 3.5}L${x - 4.5} ${y + 3.5}Z" fill="${color}"/>`;
  return `<path d="M${x} ${y - 4.5}L${x + 4.5} ${y}L${x} ${y + 4.5}L${x - 4.5} ${y}Z" fill="${color}"/>`;
}

/** Exact match (0–1) against source length (1–64 words), one line per model, a legend, and the values as a table. */
export function curvePlot(curves) {
  const W = 560, H = 280, L = 66, R = 12, T = 12, B = 42;
  const xMax = Math.max(64, ...MODEL_KEYS.flatMap((k) => (curves.series[k] ?? []).map(([x]) => x)));
  const px = (x) => L + ((x - 1) / (xMax - 1)) * (W - L - R);
  const py = (y) => T + (1 - y) * (H - T - B);
  let svg = `<svg class="why-curve" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeAttr(t('why.curveLabel'))}">`;
  for (const y of [0, 0.25, 0.5, 0.75, 1]) svg += `<line x1="${L}" x2="${W - R}" y1="${py(y)}" y2="${py(y)}" stroke="#e2e5ea"/><text x="${L - 6}" y="${py(y) + 4}" text-anchor="end">${y * 100}%</text>`;
  for (const x of [1, 8, 16, 24, 32, 40, 48, 56, 64].filter((v) => v <= xMax)) svg += `<text x="${px(x)}" y="${H - B + 16}" text-anchor="middle">${x}</text>`;
  svg += `<text x="${(L + W - R) / 2}" y="${H - 6}" text-anchor="middle" class="axis">${escapeHtml(t('why.curveX'))}</text>`;
  svg += `<text transform="translate(14 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle" class="axis">${escapeHtml(t('why.curveY'))}</text>`;
  for (const k of MODEL_KEYS) {
    const pts = curves.series[k];
    if (!pts?.length) continue;
    const [color, kind] = STYLE[k];
    svg += `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ')}"/>`;
    const every = Math.max(1, Math.ceil(pts.length / 16));
    svg += pts.filter((_, i) => i % every === 0 || i === pts.length - 1).map(([x, y]) => marker(kind, px(x), py(y), color)).join('');
  }
  svg += '</svg>';
  const keys = MODEL_KEYS.filter((k) => curves.series[k]?.length);
  const legend = `<ul class="why-legend">${keys.map((k) => `<li><svg width="22" height="12" aria-hidden="true"><line x1="0" x2="22" y1="6" y2="6" stroke="${STYLE[k][0]}" stroke-width="2"/>${marker(STYLE[k][1], 11, 6, STYLE[k][0])}</svg>${escapeHtml(t(`why.model.${k}`))}</li>`).join('')}</ul>`;
  const lengths = [...new Set(keys.flatMap((k) => curves.series[k].map(([x]) => x)))].sort((a, b) => a - b);
  const at = (k, x) => curves.series[k].find(([v]) => v === x)?.[1];
  const table = `<details class="why-table"><summary>${escapeHtml(t('why.curveTable'))}</summary><div class="table-wrap" tabindex="0" role="region" aria-label="${escapeAttr(t('why.curveLabel'))}"><table><thead><tr><th scope="col">${escapeHtml(t('why.curveLen'))}</th>${keys.map((k) => `<th scope="col">${escapeHtml(t(`why.model.${k}`))}</th>`).join('')}</tr></thead><tbody>${lengths.map((x) => `<tr><th scope="row">${x}</th>${keys.map((k) => { const y = at(k, x); return `<td>${y == null ? '' : `${(y * 100).toFixed(1)}%`}</td>`; }).join('')}</tr>`).join('')}</tbody></table></div></details>`;
  return svg + legend + table;
}
