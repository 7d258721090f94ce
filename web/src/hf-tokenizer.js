// A checkpoint's tokenizer.json through @huggingface/tokenizers (imported only when a checkpoint has one), and the
// token strings shown to people: spaces as ␣, newlines as ↵, tabs as ⇥, and the bytes of a split character as <0xE4>.
import { describe } from './runtime.js';

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

const utf8 = new TextDecoder('utf-8', { fatal: true });
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

// True when a component of this kind appears in the tokenizer.json section, alone or inside a Sequence.
function uses(section, type) {
  if (!section || typeof section !== 'object') return false;
  if (section.type === type) return true;
  const parts = section.pretokenizers ?? section.decoders ?? section.normalizers ?? [];
  return Array.isArray(parts) && parts.some((part) => uses(part, type));
}

/** The text of a tokenizer_config.json special token: a string, or an AddedToken `{ content }`. */
const tokenText = (value) => (typeof value === 'string' ? value : typeof value?.content === 'string' ? value.content : null);

/** A checkpoint's tokenizer: ids, text, readable token strings. */
export class CheckpointTokenizer {
  #tokenizer;
  #byteLevel;
  #metaspace;
  #special;

  constructor(tokenizer, json, config) {
    this.#tokenizer = tokenizer;
    this.#byteLevel = uses(json.pre_tokenizer, 'ByteLevel') || uses(json.decoder, 'ByteLevel');
    this.#metaspace = uses(json.pre_tokenizer, 'Metaspace') || uses(json.decoder, 'Metaspace') || uses(json.normalizer, 'Prepend');
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

  /** Text → ids with the post-processor's special tokens (`[CLS] … [SEP]`, a BOS), and `tokenTypeIds` for a pair. */
  encode(text, pair, caller) {
    if (typeof text !== 'string') throw new TypeError(`${caller}: text: expected a string, got ${describe(text)}`);
    if (pair !== undefined && typeof pair !== 'string') throw new TypeError(`${caller}: options.pair: expected a string, got ${describe(pair)}`);
    const encoding = this.#tokenizer.encode(text, { text_pair: pair ?? null, return_token_type_ids: true });
    return { ids: encoding.ids, tokenTypeIds: encoding.token_type_ids ?? new Array(encoding.ids.length).fill(0) };
  }

  /** Ids → text, special tokens left out. */
  decode(ids) {
    return this.#tokenizer.decode(Array.from(ids), { skip_special_tokens: true });
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
      return byte ? readableBytes(Uint8Array.of(parseInt(byte[1], 16))) : token.replaceAll('\u2581', SPACE_MARK);
    }
    return token;
  }
}

/** Builds the tokenizer of `tokenizer.json` (+ `tokenizer_config.json`) texts; errors name `caller` and the file. */
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
  let Tokenizer;
  try {
    ({ Tokenizer } = await import('@huggingface/tokenizers')); // only checkpoints with a tokenizer pay for it
  } catch (cause) {
    // Bundlers and Node resolve the package; a page that imports attnscope from a static host needs an import map.
    throw new Error(`${caller}: tokenizer.json needs the package @huggingface/tokenizers, which could not be imported (${cause.message}); without a bundler, map it in the page: <script type="importmap">{"imports": {"@huggingface/tokenizers": "./node_modules/@huggingface/tokenizers/dist/tokenizers.min.mjs"}}</script>`, { cause });
  }
  let tokenizer;
  try {
    tokenizer = new Tokenizer(json, config);
  } catch (cause) {
    throw new TypeError(`${caller}: tokenizer.json: @huggingface/tokenizers could not read it (${cause.message})`, { cause });
  }
  return new CheckpointTokenizer(tokenizer, json, config);
}
