// The model view: one small heat map per layer and head of every attention of a trained model, heads
// named from their measured behaviour badged; clicking a map enlarges it and selects its layer.
import { HEAD_COLORS } from '../maps/colors.js';
import { drawHeatmap, prepareCanvas, cellAt, plainLayout } from '../maps/heatmap.js';
import { t } from '../i18n.js';
import { escapeHtml } from '../dom.js';
import { strongest } from '../heads/names.js';

const PAD = 1;
/** A head's name without its parenthesis ("previous token (guided in training)" → "previous token"). */
const shortName = (n) => n.name.replace(/\s*[(（].*$/, '') || n.label;

/** Where a cell is, for a map of L×S fitting width × maxHeight CSS pixels (no labels: these maps are small). */
function smallLayout(L, S, width, maxHeight) {
  let cell = Math.min(24, (width - 2 * PAD) / Math.max(1, S), (maxHeight - 2 * PAD) / Math.max(1, L));
  if (cell >= 4) cell = Math.floor(cell);
  return plainLayout(L, S, Math.max(0.5, cell), PAD);
}

function canvasPoint(canvas, e) {
  const rect = canvas.getBoundingClientRect();
  const k = (parseFloat(canvas.style.width) || rect.width) / (rect.width || 1);
  return [(e.clientX - rect.left) * k, (e.clientY - rect.top) * k];
}

export class ModelView {
  /**
   * @param {HTMLElement} root
   * @param {{ onPick: (attn: string, layer: number, head: number) => void,
   *           onHover: (cell: {attn: string, layer: number, head: number, i: number, j: number}, e: MouseEvent) => void,
   *           onLeave: () => void }} callbacks
   */
  constructor(root, { onPick, onHover, onLeave, onResize }) {
    this.root = root;
    this.cells = [];
    this.signature = '';
    // Widths of the maps and column heads per group, kept by a ResizeObserver (its callback runs with the layout
    // done), so a pass never forces a layout to learn them; a width that changed after drawing asks for a new pass.
    this.widths = new Map();
    this.used = new Map();
    this.resizes = new ResizeObserver((entries) => {
      let stale = false;
      for (const e of entries) {
        const key = e.target.dataset.measure;
        this.widths.set(key, e.contentRect.width);
        if (this.used.has(key) && Math.abs(this.used.get(key) - e.contentRect.width) > 1) stale = true;
      }
      if (stale) onResize?.();
    });
    const cellOf = (el) => this.cells.find((c) => c.el === el);
    root.addEventListener('click', (e) => {
      const el = e.target.closest('.mv-cell');
      if (el && !el.classList.contains('blank')) onPick(el.dataset.attn, Number(el.dataset.layer), Number(el.dataset.head));
    });
    // One Tab stop per group of maps (a roving tabindex, as a grid): the arrow keys move between its maps, Home and
    // End to its first and last; Enter or Space picks. Twelve to forty maps were as many Tab stops on the way down.
    root.addEventListener('keydown', (e) => {
      const el = e.target.closest('.mv-cell');
      // With a modifier the key is the browser's (Alt+← goes back).
      if (!el || e.altKey || e.ctrlKey || e.metaKey) return;
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        // As a click: a blank map (the decoder before its first step) has nothing to enlarge.
        if (!el.classList.contains('blank')) onPick(el.dataset.attn, Number(el.dataset.layer), Number(el.dataset.head));
        return;
      }
      const to = this.neighbour(el, e.key);
      if (!to) return;
      e.preventDefault();
      this.rove(to);
      to.focus();
    });
    root.addEventListener('focusin', (e) => {
      const el = e.target.closest('.mv-cell');
      if (el) this.rove(el);
    });
    root.addEventListener('mousemove', (e) => {
      const canvas = e.target.closest('canvas');
      const c = canvas && cellOf(canvas.closest('.mv-cell'));
      const hit = c?.layout && cellAt(c.layout, ...canvasPoint(canvas, e));
      if (hit) onHover({ attn: c.attn, layer: c.layer, head: c.head, ...hit }, e);
      else onLeave();
    });
    root.addEventListener('mouseleave', onLeave);
  }

  /**
   * @param {{ groups: { attn: string, title?: string, axes?: string, layers: number, H: number,
   *                     map: (layer: number, head: number) => { data: Float32Array, offset: number, rows: string[], cols: string[] } }[],
   *           selected: { attn: string, layer: number }, cmap: string, vmax: number,
   *           named: (attn: string, layer: number, head: number) => { label: string, title: string } | null }} v
   */
  // A generator: it yields after each row of maps, so a caller can let input in between.
  *update({ groups, selected, cmap, vmax, scale = 'max', named, isOff = () => false }) {
    const signature = groups.map((g) => `${g.attn}:${g.layers}x${g.H}`).join('|');
    if (signature !== this.signature) this.build(groups, signature);
    for (const g of groups) {
      for (const el of this.root.querySelectorAll(`.mv-group[data-attn="${g.attn}"] .mv-title`)) {
        el.innerHTML = g.title ? `${escapeHtml(g.title)} <span class="muted">${escapeHtml(g.axes ?? '')}</span>` : '';
      }
    }
    this.root.querySelectorAll('.mv-rowhead').forEach((el) => {
      el.textContent = t('mv.layer', { n: Number(el.dataset.layer) + 1 });
      el.classList.toggle('current', el.dataset.attn === selected.attn && Number(el.dataset.layer) === selected.layer);
    });
    // Narrow columns (phones, the dates model's three groups) get short head names.
    this.root.querySelectorAll('.mv-colhead').forEach((el) => {
      const n = Number(el.dataset.head) + 1;
      el.lastChild.textContent = this.width(`col:${el.closest('.mv-group').dataset.attn}`) < 72 ? t('mv.headShort', { n }) : t('head', { n });
      el.title = t('head', { n });
    });
    for (const g of groups) {
      const names = new Map();
      for (let l = 0; l < g.layers; l++) for (let h = 0; h < g.H; h++) {
        const n = named(g.attn, l, h);
        if (!n) continue;
        const e = names.get(n.name) ?? { def: n.def, heads: [] };
        e.heads.push(`${t('mv.layer', { n: l + 1 })} ${t('mv.headShort', { n: h + 1 })}${groups.length === 1 ? ` (${n.score})` : ''}`);
        names.set(n.name, e);
      }
      const legend = this.root.querySelector(`.mv-group[data-attn="${g.attn}"] .mv-legend`);
      legend.hidden = !names.size;
      legend.innerHTML = [...names].map(([name, e]) => `<span><b>★ ${escapeHtml(name)}</b>: ${escapeHtml(e.heads.join(', '))}${e.def ? `<br><span class="mv-def">${escapeHtml(e.def)}</span>` : ''}</span>`).join('');
    }
    // All maps of a group share one width: the grid's column width.
    for (const c of this.cells) {
      const g = groups.find((x) => x.attn === c.attn);
      const width = this.width(`map:${c.attn}`) || 120;
      const m = g.map(c.layer, c.head);
      const L = m.rows.length, S = m.cols.length;
      const current = c.attn === selected.attn && c.layer === selected.layer;
      c.el.classList.toggle('current', current);
      // The group's Tab stop is the selected layer's first map until the reader moves it (focus inside the grid).
      if (current && c.head === 0 && !c.el.closest('.mv-grid').contains(document.activeElement)) this.rove(c.el);
      c.el.classList.toggle('blank', !L || !S);
      const n = named(c.attn, c.layer, c.head);
      c.el.classList.toggle('named', !!n);
      const off = isOff(c.attn, c.layer, c.head);
      c.el.classList.toggle('off', off);
      const offTag = c.el.querySelector('.mv-off');
      offTag.hidden = !off;
      offTag.textContent = off ? t('mv.off') : '';
      const badge = c.el.querySelector('.mv-badge');
      badge.hidden = !n;
      // Side by side (the dates model) the cells are narrow: the score on the cell, the name in the legend.
      // A narrow cell (a phone) shows the name without its parenthesis, which fits two lines; the legend has it all.
      badge.textContent = n ? (groups.length > 1 ? n.score : width < 80 ? shortName(n) : n.label) : '';
      badge.classList.toggle('compact', groups.length > 1);
      badge.classList.toggle('narrow', groups.length === 1 && width < 80);
      badge.title = n ? n.title : '';
      // A full name that its two lines would cut ("★ previous token…") gives way to the short one with the score.
      const cut = () => badge.scrollHeight > badge.clientHeight + 1;
      if (n && groups.length === 1 && width >= 80 && cut()) {
        badge.textContent = `${shortName(n)} · ${n.score}`;
        if (cut()) badge.classList.add('narrow'); // the narrow cells' smaller type, three lines
      }
      c.el.title = `${t('mv.layer', { n: c.layer + 1 })} · ${t('head', { n: c.head + 1 })}${g.title ? ` · ${g.title}` : ''}${n ? ` — ${n.title}` : ''} · ${t('enlarge')}`;
      // The name says what the cell shows: its layer and head, its badge, and its strongest weights.
      // The words it shows, in their order ("switched off" over the map, then the badge), as axe asks of a name.
      c.el.setAttribute('aria-label', `${t('mv.layer', { n: c.layer + 1 })}, ${t('head', { n: c.head + 1 })}${g.title ? `, ${g.title}` : ''}${off ? `, ${t('mv.off')}` : ''}${n ? `, ${n.label}` : ''}. `
        + (L && S ? `${t('a11y.strongest')}: ${strongest(m.data, m.offset, m.rows, m.cols, 3)}` : t('mv.empty')));
      const empty = c.el.querySelector('.mv-empty');
      empty.hidden = !!(L && S);
      empty.textContent = t('mv.empty');
      if (!L || !S) {
        c.layout = null;
        prepareCanvas(c.canvas, width, Math.min(width, 40));
        continue;
      }
      c.layout = smallLayout(L, S, width, Math.max(width, 60));
      const ctx = prepareCanvas(c.canvas, c.layout.width, c.layout.height);
      drawHeatmap(ctx, c.layout, { ...m, vmax, cmap, scale, selectedRow: null, hover: null });
      yield;
    }
  }

  /** The map the arrow key `key` moves to from `el` within its group (null: none, or not a key that moves). */
  neighbour(el, key) {
    const group = el.closest('.mv-grid');
    const heads = Number(group.style.getPropertyValue('--heads'));
    const cells = [...group.querySelectorAll('.mv-cell')];
    const i = cells.indexOf(el);
    const j = { ArrowLeft: i - 1, ArrowRight: i + 1, ArrowUp: i - heads, ArrowDown: i + heads, Home: 0, End: cells.length - 1 }[key];
    return j === undefined ? null : cells[j] ?? null;
  }

  /** Makes `el` its group's one Tab stop. */
  rove(el) {
    for (const c of el.closest('.mv-grid').querySelectorAll('.mv-cell')) c.tabIndex = c === el ? 0 : -1;
  }

  /** A measured width (see the constructor); read from the layout only before the observer has reported it. */
  width(key) {
    if (!this.widths.has(key)) this.widths.set(key, this.root.querySelector(`[data-measure="${key}"]`)?.clientWidth ?? 0);
    const w = this.widths.get(key);
    this.used.set(key, w);
    return w;
  }

  build(groups, signature) {
    this.signature = signature;
    this.resizes.disconnect();
    this.widths.clear();
    this.used.clear();
    this.root.innerHTML = `<div class="mv-groups${groups.length > 1 ? ' multi' : ''}">${groups.map((g) => `
      <section class="mv-group" data-attn="${g.attn}">
        <h3 class="mv-title"></h3>
        <div class="mv-grid" style="--heads:${g.H}">
          <span></span>${[...Array(g.H).keys()].map((h) => `<span class="mv-colhead" data-head="${h}" style="--head:${HEAD_COLORS[h % HEAD_COLORS.length]}"><span class="swatch"></span><span></span></span>`).join('')}
          ${[...Array(g.layers).keys()].map((l) => `<span class="mv-rowhead" data-attn="${g.attn}" data-layer="${l}"></span>${[...Array(g.H).keys()].map((h) => `
            <figure class="mv-cell" tabindex="${l === 0 && h === 0 ? 0 : -1}" role="button" data-attn="${g.attn}" data-layer="${l}" data-head="${h}" style="--head:${HEAD_COLORS[h % HEAD_COLORS.length]}">
              <div class="mv-canvas"><canvas></canvas><span class="mv-empty" hidden></span><span class="mv-off" hidden aria-hidden="true"></span></div>
              <figcaption class="mv-badge" hidden></figcaption>
            </figure>`).join('')}`).join('')}
        </div>
        <p class="mv-legend" hidden></p>
      </section>`).join('')}</div>`;
    this.cells = [...this.root.querySelectorAll('.mv-cell')].map((el) => ({
      el, canvas: el.querySelector('canvas'), attn: el.dataset.attn, layer: Number(el.dataset.layer), head: Number(el.dataset.head), layout: null,
    }));
    for (const g of groups) {
      const group = this.root.querySelector(`.mv-group[data-attn="${g.attn}"]`);
      for (const [sel, key] of [['.mv-colhead', `col:${g.attn}`], ['.mv-canvas', `map:${g.attn}`]]) {
        const el = group.querySelector(sel);
        el.dataset.measure = key;
        this.resizes.observe(el);
      }
    }
  }
}
