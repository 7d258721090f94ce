/**
 * attnscope/figures — attention figures as standalone SVG strings: weights and tokens in, an SVG document out.
 * Pure functions: no DOM, no WebAssembly, no `init()`; they run in Node, a worker or a page alike.
 *
 * ```js
 * import { heatmapSvg } from 'attnscope/figures';
 * writeFileSync('head1.svg', heatmapSvg(weights, tokens, { head: 0, scale: 'excludeFirstKey' }));
 * ```
 *
 * Every figure is accessible (`role="img"`, a `<title>` and a `<desc>` naming the strongest weights), uses
 * colour-blind-safe colours (viridis or cividis for weights, Okabe–Ito for heads), draws text with a contrast of at
 * least 4.5:1, and escapes token text, so tokens such as `<`, `&`, quotes, emoji or CJK render as text and never as
 * markup. Cells carry `data-q` and `data-k` (query and key index); head-view lines carry `data-q`, `data-k` and sit
 * in a group with `data-head`.
 *
 * @packageDocumentation
 * @module attnscope/figures
 */

/** Weights as `MultiHeadAttention.forward` returns them: row-major `data` of the given `shape`. */
export interface WeightsTensor {
  data: Float32Array | Float64Array;
  shape: number[];
}

/** Nested number arrays, e.g. `[[0.9, 0.1], [0.4, 0.6]]` (as `json.dumps(weights.tolist())` writes them in Python). */
export type NestedWeights = number[][] | number[][][] | number[][][][];

/** A weights tensor or nested arrays. */
export type WeightsLike = WeightsTensor | NestedWeights;

/**
 * What maps to the top of the colour map — choose one an attention sink cannot blind:
 * - `'linear'`: 0 to `vmax` (default: the largest weight shown).
 * - `'row'`: each query's row from 0 to its own largest weight, so every row uses the whole colour range.
 * - `'excludeFirstKey'`: 0 to the largest weight outside the first key (a `<bos>` or `[CLS]` sink); larger
 *   first-key weights get the top colour and the legend says `≥`.
 * - `'log'`: logarithmic from `vmin` (default `vmax / 1000`; smaller weights, zeros included, get the bottom colour)
 *   to `vmax`.
 */
export type ColorScaling = 'linear' | 'row' | 'excludeFirstKey' | 'log';

/** Colour-blind-safe sequential colour maps (matplotlib's). `cividis` also reads for full red–green blindness. */
export type Colormap = 'viridis' | 'cividis';

/**
 * The words a figure draws, each replaceable (e.g. for a page in another language). `{n}` is replaced by a
 * 1-based number.
 */
export interface FigureStrings {
  /** Default `'Head {n}'`. */
  head?: string;
  /** Default `'Layer {n}'`. */
  layer?: string;
  /** Accessible title of a heat map of the mean of heads; default `'Mean of {n} heads'`. */
  mean?: string;
  /** Head-view caption over the query tokens; default `'Queries'`. */
  queries?: string;
  /** Head-view caption over the key tokens; default `'Keys'`. */
  keys?: string;
  /** Legend title; default `'weight'`. */
  weight?: string;
  /** Legend title with `scale: 'row'`; default `'share of row max'`. */
  rowWeight?: string;
}

/** Options every figure takes. */
export interface FigureOptions {
  /**
   * Key tokens when they differ from the query tokens (cross-attention: queries are the target, keys the source).
   * Default: the `tokens` argument.
   */
  keyTokens?: string[];
  /** A visible title at the top, also the accessible name. Default: no visible title; a generated accessible name. */
  title?: string;
  /** A visible second line under the title. */
  subtitle?: string;
  /** The `<desc>` text. Default: a sentence naming the layout, the five strongest weights and the colour scaling. */
  description?: string;
  /** Replacements for the words the figure draws. */
  strings?: FigureStrings;
  /** CSS font stack of all text. Default: system UI fonts, then fonts with CJK coverage. */
  fontFamily?: string;
  /**
   * Prefix of the ids inside the SVG (`<title>`, `<desc>`, gradient): letters, digits, `_ - .`. Default: a hash of
   * the content, so several figures inlined in one page do not collide and the same input gives the same SVG.
   */
  id?: string;
}

/** Options of figures drawn as heat maps. */
export interface MapOptions extends FigureOptions {
  /** Colour scaling; default `'linear'`. */
  scale?: ColorScaling;
  /** Top of the scale (every scaling but `'row'`). Default: from the data. Use `1` to compare figures. */
  vmax?: number;
  /** Bottom of a `'log'` scale; default `vmax / 1000`. Ignored by the other scalings. */
  vmin?: number;
  /** Default `'viridis'`. */
  colormap?: Colormap;
  /**
   * Token labels on the axes: `'auto'` (default) draws them where the cells are at least 9 px, `true` always,
   * `false` never. Long tokens are shortened to 12 characters; spaces and line breaks show as `␣` and `↵`.
   */
  labels?: boolean | 'auto';
  /** A `<title>` tooltip per cell, "query → key: weight". */
  tooltips?: boolean;
  /** The colour bar with its ticks; default true. */
  legend?: boolean;
}

/** Options of {@link heatmapSvg}. */
export interface HeatmapOptions extends MapOptions {
  /** For `[batch, heads, q, k]` weights: which batch entry (required when there are several). */
  batch?: number;
  /** For weights with heads: the head (0-based) or `'mean'`, the mean over heads (default). */
  head?: number | 'mean';
  /** Side of a cell in pixels. Default: 28, shrinking for long sequences (a 64-token map is about 700 px); 40 with `values`. */
  cellSize?: number;
  /** Print each weight (two decimals) in its cell, black or white, whichever contrasts more. Default false. */
  values?: boolean;
  /** Default true. */
  tooltips?: boolean;
}

/** Options of {@link headViewSvg}. */
export interface HeadViewOptions extends FigureOptions {
  /** For `[batch, heads, q, k]` weights: which batch entry (required when there are several). */
  batch?: number;
  /** The heads to draw (0-based); default all. Head `h` is drawn in Okabe–Ito colour `h mod 8`. */
  heads?: number[];
  /** Draw only this query's lines (0-based), its label in bold: bertviz's hover as a still figure. */
  query?: number;
  /** Lines of weights below this are not drawn; default 0.01. A line's opacity is its weight. */
  minWeight?: number;
  /** Horizontal length of the lines in pixels; default 180. */
  lineLength?: number;
  /** The head legend (swatch and name per head); default true when there is more than one head. */
  legend?: boolean;
}

/** Options of {@link modelViewSvg}. */
export interface ModelViewOptions extends MapOptions {
  /** The longer side of each small map in pixels (cells stay at most 24 px); default 120. */
  mapSize?: number;
  /** Default false: model views have many cells, and tooltips make the file large. */
  tooltips?: boolean;
  /** A caption under each map, `captions[layer][head]` (`null` for none), e.g. what a head measurably does. */
  captions?: (string | null)[][];
}

/**
 * A heat map of one attention map: rows are queries, columns keys, with token labels, a colour legend, and the
 * weight of each cell in its tooltip.
 *
 * @param weights - `[queries, keys]`, `[heads, queries, keys]` or `[batch, heads, queries, keys]` (as
 *   `MultiHeadAttention.forward` returns them, averaged or not). With heads, `options.head` picks one (default: their mean).
 * @param tokens - One string per query (and per key, unless `options.keyTokens` is given).
 * @returns A standalone SVG document.
 * @throws TypeError for wrong types (weights data not a Float32Array/Float64Array, a token not a string, an unknown
 *   option); RangeError for shapes that disagree with the tokens, an out-of-range head or batch, a bad number.
 *   Each message names `heatmapSvg`, the argument, what was expected and what was given.
 */
export function heatmapSvg(weights: WeightsLike, tokens: string[], options?: HeatmapOptions): string;

/**
 * The head view (after bertviz): query tokens left, key tokens right, a line from each query to each key whose
 * opacity is the weight, one colour per head.
 *
 * @param weights - `[queries, keys]` (one head), `[heads, queries, keys]` or `[batch, heads, queries, keys]`.
 * @param tokens - One string per query (and per key, unless `options.keyTokens` is given).
 * @returns A standalone SVG document.
 * @throws TypeError or RangeError as {@link heatmapSvg}, naming `headViewSvg`.
 */
export function headViewSvg(weights: WeightsLike, tokens: string[], options?: HeadViewOptions): string;

/**
 * The model view (after bertviz): a heat map per layer (grid rows) and head (grid columns), all on one colour scale.
 *
 * @param weights - `[layers, heads, queries, keys]` (e.g. `LanguageModel.forward(text).attention`), or an array with one
 *   `[heads, queries, keys]` tensor per layer (e.g. each layer's `forward().weights`).
 * @param tokens - One string per query (and per key, unless `options.keyTokens` is given).
 * @returns A standalone SVG document.
 * @throws TypeError or RangeError as {@link heatmapSvg}, naming `modelViewSvg`.
 */
export function modelViewSvg(weights: WeightsLike | WeightsLike[], tokens: string[], options?: ModelViewOptions): string;

/** The colour maps: `['viridis', 'cividis']`. */
export const COLORMAPS: readonly Colormap[];
/** The colour scalings: `['linear', 'row', 'excludeFirstKey', 'log']`. */
export const SCALES: readonly ColorScaling[];
/** The figures' default font stack (`fontFamily`): system UI fonts, then fonts that cover Chinese. */
export const FONT_FAMILY: string;

/** Okabe–Ito colours (`#rrggbb`); head `h` is drawn in `HEAD_COLORS[h % 8]`. */
export const HEAD_COLORS: readonly string[];
/** The colour (`#rrggbb`) of `t` in [0, 1] on a colour map, as the figures paint it (for a legend drawn elsewhere). */
export function colormapHex(colormap: Colormap, t: number): string;
/** The WCAG 2 contrast ratio (1 to 21) of two `#rrggbb` colours. */
export function contrastRatio(a: string, b: string): number;
