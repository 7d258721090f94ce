// An opened translation model (an encoder–decoder): its greedy translation of the text, and the
// three attentions of one layer and head side by side: the encoder's over the source, the decoder's over its own
// output, and cross-attention, output rows × source columns (which source token each output token reads).
import { t, getLang } from '../i18n.js';
import { $, escapeHtml, escapeAttr } from '../dom.js';
import { drawHeatmap, heatmapLayout, paintLegend, prepareCanvas } from '../maps/heatmap.js';
import { mapTop } from '../maps/paint.js';

/** The three maps, in the order shown: which run field, its rows and columns, its stack's layers and heads. */
const MAPS = [
  { key: 'cross', data: 'crossAttention', rows: 'out', cols: 'src' },
  { key: 'encoder', data: 'encoderAttention', rows: 'src', cols: 'src' },
  { key: 'decoder', data: 'decoderAttention', rows: 'out', cols: 'out' },
];

/** One head's map of `map` [layers, heads, rows, cols] at the chosen layer and head (each clamped to its stack). */
function slice(map, layer, head) {
  const [L, H, R, C] = map.shape;
  const l = Math.min(layer, L - 1), h = Math.min(head, H - 1);
  return { offset: ((l * H + h) * R) * C, R, C, l, h };
}

/** A text alternative: each row's strongest column. */
function strongest(data, offset, rows, cols) {
  return rows.map((r, i) => {
    let best = 0;
    for (let j = 1; j < cols.length; j++) if (data[offset + i * cols.length + j] > data[offset + i * cols.length + best]) best = j;
    return `${r} → ${cols[best]} (${data[offset + i * cols.length + best].toFixed(2)})`;
  }).join('; ');
}

/** @param {{ pick: (layer: number, head: number) => void }} app */
export function createOpenTranslationView(app) {
  const section = document.createElement('section');
  section.className = 'card';
  section.id = 'open-translation';
  section.setAttribute('aria-labelledby', 'open-translation-title');
  section.hidden = true;
  $('#open-section').after(section);
  let lang = '';
  let width = 0;

  function skeleton() {
    section.innerHTML = `<h2 id="open-translation-title">${escapeHtml(t('open.s2sTitle'))}</h2>
      <p class="hint">${escapeHtml(t('open.s2sText'))}</p>
      <p class="open-s2s-output"><b>${escapeHtml(t('open.s2sOutput'))}</b> <span id="open-s2s-text"></span></p>
      <div class="open-pick">
        <label><span>${escapeHtml(t('open.layer'))}</span> <select id="open-s2s-layer"></select></label>
        <label><span>${escapeHtml(t('open.head'))}</span> <select id="open-s2s-head"></select></label>
      </div>
      <div class="legend" id="open-s2s-legend"><span class="legend-title">${escapeHtml(t('legend'))}</span><span class="legend-bar"></span>
        <span class="legend-ticks"><span>0</span><span class="mid"></span><span class="max"></span></span><span class="legend-note"></span></div>
      <div class="open-s2s-maps">${MAPS.map((m) => `<figure class="open-s2s-map"><figcaption id="open-s2s-${m.key}-title"></figcaption><canvas id="open-s2s-${m.key}" role="img"></canvas></figure>`).join('')}</div>`;
    const pick = () => app.pick(Number($('#open-s2s-layer').value), Number($('#open-s2s-head').value));
    $('#open-s2s-layer').addEventListener('change', pick);
    $('#open-s2s-head').addEventListener('change', pick);
    lang = getLang();
  }

  new ResizeObserver(([e]) => { width = Math.floor(e.contentRect.width); }).observe(section);

  function options(select, n, label, value) {
    const sig = `${n}|${getLang()}`;
    if (select.dataset.sig !== sig) {
      select.innerHTML = [...Array(n).keys()].map((i) => `<option value="${i}">${escapeHtml(t(label, { n: i + 1 }))}</option>`).join('');
      select.dataset.sig = sig;
    }
    select.value = String(Math.min(value, n - 1));
  }

  return {
    name: 'openTranslation',
    render(state, r) {
      const run = r.translation;
      section.hidden = state.mode !== 'open' || !run;
      if (section.hidden) return;
      if (lang !== getLang()) skeleton();
      $('#open-s2s-text').textContent = run.text ?? run.outputIds.join(' ');
      const L = Math.max(run.encoderAttention.shape[0], run.crossAttention.shape[0]);
      const H = Math.max(run.encoderAttention.shape[1], run.crossAttention.shape[1]);
      options($('#open-s2s-layer'), L, 'mv.layer', state.open.layer);
      options($('#open-s2s-head'), H, 'head', state.open.head);
      const tokens = { src: run.tokens, out: run.outputTokens.map((s, i) => s ?? `#${run.outputIds[i]}`) };
      // Three maps in a row on a wide screen, one under another on a phone.
      const each = width >= 900 ? Math.floor((width - 48) / 3) : Math.max(240, width - 16);
      // The page's colour scale, one top for the three maps (the largest of their tops), so that they compare.
      const slices = MAPS.map((m) => slice(run[m.data], state.open.layer, state.open.head));
      const top = Math.max(...MAPS.map((m, k) => mapTop(state.scale, run[m.data].data, slices[k].offset, slices[k].R, slices[k].C)));
      paintLegend($('#open-s2s-legend'), { cmap: state.cmap, top: state.scale === 'row' ? 1 : top, note: t(`scaleNote.${state.scale}`) });
      MAPS.forEach((m, k) => {
        const map = run[m.data];
        const s = slices[k];
        const rows = tokens[m.rows], cols = tokens[m.cols];
        const layout = heatmapLayout(rows, cols, { width: each, maxCell: 26 });
        const canvas = $(`#open-s2s-${m.key}`);
        const ctx = prepareCanvas(canvas, layout.width, layout.height);
        drawHeatmap(ctx, layout, { data: map.data, offset: s.offset, rows, cols, vmax: top, scale: state.scale, cmap: state.cmap });
        const title = t(`open.s2s.${m.key}`, { l: s.l + 1, h: s.h + 1 });
        $(`#open-s2s-${m.key}-title`).textContent = title;
        canvas.setAttribute('aria-label', `${title}. ${t('open.s2sStrongest')} ${strongest(map.data, s.offset, rows, cols)}`);
        canvas.dataset.rows = String(s.R);
        canvas.dataset.cols = String(s.C);
      });
      section.dataset.ready = escapeAttr(String(run.outputIds.length));
    },
  };
}
