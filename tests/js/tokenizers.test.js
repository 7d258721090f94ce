// The JS tokenisers (LanguageModel.tokenize, Seq2SeqModel.tokenizeSource) against the cases every implementation
// shares, tests/fixtures/tokenizer_vectors.json (the Python side: tests/python/test_tokenizers.py).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadModel } from 'attnscope';

const vectors = JSON.parse(readFileSync(new URL('../fixtures/tokenizer_vectors.json', import.meta.url), 'utf8'));
const modelUrl = (file) => new URL(`../../${file}`, import.meta.url);

before(() => init());

test('codepoint: LanguageModel.tokenize agrees with the shared vectors', async () => {
  const { model: file, cases } = vectors.codepoint;
  assert.ok(cases.length > 0);
  const model = await loadModel(modelUrl(file));
  try {
    const { tokens, specials, unkId: unk, bosId: bos } = model.vocab;
    const id = (t) => (t === '<unk>' ? unk : t === '<bos>' ? bos : tokens.indexOf(t, specials.length));
    for (const c of cases) {
      const expected = c.tokens.map(id);
      assert.ok(!expected.includes(-1), `${c.why}: every expected token is in the vocabulary`);
      assert.deepEqual(model.tokenize(c.text).ids, expected, c.why);
    }
  } finally {
    model.dispose();
  }
});

test('words_ascii_lower: Seq2SeqModel.tokenizeSource agrees with the shared vectors', async () => {
  const { model: file, cases } = vectors.words_ascii_lower;
  assert.ok(cases.length > 0);
  const model = await loadModel(modelUrl(file));
  try {
    const { sourceTokens: tokens, sourceUnkId: unk } = model.vocab;
    const id = (t) => (t === '<unk>' ? unk : tokens.indexOf(t, 2));
    for (const c of cases) {
      const expected = c.tokens.map(id);
      assert.ok(!expected.includes(-1), `${c.why}: every expected token is in the vocabulary`);
      const got = model.tokenizeSource(c.text);
      assert.deepEqual(got.ids, expected, c.why);
      assert.deepEqual(got.tokens, c.words.slice(0, c.tokens.length), c.why);
      assert.equal(got.wordCount, c.words.length, `${c.why}: wordCount counts the words before the cut`);
    }
  } finally {
    model.dispose();
  }
});
