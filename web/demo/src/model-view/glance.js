// The first screen's live map on a phone: under the sentence box, the character model's map of the layer and head
// the page has selected, redrawn as the reader types. On a desktop the model view beside the sentence shows them all.
import { t } from '../i18n.js';
import { $ } from '../dom.js';
import { drawHeatmap, plainLayout, prepareCanvas } from '../maps/heatmap.js';
import { scaleTop } from '../maps/scales.js';
import { strongest, headName } from '../heads/names.js';

const PHONE = '(max-width: 600px)';

/** @param {{ invalidate: () => void }} app */
export function createGlanceView(app) {
  const root = $('#glance');
  const canvas = root.querySelector('canvas');
  const phone = window.matchMedia(PHONE);
  phone.addEventListener('change', app.invalidate);
  return {
    name: 'glance',
    root,
    *render(state, r) {
      const on = phone.matches && r.kind === 'lm' && !r.entry && !!r.run && !r.textEmpty;
      root.hidden = !on;
      if (!on) return;
      const { run } = r;
      const T = run.T, H = run.H, layer = r.layer, head = Math.min(state.head, H - 1);
      const offset = (layer * H + head) * T * T;
      const data = run.attention.subarray(offset, offset + T * T);
      const width = Math.max(120, root.clientWidth);
      const cell = Math.max(0.5, Math.min(14, (width - 2) / T, 220 / T));
      const layout = plainLayout(T, T, cell >= 4 ? Math.floor(cell) : cell, 1);
      yield;
      const ctx = prepareCanvas(canvas, layout.width, layout.height);
      const vmax = Math.max(0.01, scaleTop(state.scale, data, T));
      drawHeatmap(ctx, layout, { data: run.attention, offset, vmax, scale: state.scale, cmap: state.cmap, selectedRow: r.qi });
      // A named head says what it does (the default, layer 1's previous-token head, explains its diagonal).
      const named = r.named?.[head];
      const what = named ? t('glance.captionNamed', { l: layer + 1, h: head + 1, name: headName(named) }) : t('glance.caption', { l: layer + 1, h: head + 1 });
      root.querySelector('figcaption').textContent = what;
      canvas.setAttribute('aria-label', `${what}. ${t('a11y.strongest')}: ${strongest(run.attention, offset, run.labels, run.labels, 3)}`);
      root.dataset.layer = String(layer);
      root.dataset.head = String(head);
    },
  };
}
