// attnscope/figures: attention figures as standalone SVG strings — weights and tokens in, SVG out, no DOM, no WASM.
export { heatmapSvg } from './heatmap.js';
export { headViewSvg } from './headview.js';
export { modelViewSvg } from './modelview.js';
export { COLORMAPS, HEAD_COLORS, SCALES, colormapHex, contrastRatio } from './color-scale.js';
export { FONT_FAMILY } from './svg.js';
