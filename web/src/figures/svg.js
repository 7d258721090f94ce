// SVG text for the figures without a DOM: escaping user text, showing invisible tokens, estimating text widths,
// and the accessible document wrapper (role="img", <title>, <desc>).

/** The default font stack: system UI fonts, then fonts with CJK coverage, so Chinese tokens render everywhere. */
export const FONT_FAMILY = 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "WenQuanYi Micro Hei", sans-serif';

/** Text colour on the white background: #333 is 12.6:1 (WCAG asks ≥ 4.5:1). Secondary text #595959 is 7:1. */
export const INK = '#333333';
export const MUTED_INK = '#595959';

// Characters XML 1.0 forbids (C0 controls but tab/newline/return, lone surrogates, U+FFFE/U+FFFF) become U+FFFD;
// a document with them would not parse at all.
// Surrogate pairs are matched first so they pass through; what remains is invalid. (No lookbehind: older Safari.)
const INVALID_XML = /[\ud800-\udbff][\udc00-\udfff]|[\u0000-\u0008\u000b\u000c\u000e-\u001f\ud800-\udfff\ufffe\uffff]/g;
const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeXml = (s) => String(s).replace(INVALID_XML, (c) => (c.length === 2 ? c : '\ufffd')).replace(/[&<>"']/g, (c) => ENTITIES[c]);

// Control characters and whitespace-only tokens would be invisible (or collapsed by SVG): show their pictures.
const PICTURES = { ' ': '␣', '\n': '↵', '\t': '⇥', '\r': '␍', '\u00a0': '⍽', '\u3000': '␣' };

/** What a token looks like on an axis: whitespace-only tokens as ␣ ↵ ⇥, control characters as their Unicode pictures. */
export function displayToken(token) {
  if (token === '') return '∅';
  if (/^\s+$/u.test(token)) return Array.from(token, (c) => PICTURES[c] ?? '␣').join('');
  return token.replace(/[\u0000-\u001f\u007f]/g, (c) => (c === '\u007f' ? '␡' : String.fromCharCode(0x2400 + c.charCodeAt(0))));
}

const segmenter = typeof Intl === 'object' && Intl.Segmenter ? new Intl.Segmenter('en', { granularity: 'grapheme' }) : null;
/** User-perceived characters: an emoji with modifiers or a flag stays one piece. */
const graphemes = (s) => (segmenter ? Array.from(segmenter.segment(s), (g) => g.segment) : Array.from(s));

/** Long tokens shortened to `max` characters with an ellipsis, never splitting an emoji or a surrogate pair. */
export function shorten(s, max = 12) {
  const g = graphemes(s);
  return g.length > max ? g.slice(0, max - 1).join('') + '…' : s;
}

// East Asian wide and emoji ranges (one em); everything else is counted as a typical proportional glyph.
const WIDE = /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]|[\u{1f000}-\u{1faff}\u{20000}-\u{3fffd}]/u;
const NARROW = /[ .,:;'!|ijlIft()[\]`]/;

/**
 * Estimated width in pixels of `s` at `px`: no DOM, so no font metrics. Generous on purpose (wide letters count
 * 0.62 em, symbols such as < > 0.86 em as in DejaVu Sans, bold 7% more): a label estimated too wide costs a few pixels of margin, one estimated too narrow overlaps.
 */
export function textWidth(s, px, bold = false) {
  let em = 0;
  for (const g of graphemes(s)) em += WIDE.test(g) ? 1 : NARROW.test(g) ? 0.34 : /[<>=+~^*#&%@MWmw_…]/.test(g) ? 0.86 : /[A-Z]/.test(g) ? 0.72 : 0.62;
  return em * px * (bold ? 1.07 : 1);
}

/** Coordinates with at most two decimals: "12", "12.5", "12.33". */
export const num = (x) => String(Math.round(x * 100) / 100);

/** A value for a tooltip or description: four significant digits, "NaN" kept. */
export const formatWeight = (v) => (Number.isNaN(v) ? 'NaN' : String(Number(v.toPrecision(4))));

/**
 * A deterministic id prefix from the figure's content (FNV-1a): two figures inlined in one HTML page get different
 * ids for their <title>, <desc> and gradient, and the same input always gives the same SVG.
 */
export function contentId(parts) {
  let h = 0x811c9dc5;
  for (const part of parts) {
    const s = String(part);
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ 0x1f, 0x01000193);
  }
  return `attnscope-${(h >>> 0).toString(36)}`;
}

/** A hash input for weights: length plus a sample of values, enough to tell two figures of a page apart. */
export function dataFingerprint(data, offset, n) {
  const step = Math.max(1, Math.floor(n / 64));
  const out = [n];
  for (let k = 0; k < n; k += step) out.push(data[offset + k]);
  return out.join(',');
}

/**
 * The standalone SVG document: role="img" with the accessible name from <title> and the description from <desc>
 * (both referenced by aria-labelledby for screen readers that ignore <title>), white background, one font.
 */
export function svgDocument({ width, height, id, title, description, fontFamily, body }) {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${num(width)}" height="${num(height)}" viewBox="0 0 ${num(width)} ${num(height)}" role="img" aria-labelledby="${id}-title ${id}-desc" font-family="${escapeXml(fontFamily)}">`,
    `<title id="${id}-title">${escapeXml(title)}</title>`,
    `<desc id="${id}-desc">${escapeXml(description)}</desc>`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

/** The visible heading (title and subtitle) at the top; returns the SVG lines, the height used and the width needed. */
export function heading(title, subtitle, pad) {
  const lines = [];
  let y = pad;
  if (title) { y += 17; lines.push(`<text x="${pad}" y="${y}" font-size="16" font-weight="700" fill="${INK}">${escapeXml(title)}</text>`); }
  if (subtitle) { y += 17; lines.push(`<text x="${pad}" y="${y}" font-size="12" fill="${MUTED_INK}">${escapeXml(subtitle)}</text>`); }
  const width = Math.max(title ? textWidth(title, 16, true) : 0, subtitle ? textWidth(subtitle, 12) : 0);
  return { lines, height: y > pad ? y - pad + 10 : 0, width: width ? pad + width : 0 };
}

/** English strings of the figures, each replaceable through the `strings` option (e.g. for a Chinese page). */
const DEFAULT_STRINGS = Object.freeze({
  head: 'Head {n}',
  layer: 'Layer {n}',
  mean: 'Mean of {n} heads',
  queries: 'Queries',
  keys: 'Keys',
  weight: 'weight',
  rowWeight: 'share of row max',
});

/** `strings` merged over the defaults; every value must be a string. */
export function mergeStrings(strings, caller) {
  if (strings === undefined) return DEFAULT_STRINGS;
  if (strings === null || typeof strings !== 'object' || Array.isArray(strings)) {
    throw new TypeError(`${caller}: options.strings: expected an object of strings, got ${strings === null ? 'null' : typeof strings}`);
  }
  for (const [key, value] of Object.entries(strings)) {
    if (!(key in DEFAULT_STRINGS)) throw new TypeError(`${caller}: options.strings: unknown key '${key}' (expected one of ${Object.keys(DEFAULT_STRINGS).join(', ')})`);
    if (typeof value !== 'string') throw new TypeError(`${caller}: options.strings.${key}: expected a string, got ${typeof value}`);
  }
  return { ...DEFAULT_STRINGS, ...strings };
}

export const fill = (template, n) => template.replace('{n}', String(n));
