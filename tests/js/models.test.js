// The trained models through the JS API against their PyTorch golden cases: tokenisers, every layer's attention,
// logits, and greedy decoding.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init, loadModel, LanguageModel, Seq2SeqModel, memoryUsage } from 'attnscope';
import { loadFixtureDir } from './fixtures.js';
import { maxRelativeError } from './helpers.js';

// Several float32 layers deep: 1e-4 of each tensor's largest magnitude (measured: about 1e-6).
const tolerance = 1e-4;
const fixtures = loadFixtureDir(fileURLToPath(new URL('../fixtures/models/', import.meta.url)));
const modelUrl = (name) => new URL(`../../models/${name}`, import.meta.url);
const layer = (t, l) => t.data.subarray(l * (t.data.length / t.shape[0]), (l + 1) * (t.data.length / t.shape[0]));
const lastRows = (t, first) => t.data.subarray(first * t.shape[1]);
const ids = (t) => Array.from(t.data);

before(() => init());

test('the model fixtures are all there', () => {
  assert.ok(fixtures.filter((c) => c.strs.kind === 'model_lm').length >= 3);
  assert.ok(fixtures.filter((c) => c.strs.kind === 'model_seq2seq').length >= 3);
});

for (const c of fixtures) {
  test(`${c.strs.model} matches PyTorch: ${c.name}`, async () => {
    const model = await loadModel(modelUrl(c.strs.model));
    try {
      if (c.strs.kind === 'model_lm') {
        assert.ok(model instanceof LanguageModel);
        const text = JSON.parse(c.strs.text_json);
        assert.deepEqual(model.tokenize(text).ids, ids(c.tensors.tokens), 'the JS tokenizer agrees with the training script');
        // An ablation case lists the (layer, head) pairs PyTorch ran switched off.
        const pairs = c.tensors.ablate ? c.tensors.ablate.data : [];
        const ablate = Array.from({ length: pairs.length / 2 }, (_, p) => ({ layer: pairs[2 * p], head: pairs[2 * p + 1] }));
        const out = model.forward(text, { ablate });
        assert.deepEqual(out.attention.shape, [c.ints.num_layers, c.ints.num_heads, c.ints.seq_len, c.ints.seq_len]);
        for (let l = 0; l < c.ints.num_layers; l++) {
          assert.ok(maxRelativeError(layer(out.attention, l), c.tensors[`attn_weights_${l}`].data) < tolerance, `layer ${l}`);
        }
        assert.ok(maxRelativeError(lastRows(out.logits, c.ints.logits_first_row), c.tensors.logits.data) < tolerance);
      } else {
        assert.ok(model instanceof Seq2SeqModel);
        const text = JSON.parse(c.strs.src_text_json);
        assert.deepEqual(model.tokenizeSource(text).ids, ids(c.tensors.src_tokens));
        const out = model.forward(text, ids(c.tensors.tokens));
        for (let l = 0; l < c.ints.num_enc_layers; l++) assert.ok(maxRelativeError(layer(out.encoderAttention, l), c.tensors[`enc_self_${l}`].data) < tolerance);
        for (let l = 0; l < c.ints.num_dec_layers; l++) {
          assert.ok(maxRelativeError(layer(out.decoderAttention, l), c.tensors[`dec_self_${l}`].data) < tolerance);
          assert.ok(maxRelativeError(layer(out.crossAttention, l), c.tensors[`dec_cross_${l}`].data) < tolerance);
        }
        assert.ok(maxRelativeError(lastRows(out.logits, c.ints.logits_first_row), c.tensors.logits.data) < tolerance);
        const translated = model.translate(text);
        assert.deepEqual(translated.outputIds, ids(c.tensors.expected_decoded));
        assert.equal(translated.text, c.strs.expected_text);
        assert.deepEqual(translated.crossAttention.shape, [c.ints.num_dec_layers, c.ints.num_heads, translated.outputIds.length, c.ints.src_len]);
      }
    } finally {
      model.dispose();
    }
  });
}

test('loading, running and disposing models leaks nothing; bad files and inputs give clear errors', async () => {
  const cycle = async () => {
    const lm = await loadModel(modelUrl('char-lm.safetensors'));
    lm.generate('abc', { maxNewTokens: 5 });
    assert.throws(() => lm.forward([0, 1, 99999]), { name: 'RangeError', message: new RegExp(`LanguageModel.forward: tokens\\[2\\]: expected a token id from 0 to ${lm.config.vocabSize - 1}, got 99999`) });
    assert.throws(() => lm.forward(5), { name: 'TypeError', message: /expected text or an array of token ids, got number 5/ });
    assert.throws(() => lm.forward(new Array(200).fill(2)), { name: 'RangeError', message: new RegExp(`expected from 1 to ${lm.config.maxLen} token ids \\(the model's limit\\), got 200`) });
    lm.dispose();
    assert.throws(() => lm.generate('abc'), /this model was disposed/);
    const s2s = await loadModel(modelUrl('dates-seq2seq.safetensors'));
    s2s.translate('the first of may nineteen eighty');
    assert.throws(() => s2s.translate('!!!'), { name: 'RangeError', message: /source: expected at least one word, got none/ });
    s2s.dispose();
  };
  await cycle(); // the first cycle may allocate once-only bookkeeping of the bindings
  const start = memoryUsage().heapBytesInUse;
  for (let i = 0; i < 3; i++) await cycle();
  assert.equal(memoryUsage().heapBytesInUse, start);

  await assert.rejects(loadModel(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])), { name: 'RangeError', message: /the file has 12 bytes|header length/ });
  await assert.rejects(loadModel(42), { name: 'TypeError', message: /expected an ArrayBuffer, a Uint8Array, or a URL/ });
});

test('loadModel resolves a relative string against the worker script where there is no document', async () => {
  // A module worker has location but no document; before, such strings resolved against file:/// and failed.
  const bytes = readFileSync(modelUrl('dates-seq2seq.safetensors'));
  const realFetch = globalThis.fetch;
  const requested = [];
  globalThis.location = { href: 'https://example.test/app/worker.js' };
  globalThis.fetch = async (url) => {
    requested.push(String(url));
    return new Response(bytes);
  };
  try {
    const model = await loadModel('models/dates-seq2seq.safetensors');
    model.dispose();
  } finally {
    delete globalThis.location;
    globalThis.fetch = realFetch;
  }
  assert.deepEqual(requested, ['https://example.test/app/models/dates-seq2seq.safetensors']);
});

test('loadModel: a relative string where nothing can be relative to (a blob: worker) is a TypeError naming it', async () => {
  globalThis.location = { href: 'blob:https://example.test/5f0c' };
  try {
    await assert.rejects(loadModel('models/dates-seq2seq.safetensors'), {
      name: 'TypeError', message: /^loadModel: source: expected an absolute URL or one relative to blob:https:\/\/example.test\/5f0c, got string "models\/dates-seq2seq/,
    });
  } finally {
    delete globalThis.location;
  }
});
