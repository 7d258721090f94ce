// The GRU encoder–decoders (kind rnn_seq2seq) through the JS API against PyTorch's golden cases
// (tests/fixtures/rnn, tools/references/make_rnn_fixtures.py), their errors, and files that lie.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { init, loadModel, RnnSeq2SeqModel, Seq2SeqModel } from 'attnscope';

const repo = new URL('../../', import.meta.url);
const fixture = (name) => JSON.parse(readFileSync(new URL(`tests/fixtures/rnn/${name}.json`, repo), 'utf8'));
const flat = (rows) => rows.flat();
const maxAbsDiff = (a, b) => {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return Number.isNaN(worst) ? Infinity : worst;
};

before(() => init());

for (const name of ['tiny-none', 'tiny-dot', 'dates-gru', 'dates-gru-attention']) {
  test(`${name} matches PyTorch (float64 from the float32 weights)`, async () => {
    const f = fixture(name);
    const model = await loadModel(new URL(f.model, repo));
    try {
      assert.ok(model instanceof RnnSeq2SeqModel);
      assert.ok(!(model instanceof Seq2SeqModel), 'not a transformer: its translate() returns other fields');
      assert.equal(model.kind, 'rnn_seq2seq');
      const dot = model.config.attention === 'dot';
      for (const c of f.cases) {
        const out = model.forward(c.source, c.target);
        assert.deepEqual(out.logits.shape, [c.target.length, model.config.targetVocabSize]);
        assert.ok(maxAbsDiff(out.logits.data, flat(c.logits)) < 1e-4);
        if (dot) assert.ok(maxAbsDiff(out.attention.data, flat(c.attention)) < 1e-5);
        else assert.equal(out.attention, null);
        const tr = model.translate(c.source, { maxSteps: model.config.maxTargetLen - 1 });
        assert.deepEqual(tr.outputIds, c.tokens);
        assert.ok(tr.context instanceof Float32Array);
        assert.equal(tr.context.length, model.config.hidden);
        assert.ok(maxAbsDiff(tr.context, c.context) < 1e-5);
        assert.deepEqual(tr.decoderStates.shape, [c.tokens.length, model.config.hidden]);
        assert.ok(maxAbsDiff(tr.decoderStates.data, flat(c.decoder_states)) < 1e-5);
        assert.deepEqual(tr.encoderStates.shape, [c.source.length, model.config.hidden]);
        if (dot) {
          assert.deepEqual(tr.attention.shape, [c.tokens.length, c.source.length]);
          assert.ok(maxAbsDiff(tr.attention.data, flat(c.translate_attention)) < 1e-5);
        } else {
          assert.equal(tr.attention, null);
        }
      }
    } finally {
      model.dispose();
    }
  });
}

test('the shipped GRU models translate text as PyTorch does, attention rows summing to 1', async () => {
  for (const file of ['dates-gru', 'dates-gru-attention']) {
    const f = fixture(file);
    assert.ok(f.texts.length >= 3);
    const model = await loadModel(new URL(f.model, repo));
    try {
      for (const { text, output } of f.texts) {
        const r = model.translate(text);
        assert.equal(r.text, output, `${file}: ${text}`);
        assert.deepEqual(r.sourceTokens, model.tokenizeSource(text).tokens);
        if (model.config.attention !== 'dot') continue;
        const S = r.sourceIds.length;
        assert.deepEqual(r.attention.shape, [r.outputIds.length, S]);
        for (let t = 0; t < r.outputIds.length; t++) {
          const sum = r.attention.data.subarray(t * S, (t + 1) * S).reduce((a, b) => a + b, 0);
          assert.ok(Math.abs(sum - 1) < 1e-5, 'each step\'s weights sum to 1');
        }
      }
      assert.equal(model.translate('the fifth of March 1990').sourceTokens.join(' '), 'the fifth of march 1990');
    } finally {
      model.dispose();
    }
  }
});

test('RnnSeq2SeqModel errors name the call, the field, what was expected and what was given', async () => {
  const model = await loadModel(new URL('tests/fixtures/rnn/tiny-dot.safetensors', repo));
  try {
    assert.throws(() => model.translate(''), { name: 'RangeError', message: 'RnnSeq2SeqModel.translate: source: expected at least one word, got none' });
    assert.throws(() => model.translate(5), { name: 'TypeError', message: /RnnSeq2SeqModel\.translate: source: expected text or an array of token ids, got/ });
    assert.throws(() => model.translate([11]), { name: 'RangeError', message: /source\[0\]: expected a token id from 0 to 10, got 11/ });
    assert.throws(() => model.translate([3], { maxSteps: 6 }), { name: 'RangeError', message: 'RnnSeq2SeqModel.translate: options.maxSteps: expected a whole number from 1 to 5, got 6' });
    assert.throws(() => model.translate([3], { maxSteps: 0.5 }), { name: 'RangeError', message: /options\.maxSteps: expected a whole number from 1 to 5, got 0\.5/ });
    assert.throws(() => model.translate([3], { maxSteps: '2' }), { name: 'TypeError', message: /options\.maxSteps: expected a whole number, got string "2"/ });
    assert.throws(() => model.translate([3], { beam: 2 }), { name: 'TypeError', message: /options/ });
    assert.throws(() => model.forward([3], [1, 1, 1, 1, 1, 1, 1]), { name: 'RangeError', message: /target: expected from 1 to 6 token ids/ });
    assert.ok(model.translate([3], { maxSteps: 1 }).outputIds.length === 1);
  } finally {
    model.dispose();
  }
  assert.throws(() => model.translate([3]), /RnnSeq2SeqModel\.translate: this model was disposed/);
});

test('rnn_seq2seq files that lie are refused by loadModel with the field named', async () => {
  const bytes = readFileSync(new URL('tests/fixtures/rnn/tiny-none.safetensors', repo));
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  const withConfig = (edit) => {
    const h = structuredClone(header);
    const c = JSON.parse(h.__metadata__.config);
    edit(c);
    h.__metadata__.config = JSON.stringify(c);
    const text = Buffer.from(JSON.stringify(h));
    const out = Buffer.alloc(8 + text.length + bytes.length - 8 - n);
    out.writeBigUInt64LE(BigInt(text.length));
    text.copy(out, 8);
    bytes.copy(out, 8 + text.length, 8 + n);
    return new Uint8Array(out);
  };
  await assert.rejects(loadModel(withConfig((c) => { c.attention = 'dot'; })), { name: 'RangeError', message: /'combine\.weight'/ });
  await assert.rejects(loadModel(withConfig((c) => { c.hidden = 2 ** 32; })), { name: 'RangeError', message: /config\.hidden/ });
  await assert.rejects(loadModel(withConfig((c) => { c.attention = 7; })), { name: 'TypeError', message: /config\.attention/ });
  assert.ok(existsSync(new URL('models/dates-gru.safetensors', repo)));
});
