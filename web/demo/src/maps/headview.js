// The head view (after bertviz), one for every model, ours and opened checkpoints: query tokens left, key tokens right,
// a line per (head, query, key) in the head's colour. A short input shows every line, its weight as its opacity, and
// every token (hover one: only its lines). A long one is focused on the selected query: its lines at full strength over
// the map's strongest lines drawn faint (at most MAX_LINES, and the note says so), its token and its strongest keys'
// tokens written beside them (every token while rows are tall enough), within a bounded height whatever the length.
import { HEAD_COLORS } from './colors.js';
import { prepareCanvas, textWidth } from './heatmap.js';
import { strongestLines, MAX_LINES } from './lines.js';
import { t, getLang } from '../i18n.js';
import { escapeHtml, escapeAttr } from '../dom.js';

const MAX_LINE_W = 280, MIN_LINE_W = 100;
// Opacity is drawn in steps so each head needs a few strokes (one path per step) instead of one per line.
const LEVELS = 64, FAINT_LEVELS = 32;
// Above this many lines per head, they are drawn one device pixel wide: the browser rasterises such hairlines about
// 40 times faster than 2-pixel lines (4096 lines: 10 ms against 440 ms in software), and at that density thinner
// lines read better anyway.
const HAIRLINES_ABOVE = 1024;
/** Above this many tokens on a side the view is focused on the selected query: every line of 4 heads is 4,096 lines. */
export const FOCUS_ABOVE = 32;
/** The rows' height at most (CSS px), whatever the length: with the captions the canvas stays within 600 px. */
export const MAX_ROWS_HEIGHT = 576;
const HEAD_H = 22; // the "queries" / "keys" captions above the rows
const ROW_H = 24; // a short input's rows
/** Rows at least this tall carry every token (in a font 4 px smaller, 8 px at least); thinner, only the focus's tokens. */
const TOKEN_ROW = 12;
/** Keys named beside a thin view's focus, the weight a named key has at least, and their labels' distance apart. */
const NAMED_KEYS = 8, NAMED_MIN = 0.02, LABEL_GAP = 13;
/**
 * The focus's lines: keys under this weight get none (a row's weights add up to 1, so at most 200 lines a head), or
 * under half the row's largest where even that is smaller: a row spread thin over 500 keys (0.002 each) still shows.
 */
const FOCUS_MIN = 0.005;
// Token columns: sized to their tokens within these bounds; a thin view's hold a token and its index, narrower on a
// phone so that its lines keep THIN_LINES of width.
const COL_MIN = 64, COL_MAX = 180, THIN_COL = [72, 104], THIN_LINES = 160;

/** Where the rows go for L queries and S keys: their height, whether the view is focused, whether rows carry text. */
export function headViewGeometry(L, S) {
  const N = Math.max(L, S, 1);
  const rowH = Math.min(ROW_H, MAX_ROWS_HEIGHT / N);
  return { N, rowH, focus: N > FOCUS_ABOVE, thin: rowH < TOKEN_ROW, height: HEAD_H + N * rowH };
}

const colour = (h) => HEAD_COLORS[h % HEAD_COLORS.length];
/**
 * A token and its index as a thin view's label writes them: a long token is cut (its title has it whole), never the
 * index. Queries read "token i", keys "j token", each beside the lines.
 */
const labelHtml = (s, i, side) => {
  const tok = `<span class="hv-t">${escapeHtml(s)}</span>`, ix = `<span class="hv-i">${i}</span>`;
  return side === 'q' ? `${tok} ${ix}` : `${ix} ${tok}`;
};

export class HeadView {
  /**
   * @param {HTMLElement} root
   * @param {{ onSelect: (i: number) => void, onToggle?: (off: number[]) => void }} callbacks without onToggle, no head
   *   toggles (a view of one head)
   */
  constructor(root, { onToggle = null, onSelect }) {
    this.root = root;
    this.onToggle = onToggle;
    this.onSelect = onSelect;
    this.hover = null; // { side: 'q' | 'k', index }
    this.data = null;
    this.paintId = 0;
    this.width = 0; // the root's width, from a ResizeObserver (no layout read while drawing)
    this.base = { canvas: document.createElement('canvas'), key: null, n: 0, of: 0 };
    root.classList.add('headview');
    root.innerHTML = `${onToggle ? '<div class="hv-toggles" role="group"></div>' : ''}
      <p class="hint hv-note"></p>
      <div class="hv-body">
        <div class="hv-col hv-left"></div>
        <canvas class="hv-lines" role="img"></canvas>
        <div class="hv-col hv-right"></div>
      </div>`;
    this.toggles = root.querySelector('.hv-toggles');
    this.note = root.querySelector('.hv-note');
    this.left = root.querySelector('.hv-left');
    this.right = root.querySelector('.hv-right');
    this.canvas = root.querySelector('.hv-lines');
    this.toggles?.addEventListener('click', (e) => {
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
    new ResizeObserver(([e]) => {
      const w = Math.floor(e.contentRect.width);
      if (Math.abs(w - this.width) <= 1) return;
      this.width = w;
      if (this.data && this.widths()) this.paint();
    }).observe(root);
    this.listen();
  }

  listen() {
    const setHover = (next) => {
      if (next?.index === this.hover?.index && next?.side === this.hover?.side) return;
      this.hover = next;
      this.paint();
    };
    // A thin view's row under the pointer (its columns have no element per token).
    const rowAt = (e) => {
      const y = e.clientY - this.left.getBoundingClientRect().top - HEAD_H;
      const i = Math.floor(y / this.geo.rowH);
      return y >= 0 && i < this.data.rows.length ? i : null;
    };
    for (const [col, side] of [[this.left, 'q'], [this.right, 'k']]) {
      const onToken = (e) => {
        if (!this.data) return;
        if (this.geo.thin) return side === 'q' && setHover(rowAt(e) == null ? null : { side, index: rowAt(e) });
        const el = e.target.closest('.hv-tok');
        setHover(el ? { side, index: Number(el.dataset.i) } : null);
      };
      col.addEventListener('mouseover', onToken);
      col.addEventListener('mousemove', (e) => { if (this.geo?.thin) onToken(e); });
      col.addEventListener('mouseleave', () => setHover(null));
      col.addEventListener('focusin', (e) => { if (!this.geo?.thin) onToken(e); });
      col.addEventListener('focusout', () => setHover(null));
    }
    this.left.addEventListener('keydown', (e) => {
      if (!this.data) return;
      const L = this.data.rows.length;
      if (this.geo.thin) {
        // The thin view's query is a slider: the keys move the selection itself, as the scrubber beside the maps does
        // (from the one asked for last: keys pressed faster than the page draws each move it once).
        const i = this.asked ?? this.data.selected;
        const to = { ArrowUp: i - 1, ArrowLeft: i - 1, ArrowDown: i + 1, ArrowRight: i + 1, PageUp: i - 10, PageDown: i + 10, Home: 0, End: L - 1 }[e.key];
        if (to == null) return;
        e.preventDefault();
        const next = Math.max(0, Math.min(L - 1, to));
        if (next !== i) { this.asked = next; this.onSelect(next); }
        return;
      }
      const el = e.target.closest('.hv-tok');
      if (!el) return;
      const i = Number(el.dataset.i);
      const toks = this.left.querySelectorAll('.hv-tok');
      const to = { ArrowUp: i - 1, ArrowDown: i + 1, Home: 0, End: toks.length - 1 }[e.key];
      if (to != null && toks[to]) { e.preventDefault(); el.tabIndex = -1; toks[to].tabIndex = 0; toks[to].focus(); }
      else if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); this.onSelect(i); }
    });
    this.left.addEventListener('click', (e) => {
      if (!this.data) return;
      if (this.geo.thin) {
        const i = rowAt(e);
        if (i != null) this.onSelect(i);
        return;
      }
      const el = e.target.closest('.hv-tok');
      if (el) this.onSelect(Number(el.dataset.i));
    });
  }

  /**
   * The columns' and the lines' widths: the lines as wide as the panel allows (narrow screens get shorter lines, not
   * a scrollbar). Sets the columns' widths; returns whether the lines' width changed.
   */
  widths() {
    const width = this.width || this.root.clientWidth || 600;
    const cols = this.geo.thin
      ? Array(2).fill(Math.max(THIN_COL[0], Math.min(THIN_COL[1], Math.floor((width - 8 - THIN_LINES) / 2))))
      : this.textCols;
    if (!this.colW || cols.some((w, k) => w !== this.colW[k])) {
      this.colW = cols;
      this.left.style.width = `${cols[0]}px`;
      this.right.style.width = `${cols[1]}px`;
    }
    const lineW = Math.max(MIN_LINE_W, Math.min(MAX_LINE_W, width - cols[0] - cols[1] - 8));
    const changed = lineW !== this.lineW;
    this.lineW = lineW;
    return changed;
  }

  /**
   * data: { rows, cols, weights: Float32Array, offset?: number (where head 0's L×S map starts), H: heads, first?: the
   * number of head 0 (its colour), off: heads hidden, selected: the query }. A generator: it yields after each head's
   * lines (see paintSteps).
   */
  *update(data) {
    const L = data.rows.length, S = data.cols.length;
    const g = headViewGeometry(L, S);
    const prev = this.data;
    const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
    const structural = !prev || this.geo.thin !== g.thin || (!g.thin && (!same(prev.rows, data.rows) || !same(prev.cols, data.cols)));
    if (prev && this.hover && this.hover.index >= (this.hover.side === 'q' ? L : S)) this.hover = null;
    this.data = data;
    this.geo = g;
    this.asked = null;
    const lang = getLang();
    if (this.toggles) this.headToggles(data, lang);
    if (structural || this.lang !== lang) this.columns(data, g);
    this.lang = lang;
    this.root.style.setProperty('--hv-row', `${g.rowH}px`);
    this.root.dataset.mode = g.focus ? 'focus' : 'all';
    this.root.classList.toggle('thin', g.thin);
    this.left.style.height = this.right.style.height = g.thin ? `${g.height}px` : '';
    if (g.thin) {
      const q = this.left.querySelector('.hv-query');
      const i = data.selected;
      q.hidden = !(i >= 0 && i < L);
      if (!q.hidden) {
        q.innerHTML = labelHtml(data.rows[i], i, 'q');
        q.title = data.rows[i];
        q.style.top = `${HEAD_H + (i + 0.5) * g.rowH}px`;
        Object.assign(q.dataset, { i });
        q.setAttribute('aria-valuemax', String(L - 1));
        q.setAttribute('aria-valuenow', String(i));
        q.setAttribute('aria-valuetext', `${data.rows[i]} ${i}`);
        q.setAttribute('aria-label', t('query.label'));
      }
    } else {
      this.left.querySelectorAll('.hv-tok').forEach((el, i) => {
        el.classList.toggle('selected', i === data.selected);
        el.tabIndex = i === (data.selected >= 0 ? data.selected : 0) ? 0 : -1;
      });
    }
    this.widths();
    yield* this.paintSteps();
  }

  /** The head toggles: built when the number of heads or the language changes, else only their state patched. */
  headToggles(data, lang) {
    const off = new Set(data.off);
    if (this.toggles.childElementCount !== data.H + 3 || this.lang !== lang) {
      const chip = (h) => `<button type="button" class="chip head-chip" data-head="${h}" style="--head:${colour(h)}">`
        + `<span class="swatch"></span>${t('head', { n: h + 1 })}</button>`;
      const all = (on) => `<button type="button" class="chip plain" data-all="${on ? 1 : 0}">${t(on ? 'hv.all' : 'hv.none')}</button>`;
      this.toggles.innerHTML = [...Array(data.H).keys()].map(chip).join('') + `<span class="hv-sep"></span>${all(true)}${all(false)}`;
      this.toggles.setAttribute('aria-label', t('hv.toggles'));
    }
    this.toggles.querySelectorAll('.head-chip').forEach((b, h) => b.setAttribute('aria-pressed', String(!off.has(h))));
  }

  /** The token columns: every token (one Tab stop for the queries), or a thin view's labels placed at their rows. */
  columns(data, g) {
    const caption = (side) => `<div class="hv-head">${t(side === 'q' ? 'hv.queries' : 'hv.keys')}</div>`;
    if (g.thin) {
      this.left.innerHTML = `${caption('q')}<div class="hv-label hv-query" tabindex="0" role="slider" aria-valuemin="0"></div>`
        + '<div class="hv-label hv-hover" hidden></div>';
      this.right.innerHTML = `${caption('k')}<div class="hv-keys"></div>`;
    } else {
      // One Tab stop for the queries (arrow keys move between them), none for the keys: hundreds of tokens would
      // otherwise each be a stop.
      const tok = (s, i) => `<div class="hv-tok" tabindex="-1" data-i="${i}" title="${escapeAttr(s)}">${escapeHtml(s)}</div>`;
      const key = (s, i) => `<div class="hv-tok" data-i="${i}" title="${escapeAttr(s)}">${escapeHtml(s)}</div>`;
      this.left.innerHTML = caption('q') + data.rows.map(tok).join('');
      this.right.innerHTML = caption('k') + data.cols.map(key).join('');
      // Widths from the text itself (measured on a canvas, not read back from the page's layout).
      const px = Math.min(14, g.rowH - 4); // style.css's .hv-tok
      const col = (labels) => Math.max(COL_MIN, Math.min(COL_MAX, Math.ceil(labels.reduce((m, s) => Math.max(m, textWidth(s, px, 700)), 0)) + 18));
      this.textCols = [col(data.rows), col(data.cols)];
    }
  }

  /** Draw the lines at once (hovering a token, a new width). */
  paint() {
    if (!this.data) return;
    this.widths();
    const steps = this.paintSteps();
    while (!steps.next().done);
  }

  /**
   * Draw the lines head by head, yielding 'paint' after each: the browser rasterises a canvas's strokes when the task
   * that drew them ends, so one head per task keeps each task short.
   */
  *paintSteps() {
    const id = ++this.paintId; // a newer paint (a hover) makes this one stop
    const d = this.data, g = this.geo;
    const { rows, cols, weights, offset = 0, H, first = 0 } = d;
    const L = rows.length, S = cols.length;
    const off = new Set(d.off);
    const heads = [...Array(H).keys()].filter((h) => !off.has(h));
    const W = this.lineW, x0 = 4, x1 = W - 4;
    const y = (i) => HEAD_H + (i + 0.5) * g.rowH;
    const at = (h, i, j) => weights[offset + (h * L + i) * S + j];
    const ctx = prepareCanvas(this.canvas, W, g.height);
    const hv = this.hover;
    // The query the view is about: the one hovered, else the selected one (a long input), or none (a short one).
    const focus = g.focus && hv?.side !== 'k' ? (hv ? hv.index : d.selected) : -1;
    ctx.lineCap = 'round';
    if (g.focus && hv?.side !== 'k') {
      yield* this.faintLines(heads, id);
      if (id !== this.paintId) return;
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.drawImage(this.base.canvas, 0, 0);
      const ratio = window.devicePixelRatio || 1;
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      if (focus >= 0 && focus < L) {
        // The focus's lines, at full strength: opacity in steps again, one path per step and head.
        ctx.lineWidth = 2;
        for (const h of heads) {
          ctx.strokeStyle = colour(first + h);
          const levels = Array.from({ length: FAINT_LEVELS }, () => []);
          let top = 0;
          for (let j = 0; j < S; j++) top = Math.max(top, at(h, focus, j));
          const floor = Math.min(FOCUS_MIN, top / 2);
          for (let j = 0; j < S; j++) {
            const w = at(h, focus, j);
            if (w > floor) levels[Math.min(FAINT_LEVELS - 1, Math.floor(w * FAINT_LEVELS))].push(j);
          }
          levels.forEach((js, k) => {
            if (!js.length) return;
            // Opacity the weight, from 0.35: the weakest of the focus's lines still stand out of the faint ones (0.22 at most).
            ctx.globalAlpha = Math.min(1, 0.35 + (0.65 * (k + 0.5)) / FAINT_LEVELS);
            ctx.beginPath();
            for (const j of js) { ctx.moveTo(x0, y(focus)); ctx.lineTo(x1, y(j)); }
            ctx.stroke();
          });
        }
      }
    } else {
      ctx.lineWidth = !hv && L * S > HAIRLINES_ABOVE ? 1 / (window.devicePixelRatio || 1) : 2;
      for (const h of heads) {
        const buckets = Array.from({ length: LEVELS }, () => []);
        for (let i = 0; i < L; i++) {
          if (hv?.side === 'q' && hv.index !== i) continue;
          for (let j = 0; j < S; j++) {
            if (hv?.side === 'k' && hv.index !== j) continue;
            const level = Math.min(LEVELS - 1, Math.round(at(h, i, j) * (LEVELS - 1)));
            if (level > 0) buckets[level].push(i, j);
          }
        }
        ctx.strokeStyle = colour(first + h);
        buckets.forEach((pairs, level) => {
          if (!pairs.length) return;
          ctx.globalAlpha = level / (LEVELS - 1);
          ctx.beginPath();
          for (let k = 0; k < pairs.length; k += 2) {
            ctx.moveTo(x0, y(pairs[k]));
            ctx.lineTo(x1, y(pairs[k + 1]));
          }
          ctx.stroke();
        });
        if (!hv) {
          yield 'paint';
          if (id !== this.paintId) return;
        }
      }
    }
    ctx.globalAlpha = 1;
    this.marks(heads, focus);
  }

  /**
   * A focused view's background: each head's strongest lines (MAX_LINES over the heads shown), faint, on a canvas off
   * the page, drawn once per map, heads and size: another query, or a hover, only copies it.
   */
  *faintLines(heads, id) {
    const d = this.data, g = this.geo, b = this.base;
    const { rows, cols, weights, offset = 0, first = 0 } = d;
    const L = rows.length, S = cols.length;
    const key = [weights.buffer, weights.byteOffset, offset, L, S, first, heads.join(), this.canvas.width, this.canvas.height];
    if (b.key && b.key.length === key.length && b.key.every((x, i) => x === key[i])) return;
    b.key = null;
    const ratio = window.devicePixelRatio || 1;
    b.canvas.width = this.canvas.width;
    b.canvas.height = this.canvas.height;
    const bx = b.canvas.getContext('2d');
    bx.setTransform(ratio, 0, 0, ratio, 0, 0);
    bx.lineCap = 'round';
    // Beyond 128 rows a line a device pixel wide (ARCHITECTURE.md, "Speed while typing": rasterising is the cost).
    bx.lineWidth = g.N > 128 ? 1 / ratio : 1;
    const x0 = 4, x1 = this.lineW - 4, y = (i) => HEAD_H + (i + 0.5) * g.rowH;
    const budget = Math.floor(MAX_LINES / Math.max(1, heads.length));
    let n = 0, of = 0;
    for (const h of heads) {
      const thinned = strongestLines(weights, offset + h * L * S, L, S, budget);
      n += thinned.lines.length;
      of += thinned.of;
      yield; // the choice of lines and their drawing in two pieces
      if (id !== this.paintId) return;
      bx.strokeStyle = colour(first + h);
      const levels = Array.from({ length: FAINT_LEVELS }, () => []);
      for (const [i, j, w] of thinned.lines) levels[Math.min(FAINT_LEVELS - 1, Math.floor(w * FAINT_LEVELS))].push(i, j);
      levels.forEach((pairs, k) => {
        if (!pairs.length) return;
        bx.globalAlpha = ((k + 1) / FAINT_LEVELS) * 0.22;
        bx.beginPath();
        for (let p = 0; p < pairs.length; p += 2) { bx.moveTo(x0, y(pairs[p])); bx.lineTo(x1, y(pairs[p + 1])); }
        bx.stroke();
      });
      yield 'paint';
      if (id !== this.paintId) return;
    }
    Object.assign(b, { key, n, of });
  }

  /**
   * What the lines are about, in words: the focus's token and its strongest keys beside the lines (a thin view), the
   * strongest keys marked (a view with every token), the note and the canvas's text alternative.
   */
  marks(heads, focus) {
    const d = this.data, g = this.geo, hv = this.hover;
    const { rows, cols, weights, offset = 0 } = d;
    const L = rows.length, S = cols.length;
    // The focus's keys by their largest weight over the heads shown, strongest first.
    let best = [], largest = 0;
    if (focus >= 0 && focus < L && heads.length) {
      const w = new Float32Array(S);
      for (const h of heads) for (let j = 0; j < S; j++) w[j] = Math.max(w[j], weights[offset + (h * L + focus) * S + j]);
      largest = w.reduce((a, x) => Math.max(a, x), 0);
      best = [...w.keys()].filter((j) => w[j] > NAMED_MIN).sort((a, b) => w[b] - w[a] || a - b).slice(0, NAMED_KEYS).map((j) => [j, w[j]]);
    }
    const y = (i) => HEAD_H + (i + 0.5) * g.rowH;
    if (g.thin) {
      const over = this.left.querySelector('.hv-hover');
      over.hidden = !(hv?.side === 'q' && hv.index !== d.selected);
      if (!over.hidden) { over.innerHTML = labelHtml(rows[hv.index], hv.index, 'q'); over.style.top = `${y(hv.index)}px`; }
      // Keys named from the strongest down, each far enough from those already named to be read.
      const placed = [];
      for (const [j] of best) if (!placed.some((p) => Math.abs(y(p) - y(j)) < LABEL_GAP)) placed.push(j);
      this.right.querySelector('.hv-keys').innerHTML = placed
        .map((j) => `<div class="hv-label hv-key" data-i="${j}" style="top:${y(j)}px" title="${escapeAttr(cols[j])}">${labelHtml(cols[j], j, 'k')}</div>`)
        .join('');
    } else {
      const strong = new Set(g.focus ? best.map(([j]) => j) : []);
      this.left.querySelectorAll('.hv-tok').forEach((el, i) => el.classList.toggle('active', hv?.side === 'q' && hv.index === i));
      this.right.querySelectorAll('.hv-tok').forEach((el, j) => {
        el.classList.toggle('active', hv?.side === 'k' && hv.index === j);
        el.classList.toggle('strong', strong.has(j));
      });
      this.root.classList.toggle('hovering', !!hv);
    }
    this.root.dataset.focus = String(focus);
    const sentences = (parts) => parts.filter(Boolean).join(getLang() === 'zh' ? '' : ' ');
    const b = this.base;
    // A focus whose every key is under NAMED_MIN names none: it spreads its weight thin, and that is what is said.
    const spread = focus >= 0 && focus < L && heads.length > 0 && !best.length;
    const spreadText = spread ? t('hv.spread', { q: rows[focus], i: focus, w: largest.toFixed(3) }) : '';
    this.note.textContent = !g.focus ? t('hv.noteAll')
      : sentences([t('hv.noteFocus'), spreadText, b.n < b.of ? t('hv.noteThinned', { n: b.n.toLocaleString(), total: b.of.toLocaleString() }) : '']);
    Object.assign(this.root.dataset, { lines: g.focus ? String(b.n) : '', of: g.focus ? String(b.of) : '' });
    const keys = best.slice(0, 3).map(([j, w]) => t('hv.key', { k: cols[j], j, w: w.toFixed(2) })).join(getLang() === 'zh' ? '，' : ', ');
    this.canvas.setAttribute('aria-label', !heads.length ? t('hv.labelNone')
      : spread ? sentences([t('hv.labelLines'), spreadText])
      : focus >= 0 ? t('hv.labelFocus', { q: rows[focus], i: focus, keys }) : t('hv.labelAll'));
  }
}
