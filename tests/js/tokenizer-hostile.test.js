// Hostile tokenizer.json files (issue #32): catastrophic patterns, unknown component types, garbage charsmaps, huge
// and odd fields, text that outgrows its budget. Each is built from the gpt2-lm fixture's tokenizer.json, and every
// call on it (the load, then encode and decode of a sentence and of a long text) is timed and must end within 2 s:
// refused with a TypeError or RangeError naming the file and field and quoting at most a few hundred characters, or
// tokenized. The known patterns are timed on long adversarial texts in JavaScript's engine, where they run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SplitPreTokenizer } from '@huggingface/tokenizers';
import { loadTokenizer } from '../../dist/hf-tokenizer.js';
import { KNOWN_PATTERNS } from '../../dist/tokenizer-patterns.js';
import { TokenizerBudget } from '../../dist/tokenizer-guards.js';
import { withinTime } from './helpers.js';

const BASE = JSON.parse(readFileSync(new URL('../fixtures/hf/gpt2-lm/tokenizer.json', import.meta.url), 'utf8'));
const SENTENCE = 'The cat sat on the mat and then it went to sleep'; // issue #32's 48 characters
const LONG = `${'aaaa bbbb!! 12 '.repeat(2000)}${' '.repeat(5000)}${'x'.repeat(20000)}`;
const LIMIT_MS = 2000;

const timed = (label, fn) => withinTime(label, LIMIT_MS, fn);

/** A message a person can read: it names the call and the file, and quotes at most a few hundred characters. */
function assertNamed(error, label, field) {
  assert.ok(error instanceof TypeError || error instanceof RangeError, `${label}: ${error?.name}: ${error?.message}`);
  assert.match(error.message, /^loadModel: tokenizer\.json: /, label);
  if (field) assert.ok(error.message.includes(field), `${label}: names ${field}: ${error.message}`);
  assert.ok(error.message.length < 700, `${label}: a message of ${error.message.length} characters`);
}

/** Loads `json` (an object or text) and, if it loads, encodes and decodes; every call within LIMIT_MS. */
async function tryAll(label, json) {
  const text = typeof json === 'string' ? json : JSON.stringify(json);
  const tokenizer = await timed(`${label}: load`, () => loadTokenizer({ json: text, config: null }, 'loadModel'));
  if (tokenizer instanceof Error) return { error: tokenizer };
  tokenizer.limitPositions(4096);
  for (const [name, input] of [['sentence', SENTENCE], ['long text', LONG]]) {
    const ids = await timed(`${label}: encode ${name}`, () => tokenizer.encode(input, undefined, 'loadModel').ids);
    if (!(ids instanceof Error)) await timed(`${label}: decode ${name}`, () => tokenizer.decode(ids));
  }
  return { tokenizer };
}

const split = (Regex) => ({ type: 'Split', pattern: { Regex }, behavior: 'Isolated', invert: false });
const replace = (Regex) => ({ type: 'Replace', pattern: { Regex }, content: ' ' });
// Patterns a backtracking engine takes exponential or unbounded time on from one position.
const CATASTROPHIC = ['(?:[\\w\\s]+)+!', '(a|aa)*b', '(.*)*$', '(?:\\p{L}+\\s?)+\\.', '([a-z]+)+$', '(x+x+)+y'];

test('a catastrophic pattern is refused at load, as a Split, as a Replace in every section, inside Sequences', async () => {
  for (const pattern of CATASTROPHIC) {
    const cases = [
      ['Split', { ...BASE, pre_tokenizer: split(pattern) }, 'pre_tokenizer.pattern.Regex'],
      ['Split in a Sequence', { ...BASE, pre_tokenizer: { type: 'Sequence', pretokenizers: [BASE.pre_tokenizer, split(pattern)] } }, 'pre_tokenizer.pretokenizers[1].pattern.Regex'],
      ['Replace normalizer', { ...BASE, normalizer: replace(pattern) }, 'normalizer.pattern.Regex'],
      ['Replace normalizer, nested', { ...BASE, normalizer: { type: 'Sequence', normalizers: [{ type: 'NFC' }, { type: 'Sequence', normalizers: [replace(pattern)] }] } },
        'normalizer.normalizers[1].normalizers[0].pattern.Regex'],
      ['Replace pre-tokenizer', { ...BASE, pre_tokenizer: replace(pattern) }, 'pre_tokenizer.pattern.Regex'],
      ['Replace decoder', { ...BASE, decoder: { type: 'Sequence', decoders: [replace(pattern), BASE.decoder] } }, 'decoder.decoders[0].pattern.Regex'],
    ];
    for (const [where, json, field] of cases) {
      const { error } = await tryAll(`${pattern} as ${where}`, json);
      assertNamed(error, `${pattern} as ${where}`, field);
      assert.equal(error.name, 'TypeError');
      assert.ok(error.message.includes(JSON.stringify(pattern).slice(0, 40)), `the pattern is quoted: ${error.message}`);
    }
  }
});

test('a pattern no linear-time engine runs (lookahead, backreference) or JavaScript cannot read is refused by name', async () => {
  for (const pattern of ['a(?=b)', '(a)\\1', '[', '\\p{NoSuchProperty}', 'a{1001}']) {
    const { error } = await tryAll(pattern, { ...BASE, pre_tokenizer: split(pattern) });
    assertNamed(error, pattern, 'pre_tokenizer.pattern.Regex');
  }
});

test('unknown component types are refused by name, at any depth, not run as plain BPE', async () => {
  const cases = [
    [{ ...BASE, model: { ...BASE.model, type: 'Evil' } }, 'model.type', '"Evil"'],
    [{ ...BASE, model: { ...BASE.model, type: undefined } }, 'model.type', 'undefined'],
    [{ ...BASE, model: { ...BASE.model, type: 'WordLevel' } }, 'model.type', '"WordLevel"'],
    [{ ...BASE, normalizer: { type: 'Evil' } }, 'normalizer.type', '"Evil"'],
    [{ ...BASE, normalizer: { type: 'Sequence', normalizers: [{ type: 'NFC' }, { type: 'ByteLevel' }] } }, 'normalizer.normalizers[1].type', '"ByteLevel"'],
    [{ ...BASE, pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'UnicodeScripts' }] } }, 'pre_tokenizer.pretokenizers[0].type', '"UnicodeScripts"'],
    [{ ...BASE, decoder: { type: 'Evil' } }, 'decoder.type', '"Evil"'],
    [{ ...BASE, post_processor: { type: 'Sequence', processors: [{ type: 'Evil' }] } }, 'post_processor.processors[0].type', '"Evil"'],
    [{ ...BASE, pre_tokenizer: { type: 'Split', pattern: { String: ' ' }, behavior: 'Evil', invert: false } }, 'pre_tokenizer.behavior', '"Evil"'],
    [{ ...BASE, pre_tokenizer: { type: 'Split', pattern: { String: ' ' }, behavior: 'Removed', invert: 'yes' } }, 'pre_tokenizer.invert', '"yes"'],
    [{ ...BASE, pre_tokenizer: { type: 'Split', pattern: { Glob: '*' }, behavior: 'Removed', invert: false } }, 'pre_tokenizer.pattern', '{"Glob":"*"}'],
    [{ ...BASE, normalizer: { type: 'Replace', pattern: { Regex: 5 }, content: '' } }, 'normalizer.pattern.Regex', '5'],
    [{ ...BASE, model: null }, 'model', 'null'],
    ['[1, 2]', '(the file)', '[1,2]'],
  ];
  for (const [json, field, quoted] of cases) {
    const { error } = await tryAll(field, json);
    assertNamed(error, field, `${field}: expected`);
    assert.ok(error.message.endsWith(`got ${quoted}`), `${field}: ${error.message}`);
  }
});

test('a garbage Precompiled charsmap is refused by name; one with the layout of a real one loads', async () => {
  const precompiled = (charsmap) => ({ ...BASE, normalizer: { type: 'Precompiled', precompiled_charsmap: charsmap } });
  const b64 = (bytes) => Buffer.from(bytes).toString('base64');
  const garbage = [
    'garbage!', // not base64
    'AAA', // not a whole number of base64 quads
    b64([0, 0]), // shorter than the trie length
    b64([64, 0, 0, 0, 1, 2, 3, 4]), // a trie of 64 bytes in 8
    b64([4, 0, 0, 0, 1, 2, 3, 4, 0xff, 0xfe]), // strings that are not UTF-8
    12345,
  ];
  for (const charsmap of garbage) {
    const json = precompiled(charsmap);
    const { error } = await tryAll(`charsmap ${charsmap}`, json);
    assertNamed(error, `charsmap ${charsmap}`, 'normalizer.precompiled_charsmap');
  }
  // A trie of one unit and an empty string list: the layout Hugging Face reads. The library does not interpret the
  // map (it applies NFKC), so its content costs nothing here. (Hugging Face's Rust reader panics on this one's trie,
  // which is why the reference is not asked: a panic aborts the process.)
  const wellFormed = precompiled(b64([4, 0, 0, 0, 0, 0, 0, 0]));
  assert.ok((await tryAll('a well-formed charsmap', wellFormed)).tokenizer);
});

test('huge and odd fields are refused by name with a short quote, within 2 s', async () => {
  const huge = 'a'.repeat(1_000_000);
  const nest = (depth) => (depth === 0 ? { type: 'NFC' } : { type: 'Sequence', normalizers: [nest(depth - 1)] });
  const cases = [
    [{ ...BASE, pre_tokenizer: split(`(?:${huge})`) }, 'pre_tokenizer.pattern.Regex', RangeError],
    [{ ...BASE, normalizer: { type: 'Replace', pattern: { String: ' ' }, content: huge } }, 'normalizer.content', RangeError],
    [{ ...BASE, normalizer: { type: 'Prepend', prepend: huge } }, 'normalizer.prepend', RangeError],
    [{ ...BASE, pre_tokenizer: { type: 'Metaspace', replacement: '▁'.repeat(100) } }, 'pre_tokenizer.replacement', RangeError],
    [{ ...BASE, pre_tokenizer: { type: 'FixedLength', length: 0 } }, 'pre_tokenizer.length', RangeError],
    [{ ...BASE, pre_tokenizer: { type: 'FixedLength', length: -5 } }, 'pre_tokenizer.length', RangeError],
    [{ ...BASE, pre_tokenizer: { type: 'FixedLength', length: 1e300 } }, 'pre_tokenizer.length', RangeError],
    [{ ...BASE, decoder: { type: 'Strip', content: ' ', start: 1e12, stop: 0 } }, 'decoder.start', RangeError],
    [{ ...BASE, normalizer: { type: 'Sequence', normalizers: Array(10_000).fill({ type: 'NFC' }) } }, 'normalizer.normalizers', RangeError],
    [{ ...BASE, normalizer: nest(100) }, 'normalizer.normalizers[0]', RangeError],
    [{ ...BASE, model: { ...BASE.model, vocab: { ...BASE.model.vocab, [huge]: 9999 } } }, 'model.vocab', RangeError],
    [{ ...BASE, added_tokens: [{ id: 9999, content: huge, special: true }] }, 'added_tokens[0].content', RangeError],
    [{ ...BASE, model: { type: 'WordPiece', vocab: { a: 0, '[UNK]': 1 }, unk_token: '[UNK]', max_input_chars_per_word: 1e9 } }, 'model.max_input_chars_per_word', RangeError],
  ];
  for (const [json, field, Kind] of cases) {
    const { error } = await tryAll(field, json);
    assertNamed(error, field, field);
    assert.ok(error instanceof Kind, `${field}: ${error.name}`);
  }
});

test('Replaces that grow the text stop at the budget; text longer than the positions hold is refused before tokenizing', async () => {
  const grow = { type: 'Replace', pattern: { String: 'a' }, content: 'a'.repeat(200) };
  const { error } = await tryAll('growing Replaces', { ...BASE, normalizer: { type: 'Sequence', normalizers: Array(8).fill(grow) } });
  assert.equal(error, undefined, 'the file itself is fine');
  const tokenizer = await loadTokenizer({ json: JSON.stringify({ ...BASE, normalizer: { type: 'Sequence', normalizers: Array(8).fill(grow) } }), config: null }, 'loadModel');
  tokenizer.limitPositions(64);
  const grown = await timed('growing Replaces on "aaaa"', () => tokenizer.encode('aaaa', undefined, 'PretrainedLanguageModel.tokenize'));
  assert.ok(grown instanceof RangeError, String(grown));
  assert.match(grown.message, /^PretrainedLanguageModel\.tokenize: loadModel: tokenizer\.json: normalizer\.normalizers\[\d\]: this Replace made the text longer than/);

  // The budget: 64 positions × the longest token of the fixture; one character more is refused at once.
  const plain = await loadTokenizer({ json: JSON.stringify(BASE), config: null }, 'loadModel');
  const longest = Math.max(...Object.keys(BASE.model.vocab).map((t) => t.length), ...BASE.added_tokens.map((t) => t.content.length));
  plain.limitPositions(64);
  assert.ok(plain.encode('a'.repeat(64 * longest), undefined, 't').ids.length > 0);
  const refused = await timed('over the budget', () => plain.encode('a'.repeat(64 * longest + 1), undefined, 'PretrainedLanguageModel.forward'));
  assert.ok(refused instanceof RangeError);
  assert.equal(refused.message, `PretrainedLanguageModel.forward: text: expected at most ${(64 * longest).toLocaleString('en-US')} characters (this model's 64 positions × `
    + `${longest}, the most characters one token of its tokenizer stands for), got ${(64 * longest + 1).toLocaleString('en-US')}: it cannot fit; shorten it`);
  // A text and its pair count together.
  assert.throws(() => plain.encode('a'.repeat(32 * longest), 'b'.repeat(32 * longest + 1), 't'), RangeError);
});

test('a pattern run by re2js that would take over 1 s on a text stops with a RangeError naming it', async () => {
  // Quadratic across positions (each search reads to the end before it fails), yet fine from any one position.
  const json = { ...BASE, pre_tokenizer: { type: 'Sequence', pretokenizers: [split('\\p{L}*!|\\p{L}'), { ...BASE.pre_tokenizer, use_regex: false }] } };
  const tokenizer = await loadTokenizer({ json: JSON.stringify(json), config: null }, 'loadModel');
  tokenizer.limitPositions(1 << 20);
  assert.deepEqual(tokenizer.encode('ab!', undefined, 't').ids.length > 0, true);
  const error = await timed('quadratic in re2js', () => tokenizer.encode('a'.repeat(200_000), undefined, 'PretrainedLanguageModel.tokenize'));
  assert.ok(error instanceof RangeError, String(error));
  assert.match(error.message, new RegExp(`^PretrainedLanguageModel\\.tokenize: loadModel: tokenizer\\.json: pre_tokenizer\\.pretokenizers\\[0\\]\\.pattern\\.Regex: matching this pattern .* took over ${TokenizerBudget.MATCH_MS} ms`));
});

test('token ids and the post-processor\'s tokens are checked at load, and tokenizer_config.json is named for its own faults', async () => {
  const load = (json, config = null) => loadTokenizer({ json: JSON.stringify(json), config: config === null ? null : JSON.stringify(config), vocabSize: 268 }, 'loadModel');
  const refused = async (label, promise) => {
    try {
      await promise;
    } catch (error) {
      return error;
    }
    assert.fail(`${label}: loaded`);
  };
  const known = '<|endoftext|>'; // the fixture's added token, id 267
  const template = (single) => ({ type: 'TemplateProcessing', single, pair: single, special_tokens: {} });
  // Before 2026-12-06 each of these loaded, and failed later in another call: a NaN id in forward(), a raw
  // TypeError from the library in tokenize(), or null among tokenize()'s ids.
  const cases = [
    [{ ...BASE, added_tokens: [{ id: 2 ** 32, content: '<x>', special: true }] }, 'added_tokens[0].id', RangeError],
    [{ ...BASE, added_tokens: [{ id: -1, content: '<x>', special: true }] }, 'added_tokens[0].id', RangeError],
    [{ ...BASE, added_tokens: [{ id: '__proto__', content: '<x>' }] }, 'added_tokens[0].id', TypeError],
    [{ ...BASE, added_tokens: [{ content: '<x>' }] }, 'added_tokens[0].id', TypeError],
    [{ ...BASE, added_tokens: ['<x>'] }, 'added_tokens[0]', TypeError],
    [{ ...BASE, model: { ...BASE.model, vocab: { ...BASE.model.vocab, the: '3' } } }, 'model.vocab["the"]', TypeError],
    [{ ...BASE, model: { ...BASE.model, vocab: { ...BASE.model.vocab, the: 1.5 } } }, 'model.vocab["the"]', TypeError],
    [{ ...BASE, model: { ...BASE.model, vocab: { ...BASE.model.vocab, the: -5 } } }, 'model.vocab["the"]', RangeError],
    [{ ...BASE, post_processor: { type: 'TemplateProcessing', single: 'x', pair: [] } }, 'post_processor.single', TypeError],
    [{ ...BASE, post_processor: template([{ SpecialToken: { id: '<cls>', type_id: 0 } }]) }, 'post_processor.single[0].SpecialToken.id', TypeError],
    [{ ...BASE, post_processor: template([{ Sequence: { id: 'C', type_id: 0 } }]) }, 'post_processor.single[0].Sequence.id', TypeError],
    [{ ...BASE, post_processor: template([{ Sequence: { id: 'A', type_id: -1 } }]) }, 'post_processor.single[0].Sequence.type_id', RangeError],
    [{ ...BASE, post_processor: { type: 'RobertaProcessing', cls: 5, sep: null } }, 'post_processor.cls', TypeError],
    [{ ...BASE, post_processor: { type: 'BertProcessing', cls: [known, 2 ** 40], sep: [known, 267] } }, 'post_processor.cls[1]', RangeError],
    [{ ...BASE, post_processor: { type: 'Sequence', processors: [{ type: 'BertProcessing', cls: [known, 267], sep: ['<sep>', 3] }] } },
      'post_processor.processors[0].sep[0]', TypeError],
    // BPE's merges as Hugging Face's reader takes them, and the fields the library reads as switches.
    [{ ...BASE, model: { ...BASE.model, merges: [...BASE.model.merges, 'zz qq'] } }, 'model.merges[11]', TypeError],
    [{ ...BASE, model: { ...BASE.model, merges: ['abc'] } }, 'model.merges[0]', TypeError],
    [{ ...BASE, model: { ...BASE.model, merges: ['a b c'] } }, 'model.merges[0]', TypeError],
    [{ ...BASE, model: { ...BASE.model, merges: [['a', 'b']] } }, 'model.merges[0]', TypeError], // "ab" is no token of the fixture
    // The two formats mixed: the library reads the format of the first only, and would never apply the others.
    [{ ...BASE, model: { ...BASE.model, merges: [BASE.model.merges[0].split(' '), ...BASE.model.merges.slice(1)] } }, 'model.merges[1]', TypeError],
    [{ ...BASE, model: { ...BASE.model, byte_fallback: 'yes' } }, 'model.byte_fallback', TypeError],
    [{ ...BASE, model: { type: 'WordPiece', unk_token: '[UNK]', vocab: { '[UNK]': 0 }, fuse_unk: 'yes' } }, 'model.fuse_unk', TypeError],
    [{ ...BASE, model: { ...BASE.model, dropout: 'x' } }, 'model.dropout', TypeError],
    [{ ...BASE, pre_tokenizer: { type: 'Punctuation', behavior: 'Evil' } }, 'pre_tokenizer.behavior', TypeError],
    [{ ...BASE, pre_tokenizer: { type: 'Digits', individual_digits: 'x' } }, 'pre_tokenizer.individual_digits', TypeError],
  ];
  for (const [json, field, Kind] of cases) {
    const error = await refused(field, load(json));
    assertNamed(error, field, field);
    assert.ok(error instanceof Kind, `${field}: ${error.name}: ${error.message}`);
  }
  for (const [config, field] of [[[], '(the file)'], [null, '(the file)'], [{ additional_special_tokens: 'abc' }, 'additional_special_tokens'],
    [{ additional_special_tokens: [3] }, 'additional_special_tokens[0]'], [{ eos_token: 5 }, 'eos_token'], [{ remove_space: 'yes' }, 'remove_space']]) {
    const text = JSON.stringify(config);
    const error = await refused(text, loadTokenizer({ json: JSON.stringify(BASE), config: text, vocabSize: 268 }, 'loadModel'));
    assert.ok(error instanceof TypeError, `${text}: ${error.name}: ${error.message}`);
    assert.ok(error.message.startsWith(`loadModel: tokenizer_config.json: ${field}: expected `), `${text}: ${error.message}`);
  }
  // Merges in the array format, of tokens the fixture has: they load.
  await load({ ...BASE, model: { ...BASE.model, merges: BASE.model.merges.map((m) => m.split(' ')) } });
  // The same post-processor with tokens the file has: it loads, and adds them.
  const good = await load({ ...BASE, post_processor: template([{ SpecialToken: { id: known, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }]) },
    { eos_token: { content: known }, additional_special_tokens: [known] });
  assert.deepEqual(good.encode('the cat', undefined, 't').ids, [267, 266, 261]);
  assert.equal(good.eosTokenId, 267);
});

test('the two searches a file sets the cost of stop past their step budget; on real text they give the library\'s tokens', async () => {
  // WordPiece against single letters with words of 199 of them: the library tries every piece of a word from the
  // longest down, n³/6 steps a word, and took 8 s over 512 of them. Cut to the longest entry first, the search is
  // linear there; an entry of 199 characters that never matches brings the cube back, and the budget stops it.
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const vocab = { '[UNK]': 0 };
  [...letters].forEach((c, i) => { vocab[c] = 1 + i; vocab[`##${c}`] = 27 + i; });
  const wordPiece = (extra = {}) => ({ ...BASE, normalizer: null, pre_tokenizer: { type: 'WhitespaceSplit' }, decoder: null, post_processor: null, added_tokens: [],
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 200, vocab: { ...vocab, ...extra } } });
  const words = `${'a'.repeat(199)} `.repeat(512);
  const load = async (json) => {
    const tokenizer = await loadTokenizer({ json: JSON.stringify(json), config: null }, 'loadModel');
    tokenizer.limitPositions(4096);
    return tokenizer;
  };
  // Many added tokens load (the longest was once found by a spread into Math.max, past the stack at about 125,000).
  const many = Array.from({ length: 150_000 }, (_, i) => ({ id: 268 + i, content: `<x${i}>`, special: true }));
  const manyLoaded = await timed('150,000 added tokens', () => load({ ...BASE, added_tokens: [...BASE.added_tokens, ...many] }));
  assert.ok(!(manyLoaded instanceof Error), String(manyLoaded));
  const letterPieces = await timed('WordPiece, single letters', async () => (await load(wordPiece())).encode(words, undefined, 't').ids);
  assert.equal(letterPieces.length, 512 * 199);
  assert.deepEqual(letterPieces.slice(0, 3), [1, 27, 27]); // a ##a ##a …
  // An added token of 1,023 'a's and a 'b' against a text of 'a's: the splitter walked 1,023 characters at each.
  const added = { ...BASE, added_tokens: [...BASE.added_tokens, { id: 268, content: `${'a'.repeat(1023)}b`, special: true, normalized: false }] };
  for (const [json, text, field] of [[wordPiece({ [`${'b'.repeat(199)}`]: 53 }), words, 'tokenizer.json: model: WordPiece'],
    [added, 'a'.repeat(200_000), 'tokenizer.json: added_tokens: finding the added tokens']]) {
    const tokenizer = await load(json);
    const error = await timed(field, () => tokenizer.encode(text, undefined, 'LanguageModel.tokenize'));
    assert.ok(error instanceof RangeError, `${field}: ${error}`);
    assert.ok(error.message.startsWith(`LanguageModel.tokenize: loadModel: ${field}`), error.message);
    assert.match(error.message, /16,777,216 steps/);
    // The same tokenizer on ordinary text: within the budget, and the pieces the library's own search gives.
    const ordinary = 'the cat sat on the mat and then it went to sleep aaaab ab '.repeat(200);
    const { Tokenizer } = await import('@huggingface/tokenizers');
    assert.deepEqual(tokenizer.encode(ordinary, undefined, 't').ids, new Tokenizer(json, {}).encode(ordinary).ids);
  }
});

test('the two searches, counted, give the library\'s own tokens where added tokens overlap, words run long, and text has surrogate pairs', async () => {
  const { Tokenizer } = await import('@huggingface/tokenizers');
  const texts = ['<a><ab><abc> x<ab>y <a', 'unaffable runaway unbelievable 😀x😀 [UNK] ' + 'a'.repeat(30), 'a <ab> b\n<abc><abc> 中文<a>', ''];
  const added = (tokens) => tokens.map((content, i) => ({ id: 500 + i, content, special: i % 2 === 0, normalized: i % 2 === 1 }));
  const vocab = { '[UNK]': 0, un: 1, '##aff': 2, '##able': 3, run: 4, '##away': 5, '##believ': 6, a: 7, b: 8, x: 9, y: 10, '##a': 11, '##b': 12, '😀': 13, '##x': 14 };
  const wordPiece = (prefix) => ({ ...BASE, normalizer: null, pre_tokenizer: { type: 'BertPreTokenizer' }, decoder: null, post_processor: null,
    added_tokens: added(['<a>', '<ab>', '<abc>']),
    model: { type: 'WordPiece', unk_token: '[UNK]', ...(prefix === undefined ? {} : { continuing_subword_prefix: prefix }), max_input_chars_per_word: 20, vocab } });
  const cases = [
    ['BPE with overlapping added tokens', { ...BASE, added_tokens: [...BASE.added_tokens, ...added(['<a>', '<ab>', '<abc>', 'ab'])] }],
    ['WordPiece, prefix ##', wordPiece('##')],
    ['WordPiece, prefix null', wordPiece(null)],
    ['WordPiece, no prefix', wordPiece(undefined)],
    ['WordPiece, fuse_unk', { ...wordPiece('##'), model: { ...wordPiece('##').model, fuse_unk: true } }],
  ];
  for (const [label, json] of cases) {
    const ours = await loadTokenizer({ json: JSON.stringify(json), config: null }, 'loadModel');
    ours.limitPositions(4096);
    const library = new Tokenizer(json, {});
    for (const text of texts) {
      assert.deepEqual(ours.encode(text, undefined, 't').ids, library.encode(text).ids, `${label}: ${JSON.stringify(text)}`);
    }
  }
});

test('a good tokenizer loads and runs after all of the above', async () => {
  const { tokenizer } = await tryAll('the fixture', BASE);
  assert.deepEqual(tokenizer.encode('the cat sat on the mat', undefined, 't').ids, [266, 261, 263, 265, 258, 220, 76, 259]);
});

test('the known patterns run in linear time in JavaScript\'s engine on long adversarial texts', () => {
  const n = 200_000;
  const texts = ['a', 'A', '1', ' ', '\n', '\r\n', '!', '\u0301', '中', 'ab ', ' \n', ' !', 'a\u0301', "'s", 'A a', '1 ', '\t \n', '/'].map((unit) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n));
  texts.push(`${' '.repeat(n / 2)}x`, `${'a'.repeat(n / 2)}!`, `${' '.repeat(n / 2)}\n`);
  for (const { name, pattern } of KNOWN_PATTERNS) {
    const regexp = new SplitPreTokenizer({ type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: true }).pattern;
    for (const text of texts) {
      const t0 = performance.now();
      let count = 0;
      for (const m of text.matchAll(regexp)) count += m[0].length > 0 ? 1 : 0;
      const ms = performance.now() - t0;
      assert.ok(ms < 500, `${name} on ${JSON.stringify(text.slice(0, 6))}…: ${ms.toFixed(0)} ms for ${count} matches`);
    }
  }
});

test('through loadModel: a hostile tokenizer.json refuses the checkpoint by name; a good one is bounded by the model\'s positions', async () => {
  const { init, loadModel } = await import('attnscope');
  await init();
  const folder = new URL('../fixtures/hf/gpt2-lm/', import.meta.url);
  const files = Object.fromEntries(['config.json', 'model.safetensors', 'tokenizer_config.json'].map((f) => [f, new Uint8Array(readFileSync(new URL(f, folder)))]));
  const withTokenizer = (json) => ({ ...files, 'tokenizer.json': new TextEncoder().encode(JSON.stringify(json)) });
  for (const json of [{ ...BASE, pre_tokenizer: split('(?:[\\w\\s]+)+!') }, { ...BASE, normalizer: replace('(?:[\\w\\s]+)+!') }, { ...BASE, model: { ...BASE.model, type: 'Evil' } }]) {
    const error = await timed('loadModel', () => loadModel(withTokenizer(json)));
    assert.ok(error instanceof TypeError, String(error));
    assert.match(error.message, /^loadModel: tokenizer\.json: (pre_tokenizer|normalizer)\.pattern\.Regex: |^loadModel: tokenizer\.json: model\.type: /);
  }
  const model = await loadModel(withTokenizer(BASE));
  try {
    assert.ok(model.forward(SENTENCE.slice(0, 12)).logits);
    const longest = Math.max(...Object.keys(BASE.model.vocab).map((t) => t.length), ...BASE.added_tokens.map((t) => t.content.length));
    const most = model.config.maxPositions * longest;
    for (const call of [() => model.tokenize('a'.repeat(most + 1)), () => model.forward('a'.repeat(most + 1)), () => model.generate('a'.repeat(most + 1))]) {
      assert.throws(call, (e) => e instanceof RangeError && /^LanguageModel\.(tokenize|forward|generate): text: expected at most /.test(e.message));
    }
    assert.equal(model.detokenize([]), '');
  } finally {
    model.dispose();
  }
});
