// A checkpoint's tokenizer.json through @huggingface/tokenizers (imported only when a checkpoint has one), and the
// token strings shown to people: spaces as ␣, newlines as ↵, tabs as ⇥, and the bytes of a split character as <0xE4>.
import { describe } from './runtime.js';
import { wholeIds } from './tensor.js';
import { checkTokenizerConfig, checkTokenizerJson, excerpt } from './tokenizer-json.js';
import { isKnownPattern } from './tokenizer-patterns.js';
import { guardComponents, guardSearches, linearMatchers, normalizedAddedTokens, renormalizeAddedTokens, TokenizerBudget, withPlaceholders } from './tokenizer-guards.js';

/** What a space inside a token is shown as (GPT-2's `Ġ`, SentencePiece's `▁`, or a decoded space). */
export const SPACE_MARK = '\u2423'; // ␣
const SHOWN = { ' ': SPACE_MARK, '\n': '\u21b5', '\t': '\u21e5' }; // ␣ ↵ ⇥

// GPT-2's byte-level alphabet (bytes_to_unicode in its encoder.py): printable bytes stand for themselves, the other
// 68 take the code points from 256 on, in order. Read backwards, it gives each byte-level character's byte.
const UNICODE_TO_BYTE = (() => {
  const table = new Map();
  let extra = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    table.set(String.fromCodePoint(printable ? b : extra++), b);
  }
  return table;
})();

// ignoreBOM: a token that is U+FEFF (EF BB BF) is that character, not a byte order mark to drop.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const hexByte = (b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;

/** Bytes → text where they are whole UTF-8 characters, `<0xE4>` for each byte of a part of one. */
export function readableBytes(bytes) {
  let out = '';
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    const length = b < 0x80 ? 1 : b >> 5 === 6 ? 2 : b >> 4 === 14 ? 3 : b >> 3 === 30 ? 4 : 0;
    let char = null;
    if (length && i + length <= bytes.length) {
      try {
        char = utf8.decode(bytes.subarray(i, i + length)); // fatal: refuses overlong forms, surrogates, stray bytes
      } catch {
        char = null;
      }
    }
    if (char === null) {
      out += hexByte(b);
      i += 1;
    } else {
      out += SHOWN[char] ?? (b < 0x20 || b === 0x7f ? hexByte(b) : char);
      i += length;
    }
  }
  return out;
}

// True when a component of the tokenizer.json section, alone or inside a Sequence, is of this type (and passes `test`).
function uses(section, type, test = () => true) {
  if (!section || typeof section !== 'object') return false;
  if (section.type === type && test(section)) return true;
  const parts = section.pretokenizers ?? section.decoders ?? section.normalizers ?? [];
  return Array.isArray(parts) && parts.some((part) => uses(part, type, test));
}

const METASPACE = '\u2581'; // ▁, SentencePiece's space
/**
 * SentencePiece's ▁ marks spaces: a Metaspace pre-tokenizer or decoder (Mistral, T5), Prepend (Llama 2), or a
 * Replace of spaces by ▁ (a normalizer) or of ▁ back (a decoder).
 */
const marksSpaces = (json) => uses(json.pre_tokenizer, 'Metaspace') || uses(json.decoder, 'Metaspace') || uses(json.normalizer, 'Prepend')
  || uses(json.normalizer, 'Replace', (r) => r.content === METASPACE) || uses(json.decoder, 'Replace', (r) => r.pattern?.String === METASPACE);

/** A SentencePiece token as people read it: ▁ as ␣, a newline as ↵, a tab as ⇥, another control character as its byte. */
const visible = (token) => Array.from(token, (c) => (c === METASPACE ? SPACE_MARK : SHOWN[c] ?? (c < ' ' || c === '\x7f' ? hexByte(c.charCodeAt(0)) : c))).join('');

/** The text of a tokenizer_config.json special token: a string, or an AddedToken `{ content }`. */
const tokenText = (value) => (typeof value === 'string' ? value : typeof value?.content === 'string' ? value.content : null);

/** A checkpoint's tokenizer: ids, text, readable token strings. */
export class CheckpointTokenizer {
  #tokenizer;
  #byteLevel;
  #metaspace;
  #special;
  #budget;
  #longestToken;
  #maxChars = Infinity;
  #positions = 0;

  /**
   * @param {any} tokenizer an @huggingface/tokenizers Tokenizer
   * @param {any} json its tokenizer.json, parsed
   * @param {any} config its tokenizer_config.json, parsed
   * @param {{ budget?: TokenizerBudget, longestToken?: number }} [limits] from loadTokenizer
   */
  constructor(tokenizer, json, config, { budget = new TokenizerBudget(), longestToken = 1 } = {}) {
    this.#tokenizer = tokenizer;
    this.#budget = budget;
    this.#longestToken = longestToken;
    this.#byteLevel = uses(json.pre_tokenizer, 'ByteLevel') || uses(json.decoder, 'ByteLevel');
    this.#metaspace = marksSpaces(json);
    this.#special = new Set((json.added_tokens ?? []).filter((t) => t.special).map((t) => t.id));
    const id = (key) => {
      const text = tokenText(config?.[key]);
      return text === null ? null : tokenizer.token_to_id(text) ?? null;
    };
    /** The end-of-text token's id (tokenizer_config.json's `eos_token`), or null. */
    this.eosTokenId = id('eos_token');
    /** The beginning-of-text token's id (`bos_token`), or null. */
    this.bosTokenId = id('bos_token');
  }

  /**
   * Bounds the text of encode() by the model's `positions`: no token stands for more than the longest token's
   * characters, so a longer text cannot fit and is refused before it is tokenized. Normalizers and Replace may make
   * at most 4 times that many characters.
   */
  limitPositions(positions) {
    this.#positions = positions;
    this.#maxChars = positions * this.#longestToken;
    this.#budget.maxChars = 4 * this.#maxChars + 1024;
  }

  /** Text → ids with the post-processor's special tokens (`[CLS] … [SEP]`, a BOS), and `tokenTypeIds` for a pair. */
  encode(text, pair, caller) {
    if (typeof text !== 'string') throw new TypeError(`${caller}: text: expected a string, got ${describe(text)}`);
    if (pair !== undefined && typeof pair !== 'string') throw new TypeError(`${caller}: options.pair: expected a string, got ${describe(pair)}`);
    const chars = text.length + (pair?.length ?? 0);
    if (chars > this.#maxChars) {
      const n = (x) => x.toLocaleString('en-US');
      throw new RangeError(`${caller}: text: expected at most ${n(this.#maxChars)} characters (this model's ${n(this.#positions)} positions × `
        + `${n(this.#longestToken)}, the most characters one token of its tokenizer stands for), got ${n(chars)}: it cannot fit; shorten it`);
    }
    this.#budget.start(caller);
    const encoding = this.#tokenizer.encode(text, { text_pair: pair ?? null, return_token_type_ids: true });
    return { ids: encoding.ids, tokenTypeIds: encoding.token_type_ids ?? new Array(encoding.ids.length).fill(0) };
  }

  /**
   * Ids → text, special tokens left out; ids the vocabulary does not have are skipped, as Hugging Face's decode does.
   * One that is no whole number from 0 is no id: a RangeError naming `caller` (it was skipped too).
   */
  decode(ids, caller = 'decode') {
    const known = Array.from(wholeIds(ids, caller)).filter((id) => this.#tokenizer.id_to_token(id) !== undefined);
    if (known.length === 0) return ''; // the library throws on an empty list
    this.#budget.start('decode');
    return this.#tokenizer.decode(known, { skip_special_tokens: true });
  }

  /** One token as people read it: its vocabulary string with spaces, newlines and split characters made visible. */
  readable(id) {
    const token = this.#tokenizer.id_to_token(id);
    if (token === undefined) return `<id ${id}>`; // past the tokenizer's vocabulary (models often pad theirs)
    if (this.#special.has(id)) return token;
    if (this.#byteLevel) {
      const bytes = Array.from(token, (c) => UNICODE_TO_BYTE.get(c));
      if (bytes.every((b) => b !== undefined)) return readableBytes(Uint8Array.from(bytes));
      return token; // an added token outside the byte alphabet: shown as written
    }
    if (this.#metaspace) {
      // SentencePiece's byte fallback (<0x0A>): shown as the byte-level tokens are, so a newline reads ↵ there too.
      const byte = /^<0x([0-9A-Fa-f]{2})>$/.exec(token);
      return byte ? readableBytes(Uint8Array.of(parseInt(byte[1], 16))) : visible(token);
    }
    return token;
  }
}

/**
 * Builds the tokenizer of `tokenizer.json` (+ `tokenizer_config.json`) texts; errors name `caller` and the file.
 * `files.vocabSize` (optional): the model's vocabulary, which the tokenizer's entries may not outnumber.
 */
export async function loadTokenizer(files, caller) {
  const parse = (text, name) => {
    try {
      return JSON.parse(text);
    } catch (cause) {
      throw new TypeError(`${caller}: ${name}: expected JSON, got text that is not (${cause.message})`, { cause });
    }
  };
  const json = parse(files.json, 'tokenizer.json');
  const config = files.config === null ? {} : parse(files.config, 'tokenizer_config.json');
  checkTokenizerConfig(config, `${caller}: tokenizer_config.json`);
  const prefix = `${caller}: tokenizer.json`;
  const { regexes, longestToken } = checkTokenizerJson(json, prefix, { vocabSize: files.vocabSize });
  let lib;
  try {
    lib = await import('@huggingface/tokenizers'); // only checkpoints with a tokenizer pay for it
  } catch (cause) {
    // Bundlers and Node resolve the package; a page that imports attnscope from a static host needs an import map.
    throw new Error(`${caller}: tokenizer.json needs the package @huggingface/tokenizers, which could not be imported (${cause.message}); without a bundler, map it in the page: <script type="importmap">{"imports": {"@huggingface/tokenizers": "./node_modules/@huggingface/tokenizers/dist/tokenizers.min.mjs"}}</script>`, { cause });
  }
  // A pattern outside the known ones runs in re2js: the library is built with a placeholder in its place, so that
  // not even its constructor (which normalizes the added tokens) runs it in the backtracking RegExp.
  const linear = await linearMatchers(regexes, lib, prefix, excerpt);
  let tokenizer;
  try {
    tokenizer = new lib.Tokenizer(linear.size ? withPlaceholders(json, isKnownPattern) : json, config);
  } catch (cause) {
    throw new TypeError(`${prefix}: @huggingface/tokenizers could not read it (${excerpt(cause.message, 300)})`, { cause });
  }
  const budget = new TokenizerBudget();
  const stale = linear.size ? normalizedAddedTokens(tokenizer) : null;
  guardComponents(tokenizer, json, linear, budget, prefix);
  if (stale) {
    budget.start(caller);
    renormalizeAddedTokens(tokenizer, stale);
  }
  guardSearches(tokenizer, json, budget, prefix);
  return new CheckpointTokenizer(tokenizer, json, config, { budget, longestToken });
}
