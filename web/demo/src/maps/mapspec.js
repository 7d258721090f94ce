// What one heat map shows (data, axes, title, colour scaling), for the maps on the page, the zoom and the exports.
import { t } from '../i18n.js';
import { FILE_NAMES } from '../models/trained.js';
import { headName } from '../heads/names.js';
import { scaleTop } from './scales.js';

/** `which`: 'avg' or a head index. */
export function mapSpec(state, r, which) {
  const avg = which === 'avg';
  const named = avg ? null : r.named?.[which];
  const mode = r.cross ? t('attn.crossUntrained') : t('attn.selfUntrained');
  let subtitle = `attnscope · ${mode} · E=${r.E} H=${r.H} seed=${r.seed}${r.causal ? ' · causal' : ''} · ${t('axes')}`;
  if (r.kind === 'lm') subtitle = `attnscope · ${FILE_NAMES.lm} · ${t('attn.self')} · ${t('mv.layer', { n: r.layer + 1 })} · ${t('axes')}`;
  if (r.kind === 's2s') subtitle = `attnscope · ${FILE_NAMES.s2s} · ${t(`attn.${r.attn}`)} · ${t('mv.layer', { n: r.layer + 1 })} · ${t('axes')}`;
  const data = avg ? r.average : r.weights.data;
  const offset = avg ? 0 : which * r.L * r.S;
  // One top for every map of the layer, so maps side by side compare.
  const vmax = scaleTop(state.scale, r.weights.data, r.S);
  return {
    data, offset,
    rows: r.rows, cols: r.cols,
    vmax, cmap: state.cmap, scale: state.scale,
    selectedRow: r.qi,
    title: (avg ? t('average') : t('head', { n: which + 1 })) + (named ? ` · ${headName(named)} (${named.score.toFixed(2)})` : ''),
    subtitle,
  };
}
