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
  const error = async (config) => maxRelativeError(await logitsWith('gemma-mqa', config), reference('gemma-mqa'));
  // The erf and tanh GELUs differ by about 1e-4 of the largest logit here, float32 rounding by about 1e-7 (2e-5
  // leaves room for the relaxed-SIMD build): the bounds tell the two apart.
  // hidden_act "gelu" beside hidden_activation is ignored: the fixture's reference ran the tanh GELU.
  assert.equal(c.hidden_act, 'gelu');
  assert.ok(await error(c) <= 2e-5);
  // hidden_activation is read: "gelu" (erf) and "relu" move the logits away from the reference's.
  assert.ok(await error({ ...c, hidden_activation: 'gelu' }) > 5e-5);
  assert.ok(await error({ ...c, hidden_activation: 'relu' }) > 1e-2);
  // The same weights without hidden_activation and with hidden_act "gelu" (the first configs): the tanh GELU again.
  assert.ok(await error(without(c, 'hidden_activation')) <= 2e-5);
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

test('gemma2: hostile values of its fields are refused by name', async () => {
  const c = configOf('gemma2-softcap');
  await refusesAll('gemma2-softcap', [
    [{ ...c, attn_logit_softcapping: 0 }, RangeError, /attn_logit_softcapping: expected a number above 0/],
    [{ ...c, attn_logit_softcapping: -50 }, RangeError, /attn_logit_softcapping: expected a number above 0/],
    [{ ...c, attn_logit_softcapping: '50' }, TypeError, /attn_logit_softcapping: expected a number, got a string/],
    [{ ...c, final_logit_softcapping: 0 }, RangeError, /final_logit_softcapping: expected a number above 0/],
    [{ ...c, final_logit_softcapping: true }, TypeError, /final_logit_softcapping: expected a number, got a boolean/],
    [{ ...c, query_pre_attn_scalar: 0 }, RangeError, /query_pre_attn_scalar: expected a number from 1, got /],
    // 1e-300 passed the old floor of 0: a scale of 1e150 made every score infinite and every output NaN.
    [{ ...c, query_pre_attn_scalar: 1e-300 }, RangeError, /query_pre_attn_scalar: expected a number from 1, got /],
    [{ ...c, query_pre_attn_scalar: [256] }, TypeError, /query_pre_attn_scalar: expected a number/],
    [{ ...c, sliding_window: 0 }, RangeError, /sliding_window: expected an integer from 1/],
    [{ ...c, sliding_window: 2.5 }, RangeError, /sliding_window: expected an integer/],
    [{ ...c, sliding_window: null }, RangeError, /sliding_window: null is not supported \(sliding layers need a window\)/],
    [{ ...c, sliding_window: '4096' }, TypeError, /sliding_window: expected an integer, got a string/],
    [{ ...c, layer_types: 'sliding' }, TypeError, /layer_types: expected an array of strings/],
    [{ ...c, layer_types: ['full_attention'] }, RangeError, /layer_types: expected 3 entries \(num_hidden_layers\), got 1/],
    [{ ...c, layer_types: ['full_attention', 'full_attention', 'chunked_attention'] }, RangeError, /layer_types\[2\]: "chunked_attention" is not supported/],
    [{ ...c, layer_types: [0, 1, 0] }, TypeError, /layer_types\[0\]: expected a string/],
    [{ ...c, hidden_activation: 'gelu_fast' }, RangeError, /hidden_activation: "gelu_fast" is not supported/],
    [{ ...c, num_attention_heads: 16 }, RangeError, /num_attention_heads: expected a divisor of hidden_size \(24\), got 16/],
    [{ ...c, use_bidirectional_attention: true }, RangeError, /use_bidirectional_attention: true is not supported/],
    [{ ...c, rope_parameters: { sliding_attention: {} } }, RangeError, /rope_parameters: .* is not supported/],
  ]);
});

test('gemma2: layers 0 and 2 slide (window 3), layer 1 is global; caps, scalar and layer_types are read', async () => {
  const c = configOf('gemma2-softcap');
  const model = await loadModel(folderOf('gemma2-softcap'));
  assert.deepEqual(model.config.window, [c.sliding_window, null, c.sliding_window]);
  const ids = referenceOf('gemma2-softcap').inputs[0].input_ids;
  const T = ids.length;
  const { attention, logits } = model.forward(ids);
  const heads = c.num_attention_heads;
  const weight = (layer, head, q, k) => attention.data[((layer * heads + head) * T + q) * T + k];
  for (let head = 0; head < heads; head++) {
    assert.equal(weight(0, head, T - 1, T - 1 - c.sliding_window), 0, 'layer 0: outside the window');
    assert.equal(weight(2, head, T - 1, T - 1 - c.sliding_window), 0, 'layer 2: outside the window');
  }
  assert.ok([...Array(heads).keys()].some((head) => weight(1, head, T - 1, 0) > 1e-6), 'layer 1 sees the first key');
  assert.ok(Math.max(...logits.data.map(Math.abs)) < c.final_logit_softcapping, 'logits within the cap');
  model.dispose();
  const ref = reference('gemma2-softcap');
  for (const change of [{ attn_logit_softcapping: null }, { final_logit_softcapping: null }, { query_pre_attn_scalar: 8 },
    { layer_types: ['full_attention', 'full_attention', 'full_attention'] }]) {
    assert.ok(maxRelativeError(await logitsWith('gemma2-softcap', { ...c, ...change }), ref) > 1e-3, JSON.stringify(change));
  }
  // Absent caps are the class's 50 and 30, not none: gemma2-defaults has no final_logit_softcapping and matches.
  const d = configOf('gemma2-defaults');
  assert.equal('final_logit_softcapping' in d, false);
  assert.ok(maxRelativeError(await logitsWith('gemma2-defaults', { ...d, final_logit_softcapping: 30 }), reference('gemma2-defaults')) <= 1e-4);
  assert.ok(maxRelativeError(await logitsWith('gemma2-defaults', { ...d, final_logit_softcapping: null }), reference('gemma2-defaults')) > 1e-4);
});

test('gemma3_text: hostile values of its fields are refused by name', async () => {
  const c = configOf('gemma3-pattern');
  await refusesAll('gemma3-pattern', [
    [{ ...c, rope_local_base_freq: 1 }, RangeError, /rope_local_base_freq: expected a number above 1/],
    [{ ...c, rope_local_base_freq: '1e4' }, TypeError, /rope_local_base_freq: expected a number, got a string/],
    [{ ...c, sliding_window_pattern: 0 }, RangeError, /sliding_window_pattern: expected an integer from 1/],
    [{ ...c, sliding_window_pattern: 'six' }, TypeError, /sliding_window_pattern: expected an integer/],
    [{ ...c, rope_theta: 0.5 }, RangeError, /rope_theta: expected a number above 1/],
    [{ ...c, rope_scaling: { rope_type: 'yarn', factor: 2 } }, RangeError, /rope_scaling\.rope_type: "yarn" is not supported/],
    [{ ...c, rope_scaling: { rope_type: 'linear' } }, RangeError, /rope_scaling\.factor: missing/],
    [{ ...c, layer_types: ['sliding_attention', 'full_attention'] }, RangeError, /layer_types: expected 4 entries/],
    [{ ...c, attn_logit_softcapping: 0 }, RangeError, /attn_logit_softcapping: expected a number above 0/],
    [{ ...c, sliding_window: null }, RangeError, /sliding_window: null is not supported/],
    [{ ...c, head_dim: 5 }, RangeError, /head_dim: expected an even number/],
  ]);
});

test('gemma3_text: the pattern picks the sliding layers; local and global rotary bases, scaling and q/k norms are read', async () => {
  const c = configOf('gemma3-pattern');
  const model = await loadModel(folderOf('gemma3-pattern'));
  assert.deepEqual(model.config.window, [3, 3, null, 3]); // sliding_window_pattern 3: layer 2 is global
  assert.equal(model.config.qkNorm, true);
  model.dispose();
  const ref = reference('gemma3-pattern');
  for (const change of [{ rope_local_base_freq: 10000 }, { rope_scaling: null }, { sliding_window_pattern: 2 }, { rope_theta: 100 }]) {
    assert.ok(maxRelativeError(await logitsWith('gemma3-pattern', { ...c, ...change }), ref) > 1e-3, JSON.stringify(change));
  }
  // layer_types wins over sliding_window_pattern, as in Gemma3TextConfig.
  const types = ['sliding_attention', 'sliding_attention', 'full_attention', 'sliding_attention'];
  assert.ok(maxRelativeError(await logitsWith('gemma3-pattern', { ...c, layer_types: types, sliding_window_pattern: 2 }), ref) <= 1e-4);
  // gemma3-bf16 has no rope_theta: the class's 1e6, not Llama's 10000.
  const b = configOf('gemma3-bf16');
  assert.equal('rope_theta' in b, false);
  assert.ok(maxRelativeError(await logitsWith('gemma3-bf16', { ...b, rope_theta: 1e6 }), reference('gemma3-bf16')) <= 1e-4);
  assert.ok(maxRelativeError(await logitsWith('gemma3-bf16', { ...b, rope_theta: 10000 }), reference('gemma3-bf16')) > 1e-4);
});

test('trace on a soft-capped model: its cap, and weights that are the softmax of the capped scaled scores', async () => {
  const c = configOf('gemma2-softcap');
  const model = await loadModel(folderOf('gemma2-softcap'));
  const { input_ids: ids, attention } = referenceOf('gemma2-softcap').inputs[0];
  const T = ids.length;
  for (const [layer, head, query] of [[0, 1, T - 1], [1, 3, T - 2]]) {
    const t = model.trace(ids, { layer, head, query });
    assert.equal(t.softcap, c.attn_logit_softcapping);
    assert.ok(Math.abs(t.scale - c.query_pre_attn_scalar ** -0.5) < 1e-7, `scale ${t.scale}`);
    // Computed here from the trace's own scores: cap·tanh(s·scale / cap), the mask, the softmax.
    const capped = Array.from(t.scores.data, (s, k) => (t.visible[k] ? t.softcap * Math.tanh((s * t.scale) / t.softcap) : -Infinity));
    const top = Math.max(...capped);
    const sum = capped.reduce((a, s) => a + Math.exp(s - top), 0);
    const expected = capped.map((s) => Math.exp(s - top) / sum);
    assert.ok(Math.max(...expected.map((w, k) => Math.abs(w - t.weights.data[k]))) <= 1e-6);
    const row = ((layer * c.num_attention_heads + head) * T + query) * T;
    assert.ok(Math.max(...expected.map((w, k) => Math.abs(w - attention.data[row + k]))) <= 2e-5, 'the reference row');
  }
  model.dispose();
  const uncapped = await loadModel(folderOf('gemma3-pattern'));
  assert.equal(uncapped.trace([2, 5, 7], { layer: 0, head: 0, query: 2 }).softcap, 0);
  uncapped.dispose();
});
