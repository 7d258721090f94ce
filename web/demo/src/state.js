// The view's whole state, and its round trip through the URL hash so a link reproduces the view.

export const EMBED_SIZES = [16, 32, 48, 64, 96, 128, 192, 256];
export const HEAD_COUNTS = [1, 2, 3, 4, 6, 8];

export const EXAMPLES = {
  en: 'The animal didn’t cross the street because it was too tired.',
  zh: '小猫没有吃鱼，因为它一点也不饿。',
  pair: { src: 'The animal didn’t cross the street because it was too tired.', tgt: '这只动物没有过马路，因为它太累了。' },
  pairFr: { src: 'The animal didn’t cross the street because it was too tired.', tgt: 'L’animal n’a pas traversé la rue car il était trop fatigué.' },
};

export function defaultState(lang) {
  return {
    lang,
    mode: 'self',
    text: lang === 'zh' ? EXAMPLES.zh : EXAMPLES.en,
    src: EXAMPLES.pair.src,
    tgt: EXAMPLES.pair.tgt,
    embedDim: 64,
    numHeads: 4,
    seed: 0,
    causal: false,
    cmap: 'viridis',
    scale: 'max',
    query: -1, // -1: pick a sensible token (the pronoun, if there is one)
    head: 0,
    off: [], // heads switched off in the head view
  };
}

/** Heads that divide embedDim evenly (the layer needs headDim = embedDim / numHeads). */
export const headChoices = (embedDim) => HEAD_COUNTS.filter((h) => embedDim % h === 0);

const int = (v, fallback) => (/^-?\d+$/.test(v ?? '') ? Number(v) : fallback);

/** Parse `#text=…&d=64&…` over the defaults; unknown or invalid values fall back. */
export function parseHash(hash, defaults) {
  const p = new URLSearchParams(String(hash).replace(/^#/, ''));
  const s = { ...defaults, off: [...defaults.off] };
  if (p.get('lang') === 'en' || p.get('lang') === 'zh') s.lang = p.get('lang');
  if (p.get('mode') === 'self' || p.get('mode') === 'cross') s.mode = p.get('mode');
  for (const k of ['text', 'src', 'tgt']) if (p.has(k)) s[k] = p.get(k);
  const d = int(p.get('d'), s.embedDim);
  if (EMBED_SIZES.includes(d)) s.embedDim = d;
  const h = int(p.get('h'), s.numHeads);
  s.numHeads = headChoices(s.embedDim).includes(h) ? h : headChoices(s.embedDim).includes(s.numHeads) ? s.numHeads : 1;
  s.seed = Math.max(0, Math.min(2 ** 31 - 1, int(p.get('seed'), s.seed)));
  if (p.has('causal')) s.causal = p.get('causal') === '1';
  if (p.get('cmap') === 'viridis' || p.get('cmap') === 'cividis') s.cmap = p.get('cmap');
  if (p.get('scale') === 'max' || p.get('scale') === 'one') s.scale = p.get('scale');
  s.query = int(p.get('q'), s.query);
  s.head = Math.max(0, Math.min(s.numHeads - 1, int(p.get('head'), s.head)));
  if (p.has('off')) s.off = p.get('off').split(',').filter((x) => /^\d+$/.test(x)).map(Number);
  return s;
}

export function toHash(s) {
  const p = new URLSearchParams();
  p.set('lang', s.lang);
  p.set('mode', s.mode);
  if (s.mode === 'self') p.set('text', s.text);
  else { p.set('src', s.src); p.set('tgt', s.tgt); }
  p.set('d', s.embedDim);
  p.set('h', s.numHeads);
  p.set('seed', s.seed);
  p.set('causal', s.causal ? '1' : '0');
  p.set('cmap', s.cmap);
  p.set('scale', s.scale);
  p.set('q', s.query);
  p.set('head', s.head);
  if (s.off.length) p.set('off', s.off.join(','));
  return '#' + p.toString();
}
