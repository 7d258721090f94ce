// Hugging Face encoder–decoders (BART, Marian, T5; tests/fixtures/hf/seq2seq-cases.json) through loadModel as
// Seq2SeqModel: forward's logits and its three attentions against the float64 reference written from HF's
// modeling_bart.py, modeling_marian.py and modeling_t5.py, translate against the reference's greedy tokens, trace of
// each attention, text through a checkpoint's tokenizer.json, a Marian folder with only SentencePiece files, and every
// config field they read refused by name when hostile.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { init, loadModel, memoryUsage, Seq2SeqModel, supportedFamilies } from 'attnscope';
import { maxRelativeError } from './helpers.js';

const fixtures = new URL('../fixtures/hf/', import.meta.url);
// The families read so far; each case of seq2seq-cases.json names its family.
const FAMILIES = ['bart', 'marian', 't5'];
const cases = JSON.parse(readFileSync(new URL('seq2seq-cases.json', fixtures), 'utf8')).filter((c) => FAMILIES.includes(c.family));
const folderOf = (name) => new URL(`${name}/`, fixtures);
const referenceOf = (name) => JSON.parse(readFileSync(new URL('reference.json', folderOf(name)), 'utf8'));
const configOf = (name) => JSON.parse(readFileSync(new URL('config.json', folderOf(name)), 'utf8'));
const filesOf = (name) => Object.fromEntries(readdirSync(folderOf(name)).filter((f) => f !== 'reference.json')
  .map((f) => [f, new Uint8Array(readFileSync(new URL(f, folderOf(name))))]));
const maxAbsoluteError = (a, b) => (a.length !== b.length ? Infinity : a.reduce((w, x, i) => Math.max(w, Math.abs(x - b[i]) || (Number.isNaN(x) ? Infinity : 0)), 0));
const row = (map, layer, head, query) => {
  const [, H, T, S] = map.shape;
  const at = ((layer * H + head) * T + query) * S;
  return map.data.slice(at, at + S);
};

before(() => init());

test('every encoder-decoder family has fixtures, and the registry reads it', () => {
  assert.deepEqual([...new Set(cases.map((c) => c.family))].sort(), [...FAMILIES].sort());
  for (const family of FAMILIES) assert.ok(supportedFamilies().some((f) => f.modelType === family), family);
});

for (const { case: name, family } of cases) {
  test(`${name}: Seq2SeqModel; logits to 1e-4, encoder, decoder and cross-attention to 2e-5; translate's tokens; trace`, async () => {
    const model = await loadModel(folderOf(name));
    try {
      assert.ok(model instanceof Seq2SeqModel);
      assert.equal(model.config.family, family);
      assert.equal(model.config.hasCrossAttention, true);
      const reference = referenceOf(name);
      const config = configOf(name);
      assert.equal(model.architecture.decoderStartTokenId, config.decoder_start_token_id);
      assert.equal(model.architecture.eosTokenId, config.eos_token_id);
      for (const input of reference.inputs) {
        assert.equal(input.target_ids[0], config.decoder_start_token_id, 'the target starts with the start token');
        const out = model.forward(input.source_ids, input.target_ids);
        assert.deepEqual(out.logits.shape, input.logits.shape);
        const logitError = maxRelativeError(out.logits.data, input.logits.data);
        assert.ok(logitError <= 1e-4, `logits error ${logitError}`);
        for (const [mine, theirs] of [['encoderAttention', 'encoder_attention'], ['decoderAttention', 'decoder_attention'], ['crossAttention', 'cross_attention']]) {
          assert.deepEqual(out[mine].shape, input[theirs].shape, mine);
          const error = maxAbsoluteError(out[mine].data, input[theirs].data);
          assert.ok(error <= 2e-5, `${mine} error ${error}`);
        }
        // Cross-attention is target rows × source columns.
        assert.deepEqual(out.crossAttention.shape.slice(2), [input.target_ids.length, input.source_ids.length]);
        const [L, H, T] = out.crossAttention.shape;
        const cross = model.trace(input.source_ids, { target: input.target_ids, attention: 'cross', layer: L - 1, head: H - 1, query: T - 1 });
        assert.ok(maxAbsoluteError(cross.weights.data, row(input.cross_attention, L - 1, H - 1, T - 1)) <= 2e-5, 'cross trace');
        assert.deepEqual(cross.keyInput.shape, [input.source_ids.length, model.architecture.encoder.hiddenSize], 'keys from the encoder output');
        const decoder = model.trace(input.source_ids, { target: input.target_ids, attention: 'decoder', layer: 0, head: 0, query: T - 1 });
        assert.ok(maxAbsoluteError(decoder.weights.data, row(input.decoder_attention, 0, 0, T - 1)) <= 2e-5, 'decoder trace');
        const S = input.source_ids.length;
        const encoder = model.trace(input.source_ids, { attention: 'encoder', layer: 0, head: 1, query: S - 1 });
        assert.ok(maxAbsoluteError(encoder.weights.data, row(input.encoder_attention, 0, 1, S - 1)) <= 2e-5, 'encoder trace');
      }
      const { source_ids: source, max_steps: maxSteps, tokens } = reference.translate;
      const t = model.translate(source, { maxSteps });
      assert.deepEqual(t.outputIds, tokens, 'greedy tokens');
      assert.deepEqual(t.crossAttention.shape.slice(2), [tokens.length, source.length]);
      // translate's first step is forward's first row: the same cross-attention over the source.
      const first = model.forward(source, [config.decoder_start_token_id]);
      assert.ok(maxAbsoluteError(row(t.crossAttention, 0, 0, 0), row(first.crossAttention, 0, 0, 0)) <= 1e-6);
    } finally {
      model.dispose();
    }
  });
}

test('BART with its tokenizer.json: text in, the tokenizer\'s ids as the source, text out', async () => {
  const model = await loadModel(folderOf('bart-cg'));
  const reference = referenceOf('bart-cg');
  assert.equal(model.hasTokenizer, true);
  const t = model.translate(reference.text, { maxSteps: reference.translate.max_steps });
  assert.deepEqual(t.sourceIds, reference.translate.source_ids);
  assert.deepEqual(t.sourceTokens.slice(0, 2), ['the', '␣cat']);
  assert.deepEqual(t.outputIds, reference.translate.tokens);
  assert.equal(typeof t.text, 'string');
  const out = model.forward(reference.text, reference.inputs[0].target_ids);
  assert.ok(maxRelativeError(out.logits.data, reference.inputs[0].logits.data) <= 1e-4);
  model.dispose();
});

test('T5 with its Unigram tokenizer.json (Metaspace, </s> appended): text in, the tokenizer\'s ids, readable tokens', async () => {
  const model = await loadModel(folderOf('t5-relu'));
  const reference = referenceOf('t5-relu');
  const t = model.translate(reference.text, { maxSteps: reference.translate.max_steps });
  assert.deepEqual(t.sourceIds, reference.translate.source_ids);
  assert.deepEqual(t.sourceTokens, ['␣the', '␣cat', '␣sat', '␣on', '␣the', '␣mat', '</s>']);
  assert.deepEqual(t.outputIds, reference.translate.tokens);
  model.dispose();
});

test('a Marian folder with only source.spm and target.spm opens with token ids; text is refused, saying why', async () => {
  const model = await loadModel(filesOf('marian-mt'));
  assert.equal(model.hasTokenizer, false);
  assert.throws(() => model.translate('Hello'), { name: 'TypeError', message: /^Seq2SeqModel\.translate: this checkpoint came without tokenizer\.json, so it takes token ids/ });
  const t = model.translate([5, 17, 40], { maxSteps: 2 });
  assert.equal(t.text, null);
  assert.equal(t.outputTokens.length, t.outputIds.length);
  model.dispose();
});

test('Marian: final_logits_bias of another shape than [1, vocab] is refused by name; memory stays flat', async () => {
  const start = memoryUsage().heapBytesInUse;
  const files = filesOf('marian-mt');
  // The header names final_logits_bias [1, 48]; as [48] it is not the buffer's shape.
  const bytes = files['model.safetensors'];
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  header.final_logits_bias.shape = [48];
  const text = new TextEncoder().encode(JSON.stringify(header).padEnd(n, ' '));
  const edited = new Uint8Array(bytes);
  edited.set(text, 8);
  await assert.rejects(loadModel({ ...files, 'model.safetensors': edited }),
    { name: 'RangeError', message: /^loadModel: model\.safetensors: 'final_logits_bias': expected shape \[1, 48\] \(from config\.json\), got \[48\]$/ });
  assert.equal(memoryUsage().heapBytesInUse, start);
});

const withConfig = (name, config) => ({ ...filesOf(name), 'config.json': new TextEncoder().encode(JSON.stringify(config)) });

test('every config.json field the encoder-decoders read: a hostile value is a TypeError or RangeError naming loadModel, config.json and the field', async () => {
  const bart = configOf('bart-scaled');
  const marian = configOf('marian-mt');
  const t5 = configOf('t5-relu');
  const table = [
    ['bart-scaled', { ...bart, d_model: '16' }, TypeError, 'd_model'],
    ['bart-scaled', { ...bart, encoder_layers: 0 }, RangeError, 'encoder_layers'],
    ['bart-scaled', { ...bart, decoder_layers: 1.5 }, RangeError, 'decoder_layers'],
    ['bart-scaled', { ...bart, encoder_attention_heads: 3 }, RangeError, 'encoder_attention_heads'],
    ['bart-scaled', { ...bart, decoder_attention_heads: null, d_model: 8 }, RangeError, 'decoder_attention_heads'],
    ['bart-scaled', { ...bart, encoder_ffn_dim: true }, TypeError, 'encoder_ffn_dim'],
    ['bart-scaled', { ...bart, decoder_ffn_dim: -1 }, RangeError, 'decoder_ffn_dim'],
    ['bart-scaled', { ...bart, max_position_embeddings: 0 }, RangeError, 'max_position_embeddings'],
    ['bart-scaled', { ...bart, vocab_size: 3e8 }, RangeError, 'vocab_size'],
    ['bart-scaled', { ...bart, activation_function: 'tanh' }, RangeError, 'activation_function'],
    ['bart-scaled', { ...bart, scale_embedding: 1 }, TypeError, 'scale_embedding'],
    ['bart-scaled', { ...bart, tie_word_embeddings: 'no' }, TypeError, 'tie_word_embeddings'],
    ['bart-scaled', { ...bart, is_encoder_decoder: false }, RangeError, 'is_encoder_decoder'],
    ['bart-scaled', { ...bart, decoder_start_token_id: 48 }, RangeError, 'decoder_start_token_id'],
    ['bart-scaled', { ...bart, eos_token_id: '2' }, TypeError, 'eos_token_id'],
    ['bart-scaled', { ...bart, architectures: ['MarianMTModel'] }, RangeError, 'architectures'],
    ['marian-mt', { ...marian, share_encoder_decoder_embeddings: false }, RangeError, 'share_encoder_decoder_embeddings'],
    ['marian-mt', { ...marian, decoder_vocab_size: 40 }, RangeError, 'decoder_vocab_size'],
    ['marian-mt', { ...marian, decoder_start_token_id: null, pad_token_id: 58100 }, RangeError, 'pad_token_id'],
    ['marian-mt', { ...marian, scale_embedding: 'true' }, TypeError, 'scale_embedding'],
    ['t5-relu', { ...t5, d_kv: 0 }, RangeError, 'd_kv'],
    ['t5-relu', { ...t5, num_heads: '3' }, TypeError, 'num_heads'],
    ['t5-relu', { ...t5, d_ff: 0 }, RangeError, 'd_ff'],
    ['t5-relu', { ...t5, num_layers: -2 }, RangeError, 'num_layers'],
    ['t5-relu', { ...t5, num_decoder_layers: 0 }, RangeError, 'num_decoder_layers'],
    ['t5-relu', { ...t5, relative_attention_num_buckets: 3 }, RangeError, 'relative_attention_num_buckets'],
    ['t5-relu', { ...t5, relative_attention_max_distance: 2 }, RangeError, 'relative_attention_max_distance'],
    ['t5-relu', { ...t5, layer_norm_epsilon: 'small' }, TypeError, 'layer_norm_epsilon'],
    ['t5-relu', { ...t5, feed_forward_proj: 'gated-tanh' }, RangeError, 'feed_forward_proj'],
    ['t5-relu', { ...t5, feed_forward_proj: ['relu'] }, TypeError, 'feed_forward_proj'],
    ['t5-relu', { ...t5, is_gated_act: true }, RangeError, 'is_gated_act'],
    ['t5-relu', { ...t5, dense_act_fn: 'silu' }, RangeError, 'dense_act_fn'],
    ['t5-relu', { ...t5, n_positions: 0 }, RangeError, 'n_positions'],
    ['t5-relu', { ...t5, tie_word_embeddings: 0 }, TypeError, 'tie_word_embeddings'],
    ['t5-relu', { ...t5, eos_token_id: 48 }, RangeError, 'eos_token_id'],
  ];
  const start = memoryUsage().heapBytesInUse;
  for (const [name, bad, ErrorClass, field] of table.filter(([name]) => FAMILIES.includes(name.split('-')[0]))) {
    await assert.rejects(loadModel(withConfig(name, bad)),
      (e) => e instanceof ErrorClass && e.message.startsWith(`loadModel: config.json: ${field}`), `${name} ${field}`);
  }
  assert.equal(memoryUsage().heapBytesInUse, start);
  // The module stays usable.
  const model = await loadModel(folderOf(cases[0].case));
  assert.ok(model.forward([1, 2], [0]).logits);
  model.dispose();
});
