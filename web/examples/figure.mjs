// One attention layer of attnscope drawn as two SVG figures (a heat map and the head view). Run: node web/examples/figure.mjs
import { writeFileSync } from 'node:fs';
import { init, MultiHeadAttention } from 'attnscope';
import { heatmapSvg, headViewSvg } from 'attnscope/figures';

await init();
const tokens = ['The', 'cat', 'sat', 'on', 'the', 'mat', '.'];
const x = { data: Float32Array.from({ length: tokens.length * 16 }, (_, i) => 4 * Math.sin(0.7 * i)), shape: [tokens.length, 16] };
const mha = new MultiHeadAttention({ embedDim: 16, numHeads: 4, seed: 1 });
const { weights } = mha.forward(x); // [heads, queries, keys] = [4, 7, 7]
writeFileSync('heatmap.svg', heatmapSvg(weights, tokens, { head: 0, scale: 'row' }));
writeFileSync('head-view.svg', headViewSvg(weights, tokens));
mha.dispose();
