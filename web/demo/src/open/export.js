// Export of what is selected for an opened model: the current layer and head's map, its tokens and colour scale, as
// SVG drawn by attnscope/figures, or as PNG rasterised from that same SVG (one drawing, two formats); the maps the
// page shows, a view of them marked as one.
import { heatmapSvg } from 'attnscope/figures';
import { t } from '../i18n.js';
import { download } from '../dom.js';
import { viewLegend } from '../research/shows.js';
import { FIGURE_SCALE, TOOLTIP_CELLS } from '../maps/exporting.js';


/** The SVG of the selected head of `r` (an opened model's result). */
export function openFigureSvg(state, r) {
  const c = r.config, T = r.T;
  const offset = (r.layer * c.heads + r.head) * T * T;
  return heatmapSvg({ data: r.run.attention.data.subarray(offset, offset + T * T), shape: [T, T] }, r.rows, {
    title: `${c.family} · ${t('mv.layer', { n: r.layer + 1 })} · ${t('head', { n: r.head + 1 })}`,
    // A view of the maps (research/maps.js) says so on the figure, as its legend does on the page.
    subtitle: [t('open.figureQuery', { q: r.rows[r.qi], i: r.qi }), viewLegend(r.view)].filter(Boolean).join(' · '),
    scale: FIGURE_SCALE[state.scale] ?? 'linear',
    vmax: state.scale === 'one' ? 1 : undefined,
    colormap: state.cmap,
    tooltips: T * T <= TOOLTIP_CELLS,
    strings: { head: t('head', { n: '{n}' }), layer: t('mv.layer', { n: '{n}' }), weight: t('legend') },
  });
}

/** The SVG drawn on a canvas at twice its size, as a PNG blob. */
async function pngOf(svg) {
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    img.src = url;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth * 2;
    canvas.height = img.naturalHeight * 2;
    const ctx = canvas.getContext('2d');
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    return await new Promise((ok) => canvas.toBlob(ok, 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}

export async function exportOpenFigure(state, r, kind) {
  if (!r || r.kind !== 'hf' || r.empty) return;
  const svg = openFigureSvg(state, r);
  const name = `attnscope-${r.config.family}-layer${r.layer + 1}-head${r.head + 1}`;
  if (kind === 'svg') download(new Blob([svg], { type: 'image/svg+xml' }), `${name}.svg`);
  else download(await pngOf(svg), `${name}.png`);
}
