// Checks a parsed tokenizer.json before @huggingface/tokenizers sees it: every component is one the library
// implements (by type, at any depth of a Sequence), every field it loops or grows on is bounded, every regex is a
// known pattern or one for the linear-time engine, and a Precompiled charsmap has the layout Hugging Face's reader
// takes. Anything else is a TypeError or RangeError naming the field, never a tokenizer that silently does otherwise.
import { isKnownPattern } from './tokenizer-patterns.js';

// The components @huggingface/tokenizers 0.2.0 builds (create_normalizer, create_pre_tokenizer, create_decoder,
// create_post_processor, create_tokenizer_model). Its model factory falls back to guessing a type from the fields
// present; a `model.type` outside this list is refused here instead.
const MODELS = ['BPE', 'WordPiece', 'Unigram'];
const NORMALIZERS = ['BertNormalizer', 'Precompiled', 'Sequence', 'Replace', 'NFC', 'NFD', 'NFKC', 'NFKD', 'Strip', 'StripAccents', 'Lowercase', 'Prepend'];
const PRE_TOKENIZERS = ['BertPreTokenizer', 'Sequence', 'Whitespace', 'WhitespaceSplit', 'Metaspace', 'ByteLevel', 'Split', 'Punctuation', 'Digits', 'Replace', 'FixedLength'];
const DECODERS = ['ByteLevel', 'WordPiece', 'Metaspace', 'BPEDecoder', 'CTC', 'Sequence', 'Replace', 'Fuse', 'Strip', 'ByteFallback'];
const POST_PROCESSORS = ['TemplateProcessing', 'ByteLevel', 'BertProcessing', 'RobertaProcessing', 'Sequence'];
/** Hugging Face's SplitDelimiterBehavior. */
export const SPLIT_BEHAVIORS = ['Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous'];

/** Limits no real tokenizer.json comes near; each keeps one hostile field from costing time or memory. */
export const TOKENIZER_LIMITS = Object.freeze({
  /** Characters of a Regex pattern outside the known ones (the longest known, o200k's, has 316). */
  patternChars: 2000,
  /** Characters of a literal: a String pattern, a Replace's content, Prepend's and Metaspace's strings (real: 1 or 2). */
  literalChars: 256,
  /** Components in one Sequence, and Sequences inside Sequences. */
  sequenceLength: 64,
  sequenceDepth: 8,
  /** Characters of Metaspace's replacement, which stands for every space (real: ▁). */
  replacementChars: 8,
  /** Characters of one vocabulary entry or added token (real ones: at most 128). */
  tokenChars: 1024,
  /** WordPiece's longest word: it tries every prefix of a word, so a word costs the cube of its length (BERT: 100). */
  wordPieceChars: 200,
});

/** A field's value as a message quotes it: JSON, cut to a few hundred characters (the length said when cut). */
export function excerpt(value, max = 200) {
  let text;
  try {
    text = JSON.stringify(value) ?? String(value); // undefined (and functions) have no JSON
  } catch {
    text = String(value); // a BigInt, a cycle
  }
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length.toLocaleString('en-US')} characters)`;
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const list = (names) => names.map((n) => `"${n}"`).join(', ');

/**
 * Checks `json` (tokenizer.json, parsed). Returns `regexes`, the regex fields in it (`{ path, pattern, known }`, so
 * that the caller can run the unknown ones in the linear-time engine), and `longestToken`, the most characters one
 * token can stand for (the longest vocabulary entry or added token, or WordPiece's longest word, which one [UNK]
 * covers). Errors start with `prefix` (`loadModel: tokenizer.json`).
 */
export function checkTokenizerJson(json, prefix, { vocabSize } = {}) {
  const fail = (Kind, path, what, value) => {
    throw new Kind(`${prefix}: ${path}: expected ${what}, got ${excerpt(value)}`);
  };
  if (!isObject(json)) fail(TypeError, '(the file)', 'an object', json);
  const regexes = [];

  const string = (value, path, max = TOKENIZER_LIMITS.literalChars) => {
    if (typeof value !== 'string') fail(TypeError, path, 'a string', value);
    if (value.length > max) fail(RangeError, path, `a string of at most ${max} characters`, value);
  };
  const optionalString = (value, path) => value === undefined || value === null || string(value, path);
  const whole = (value, path, min, max) => {
    if (!Number.isInteger(value) || value < min || value > max) fail(RangeError, path, `a whole number from ${min} to ${max}`, value);
  };
  const boolean = (value, path) => {
    if (value !== undefined && value !== null && typeof value !== 'boolean') fail(TypeError, path, 'true or false', value);
  };
  // { String: "…" } or { Regex: "…" }: a literal, or a regex that is known or goes to the linear-time engine.
  const pattern = (value, path) => {
    if (!isObject(value) || Object.keys(value).length !== 1 || !('String' in value || 'Regex' in value)) {
      fail(TypeError, path, 'a pattern { "String": … } or { "Regex": … }', value);
    }
    if ('String' in value) {
      string(value.String, `${path}.String`);
      return;
    }
    const regex = value.Regex;
    if (typeof regex !== 'string') fail(TypeError, `${path}.Regex`, 'a string', regex);
    const known = isKnownPattern(regex);
    if (!known && regex.length > TOKENIZER_LIMITS.patternChars) {
      fail(RangeError, `${path}.Regex`, `one of the known pre-tokenizer patterns, or a pattern of at most ${TOKENIZER_LIMITS.patternChars} characters`, regex);
    }
    regexes.push({ path: `${path}.Regex`, pattern: regex, known });
  };

  // One component of a section: its type is one the library builds; a Sequence's parts are checked in turn.
  const component = (value, path, types, partsKey, fields, depth = 0) => {
    if (value === null || value === undefined) return;
    if (!isObject(value)) fail(TypeError, path, 'an object with a "type"', value);
    if (!types.includes(value.type)) fail(TypeError, `${path}.type`, `one of ${list(types)} (the types @huggingface/tokenizers implements)`, value.type);
    if (value.type === 'Sequence') {
      const parts = value[partsKey];
      if (!Array.isArray(parts)) fail(TypeError, `${path}.${partsKey}`, 'an array', parts);
      if (parts.length > TOKENIZER_LIMITS.sequenceLength) fail(RangeError, `${path}.${partsKey}`, `at most ${TOKENIZER_LIMITS.sequenceLength} components`, `Array(${parts.length})`);
      if (depth >= TOKENIZER_LIMITS.sequenceDepth) fail(RangeError, path, `Sequences nested at most ${TOKENIZER_LIMITS.sequenceDepth} deep`, value.type);
      parts.forEach((part, i) => {
        if (part === null) fail(TypeError, `${path}.${partsKey}[${i}]`, 'an object with a "type"', part);
        component(part, `${path}.${partsKey}[${i}]`, types, partsKey, fields, depth + 1);
      });
      return;
    }
    fields[value.type]?.(value, path);
  };

  const replace = (v, path) => {
    pattern(v.pattern, `${path}.pattern`);
    string(v.content, `${path}.content`);
  };

  component(json.normalizer, 'normalizer', NORMALIZERS, 'normalizers', {
    Replace: replace,
    Prepend: (v, path) => string(v.prepend, `${path}.prepend`),
    Precompiled: (v, path) => precompiledCharsmap(v.precompiled_charsmap, `${path}.precompiled_charsmap`, fail),
    BertNormalizer: (v, path) => ['clean_text', 'handle_chinese_chars', 'strip_accents', 'lowercase'].forEach((k) => boolean(v[k], `${path}.${k}`)),
    Strip: (v, path) => ['strip_left', 'strip_right'].forEach((k) => boolean(v[k], `${path}.${k}`)),
  });
  component(json.pre_tokenizer, 'pre_tokenizer', PRE_TOKENIZERS, 'pretokenizers', {
    Split: (v, path) => {
      pattern(v.pattern, `${path}.pattern`);
      if (!SPLIT_BEHAVIORS.includes(v.behavior)) fail(TypeError, `${path}.behavior`, `one of ${list(SPLIT_BEHAVIORS)}`, v.behavior);
      if (typeof v.invert !== 'boolean') fail(TypeError, `${path}.invert`, 'true or false', v.invert);
    },
    Replace: replace,
    Metaspace: (v, path) => {
      for (const k of ['replacement', 'str_rep']) if (v[k] !== undefined && v[k] !== null) string(v[k], `${path}.${k}`, TOKENIZER_LIMITS.replacementChars);
    },
    FixedLength: (v, path) => whole(v.length, `${path}.length`, 1, 2 ** 31 - 1),
    Punctuation: (v, path) => {
      if (v.behavior !== undefined && !SPLIT_BEHAVIORS.includes(v.behavior)) fail(TypeError, `${path}.behavior`, `one of ${list(SPLIT_BEHAVIORS)}`, v.behavior);
    },
    Digits: (v, path) => boolean(v.individual_digits, `${path}.individual_digits`),
    ByteLevel: (v, path) => ['add_prefix_space', 'trim_offsets', 'use_regex'].forEach((k) => boolean(v[k], `${path}.${k}`)),
  });
  component(json.decoder, 'decoder', DECODERS, 'decoders', {
    Replace: replace,
    Metaspace: (v, path) => optionalString(v.replacement, `${path}.replacement`),
    Strip: (v, path) => {
      optionalString(v.content, `${path}.content`);
      for (const k of ['start', 'stop']) if (v[k] !== undefined) whole(v[k], `${path}.${k}`, 0, 2 ** 31 - 1);
    },
    WordPiece: (v, path) => optionalString(v.prefix, `${path}.prefix`),
    BPEDecoder: (v, path) => optionalString(v.suffix, `${path}.suffix`),
  });
  if (!isObject(json.model)) fail(TypeError, 'model', 'an object with a "type"', json.model);
  if (!MODELS.includes(json.model.type)) fail(TypeError, 'model.type', `one of ${list(MODELS)} (the models @huggingface/tokenizers implements)`, json.model.type);
  if (json.added_tokens !== undefined && !Array.isArray(json.added_tokens)) fail(TypeError, 'added_tokens', 'an array', json.added_tokens);
  if (vocabSize !== undefined) checkEntries(json, vocabSize, prefix);
  const known = tokenIds(json, fail);
  boolean(json.model.fuse_unk, 'model.fuse_unk'); // every model of the library reads it
  if (json.model.type === 'BPE') {
    for (const k of ['byte_fallback', 'ignore_merges']) boolean(json.model[k], `model.${k}`);
    const { dropout } = json.model;
    if (dropout !== undefined && dropout !== null && !(typeof dropout === 'number' && dropout >= 0 && dropout <= 1)) fail(TypeError, 'model.dropout', 'null or a number from 0 to 1', dropout);
    checkMerges(json.model, fail);
  }
  // The post-processor adds its special tokens by their text, which the vocabulary turns into ids: a text it does not
  // have would become NaN in every input, reported later by another call.
  const specialToken = (text, path) => {
    string(text, path, TOKENIZER_LIMITS.tokenChars);
    if (!known.has(text)) fail(TypeError, path, 'a token of model.vocab or added_tokens', text);
  };
  const idOf = (value, path) => whole(value, path, 0, MAX_ID);
  const clsSep = (v, path) => {
    for (const k of ['cls', 'sep']) {
      const pair = v[k];
      if (!Array.isArray(pair) || pair.length !== 2) fail(TypeError, `${path}.${k}`, 'a pair [token, id]', pair);
      specialToken(pair[0], `${path}.${k}[0]`);
      idOf(pair[1], `${path}.${k}[1]`);
    }
  };
  component(json.post_processor, 'post_processor', POST_PROCESSORS, 'processors', {
    BertProcessing: clsSep,
    RobertaProcessing: clsSep,
    TemplateProcessing: (v, path) => {
      for (const k of ['single', 'pair']) {
        const pieces = v[k];
        if (!Array.isArray(pieces)) fail(TypeError, `${path}.${k}`, 'an array of { "SpecialToken": … } and { "Sequence": … }', pieces);
        if (pieces.length > TOKENIZER_LIMITS.sequenceLength) fail(RangeError, `${path}.${k}`, `at most ${TOKENIZER_LIMITS.sequenceLength} pieces`, `Array(${pieces.length})`);
        pieces.forEach((piece, i) => {
          const at = `${path}.${k}[${i}]`;
          if (isObject(piece?.SpecialToken)) specialToken(piece.SpecialToken.id, `${at}.SpecialToken.id`);
          else if (isObject(piece?.Sequence)) {
            if (piece.Sequence.id !== 'A' && piece.Sequence.id !== 'B') fail(TypeError, `${at}.Sequence.id`, '"A" or "B"', piece.Sequence.id);
          } else fail(TypeError, at, '{ "SpecialToken": { "id": … } } or { "Sequence": { "id": "A" or "B" } }', piece);
          const inner = piece.SpecialToken ?? piece.Sequence;
          whole(inner.type_id, `${at}.${piece.SpecialToken ? 'SpecialToken' : 'Sequence'}.type_id`, 0, 2 ** 31 - 1);
        });
      }
    },
  });
  return { regexes, longestToken: longestToken(json, fail) };
}

/** The largest token id: Hugging Face's tokenizers reads ids as u32. */
const MAX_ID = 2 ** 32 - 1;

/**
 * The texts of the tokens `json` names (model.vocab and added_tokens), after checking every id they give: a whole
 * number from 0 to MAX_ID, as Hugging Face's tokenizers reads it. The library takes ids as they are written, so a
 * string or a fraction would surface later as a NaN id in another call. An id past config.json's vocab_size is
 * left to the calls that use it (forward refuses it by name): Hugging Face loads such a pair, and real files have
 * tokens the model's table lacks (a pad token added after training).
 */
function tokenIds({ model, added_tokens: added = [] }, fail) {
  const id = (value, path) => {
    if (!Number.isInteger(value) || value < 0 || value > MAX_ID) fail(Number.isInteger(value) ? RangeError : TypeError, path, 'a token id (a whole number from 0 to 2^32 - 1)', value);
  };
  const known = new Set();
  const { vocab } = model;
  if (Array.isArray(vocab)) {
    vocab.forEach((entry, i) => {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string') fail(TypeError, `model.vocab[${i}]`, 'a pair [piece, score]', entry);
      known.add(entry[0]);
    });
  } else if (isObject(vocab)) {
    for (const [text, value] of Object.entries(vocab)) {
      id(value, `model.vocab[${excerpt(text, 40)}]`);
      known.add(text);
    }
  }
  added.forEach((t, i) => {
    if (!isObject(t) || typeof t.content !== 'string') fail(TypeError, `added_tokens[${i}]`, 'an object { "id": …, "content": "…" }', t);
    id(t.id, `added_tokens[${i}].id`);
    known.add(t.content);
  });
  return known;
}

/**
 * BPE's merges as Hugging Face's tokenizers reads them (BPE::from_file, and the file's two formats): each "a b" (two
 * tokens split at the one space) or ["a", "b"], both tokens and their merge (b without the continuing prefix) in the
 * vocabulary. The library takes any text and would merge into a token with no id.
 */
function checkMerges({ vocab, merges = [], continuing_subword_prefix: prefix }, fail) {
  if (!Array.isArray(merges)) fail(TypeError, 'model.merges', 'an array', merges);
  const has = (token) => isObject(vocab) && Object.hasOwn(vocab, token);
  const cut = typeof prefix === 'string' ? prefix.length : 0;
  // The library takes the format from the first merge and stores the others as they are: a merge of the other
  // format would never apply. Hugging Face's reader refuses such a list.
  const arrays = Array.isArray(merges[0]);
  merges.forEach((merge, i) => {
    if (Array.isArray(merge) !== arrays) fail(TypeError, `model.merges[${i}]`, `a merge written as model.merges[0] is (${arrays ? '["a", "b"]' : '"a b"'})`, merge);
    const pair = typeof merge === 'string' ? merge.split(' ') : merge;
    if (!Array.isArray(pair) || pair.length !== 2 || !pair.every((t) => typeof t === 'string' && t.length > 0)) {
      fail(TypeError, `model.merges[${i}]`, 'two tokens, "a b" or ["a", "b"]', merge);
    }
    const [a, b] = pair;
    for (const token of [a, b, a + b.slice(cut)]) {
      if (!has(token)) fail(TypeError, `model.merges[${i}]`, `a merge of tokens of model.vocab (${excerpt(token, 60)} is not one)`, merge);
    }
  });
}

/**
 * Checks tokenizer_config.json (parsed) where @huggingface/tokenizers and this package read it: the special tokens'
 * texts and the three switches the library takes. Errors start with `prefix` (`loadModel: tokenizer_config.json`).
 */
export function checkTokenizerConfig(config, prefix) {
  const fail = (Kind, path, what, value) => {
    throw new Kind(`${prefix}: ${path}: expected ${what}, got ${excerpt(value)}`);
  };
  if (!isObject(config)) fail(TypeError, '(the file)', 'an object', config);
  const tokenText = (value, path) => {
    if (value === undefined || value === null) return;
    const text = isObject(value) ? value.content : value;
    if (typeof text !== 'string') fail(TypeError, path, 'a token\'s text, or an object { "content": "…" }', value);
    if (text.length > TOKENIZER_LIMITS.tokenChars) fail(RangeError, path, `a token of at most ${TOKENIZER_LIMITS.tokenChars} characters`, value);
  };
  for (const k of ['bos_token', 'eos_token', 'unk_token', 'pad_token']) tokenText(config[k], k);
  const extra = config.additional_special_tokens;
  if (extra !== undefined && extra !== null) {
    if (!Array.isArray(extra)) fail(TypeError, 'additional_special_tokens', 'an array of tokens', extra);
    extra.forEach((t, i) => tokenText(t, `additional_special_tokens[${i}]`));
  }
  for (const k of ['clean_up_tokenization_spaces', 'do_lowercase_and_remove_accent', 'remove_space']) {
    if (config[k] !== undefined && config[k] !== null && typeof config[k] !== 'boolean') fail(TypeError, k, 'true or false', config[k]);
  }
}

/**
 * More entries than the model has embedding rows cannot all be ids it reads, and each costs the library's
 * constructor time (a million took 10 s): refused before the library sees them. `vocabSize` is config.json's, as
 * the core read it.
 */
function checkEntries({ model }, vocabSize, prefix) {
  const vocab = model?.vocab;
  const entries = Array.isArray(vocab) ? vocab.length : isObject(vocab) ? Object.keys(vocab).length : 0;
  if (entries > vocabSize) {
    throw new RangeError(`${prefix}: model.vocab: expected at most ${vocabSize.toLocaleString('en-US')} entries (config.json's vocabulary), `
      + `got ${entries.toLocaleString('en-US')}`);
  }
}

/** The longest token's characters, every token checked against TOKENIZER_LIMITS.tokenChars. */
function longestToken({ model, added_tokens: added = [] }, fail) {
  const max = TOKENIZER_LIMITS.tokenChars;
  let longest = 1;
  const token = (text, path) => {
    if (typeof text !== 'string') return; // the library says what it expected
    if (text.length > max) fail(RangeError, path, `tokens of at most ${max} characters`, text);
    if (text.length > longest) longest = text.length;
  };
  const { vocab } = model;
  if (Array.isArray(vocab)) vocab.forEach((entry, i) => token(Array.isArray(entry) ? entry[0] : entry, `model.vocab[${i}]`));
  else if (isObject(vocab)) for (const text of Object.keys(vocab)) token(text, 'model.vocab');
  added.forEach((t, i) => token(t?.content, `added_tokens[${i}].content`));
  if (model.type === 'WordPiece') {
    const chars = model.max_input_chars_per_word ?? 100;
    if (!Number.isInteger(chars) || chars < 1 || chars > TOKENIZER_LIMITS.wordPieceChars) {
      fail(RangeError, 'model.max_input_chars_per_word', `a whole number from 1 to ${TOKENIZER_LIMITS.wordPieceChars}`, chars);
    }
    longest = Math.max(longest, chars);
  }
  return longest;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * SentencePiece's normalization map as Hugging Face's Precompiled reads it (the spm_precompiled crate): base64 of a
 * little-endian u32 byte length of the trie, the trie (u32 units), then the replacement strings (UTF-8). Files that
 * transformers.js converted carry null. @huggingface/tokenizers does not interpret the map: it applies NFKC and
 * SentencePiece's whitespace rules (nmt_nfkc's behaviour) whatever the map says (docs/huggingface.md).
 */
function precompiledCharsmap(value, path, fail) {
  if (value === null) return;
  const what = "SentencePiece's precompiled charsmap: base64 of a trie length (u32), the trie and its strings";
  if (typeof value !== 'string' || value.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) fail(TypeError, path, what, value);
  const binary = atob(value);
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  if (bytes.length < 4) fail(TypeError, path, what, value);
  const trieBytes = new DataView(bytes.buffer).getUint32(0, true);
  if (trieBytes === 0 || trieBytes % 4 !== 0 || 4 + trieBytes > bytes.length) {
    fail(TypeError, path, `${what} (a trie length of ${trieBytes.toLocaleString('en-US')} bytes in ${bytes.length.toLocaleString('en-US')})`, value);
  }
  try {
    utf8.decode(bytes.subarray(4 + trieBytes));
  } catch {
    fail(TypeError, path, `${what} (its strings are not UTF-8)`, value);
  }
}
