// Our model files' tokenisers (tools/MODEL_FORMAT.md), with the interface a checkpoint's tokenizer has
// (hf-tokenizer.js CheckpointTokenizer: encode, decode, readable), so that every model class reads text the same way.
import { describe } from './runtime.js';

/**
 * `codepoint` (decoder_lm): `<bos>` then one id per code point (unknown characters → `<unk>`), keeping the last
 * `maxLen` tokens; the specials (`<unk>`, `<bos>`) are never matched by text.
 */
export class CodepointTokenizer {
  #ids;
  #vocab;
  #maxLen;

  constructor(vocab, maxLen) {
    this.#vocab = vocab;
    this.#maxLen = maxLen;
    this.#ids = new Map(vocab.tokens.map((token, id) => [token, id]).slice(vocab.specials.length));
    /** generate() stops after `<bos>`, which starts every document. */
    this.eosTokenId = vocab.bosId;
    this.bosTokenId = vocab.bosId;
  }

  encode(text, pair, caller) {
    if (typeof text !== 'string') throw new TypeError(`${caller}: text: expected a string, got ${describe(text)}`);
    const { bosId: bos, unkId: unk } = this.#vocab;
    const ids = [bos, ...Array.from(text, (ch) => this.#ids.get(ch) ?? unk)].slice(-this.#maxLen);
    return { ids, tokenTypeIds: new Array(ids.length).fill(0) };
  }

  /** Ids → text (specials dropped). Ids must be whole numbers in [0, vocabSize). */
  decode(ids, caller = 'LanguageModel.detokenize') {
    const name = `${caller}: ids`;
    if (!Array.isArray(ids) && !(ids instanceof Int32Array)) throw new TypeError(`${name}: expected an array of token ids, got ${describe(ids)}`);
    const { specials, tokens } = this.#vocab;
    return Array.from(ids, (id, i) => {
      if (typeof id !== 'number') throw new TypeError(`${name}[${i}]: expected a token id (a whole number), got ${describe(id)}`);
      if (!Number.isInteger(id) || id < 0 || id >= tokens.length) throw new RangeError(`${name}[${i}]: expected a token id from 0 to ${tokens.length - 1}, got ${id}`);
      return id >= specials.length ? tokens[id] : '';
    }).join('');
  }

  readable(id) {
    return this.#vocab.tokens[id] ?? `<id ${id}>`;
  }
}

/** words_ascii_lower (tools/MODEL_FORMAT.md): the source tokeniser of both encoder–decoder kinds. */
export function sourceWords(text, sourceIds, { sourcePadId: pad, sourceUnkId: unk }, maxSourceLen) {
  const allWords = text.replace(/[A-Z]/g, (c) => c.toLowerCase()).split(/[^a-z0-9]+/).filter(Boolean);
  const words = allWords.slice(0, maxSourceLen);
  const ids = words.map((w) => {
    const id = sourceIds.get(w);
    return id === undefined || id === pad || id === unk ? unk : id;
  });
  return { ids, tokens: words, wordCount: allWords.length };
}
