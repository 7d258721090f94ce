// The heat map of one attention map (one head, or the mean of the heads) as a standalone SVG string.
import { COLORMAPS, SCALES, createScale } from './color-scale.js';
import { autoOption, flagOption, checkOptions, choiceOption, idOption, numberOption, selectMap, shapeString, stringOption, tokenList, weightsTensor } from './input.js';
import { axisLabels, cellRects, columnLayout, legend, legendWidth, pairText, rowLabelWidth, strongest, tokenLabels } from './map-parts.js';
import { FONT_FAMILY, contentId, dataFingerprint, fill, heading, mergeStrings, svgDocument } from './svg.js';

const CALLER = 'heatmapSvg';
const OPTIONS = ['keyTokens', 'batch', 'head', 'scale', 'vmax', 'vmin', 'colormap', 'labels', 'cellSize', 'values', 'tooltips', 'legend', 'title', 'subtitle', 'description', 'strings', 'fontFamily', 'id'];
const PAD = 8;
const FONT_PX = 12;

/**
 * One map of attention weights: rows are queries, columns keys. See figures/index.d.ts for the options.
 * @returns {string} a standalone SVG document
 */
export function heatmapSvg(weights, tokens, options) {
  const o = checkOptions(options, OPTIONS, CALLER);
  const tensor = weightsTensor(weights, [2, 3, 4], CALLER);
  const map = selectMap(tensor, o, CALLER);
  const rows = tokenList(tokens, map.L, CALLER, 'tokens', `one per query of weights ${shapeString(tensor.shape)}`);
  const cols = o.keyTokens === undefined
    ? tokenList(tokens, map.S, CALLER, 'tokens', `one per key of weights ${shapeString(tensor.shape)}; pass options.keyTokens when keys differ from queries`)
    : tokenList(o.keyTokens, map.S, CALLER, 'options.keyTokens', `one per key of weights ${shapeString(tensor.shape)}`);
  const kind = choiceOption(o.scale, SCALES, 'linear', CALLER, 'options.scale');
  const colormap = choiceOption(o.colormap, COLORMAPS, 'viridis', CALLER, 'options.colormap');
  const vmax = numberOption(o.vmax, undefined, { min: 0, exclusiveMin: true }, CALLER, 'options.vmax');
  const vmin = numberOption(o.vmin, undefined, { min: 0, exclusiveMin: true }, CALLER, 'options.vmin');
  const values = flagOption(o.values, false, CALLER, 'options.values');
  const tooltips = flagOption(o.tooltips, true, CALLER, 'options.tooltips');
  const showLegend = flagOption(o.legend, true, CALLER, 'options.legend');
  const labelsOption = autoOption(o.labels, CALLER, 'options.labels');
  const title = stringOption(o.title, undefined, CALLER, 'options.title');
  const subtitle = stringOption(o.subtitle, undefined, CALLER, 'options.subtitle');
  const fontFamily = stringOption(o.fontFamily, FONT_FAMILY, CALLER, 'options.fontFamily');
  const strings = mergeStrings(o.strings, CALLER);
  // 28 px cells for short sentences, shrinking so a 64-token map stays about 700 px; room for the numbers with `values`.
  const cell = numberOption(o.cellSize, values ? 40 : Math.max(4, Math.min(28, Math.floor(720 / Math.max(map.L, map.S)))), { min: 1, max: 1000 }, CALLER, 'options.cellSize');
  const scale = createScale(kind, [map], { vmax, vmin }, CALLER);

  const showLabels = labelsOption === 'auto' ? cell >= 9 : labelsOption;
  const fontPx = Math.min(FONT_PX, Math.max(6, cell));
  const rowLabels = showLabels ? axisLabels(rows) : [];
  const colLabels = showLabels ? axisLabels(cols) : [];
  const columns = showLabels ? columnLayout(colLabels, cell, fontPx) : { upright: [], height: 0 };
  const head = heading(title, subtitle, PAD);
  const legendTitle = kind === 'row' ? strings.rowWeight : strings.weight;

  const x0 = PAD + (showLabels ? rowLabelWidth(rowLabels, fontPx) : 0);
  const y0 = PAD + head.height + Math.max(columns.height, showLegend ? 26 : 0);
  const mapW = map.S * cell, mapH = map.L * cell;
  const legendX = x0 + mapW + 20;
  const legendH = Math.max(100, Math.min(mapH, 320));
  const width = Math.max(showLegend ? legendX + legendWidth(scale, legendTitle) : x0 + mapW, head.width) + PAD;
  const height = y0 + Math.max(mapH, showLegend ? legendH : 0) + PAD;

  const what = map.head === 'mean' ? fill(strings.mean, map.heads) : map.head === null ? '' : `${fill(strings.head, map.head + 1)} of ${map.heads}`;
  const id = o.id === undefined ? contentId([CALLER, shapeString(tensor.shape), map.head, rows.join('\u0000'), cols.join('\u0000'), kind, colormap, dataFingerprint(map.data, map.offset, map.L * map.S)]) : idOption(o.id, CALLER);
  const accessibleTitle = title ?? `Attention weights${what ? `, ${what}` : ''}: ${map.L} queries × ${map.S} keys`;
  const top = strongest([map]);
  const description = stringOption(o.description, undefined, CALLER, 'options.description')
    ?? `Heat map; rows are queries, columns are keys. Strongest weights (query → key): ${top.map((c) => pairText(rows, cols, c)).join('; ') || 'none (no finite weights)'}. Colour: ${colormap}, ${scale.summary}.`;

  const body = [...head.lines];
  body.push(...cellRects({ map, fractions: scale.fractions(map), colormap, x: x0, y: y0, cell, rows, cols, tooltips, values }));
  if (showLabels) body.push(...tokenLabels({ rowLabels, colLabels, x: x0, y: y0, cell, fontPx, upright: columns.upright }));
  if (showLegend) body.push(...legend({ scale, colormap, x: legendX, y: y0, height: legendH, id, title: legendTitle }));
  return svgDocument({ width, height, id, title: accessibleTitle, description, fontFamily, body });
}
