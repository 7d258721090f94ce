// The head view (after bertviz) as a standalone SVG string: query tokens left, key tokens right, one line per
// (head, query, key) whose opacity is the weight, one colour per head.
import { HEAD_COLORS } from './color-scale.js';
import { flagOption, checkOptions, describe, idOption, indexOption, numberOption, pickBatch, shapeString, stringOption, tokenList, weightsTensor } from './input.js';
import { axisLabels, pairText, strongest } from './map-parts.js';
import { FONT_FAMILY, INK, MUTED_INK, contentId, dataFingerprint, displayToken, escapeXml, fill, heading, mergeStrings, num, svgDocument, textWidth } from './svg.js';

const CALLER = 'headViewSvg';
const OPTIONS = ['keyTokens', 'batch', 'heads', 'query', 'minWeight', 'lineLength', 'legend', 'title', 'subtitle', 'description', 'strings', 'fontFamily', 'id'];
const PAD = 8;
// Okabe and Ito's own names for their colours, for the text description.
const COLOR_NAMES = ['blue', 'orange', 'bluish green', 'vermillion', 'reddish purple', 'sky blue', 'black', 'yellow'];

/**
 * Lines from each query to the keys it attends to. See figures/index.d.ts for the options.
 * @returns {string} a standalone SVG document
 */
export function headViewSvg(weights, tokens, options) {
  const o = checkOptions(options, OPTIONS, CALLER);
  const tensor = weightsTensor(weights, [2, 3, 4], CALLER);
  const { shape, data } = tensor;
  const [L, S] = shape.slice(-2);
  const H = shape.length >= 3 ? shape[shape.length - 3] : 1;
  let base = 0;
  if (shape.length === 4) base = pickBatch(shape[0], o.batch, CALLER) * H * L * S;
  else if (o.batch !== undefined) throw new RangeError(`${CALLER}: options.batch: weights of shape ${shapeString(shape)} have no batch dimension`);
  const rows = tokenList(tokens, L, CALLER, 'tokens', `one per query of weights ${shapeString(shape)}`);
  const cols = o.keyTokens === undefined
    ? tokenList(tokens, S, CALLER, 'tokens', `one per key of weights ${shapeString(shape)}; pass options.keyTokens when keys differ from queries`)
    : tokenList(o.keyTokens, S, CALLER, 'options.keyTokens', `one per key of weights ${shapeString(shape)}`);
  const heads = headList(o.heads, H);
  const query = o.query === undefined ? null : indexOption(o.query, L, CALLER, 'options.query', 'queries');
  const minWeight = numberOption(o.minWeight, 0.01, { min: 0, max: 1 }, CALLER, 'options.minWeight');
  const lineLength = numberOption(o.lineLength, 180, { min: 10, max: 10000 }, CALLER, 'options.lineLength');
  const showLegend = flagOption(o.legend, H > 1, CALLER, 'options.legend');
  const title = stringOption(o.title, undefined, CALLER, 'options.title');
  const subtitle = stringOption(o.subtitle, undefined, CALLER, 'options.subtitle');
  const fontFamily = stringOption(o.fontFamily, FONT_FAMILY, CALLER, 'options.fontFamily');
  const strings = mergeStrings(o.strings, CALLER);

  const long = Math.max(L, S) > 32;
  const rowH = long ? 16 : 22;
  const fontPx = long ? 11 : 13;
  const rowLabels = axisLabels(rows), colLabels = axisLabels(cols);
  const leftW = Math.max(textWidth(strings.queries, 12), ...rowLabels.map((s) => textWidth(s, fontPx, true)));
  const rightW = Math.max(textWidth(strings.keys, 12), ...colLabels.map((s) => textWidth(s, fontPx)));
  const x1 = PAD + leftW + 8, x2 = x1 + lineLength;
  const head = heading(title, subtitle, PAD);
  const width = Math.max(x2 + 8 + rightW, head.width) + PAD;

  // Head legend: a swatch and the head's name per shown head, wrapping at the figure's width.
  const chips = [];
  let legendH = 0;
  if (showLegend) {
    let cx = PAD, cy = PAD + head.height;
    for (const h of heads) {
      const label = fill(strings.head, h + 1);
      const w = 16 + textWidth(label, 12) + 12;
      if (cx > PAD && cx + w > width - PAD) { cx = PAD; cy += 20; }
      chips.push(`<rect x="${num(cx)}" y="${num(cy + 2)}" width="12" height="12" rx="2" fill="${HEAD_COLORS[h % HEAD_COLORS.length]}"/>`,
        `<text x="${num(cx + 16)}" y="${num(cy + 8)}" dy=".35em" fill="${INK}">${escapeXml(label)}</text>`);
      cx += w;
    }
    legendH = cy + 20 - (PAD + head.height) + 6;
  }
  const captionY = PAD + head.height + legendH + 12;
  const top = captionY + 8;
  const y = (i) => top + (i + 0.5) * rowH;
  const height = top + Math.max(L, S) * rowH + PAD;

  const body = [...head.lines];
  if (chips.length) body.push('<g data-role="head-legend" font-size="12">', ...chips, '</g>');
  body.push(`<g font-size="12" fill="${MUTED_INK}"><text x="${num(x1 - 8)}" y="${num(captionY)}" text-anchor="end">${escapeXml(strings.queries)}</text><text x="${num(x2 + 8)}" y="${num(captionY)}">${escapeXml(strings.keys)}</text></g>`);
  for (const h of heads) {
    body.push(`<g data-role="lines" data-head="${h}" stroke="${HEAD_COLORS[h % HEAD_COLORS.length]}" stroke-width="2" stroke-linecap="round">`);
    for (let i = 0; i < L; i++) {
      if (query !== null && i !== query) continue;
      for (let j = 0; j < S; j++) {
        const w = data[base + (h * L + i) * S + j];
        // A line's opacity is its weight; fainter than minWeight it would only add noise (and bytes).
        if (!(w >= minWeight) || w <= 0) continue;
        body.push(`<line x1="${num(x1)}" y1="${num(y(i))}" x2="${num(x2)}" y2="${num(y(j))}" stroke-opacity="${Number(Math.min(1, w).toFixed(3))}" data-q="${i}" data-k="${j}"/>`);
      }
    }
    body.push('</g>');
  }
  body.push(`<g data-role="labels" font-size="${fontPx}" fill="${INK}">`);
  rowLabels.forEach((s, i) => body.push(`<text x="${num(x1 - 8)}" y="${num(y(i))}" dy=".35em" text-anchor="end" data-axis="query"${i === query ? ' font-weight="700"' : ''}>${escapeXml(s)}</text>`));
  colLabels.forEach((s, j) => body.push(`<text x="${num(x2 + 8)}" y="${num(y(j))}" dy=".35em" data-axis="key">${escapeXml(s)}</text>`));
  body.push('</g>');

  const maps = heads.map((h) => ({ data, offset: base + h * L * S, L, S }));
  const best = strongest(maps.map((m) => (query === null ? m : { ...m, offset: m.offset + query * S, L: 1 })));
  const pairs = best.map((c) => `${fill(strings.head, heads[c.m] + 1)}: ${pairText(rows, cols, query === null ? c : { ...c, i: query })}`);
  const colours = heads.map((h) => `${fill(strings.head, h + 1)} ${COLOR_NAMES[h % COLOR_NAMES.length]}`).join(', ');
  const description = stringOption(o.description, undefined, CALLER, 'options.description')
    ?? `Head view: ${query === null ? 'each query' : `the query “${displayToken(rows[query])}”`} (left) joined to the keys (right) by lines whose opacity is the weight${minWeight > 0 ? ` (weights below ${minWeight} not drawn)` : ''}; ${colours}. Strongest weights: ${pairs.join('; ') || 'none'}.`;
  const id = o.id === undefined ? contentId([CALLER, shapeString(shape), heads.join(','), query, rows.join('\u0000'), cols.join('\u0000'), dataFingerprint(data, base, H * L * S)]) : idOption(o.id, CALLER);
  const accessibleTitle = title ?? `Attention head view: ${heads.length} of ${H} heads, ${L} queries × ${S} keys`;
  return svgDocument({ width, height, id, title: accessibleTitle, description, fontFamily, body });
}

function headList(value, H) {
  if (value === undefined) return [...Array(H).keys()];
  if (!Array.isArray(value)) throw new TypeError(`${CALLER}: options.heads: expected an array of head indices, got ${describe(value)}`);
  value.forEach((h, k) => indexOption(h, H, CALLER, `options.heads[${k}]`, 'heads'));
  if (new Set(value).size !== value.length) throw new RangeError(`${CALLER}: options.heads: expected distinct head indices, got [${value.join(', ')}]`);
  return [...value];
}
