// The model view section: every layer and head of the language model, or the encoder, decoder and cross-attention
// of the dates model, as small maps (ModelView draws them).
import { t } from '../i18n.js';
import { $, escapeHtml } from '../dom.js';
import { paintLegend } from '../maps/heatmap.js';
import { ModelView } from './draw.js';
import { namedHeadMap } from '../models/trained.js';
import { sliceHeads } from '../models/compute.js';
import { headName, namedTitle, metricText } from '../heads/names.js';
import { scaleTop } from '../maps/scales.js';
import { showTip, hideTip } from '../maps/tooltip.js';

/** The groups of maps of a trained result: one for the language model, three for the dates model. */
function groupsOf(r) {
  if (r.kind === 'lm') {
    const { run } = r;
    const T = run.T, H = run.H;
    return [{ attn: 'self', layers: run.layers, H, map: (l, h) => ({ data: run.attention, offset: (l * H + h) * T * T, rows: run.labels, cols: run.labels }) }];
  }
  const { run, shown } = r;
  const written = run.steps.map((s) => s.token);
  const read = ['<bos>', ...written.slice(0, -1)];
  const src = run.sourceTokens, S = src.length, N = run.steps.length;
  const [, H] = run.cross.shape;
  const dec = [...Array(run.dec.shape[0]).keys()].map((l) => sliceHeads(run.dec, l, shown, shown));
  const groups = [
    { attn: 'enc', layers: run.enc.shape[0], H, map: (l, h) => ({ data: run.enc.data, offset: (l * H + h) * S * S, rows: src, cols: src }) },
    { attn: 'dec', layers: run.dec.shape[0], H, map: (l, h) => ({ data: dec[l], offset: h * shown * shown, rows: written.slice(0, shown), cols: read.slice(0, shown) }) },
    // Rows are contiguous in [N, S]: the first `shown` rows of each head need no copy.
    { attn: 'cross', layers: run.cross.shape[0], H, map: (l, h) => ({ data: run.cross.data, offset: (l * H + h) * N * S, rows: written.slice(0, shown), cols: src }) },
  ];
  for (const g of groups) { g.title = t(`attn.${g.attn}`); g.axes = t(`attn.${g.attn}Axes`); }
  return groups;
}

/** @param {{ state: object, invalidate: () => void, pick: (attn: string, layer: number, head: number) => void }} app */
export function createModelView(app) {
  let shown = null; // { groups, named } last drawn, for the tooltip
  const mv = new ModelView($('#modelview'), {
    onPick: app.pick,
    onHover: ({ attn, layer, head, i, j }, e) => {
      const g = shown?.groups.find((x) => x.attn === attn);
      if (!g) return hideTip();
      const m = g.map(layer, head);
      const n = shown.named(attn, layer, head);
      const v = m.data[m.offset + i * m.cols.length + j];
      showTip(e.clientX, e.clientY, `<b>${escapeHtml(g.title ? `${g.title} · ` : '')}${t('mv.layer', { n: layer + 1 })} · ${t('head', { n: head + 1 })}</b>` +
        (n ? `<br>★ ${escapeHtml(n.label)}` : '') +
        `<br>${t('tip.cell', { q: `<b>${escapeHtml(m.rows[i])}</b><sub>${i}</sub>`, k: `<b>${escapeHtml(m.cols[j])}</b><sub>${j}</sub>` })}<br><span class="tip-num">${v.toFixed(6)}</span>`);
    },
    onLeave: hideTip,
    onResize: app.invalidate,
  });
  return {
    name: 'model',
    root: $('#model-section'),
    wants: (r) => r.kind !== 'seeded' && !r.entry && !r.textEmpty && !r.sourceEmpty,
    *render(state, r) {
      const badge = (n) => (n ? { label: `${headName(n)} · ${n.score.toFixed(2)}`, name: headName(n), score: n.score.toFixed(2), title: namedTitle(n), def: metricText(r.model, n) } : null);
      const groups = groupsOf(r);
      let named;
      if (r.kind === 'lm') named = (attn, l, h) => badge(r.namedMap.get(`${l}/${h}`));
      else {
        const maps = Object.fromEntries(['enc', 'dec', 'cross'].map((a) => [a, namedHeadMap(r.model, a)]));
        named = (attn, l, h) => badge(maps[attn].get(`${l}/${h}`));
      }
      let vmax = 1;
      if (state.scale === 'max' || state.scale === 'rest') {
        // One top for every map, so that layers and heads compare.
        for (const g of groups) {
          let m = 0.01;
          for (let l = 0; l < g.layers; l++) for (let h = 0; h < g.H; h++) {
            const x = g.map(l, h);
            m = Math.max(m, scaleTop(state.scale, x.data.subarray(x.offset, x.offset + x.rows.length * x.cols.length), x.cols.length));
          }
          vmax = g === groups[0] ? m : Math.max(vmax, m);
        }
      }
      shown = { groups, named };
      const off = new Set((r.ablated ?? []).map((x) => `self/${x.layer}/${x.head}`));
      yield* mv.update({ groups, selected: { attn: r.kind === 'lm' ? 'self' : r.attn, layer: r.layer }, cmap: state.cmap, vmax, scale: state.scale, named, isOff: (attn, l, h) => off.has(`${attn}/${l}/${h}`) });
      paintLegend($('#mv-scale'), { cmap: state.cmap, top: vmax });
    },
  };
}
