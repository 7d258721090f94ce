// The opened model's part of the state and of the URL: its text, sentence B, layer, head, query, heads off, and the
// folder URL it came from (files picked from the disk cannot be named in a link; a folder URL reopens).
import { parseAblate } from '../heads/off.js';
import { defaultResearch, parseResearch, writeResearch } from '../research/hash.js';

/** The first sentence in each language: for a causal model (text), and for an encoder, a word to fill in (mask). */
export const OPEN_TEXTS = {
  en: { text: 'The animal didn’t cross the street because it was too tired.', mask: 'The animal didn’t cross the street because [MASK] was too tired.' },
  zh: { text: '小狗没有吃饭，因为它一点也不想吃。', mask: '小狗没有吃饭，因为[MASK]一点也不想吃。' },
};
export const OPEN_TEXT = OPEN_TEXTS.en.text;

/**
 * The sentence to show for `lang` and the kind of model (`encoder` or not): `text` itself unless it is one of the
 * first sentences, which follow the language and the kind (a sentence the reader typed is never replaced).
 */
export function openTextFor(text, lang, encoder) {
  const known = Object.values(OPEN_TEXTS).some((x) => x.text === text || x.mask === text);
  return known ? OPEN_TEXTS[lang][encoder ? 'mask' : 'text'] : text;
}

/**
 * What a checkpoint without tokenizer.json starts with: eight ids spread over its vocabulary, then the same eight
 * again, so a previous-token or induction head has something to show.
 */
export function sampleIds(vocabSize) {
  const eight = [...Array(8).keys()].map((i) => Math.floor(((2 * i + 1) * vocabSize) / 16) % vocabSize);
  return [...eight, ...eight].join(' ');
}
/** Whether `text` is token ids written out (`15496 11 995`), as the page takes them without a tokenizer. */
export const isIdList = (text) => /^[\s,]*\d[\d\s,]*$/.test(text);

export const defaultOpen = (lang = 'en') => ({ text: OPEN_TEXTS[lang]?.text ?? OPEN_TEXT, pair: '', url: '', sample: false, layer: 0, head: 0, query: -1, ablate: [],
  ...defaultResearch() });

const int = (v, fallback, max) => (/^\d+$/.test(v ?? '') ? Math.min(max, Number(v)) : fallback);

/** Read the `o…` keys of the hash over `open`. */
export function parseOpen(p, open) {
  const o = { ...open, ablate: [...open.ablate] };
  if (p.has('otext')) o.text = p.get('otext').slice(0, 8000);
  if (p.has('opair')) o.pair = p.get('opair').slice(0, 8000);
  if (p.has('ourl') && /^https?:\/\//.test(p.get('ourl'))) o.url = p.get('ourl');
  else if (p.get('osample') === '1') o.sample = true;
  o.layer = int(p.get('olayer'), o.layer, 255);
  o.head = int(p.get('ohead'), o.head, 255);
  o.query = p.get('oq') === '-1' ? -1 : int(p.get('oq'), o.query, 8000);
  if (p.has('oablate')) o.ablate = parseAblate(p.get('oablate'));
  return parseResearch(p, o);
}

/** Write the opened model's keys into `p` (URLSearchParams). */
export function writeOpen(p, o) {
  if (o.url) p.set('ourl', o.url);
  else if (o.sample) p.set('osample', '1');
  p.set('otext', o.text);
  if (o.pair) p.set('opair', o.pair);
  p.set('olayer', o.layer);
  p.set('ohead', o.head);
  p.set('oq', o.query);
  if (o.ablate.length) p.set('oablate', o.ablate.map(({ layer, head }) => `${layer}.${head}`).join(','));
  writeResearch(p, o);
}
