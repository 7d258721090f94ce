// Downloads: one map as PNG or SVG, and the whole view as JSON (every setting, every layer of a trained model).
import { t } from '../i18n.js';
import { heatmapSvg } from 'attnscope/figures';
import { heatmapPng } from './heatmap.js';
import { mapSpec } from './mapspec.js';
import { FILE_NAMES } from '../models/trained.js';
import { download } from '../dom.js';

function fileBase(state, r, which) {
  const part = which === 'avg' ? 'average' : `head${which + 1}`;
  if (r.kind === 'lm') return `attnscope-lm-layer${r.layer + 1}-${part}`;
  if (r.kind === 's2s') return `attnscope-dates-${r.attn}${r.layer + 1}-${part}`;
  return `attnscope-${state.mode}-${part}`;
}

/** The page's colour scales under the names attnscope/figures gives them. */
export const FIGURE_SCALE = { rest: 'excludeFirstKey', max: 'linear', row: 'row', one: 'linear' };

/**
 * A figure's cells get tooltips (an SVG <title> each) up to this many: past it a cell is a few pixels, too small to
 * point at, and the titles are most of the file (500 tokens' 250,000 of them made a 34 MB HTML export).
 */
export const TOOLTIP_CELLS = 128 * 128;

/** One map as a standalone SVG figure, drawn by the package's attnscope/figures (the same function a Node script uses). */
export function svgFigure(state, r, spec) {
  const n = r.L * r.S;
  return heatmapSvg({ data: spec.data.subarray(spec.offset, spec.offset + n), shape: [r.L, r.S] }, r.rows, {
    keyTokens: r.cols,
    title: spec.title,
    subtitle: spec.subtitle,
    scale: FIGURE_SCALE[state.scale],
    vmax: state.scale === 'one' ? 1 : undefined,
    colormap: state.cmap,
    labels: true,
    tooltips: n <= TOOLTIP_CELLS,
    strings: { head: t('head', { n: '{n}' }), layer: t('mv.layer', { n: '{n}' }), weight: t('legend') },
  });
}

export async function exportMap(state, r, which, kind) {
  if (!r || r.empty) return;
  // Exported figures are clean: no hover frame, no walkthrough row marker.
  const spec = { ...mapSpec(state, r, which), selectedRow: null, legendTitle: t('legend') };
  if (kind === 'png') download(await heatmapPng(spec), `${fileBase(state, r, which)}.png`);
  else download(new Blob([svgFigure(state, r, spec)], { type: 'image/svg+xml' }), `${fileBase(state, r, which)}.svg`);
}

const round = (x) => Number(x.toPrecision(7));
/** [A, B] rows of `data` at `off` as nested arrays. */
const nest = (data, off, A, B) => Array.from({ length: A }, (_, i) => Array.from(data.subarray(off + i * B, off + (i + 1) * B), round));
/** A [layers, H, A, B] tensor as weights[layer][head][query][key]. */
const nestLayers = (data, layers, H, A, B) => Array.from({ length: layers }, (_, l) => Array.from({ length: H }, (_, h) => nest(data, (l * H + h) * A * B, A, B)));

/** The JSON document of the current view (also what the tests read back). */
export function exportDocument(state, r, url) {
  const doc = {
    generator: 'attnscope demo',
    url,
    mode: state.mode,
    // One spelling of the special tokens everywhere in the file.
    tokenNames: { '<bos>': 'beginning of the text (the first position every model reads)', '<eos>': 'end of the output (dates model)', '<end>': 'end of the text (next-character prediction)' },
  };
  if (r.kind === 'seeded') {
    Object.assign(doc, {
      model: 'untrained',
      settings: { embedDim: r.E, numHeads: r.H, headDim: r.d, seed: r.seed, causal: r.causal, attention: r.cross ? 'cross' : 'self' },
      queryTokens: r.rows, keyTokens: r.cols,
      shape: [r.H, r.L, r.S],
      layout: 'weights[head][query][key]; every query row sums to 1',
      weights: Array.from({ length: r.H }, (_, h) => nest(r.weights.data, h * r.L * r.S, r.L, r.S)),
      average: nest(r.average, 0, r.L, r.S),
      forwardMs: round(r.ms),
    });
    return doc;
  }
  const c = r.model.config;
  Object.assign(doc, {
    model: FILE_NAMES[r.kind],
    config: c,
    settings: { model: FILE_NAMES[r.kind], attention: r.kind === 'lm' ? 'self' : r.attn, layer: r.layer, layers: r.layers, embedDim: r.E, numHeads: r.H, headDim: r.d, causal: r.causal, step: state.step, query: r.qi,
      // Heads switched off: the attention and prediction below are the model's with them off.
      ...(r.kind === 'lm' ? { ablate: r.ablated.map(({ layer, head }) => ({ layer, head })) } : {}) },
    layout: 'attention[layer][head][query][key]; every query row sums to 1',
    forwardMs: round(r.ms),
  });
  if (r.kind === 'lm') {
    const { run } = r;
    Object.assign(doc, {
      tokens: run.labels,
      shape: [run.layers, run.H, run.T, run.T],
      attention: nestLayers(run.attention, run.layers, run.H, run.T, run.T),
      nextCharacter: run.next.map((x) => ({ token: x.token ?? '<end>', p: round(x.p) })),
    });
  } else {
    const { run } = r;
    const written = run.steps.map((s) => s.token);
    const S = run.sourceTokens.length, N = written.length;
    Object.assign(doc, {
      sourceWords: run.sourceTokens, output: run.text, outputTokens: written,
      decoderInputs: ['<bos>', ...written.slice(0, -1)],
      encoder: { shape: run.enc.shape, attention: nestLayers(run.enc.data, run.enc.shape[0], run.enc.shape[1], S, S) },
      decoder: { shape: run.dec.shape, attention: nestLayers(run.dec.data, run.dec.shape[0], run.dec.shape[1], run.dec.shape[2], run.dec.shape[3]) },
      cross: { shape: run.cross.shape, attention: nestLayers(run.cross.data, run.cross.shape[0], run.cross.shape[1], N, S) },
    });
  }
  return doc;
}

export function exportJson(state, r, url) {
  if (!r || r.empty || r.entry) return;
  const doc = exportDocument(state, r, url);
  const name = r.kind === 'seeded' ? `attnscope-${state.mode}-weights.json` : `attnscope-${r.kind === 'lm' ? 'lm' : 'dates'}-weights.json`;
  download(new Blob([JSON.stringify(doc, null, 1)], { type: 'application/json' }), name);
}

