// A deliberately simple, visible tokenizer: one token per CJK character, words and single
// punctuation marks otherwise. Real models use subword vocabularies; this one is for looking.

/** Most tokens the page computes with (the page stays interactive well past this). */
export const MAX_TOKENS = 64;

// Han, kana, Hangul syllables and CJK punctuation/full-width forms each make their own token.
const CJK = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}\\u3000-\\u303f\\uff00-\\uffef';
// A word: letters, digits and combining marks, with inner apostrophes kept ("didn't", "l'eau").
const TOKEN_RE = new RegExp(
  `[${CJK}]|(?:(?![${CJK}])[\\p{L}\\p{N}\\p{M}])+(?:['’](?:(?![${CJK}])[\\p{L}\\p{N}\\p{M}])+)*|[^\\s]`,
  'gu',
);

/**
 * Split text into tokens.
 * @param {string} text
 * @returns {{ tokens: string[], truncated: boolean, total: number }}
 */
export function tokenize(text) {
  const all = String(text ?? '').match(TOKEN_RE) ?? [];
  return { tokens: all.slice(0, MAX_TOKENS), truncated: all.length > MAX_TOKENS, total: all.length };
}
