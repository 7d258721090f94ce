// The opened model's current view as one self-contained HTML file: its line, text and link, the selected head's map
// (the SVG the SVG export draws), the model view, and whatever research tool is shown (the logit lens, the two
// prompts, patching), each canvas as a PNG inside the file, with the page's own styles inlined. No script and
// nothing fetched: the file opens offline.
import { t, getLang } from '../i18n.js';
import { $, escapeHtml, escapeAttr, download } from '../dom.js';
import { openFigureSvg } from '../open/export.js';
import { viewMark } from './shows.js';

/** The parts of the page copied when shown, in the page's order. */
const PARTS = ['#open-grid', '#open-lens-out', '#open-sinks-out', '#open-circuits-out', '#open-compare-out', '#open-patch-out', '#open-positions-out'];

/** The page's style rules as text (its own stylesheets: same origin, so readable). */
function styles() {
  const out = [];
  for (const sheet of document.styleSheets) {
    try { for (const rule of sheet.cssRules) out.push(rule.cssText); } catch { /* a sheet from elsewhere: none here */ }
  }
  return out.join('\n');
}

/**
 * A copy of `el` that stands alone: each canvas becomes a PNG image (its text alternative kept), each button a span
 * (a file without script has nothing for it to do), and hidden parts and the hints that say what a click does are left
 * out.
 */
function standalone(el) {
  const copy = el.cloneNode(true);
  const live = el.querySelectorAll('canvas'), copies = copy.querySelectorAll('canvas');
  copies.forEach((c, i) => {
    const img = document.createElement('img');
    img.src = live[i].width && live[i].height ? live[i].toDataURL('image/png') : '';
    img.alt = live[i].getAttribute('aria-label') ?? '';
    img.style.width = live[i].style.width;
    img.style.height = live[i].style.height;
    c.replaceWith(img);
  });
  for (const b of copy.querySelectorAll('button')) {
    const s = document.createElement('span');
    s.className = 'rs-cell';
    for (const a of ['style', 'title', 'data-id', 'data-prob']) if (b.hasAttribute(a)) s.setAttribute(a, b.getAttribute(a));
    s.textContent = b.textContent;
    b.replaceWith(s);
  }
  for (const h of copy.querySelectorAll('[hidden], .rs-live')) h.remove();
  for (const d of copy.querySelectorAll('details')) d.open = true;
  copy.removeAttribute('id');
  return copy.outerHTML;
}

/** The HTML document of the view `r` (an opened model's result) under `state`, linking back to `href`. */
export function viewHtml(state, r, href) {
  const c = r.config;
  const title = t('rs.exportTitle', { family: c.family, l: r.layer + 1, h: r.head + 1 });
  const date = new Date().toISOString().slice(0, 10);
  // A view of the maps (research/maps.js) is marked over the maps it drew, as on the page.
  const mark = viewMark(r.view) ? `<p class="rs-mark">${escapeHtml(viewMark(r.view))}</p>` : '';
  const parts = PARTS.map((sel) => $(sel)).filter((el) => el && el.childElementCount && !el.closest('[hidden]'));
  const body = [
    `<h1>${escapeHtml(title)}</h1>`,
    `<p class="hint">${escapeHtml(t('rs.exportMade', { date }))}</p>`,
    `<p>${escapeHtml($('#open-info').textContent)}</p>`,
    `<p><b>${escapeHtml(t('rs.exportText'))}:</b> ${escapeHtml(state.open.text)}</p>`,
    `<p><a href="${escapeAttr(href)}">${escapeHtml(t('rs.exportLink'))}</a></p>`,
    `<section class="card"><h2>${escapeHtml(t('rs.exportMap', { l: r.layer + 1, h: r.head + 1 }))}</h2>${mark}${openFigureSvg(state, r)}</section>`,
    ...parts.map((el) => `<section class="card">${heading(el)}${el.id === 'open-grid' ? mark : ''}${standalone(el)}</section>`),
  ].join('\n');
  return `<!doctype html>
<html lang="${getLang() === 'zh' ? 'zh-CN' : 'en'}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${styles()}
.rs-cell { display: inline-block; font-family: var(--mono); padding: 3px 4px; min-width: 2.4em; }
img { max-width: none; }
</style></head>
<body><main>
${body}
</main></body></html>
`;
}

/** The heading a copied part goes under: the title of the tool it belongs to. */
function heading(el) {
  const key = { 'open-grid': 'open.modelTitle', 'open-lens-out': 'rs.lensTitle', 'open-sinks-out': 'rs.sinkTitle', 'open-circuits-out': 'rs.circTitle',
    'open-compare-out': 'rs.twoTitle', 'open-patch-out': 'rs.exportPatch' }[el.id];
  return key ? `<h2>${escapeHtml(t(key))}</h2>` : '';
}

export function exportViewHtml(state, r, href) {
  if (!r || r.kind !== 'hf' || r.empty) return;
  const name = `attnscope-${r.config.family}-layer${r.layer + 1}-head${r.head + 1}.html`;
  download(new Blob([viewHtml(state, r, href)], { type: 'text/html' }), name);
}
