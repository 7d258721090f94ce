// The Gemma families (gemma, gemma2, gemma3_text): each config.json field they read that other families do not is
// refused by name when hostile (a TypeError or RangeError naming loadModel, config.json and the field), and changes
// the result when it changes (so none is read and then ignored). The fixtures' numbers against the float64 reference
// are in pretrained.test.js, which runs every case of tests/fixtures/hf.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { init, loadModel, memoryUsage } from 'attnscope';
import { maxRelativeError } from './helpers.js';

const fixtures = new URL('../fixtures/hf/', import.meta.url);
const folderOf = (name) => new URL(`${name}/`, fixtures);
const configOf = (name) => JSON.parse(readFileSync(new URL('config.json', folderOf(name)), 'utf8'));
const referenceOf = (name) => JSON.parse(readFileSync(new URL('reference.json', folderOf(name)), 'utf8'));
const filesOf = (name) => Object.fromEntries(readdirSync(folderOf(name)).filter((f) => f !== 'reference.json')
  .map((f) => [f, new Uint8Array(readFileSync(new URL(f, folderOf(name))))]));
const withConfig = (name, config) => ({ ...filesOf(name), 'config.json': new TextEncoder().encode(JSON.stringify(config)) });
const without = (config, key) => Object.fromEntries(Object.entries(config).filter(([k]) => k !== key));

before(() => init());

async function refusesAll(name, table) {
  const start = memoryUsage().heapBytesInUse;
  for (const [config, ErrorClass, message] of table) {
    await assert.rejects(loadModel(withConfig(name, config)), (e) => {
      assert.ok(e instanceof ErrorClass, `${e.name}: ${e.message}`);
      assert.match(e.message, /^loadModel: config\.json: /);
      assert.match(e.message, message);
      return true;
    });
  }
  assert.equal(memoryUsage().heapBytesInUse, start, 'nothing kept from the refused loads');
}

// The logits of the fixture's first input with `config` in place of its own.
async function logitsWith(name, config) {
  const model = await loadModel(withConfig(name, config));
  try {
    return model.forward(referenceOf(name).inputs[0].input_ids).logits.data;
  } finally {
    model.dispose();
  }
}
const reference = (name) => referenceOf(name).inputs[0].logits.data;

test('gemma: hostile values of its fields are refused by name', async () => {
  const c = configOf('gemma-mqa');
  await refusesAll('gemma-mqa', [
    [{ ...c, hidden_activation: 7 }, TypeError, /hidden_activation: expected a string, got a number 7/],
    [{ ...c, hidden_activation: 'swiglu' }, RangeError, /hidden_activation: "swiglu" is not supported/],
    [{ ...without(c, 'hidden_activation'), hidden_act: 'silu' }, RangeError, /hidden_act: "silu" is not supported without hidden_activation/],
    [{ ...without(c, 'hidden_activation'), hidden_act: ['gelu'] }, TypeError, /hidden_act: expected a string/],
    [{ ...c, head_dim: 7 }, RangeError, /head_dim: expected an even number/],
    [{ ...c, head_dim: 'eight' }, TypeError, /head_dim: expected an integer/],
    [{ ...c, head_dim: 0 }, RangeError, /head_dim: expected an integer from 1/],
    [{ ...c, num_key_value_heads: 3 }, RangeError, /num_key_value_heads: expected a divisor of num_attention_heads \(4\), got 3/],
    [{ ...c, attn_logit_softcapping: 50 }, RangeError, /attn_logit_softcapping: 50 is not supported/],
    [{ ...c, final_logit_softcapping: 30 }, RangeError, /final_logit_softcapping: 30 is not supported/],
    [{ ...c, sliding_window: 4 }, RangeError, /sliding_window: 4 is not supported/],
    [{ ...c, use_bidirectional_attention: true }, RangeError, /use_bidirectional_attention: true is not supported/],
    [{ ...c, use_bidirectional_attention: 'no' }, TypeError, /use_bidirectional_attention: expected a boolean/],
    [{ ...c, rope_parameters: { rope_theta: 10000 } }, RangeError, /rope_parameters: .* is not supported/],
    [{ ...c, partial_rotary_factor: 0.5 }, RangeError, /partial_rotary_factor: 0\.5 is not supported/],
    [{ ...c, rms_norm_eps: -1 }, RangeError, /rms_norm_eps: expected a number/],
    [{ ...c, tie_word_embeddings: 'yes' }, TypeError, /tie_word_embeddings: expected a boolean/],
    [{ ...c, attention_bias: 1 }, TypeError, /attention_bias: expected a boolean/],
  ]);
});

test('gemma: the activation is hidden_activation, else the tanh GELU whatever hidden_act says', async () => {
  const c = configOf('gemma-mqa');
  // hidden_act "gelu" beside hidden_activation is ignored: the fixture's reference ran the tanh GELU.
  assert.equal(c.hidden_act, 'gelu');
  assert.ok(maxRelativeError(await logitsWith('gemma-mqa', c), reference('gemma-mqa')) <= 1e-4);
  // hidden_activation "gelu" (erf) is read: the logits move away from the reference's.
  assert.ok(maxRelativeError(await logitsWith('gemma-mqa', { ...c, hidden_activation: 'gelu' }), reference('gemma-mqa')) > 1e-3);
  // The same weights without hidden_activation and with hidden_act "gelu" (the first configs): the tanh GELU again.
  assert.ok(maxRelativeError(await logitsWith('gemma-mqa', without(c, 'hidden_activation')), reference('gemma-mqa')) <= 1e-4);
});

test('gemma: the config is the core\'s, with its head_dim, its key/value heads and a tied head', async () => {
  const model = await loadModel(folderOf('gemma-mqa'));
  const c = configOf('gemma-mqa');
  assert.equal(model.config.family, 'gemma');
  assert.equal(model.config.headDim, c.head_dim);
  assert.equal(model.config.kvHeads, 1);
  assert.notEqual(c.head_dim * c.num_attention_heads, c.hidden_size);
  assert.equal(model.forward([2, 5, 7]).logits.shape[1], c.vocab_size);
  model.dispose();
});
