// The head view (after bertviz): query tokens left, key tokens right, one line per (head, query,
// key) with opacity by weight and one colour per head; hovering a token keeps only its lines.
import { HEAD_COLORS } from './colors.js';
import { prepareCanvas } from './heatmap.js';
import { t } from '../i18n.js';
import { escapeHtml, escapeAttr } from '../dom.js';

const MAX_LINE_W = 280, MIN_LINE_W = 100;
// Opacity is drawn in 64 steps so each head needs at most 64 strokes instead of one per line.
const LEVELS = 64;
// Above this many lines per head, they are drawn one device pixel wide: the browser rasterises such hairlines about
// 40 times faster than 2-pixel lines (4096 lines: 10 ms against 440 ms in software), and at that density thinner
// lines read better anyway.
const HAIRLINES_ABOVE = 1024;

export class HeadView {
  /**
   * @param {HTMLElement} root
   * @param {{ onToggle: (off: number[]) => void, onSelect: (i: number) => void }} callbacks
   */
  constructor(root, { onToggle, onSelect }) {
    this.root = root;
    this.onToggle = onToggle;
    this.onSelect = onSelect;
    this.hover = null; // { side: 'q' | 'k', index }
    this.data = null;
    this.paintId = 0;
    root.innerHTML = `
      <div class="hv-toggles" role="group"></div>
      <div class="hv-body">
        <div class="hv-col hv-left"></div>
        <canvas class="hv-lines" aria-hidden="true"></canvas>
        <div class="hv-col hv-right"></div>
      </div>`;
    this.toggles = root.querySelector('.hv-toggles');
    this.left = root.querySelector('.hv-left');
    this.right = root.querySelector('.hv-right');
    this.canvas = root.querySelector('.hv-lines');
    this.toggles.addEventListener('click', (e) => {
      const b = e.target.closest('button');
      if (!b || !this.data) return;
      const H = this.data.H;
      let off = new Set(this.data.off);
      if (b.dataset.all === '1') off = new Set();
      else if (b.dataset.all === '0') off = new Set([...Array(H).keys()]);
      else {
        const h = Number(b.dataset.head);
        off.has(h) ? off.delete(h) : off.add(h);
      }
      this.onToggle([...off].sort((a, b2) => a - b2));
    });
    const hoverOn = (side) => (e) => {
      const el = e.target.closest('.hv-tok');
      const next = el ? { side, index: Number(el.dataset.i) } : null;
      if (next?.index === this.hover?.index && next?.side === this.hover?.side) return;
      this.hover = next;
      this.paint();
    };
    for (const [col, side] of [[this.left, 'q'], [this.right, 'k']]) {
      col.addEventListener('mouseover', hoverOn(side));
      col.addEventListener('mouseleave', () => { this.hover = null; this.paint(); });
      col.addEventListener('focusin', hoverOn(side));
      col.addEventListener('focusout', () => { this.hover = null; this.paint(); });
    }
    this.left.addEventListener('keydown', (e) => {
      const el = e.target.closest('.hv-tok');
      if (!el) return;
      const i = Number(el.dataset.i);
      const toks = this.left.querySelectorAll('.hv-tok');
      const to = { ArrowUp: i - 1, ArrowDown: i + 1, Home: 0, End: toks.length - 1 }[e.key];
      if (to != null && toks[to]) { e.preventDefault(); el.tabIndex = -1; toks[to].tabIndex = 0; toks[to].focus(); }
      else if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); this.onSelect(i); }
    });
    this.left.addEventListener('click', (e) => {
      const el = e.target.closest('.hv-tok');
      if (el) this.onSelect(Number(el.dataset.i));
    });
  }

  /**
   * data: { rows, cols, weights: Float32Array [H, L, S], H, off: number[], selected }. A generator: it yields after
   * each head's lines (see paintSteps).
   */
  *update(data) {
    const structural = !this.data || this.data.H !== data.H || this.data.rows.join('\u0000') !== data.rows.join('\u0000') || this.data.cols.join('\u0000') !== data.cols.join('\u0000');
    this.data = data;
    const off = new Set(data.off);
    this.toggles.innerHTML =
      [...Array(data.H).keys()]
        .map((h) => `<button type="button" class="chip head-chip" data-head="${h}" aria-pressed="${!off.has(h)}" style="--head:${HEAD_COLORS[h % HEAD_COLORS.length]}"><span class="swatch"></span>${t('head', { n: h + 1 })}</button>`)
        .join('') +
      `<span class="hv-sep"></span><button type="button" class="chip plain" data-all="1">${t('hv.all')}</button><button type="button" class="chip plain" data-all="0">${t('hv.none')}</button>`;
    const rowH = Math.max(data.rows.length, data.cols.length) > 32 ? 17 : 24;
    this.rowH = rowH;
    if (structural) {
      if (this.hover && this.hover.index >= (this.hover.side === 'q' ? data.rows.length : data.cols.length)) this.hover = null;
      // One Tab stop for the queries (arrow keys move between them), none for the keys: hundreds of tokens
      // would otherwise each be a stop.
      const tok = (s, i) => `<div class="hv-tok" tabindex="-1" data-i="${i}" title="${escapeAttr(s)}">${escapeHtml(s)}</div>`;
      const key = (s, i) => `<div class="hv-tok" data-i="${i}" title="${escapeAttr(s)}">${escapeHtml(s)}</div>`;
      this.left.innerHTML = `<div class="hv-head">${t('hv.queries')}</div>` + data.rows.map(tok).join('');
      this.right.innerHTML = `<div class="hv-head">${t('hv.keys')}</div>` + data.cols.map(key).join('');
    } else {
      this.left.querySelector('.hv-head').textContent = t('hv.queries');
      this.right.querySelector('.hv-head').textContent = t('hv.keys');
    }
    this.root.style.setProperty('--hv-row', `${rowH}px`);
    const toks = this.left.querySelectorAll('.hv-tok');
    toks.forEach((el, i) => { el.classList.toggle('selected', i === data.selected); el.tabIndex = i === (data.selected >= 0 ? data.selected : 0) ? 0 : -1; });
    this.toggles.setAttribute('aria-label', t('hv.toggles'));
    yield* this.paintSteps();
  }

  /** Draw the lines at once (hovering a token: few lines). */
  paint() {
    const steps = this.paintSteps();
    while (!steps.next().done);
  }

  /**
   * Draw the lines head by head, yielding 'paint' after each: the browser rasterises a canvas's strokes when the task
   * that drew them ends, so one head per task keeps each task short.
   */
  *paintSteps() {
    const id = ++this.paintId; // a newer paint (a hover) makes this one stop
    const d = this.data;
    if (!d) return;
    const { rows, cols, weights, H } = d;
    const L = rows.length, S = cols.length;
    const off = new Set(d.off);
    const rowH = this.rowH;
    const headH = 22; // height of the "queries" / "keys" captions above the tokens
    const h = headH + Math.max(L, S) * rowH;
    // As wide as the panel allows (narrow screens get shorter lines, not a scrollbar).
    const room = this.root.clientWidth - this.left.offsetWidth - this.right.offsetWidth - 8;
    const LINE_W = Math.max(MIN_LINE_W, Math.min(MAX_LINE_W, room || MAX_LINE_W));
    const ctx = prepareCanvas(this.canvas, LINE_W, h);
    const yL = (i) => headH + (i + 0.5) * rowH;
    const yR = (j) => headH + (j + 0.5) * rowH;
    const hv = this.hover;
    ctx.lineWidth = L * S > HAIRLINES_ABOVE ? 1 / (window.devicePixelRatio || 1) : 2;
    ctx.lineCap = 'round';
    for (let hd = 0; hd < H; hd++) {
      if (off.has(hd)) continue;
      const buckets = Array.from({ length: LEVELS }, () => []);
      for (let i = 0; i < L; i++) {
        if (hv?.side === 'q' && hv.index !== i) continue;
        for (let j = 0; j < S; j++) {
          if (hv?.side === 'k' && hv.index !== j) continue;
          const w = weights[(hd * L + i) * S + j];
          const level = Math.min(LEVELS - 1, Math.round(w * (LEVELS - 1)));
          if (level > 0) buckets[level].push(i, j);
        }
      }
      ctx.strokeStyle = HEAD_COLORS[hd % HEAD_COLORS.length];
      buckets.forEach((pairs, level) => {
        if (!pairs.length) return;
        ctx.globalAlpha = level / (LEVELS - 1);
        ctx.beginPath();
        for (let k = 0; k < pairs.length; k += 2) {
          ctx.moveTo(4, yL(pairs[k]));
          ctx.lineTo(LINE_W - 4, yR(pairs[k + 1]));
        }
        ctx.stroke();
      });
      if (!hv) {
        yield 'paint';
        if (id !== this.paintId) return;
      }
    }
    ctx.globalAlpha = 1;
    this.left.querySelectorAll('.hv-tok').forEach((el, i) => el.classList.toggle('active', hv?.side === 'q' && hv.index === i));
    this.right.querySelectorAll('.hv-tok').forEach((el, j) => el.classList.toggle('active', hv?.side === 'k' && hv.index === j));
    this.root.classList.toggle('hovering', !!hv);
  }
}

