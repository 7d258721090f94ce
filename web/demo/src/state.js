// The view's whole state, and its round trip through the URL hash so a link reproduces the view.
import { SCALES } from './maps/scales.js';
import { defaultOpen, openTextFor, parseOpen, writeOpen } from './open/hash.js';
import { parseAblate } from './heads/off.js';

// Where the views have always found them (the lists of heads themselves are heads/off.js's, which open/hash.js shares).
export { parseAblate, sortHeads } from './heads/off.js';

export const EMBED_SIZES = [16, 32, 48, 64, 96, 128, 192, 256];
export const HEAD_COUNTS = [1, 2, 3, 4, 6, 8];

export const EXAMPLES = {
  en: 'The animal didn’t cross the street because it was too tired.',
  // Every character is in the language model's vocabulary (no <unk> in the default view).
  zh: '小狗没有吃饭，因为它一点也不想吃。',
  pair: { src: 'The animal didn’t cross the street because it was too tired.', tgt: '这只动物没有过马路，因为它太累了。' },
  pairFr: { src: 'The animal didn’t cross the street because it was too tired.', tgt: 'L’animal n’a pas traversé la rue car il était trop fatigué.' },
  // For the trained character model: parallel lines of a Tang poem, and the English sentence typed twice: in its
  // second copy the model predicts 45 of the 60 characters, 29 when the induction head (tools/README.md) is off.
  poem: '床前明月光，疑是地上霜。\n举头望明月，低头思故乡。',
  repeat: 'The animal didn’t cross the street because it was too tired. The animal didn’t cross the street because it was too tired.',
  // The Chinese page's Repetition: its sentence typed twice; the second copy is 13 of 17 characters right, 5 with the
  // induction head off (tests/fixtures/repetition.json).
  repeatZh: '小狗没有吃饭，因为它一点也不想吃。小狗没有吃饭，因为它一点也不想吃。',
  // For the trained dates model (English dates in words or digits; the last two: its 'invalid' and --MM-DD answers).
  dates: ['the fifth of march nineteen ninety', 'On Friday, 13 Sept. 2024', 'December 31st, 1999', '12 october nineteen oh five', 'the 31st of April 2021', 'July 4th'],
};

export const MODES = ['self', 'cross', 's2s', 'open'];
/** Self-attention runs the trained character model or the seeded single layer. */
export const MODELS = ['trained', 'untrained'];
/** Which attention of the dates model the maps show: encoder self, decoder self, or cross. */
export const ATTNS = ['enc', 'dec', 'cross'];
/** Milliseconds per decoding step while playing. */
export const SPEEDS = { slow: 1200, normal: 600, fast: 150 };

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
    scale: 'rest', // the first column (often an attention sink) does not set the top of the colour scale
    query: -1, // -1: pick a sensible token (the pronoun, if there is one)
    head: 0,
    off: [], // heads switched off in the head view
    ablate: [], // trained language model: heads switched off in the model itself, [{ layer, head }] in order
    model: 'trained', // self-attention: the trained character model, or the seeded ('untrained') layer
    layer: -1, // trained models: the layer of the maps and the head view (-1: pick one)
    attn: 'cross', // dates model: which attention the maps show
    date: EXAMPLES.dates[0], // dates model: the source sentence
    step: -1, // dates model: output tokens shown so far (-1: all of them)
    speed: 'normal',
    guide: 0, // the guided path's step (1–6), 0: closed
    wstep: -1, // "Why attention": decoding steps of the GRU attention model shown (-1: all of them)
    open: defaultOpen(lang), // an opened Hugging Face model (open/hash.js)
  };
}

/** Heads that divide embedDim evenly (the layer needs headDim = embedDim / numHeads). */
export const headChoices = (embedDim) => HEAD_COUNTS.filter((h) => embedDim % h === 0);

const int = (v, fallback) => (/^-?\d+$/.test(v ?? '') ? Number(v) : fallback);

/** Parse `#text=…&d=64&…` over the defaults; unknown or invalid values fall back. */
export function parseHash(hash, defaults) {
  const p = new URLSearchParams(String(hash).replace(/^#/, ''));
  const s = { ...defaults, off: [...defaults.off], ablate: [...defaults.ablate] };
  if (p.get('lang') === 'en' || p.get('lang') === 'zh') s.lang = p.get('lang');
  if (MODES.includes(p.get('mode'))) s.mode = p.get('mode');
  // A language without a sentence gets that language's example (the defaults may be in another language).
  if (p.has('lang') && s.lang !== defaults.lang && defaults.text === EXAMPLES[defaults.lang]) s.text = EXAMPLES[s.lang];
  for (const k of ['text', 'src', 'tgt', 'date']) if (p.has(k)) s[k] = p.get(k).slice(0, 4000);
  if (MODELS.includes(p.get('model'))) s.model = p.get('model');
  if (ATTNS.includes(p.get('attn'))) s.attn = p.get('attn');
  if (Object.hasOwn(SPEEDS, p.get('speed') ?? '')) s.speed = p.get('speed');
  s.layer = Math.max(-1, Math.min(63, int(p.get('layer'), s.layer)));
  s.step = Math.max(-1, Math.min(1000, int(p.get('step'), s.step)));
  const d = int(p.get('d'), s.embedDim);
  if (EMBED_SIZES.includes(d)) s.embedDim = d;
  const h = int(p.get('h'), s.numHeads);
  s.numHeads = headChoices(s.embedDim).includes(h) ? h : headChoices(s.embedDim).includes(s.numHeads) ? s.numHeads : 1;
  s.seed = Math.max(0, Math.min(2 ** 31 - 1, int(p.get('seed'), s.seed)));
  if (p.has('causal')) s.causal = p.get('causal') === '1';
  if (p.get('cmap') === 'viridis' || p.get('cmap') === 'cividis') s.cmap = p.get('cmap');
  if (SCALES.includes(p.get('scale'))) s.scale = p.get('scale');
  s.query = Math.max(-1, Math.min(4000, int(p.get('q'), s.query)));
  s.head = Math.max(0, Math.min(s.numHeads - 1, int(p.get('head'), s.head)));
  if (p.has('ablate')) s.ablate = parseAblate(p.get('ablate'));
  s.guide = Math.max(0, Math.min(6, int(p.get('guide'), s.guide)));
  s.wstep = Math.max(-1, Math.min(1000, int(p.get('wstep'), s.wstep)));
  if (s.mode === 'open') s.open = parseOpen(p, defaults.open);
  if (!p.has('otext')) s.open.text = openTextFor(s.open.text, s.lang, false); // the first sentence in the page's language
  if (p.has('off')) s.off = [...new Set(p.get('off').split(',').filter((x) => /^\d+$/.test(x)).map(Number))].filter((h) => h < 64).sort((a, b) => a - b);
  return s;
}

export function toHash(s) {
  const p = new URLSearchParams();
  p.set('lang', s.lang);
  p.set('mode', s.mode);
  if (s.mode === 'self') { p.set('model', s.model); p.set('text', s.text); }
  else if (s.mode === 'cross') { p.set('src', s.src); p.set('tgt', s.tgt); }
  else if (s.mode === 'open') writeOpen(p, s.open);
  else {
    p.set('date', s.date);
    p.set('step', s.step);
    p.set('attn', s.attn);
    p.set('speed', s.speed);
  }
  if (s.mode === 's2s' || (s.mode === 'self' && s.model === 'trained')) p.set('layer', s.layer);
  // The "Why attention" section reads the date sentence in every mode; the guided path's step.
  if (s.mode !== 's2s' && s.date !== EXAMPLES.dates[0]) p.set('date', s.date);
  if (s.guide) p.set('guide', s.guide);
  if (s.wstep >= 0) p.set('wstep', s.wstep);
  p.set('d', s.embedDim);
  p.set('h', s.numHeads);
  p.set('seed', s.seed);
  p.set('causal', s.causal ? '1' : '0');
  p.set('cmap', s.cmap);
  p.set('scale', s.scale);
  p.set('q', s.query);
  p.set('head', s.head);
  if (s.off.length) p.set('off', s.off.join(','));
  if (s.mode === 'self' && s.model === 'trained' && s.ablate.length) p.set('ablate', s.ablate.map(({ layer, head }) => `${layer}.${head}`).join(','));
  return '#' + p.toString();
}
