// The model view (after bertviz) as a standalone SVG string: a grid of small heat maps, one per layer and head,
// sharing one colour scale.
import { COLORMAPS, HEAD_COLORS, SCALES, createScale } from './color-scale.js';
import { autoOption, flagOption, checkOptions, choiceOption, describe, idOption, numberOption, shapeString, stringOption, tokenList, weightsTensor } from './input.js';
import { axisLabels, cellRects, columnLayout, legend, legendWidth, pairText, rowLabelWidth, strongest, tokenLabels } from './map-parts.js';
import { FONT_FAMILY, INK, contentId, dataFingerprint, escapeXml, fill, heading, mergeStrings, num, svgDocument, textWidth } from './svg.js';

const CALLER = 'modelViewSvg';
const OPTIONS = ['keyTokens', 'scale', 'vmax', 'vmin', 'colormap', 'mapSize', 'labels', 'tooltips', 'legend', 'captions', 'title', 'subtitle', 'description', 'strings', 'fontFamily', 'id'];
const PAD = 8, GAP = 10;

/**
 * Every layer × head of a model. `weights` is `[layers, heads, queries, keys]` (e.g. a trained model's `attention`)
 * or an array with one `[heads, queries, keys]` tensor per layer (e.g. each layer's `forward().weights`).
 * See figures/index.d.ts for the options.
 * @returns {string} a standalone SVG document
 */
export function modelViewSvg(weights, tokens, options) {
  const o = checkOptions(options, OPTIONS, CALLER);
  const layers = layerList(weights);
  const [H, L, S] = layers[0].shape;
  const shapeText = `${layers.length} layers of ${shapeString(layers[0].shape)}`;
  const rows = tokenList(tokens, L, CALLER, 'tokens', `one per query of weights ${shapeText}`);
  const cols = o.keyTokens === undefined
    ? tokenList(tokens, S, CALLER, 'tokens', `one per key of weights ${shapeText}; pass options.keyTokens when keys differ from queries`)
    : tokenList(o.keyTokens, S, CALLER, 'options.keyTokens', `one per key of weights ${shapeText}`);
  const kind = choiceOption(o.scale, SCALES, 'linear', CALLER, 'options.scale');
  const colormap = choiceOption(o.colormap, COLORMAPS, 'viridis', CALLER, 'options.colormap');
  const vmax = numberOption(o.vmax, undefined, { min: 0, exclusiveMin: true }, CALLER, 'options.vmax');
  const vmin = numberOption(o.vmin, undefined, { min: 0, exclusiveMin: true }, CALLER, 'options.vmin');
  const mapSize = numberOption(o.mapSize, 120, { min: 4, max: 10000 }, CALLER, 'options.mapSize');
  const labelsOption = autoOption(o.labels, CALLER, 'options.labels');
  const tooltips = flagOption(o.tooltips, false, CALLER, 'options.tooltips');
  const showLegend = flagOption(o.legend, true, CALLER, 'options.legend');
  const captions = captionGrid(o.captions, layers.length, H);
  const title = stringOption(o.title, undefined, CALLER, 'options.title');
  const subtitle = stringOption(o.subtitle, undefined, CALLER, 'options.subtitle');
  const fontFamily = stringOption(o.fontFamily, FONT_FAMILY, CALLER, 'options.fontFamily');
  const strings = mergeStrings(o.strings, CALLER);

  const maps = layers.flatMap(({ data, offset }) => Array.from({ length: H }, (_, h) => ({ data, offset: offset + h * L * S, L, S })));
  const scale = createScale(kind, maps, { vmax, vmin }, CALLER);
  // Square cells, at most 24 px, so the longer side of each map is mapSize.
  const cell = Math.min(24, mapSize / Math.max(L, S));
  const mapW = S * cell, mapH = L * cell;
  const showLabels = labelsOption === 'auto' ? cell >= 9 : labelsOption;
  const fontPx = Math.min(12, Math.max(6, cell));
  const rowLabels = showLabels ? axisLabels(rows) : [];
  const colLabels = showLabels ? axisLabels(cols) : [];
  const columns = showLabels ? columnLayout(colLabels, cell, fontPx) : { upright: [], height: 0 };
  const captionH = captions ? 16 : 0;
  const legendTitle = kind === 'row' ? strings.rowWeight : strings.weight;
  const head = heading(title, subtitle, PAD);

  const layerW = Math.max(...layers.map((_, l) => textWidth(fill(strings.layer, l + 1), 12))) + 10;
  const gridX = PAD + layerW + (showLabels ? rowLabelWidth(rowLabels, fontPx) : 0);
  const headerY = PAD + head.height + (showLegend ? 8 : 0);
  const gridY = headerY + 20 + columns.height;
  const gridW = H * mapW + (H - 1) * GAP;
  const gridH = layers.length * (mapH + captionH) + (layers.length - 1) * GAP;
  const legendX = gridX + gridW + 20;
  const legendH = Math.max(100, Math.min(gridH, 320));
  const width = Math.max(showLegend ? legendX + legendWidth(scale, legendTitle) : gridX + gridW, head.width) + PAD;
  const height = gridY + Math.max(gridH, showLegend ? legendH : 0) + PAD;
  const mapX = (h) => gridX + h * (mapW + GAP);
  const mapY = (l) => gridY + l * (mapH + captionH + GAP);

  const body = [...head.lines];
  body.push(`<g data-role="head-headers" font-size="12" fill="${INK}">`);
  for (let h = 0; h < H; h++) {
    body.push(`<rect x="${num(mapX(h))}" y="${num(headerY + 3)}" width="10" height="10" rx="2" fill="${HEAD_COLORS[h % HEAD_COLORS.length]}"/>`,
      `<text x="${num(mapX(h) + 14)}" y="${num(headerY + 8)}" dy=".35em">${escapeXml(fill(strings.head, h + 1))}</text>`);
  }
  body.push('</g>', `<g data-role="layer-headers" font-size="12" fill="${INK}">`);
  layers.forEach((_, l) => body.push(`<text x="${PAD}" y="${num(mapY(l) + Math.min(mapH, 40) / 2)}" dy=".35em">${escapeXml(fill(strings.layer, l + 1))}</text>`));
  body.push('</g>');
  layers.forEach((_, l) => {
    for (let h = 0; h < H; h++) {
      const map = maps[l * H + h];
      body.push(`<g data-role="map" data-layer="${l}" data-head="${h}">`);
      body.push(...cellRects({ map, fractions: scale.fractions(map), colormap, x: mapX(h), y: mapY(l), cell, rows, cols, tooltips, values: false }));
      const caption = captions?.[l][h];
      if (caption) body.push(`<text x="${num(mapX(h))}" y="${num(mapY(l) + mapH + 12)}" font-size="11" fill="${INK}">${escapeXml(caption)}</text>`);
      body.push('</g>');
    }
    // Token labels on the outer edges only, as small multiples share their axes.
    if (showLabels) body.push(...tokenLabels({ rowLabels, colLabels: l === 0 ? colLabels : [], x: gridX, y: mapY(l), cell, fontPx, upright: columns.upright }));
  });
  if (showLabels && colLabels.length) {
    for (let h = 1; h < H; h++) body.push(...tokenLabels({ rowLabels: [], colLabels, x: mapX(h), y: mapY(0), cell, fontPx, upright: columns.upright }));
  }
  const id = o.id === undefined ? contentId([CALLER, shapeText, rows.join('\u0000'), cols.join('\u0000'), kind, colormap, ...layers.map((t) => dataFingerprint(t.data, t.offset, H * L * S))]) : idOption(o.id, CALLER);
  if (showLegend) body.push(...legend({ scale, colormap, x: legendX, y: gridY, height: legendH, id, title: legendTitle }));

  const best = strongest(maps);
  const pairs = best.map((c) => `${fill(strings.layer, Math.floor(c.m / H) + 1)} ${fill(strings.head, (c.m % H) + 1)}: ${pairText(rows, cols, c)}`);
  const description = stringOption(o.description, undefined, CALLER, 'options.description')
    ?? `Model view: a heat map per layer (rows of the grid) and head (columns); in each map rows are queries and columns are keys. Strongest weights: ${pairs.join('; ') || 'none (no finite weights)'}. Colour: ${colormap}, ${scale.summary}, shared by all maps.`;
  const accessibleTitle = title ?? `Attention model view: ${layers.length} layers × ${H} heads, ${L} queries × ${S} keys`;
  return svgDocument({ width, height, id, title: accessibleTitle, description, fontFamily, body });
}

/** `[layers, heads, q, k]` or an array of `[heads, q, k]` tensors (all the same shape) → `{ data, offset, shape }` per layer. */
function layerList(weights) {
  const isTensorList = Array.isArray(weights) && weights.length > 0 && weights.every((w) => w !== null && typeof w === 'object' && !Array.isArray(w));
  if (!isTensorList) {
    const t = weightsTensor(weights, [4], CALLER);
    const [n, H, L, S] = t.shape;
    return Array.from({ length: n }, (_, l) => ({ data: t.data, offset: l * H * L * S, shape: [H, L, S] }));
  }
  const layers = weights.map((w, l) => ({ ...weightsTensor(w, [3], CALLER, `weights[${l}]`), offset: 0 }));
  const first = layers[0].shape;
  layers.forEach((t, l) => {
    if (t.shape.some((d, k) => d !== first[k])) throw new RangeError(`${CALLER}: weights[${l}]: expected shape ${shapeString(first)} like weights[0], got ${shapeString(t.shape)}`);
  });
  return layers;
}

/** Optional captions under the maps: `captions[layer][head]`, a string or null. */
function captionGrid(value, layers, H) {
  if (value === undefined) return null;
  const bad = (what) => { throw new TypeError(`${CALLER}: options.captions${what}`); };
  if (!Array.isArray(value)) bad(`: expected an array per layer of an array per head of strings (or null), got ${describe(value)}`);
  if (value.length !== layers) throw new RangeError(`${CALLER}: options.captions: expected ${layers} rows (one per layer), got ${value.length}`);
  value.forEach((row, l) => {
    if (!Array.isArray(row)) bad(`[${l}]: expected an array of ${H} strings (or null), got ${describe(row)}`);
    if (row.length !== H) throw new RangeError(`${CALLER}: options.captions[${l}]: expected ${H} entries (one per head), got ${row.length}`);
    row.forEach((c, h) => { if (c !== null && typeof c !== 'string') bad(`[${l}][${h}]: expected a string or null, got ${describe(c)}`); });
  });
  return value;
}
