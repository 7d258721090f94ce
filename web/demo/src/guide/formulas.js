// The guided path's formulas with the reader's numbers written in: the tutorial's score(Q, Kᵢ) = Q · Kᵢ,
// αᵢ = softmax(scores)ᵢ and Context = Σᵢ αᵢ Vᵢ, from the walkthrough's float64 numbers (steps/float64.js explainQuery).
import { t } from '../i18n.js';
import { escapeHtml, escapeAttr } from '../dom.js';
import { HEAD_COLORS, seqRgb, css } from '../maps/colors.js';
import { fmt, term, head, weightWords, vectorCells, answerChars } from '../why/draw.js';

const sub = (x) => `<sub>${x}</sub>`;
const argmax = (a) => a.reduce((b, v, j) => (v > a[b] ? j : b), 0);
/** Indices of the largest `n` weights, largest first. */
const topIdx = (w, n) => [...w.keys()].sort((a, b) => w[b] - w[a]).slice(0, n);
const line = (html) => `<p class="f-line">${html}</p>`;

/** One head's slice of row `i` of a [rows, E] matrix. */
const slice = (M, i, E, h, d) => M.subarray(i * E + h * d, i * E + (h + 1) * d);

/** Step 1: the fixed context vector and the bottleneck model's answer. */
export function bottleneckFormula(run) {
  const c = run.bottleneck.context;
  const n = run.sourceTokens.length;
  return line(`<span class="f">c = h${sub(n)} <span class="muted">(${escapeHtml(t('guide.f.ctxVec', { n }))})</span> = ${head(c, 6)}</span>`)
    + vectorCells(c, { label: t('why.ctxLabel', { n: c.length, min: fmt(Math.min(...c)), max: fmt(Math.max(...c)) }) })
    + line(`<b>${t('why.answerNone')}</b> ${answerChars(run.bottleneck.tokens)}`)
    + line(`<span class="muted">${t('guide.f.noAttn')}</span>`);
}

/** Step 2: the attention model's weights at the shown step, and its context as a sum of the encoder states. */
export function attentionFormula(run, s, cur, cmap) {
  const at = run.attention;
  if (cur < 0 || !at.weights) return '';
  const w = at.weights[cur];
  const tok = at.tokens[cur] === '<eos>' ? t('why.eos') : at.tokens[cur];
  const words = run.sourceTokens;
  const terms = topIdx(w, 3).map((j) => `${fmt(w[j])} · h̄${sub(escapeHtml(words[j]))}`).join(' + ');
  let html = line(`<b>${escapeHtml(t('guide.f.stepAt', { t: cur + 1, tok }))}</b>`);
  // The query (the decoder's state) and the keys (the encoder's states), when the model gives them: the score of
  // the strongest word written out. Luong's dot score has no 1/√d: that comes with the transformer (step 4).
  const q = at.queries?.[cur], states = at.states;
  if (q && states) {
    const jx = argmax(w);
    const k = states[jx];
    const score = q.reduce((a, v, c) => a + v * k[c], 0);
    const prods = [0, 1, 2].map((c) => `${term(q[c])}×${term(k[c])}`).join(' + ');
    html += line(`<span class="f">score(h${sub('t')}, h̄${sub(escapeHtml(words[jx]))}) = h${sub('t')} · h̄${sub(escapeHtml(words[jx]))} = ${prods} + … = <b>${fmt(score, 3)}</b></span>`);
  }
  html += weightWords(words, w, { cmap, label: t('why.weightsLabel', { t: cur + 1, tok }) });
  let ctx = '';
  if (states) {
    const c = new Float64Array(states[0].length);
    states.forEach((h, j) => { for (let k = 0; k < c.length; k++) c[k] += w[j] * h[k]; });
    ctx = ` = <b>${head(c, 4)}</b>`;
  }
  html += line(`<span class="f">α${sub('i')} = softmax(h${sub('t')} · h̄${sub('i')})${sub('i')}; &nbsp; c${sub('t')} = Σ${sub('i')} α${sub('i')} h̄${sub('i')} = ${terms}${words.length > 3 ? ' + …' : ''}${ctx}</span>`);
  return html + line(`<b>${t('why.answerAttn')}</b> ${answerChars(at.tokens, { shown: s, current: cur })}`);
}

/** Step 3: the query, the first keys and values, as numbers. */
export function qkvFormula(ex, rows, cols, h) {
  const { E, d, qi, S } = ex;
  const q = slice(ex.Q, qi, E, h, d);
  let html = line(`<span class="f">Q = x W${sub('Q')}, &nbsp; K = x W${sub('K')}, &nbsp; V = x W${sub('V')}</span>`);
  const note = (key, tok) => `<span class="muted">(${escapeHtml(t(key, { tok }))})</span>`;
  html += line(`<span class="f"><b>Q</b> ${note('guide.f.q', rows[qi])} = ${head(q)}</span>`);
  for (let j = 0; j < Math.min(3, S); j++) {
    html += line(`<span class="f">K${sub(j)} ${note('guide.f.k', cols[j])} = ${head(slice(ex.K, j, E, h, d))}; &nbsp; V${sub(j)} ${note('guide.f.v', cols[j])} = ${head(slice(ex.V, j, E, h, d))}</span>`);
  }
  if (S > 3) html += line(`<span class="muted">${escapeHtml(t('guide.f.more', { n: S - 3 }))}</span>`);
  return html;
}

/** Step 4: score, softmax and weighted sum for the query and head, the first terms written out. */
export function threeStepsFormula(ex, rows, cols, h, cmap) {
  const { E, d, qi, S } = ex;
  const hd = ex.heads[h];
  const q = slice(ex.Q, qi, E, h, d);
  const jx = argmax(hd.weights);
  const k = slice(ex.K, jx, E, h, d);
  const n = Math.min(3, d);
  const prods = [...Array(n).keys()].map((c) => `${term(q[c])}×${term(k[c])}`).join(' + ');
  const root = Math.sqrt(d);
  // Positions from 0, as the token chips, the maps and the steps panel number them.
  const J = sub(jx);
  let html = line(`<span class="f"><b>1</b> score(Q, K${J}) = Q · K${J} / √${d} = (${prods}${d > n ? ' + …' : ''}) / ${fmt(root, 2)} = ${fmt(hd.scores[jx], 3)} / ${fmt(root, 2)} = <b>${fmt(hd.scaled[jx], 3)}</b> <span class="muted">(K${J}: “${escapeHtml(cols[jx])}”)</span></span>`);
  const shown = Math.min(S, 8);
  html += line(`<span class="f">scores = [${[...Array(shown).keys()].map((j) => `${escapeHtml(cols[j])} ${fmt(hd.scaled[j], 2).replace('-', '−')}`).join(', ')}${S > shown ? ', …' : ''}]</span>`);
  html += line(`<span class="f"><b>2</b> α${sub('i')} = softmax(scores)${sub('i')} = e${'<sup>'}s${sub('i')} − max</sup> / Σ${sub('j')} e<sup>s${sub('j')} − max</sup>; &nbsp; α${J} = ${fmt(hd.exps[jx], 3)} / ${fmt(hd.z, 3)} = <b>${fmt(hd.weights[jx], 3)}</b></span>`);
  html += weightWords(cols, hd.weights, { cmap, label: `α: ${rows[qi]}` });
  const terms = topIdx(hd.weights, 2).map((j) => `${fmt(hd.weights[j])} × ${head(slice(ex.V, j, E, h, d), 3)}`).join(' + ');
  html += line(`<span class="f"><b>3</b> ${escapeHtml(t('guide.contextWord'))} = Σ${sub('i')} α${sub('i')} V${sub('i')} = ${terms}${S > 2 ? ' + …' : ''} = <b>${head(hd.context, 4)}</b></span>`);
  return html;
}

/** Queries listed in step 5 at most: a long input's list would push the rest of the guide off the screen. */
const EVERY_QUERY_ROWS = 24;
/** A second key below this weight is left out of step 5's lines: "0.00" says nothing (a causal first query has none). */
const SECOND_KEY_MIN = 0.005;

/**
 * Step 5: self-attention runs step 4 for every position at once. One line per query, the two keys head `h` weighs
 * most and their weights, from the forward pass's weights ([H, L, S] in `r.weights`); the picked query is marked.
 */
export function everyQueryFormula(r, h, cmap) {
  const { L, S } = r;
  const w = r.weights.data;
  // Around the picked query when the list is cut, so that it is always one of the lines.
  const from = Math.max(0, Math.min(r.qi - Math.floor(EVERY_QUERY_ROWS / 2), L - EVERY_QUERY_ROWS));
  const to = Math.min(L, from + EVERY_QUERY_ROWS);
  let items = '';
  for (let i = from; i < to; i++) {
    const row = w.subarray((h * L + i) * S, (h * L + i + 1) * S);
    // The two strongest keys: where a head parks most weight on one token (an attention sink, often <bos>), the
    // second says what it reads besides.
    const [j, j2] = topIdx(row, 2);
    const key = (k) => `<i class="guide-sw" aria-hidden="true" style="background:${css(seqRgb(cmap, row[k]))}"></i>`
      + `<span class="guide-k">${escapeHtml(r.cols[k])}</span> <span class="muted">${fmt(row[k])}</span>`;
    const mark = i === r.qi ? ' aria-current="true"' : '';
    items += `<li${mark} data-q="${i}" data-k="${j}" data-w="${row[j]}"><span class="guide-q">${escapeHtml(r.rows[i])}</span> → `
      + `${key(j)}${j2 !== undefined && row[j2] >= SECOND_KEY_MIN ? `, ${key(j2)}` : ''}</li>`;
  }
  const cut = L - (to - from);
  return line(`<span class="f">${escapeHtml(t('guide.f.everyQuery', { h: h + 1, n: L }))}</span>`)
    + `<ol class="guide-every" start="${from}">${items}</ol>`
    + (cut > 0 ? line(`<span class="muted">${escapeHtml(t('guide.f.more', { n: cut }))}</span>`) : '')
    + line(`<span class="f">${escapeHtml(t('guide.f.everyMatrix', { L, S }))}</span>`);
}

/**
 * Step 6's picture: where each head looks from the query, one strip of cells per head (a cell per key, coloured by
 * its weight on the head's own scale), the strongest key named beside it.
 */
export function headStrips(ex, cols, cmap) {
  return `<div class="guide-heads">${ex.heads.map((x, h) => {
    const w = x.weights, top = Math.max(1e-12, ...w), j = argmax(w);
    const label = t('guide.f.headLooks', { h: h + 1, tok: cols[j], w: fmt(w[j]) });
    const cells = Array.from(w, (v, k) => `<i style="background:${css(seqRgb(cmap, v / top))}" title="${escapeAttr(`${cols[k]} ${fmt(v)}`)}"></i>`).join('');
    return `<div class="guide-head-row" style="--head:${HEAD_COLORS[h % HEAD_COLORS.length]}"><span class="guide-head-tag">${escapeHtml(label)}</span>`
      + `<span class="guide-strip" role="img" aria-label="${escapeAttr(label)}">${cells}</span></div>`;
  }).join('')}</div>`;
}

/** Step 6: split into heads, one context per head, concatenate, project. */
export function multiHeadFormula(ex, cols, cmap) {
  const { E, d, numHeads: H } = ex;
  let html = line(`<span class="f"><b>${escapeHtml(t('guide.f.split', { E, H, d }))}</b></span>`) + headStrips(ex, cols, cmap);
  ex.heads.forEach((x, h) => { html += line(`<span class="f">${escapeHtml(t('guide.f.perHead', { h: h + 1 }))} = ${head(x.context, 4)}</span>`); });
  // Written per head, so the reader sees each head's numbers again, side by side.
  const parts = ex.heads.map((x) => head(x.context, 2).slice(1, -1)).join(' | ');
  html += line(`<span class="f"><b>${escapeHtml(t('guide.f.concat', { H, E }))}</b> = [${parts}]</span>`);
  html += line(`<span class="f"><b>${escapeHtml(t('guide.f.project'))}</b> = ${head(ex.output, 6)}</span>`);
  return html;
}
