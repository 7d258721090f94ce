// Activation patching and mean ablation through the JS API (forward's keepHeads, patch, patchFrom, ablation) against
// tools/references/hf_patching_reference.py's float64 PyTorch runs, and the errors of a kept run that does not fit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadModel } from 'attnscope';
import { maxRelativeError } from './helpers.js';

const fixtures = new URL('../fixtures/hf/', import.meta.url);
const patchingOf = (name) => JSON.parse(readFileSync(new URL(`${name}/patching.json`, fixtures), 'utf8'));
const heads = (list) => list.map(([layer, head]) => ({ layer, head }));
const last = (logits) => logits.data.subarray(logits.data.length - logits.shape[1]);
const models = {};

before(async () => {
  await init();
  for (const name of ['gpt2-lm', 'llama-gqa']) models[name] = await loadModel(new URL(`${name}/`, fixtures));
});
after(() => Object.values(models).forEach((m) => m.dispose()));

for (const name of ['gpt2-lm', 'llama-gqa']) {
  test(`${name}: patched and mean-ablated logits match PyTorch (1e-4 of the largest)`, () => {
    const model = models[name];
    const p = patchingOf(name);
    const clean = model.forward(p.clean_ids, { keepHeads: true, needAttention: false });
    const { layers, heads: H, headDim } = model.config;
    assert.deepEqual(clean.heads.shape, [layers, p.clean_ids.length, H, headDim]);
    assert.ok(clean.heads.data instanceof Float32Array);
    assert.ok(maxRelativeError(last(clean.logits), p.clean_logits) < 1e-4);
    const plain = model.forward(p.corrupted_ids, { needAttention: false });
    assert.equal(plain.heads, null, 'no heads without keepHeads');
    assert.ok(maxRelativeError(last(plain.logits), p.corrupted_logits) < 1e-4);
    for (const run of p.patched) {
      const out = model.forward(p.corrupted_ids, { needAttention: false, patch: heads(run.heads), patchFrom: clean.heads });
      const error = maxRelativeError(last(out.logits), run.logits);
      assert.ok(error < 1e-4, `patched ${JSON.stringify(run.heads)}: error ${error}`);
    }
    for (const run of p.mean_ablated) {
      const out = model.forward(p.corrupted_ids, { needAttention: false, ablate: heads(run.heads), ablation: 'mean' });
      const error = maxRelativeError(last(out.logits), run.logits);
      assert.ok(error < 1e-4, `mean-ablated ${JSON.stringify(run.heads)}: error ${error}`);
    }
  });
}

test('gpt2-lm: the fixture texts tokenize to its ids, the answers to one token each', () => {
  const model = models['gpt2-lm'];
  const p = patchingOf('gpt2-lm');
  assert.deepEqual(model.tokenize(p.clean_text).ids, p.clean_ids);
  assert.deepEqual(model.tokenize(p.corrupted_text).ids, p.corrupted_ids);
  assert.deepEqual(p.answers.text.map((t) => model.tokenize(t).ids), p.answers.ids.map((id) => [id]));
});

test('patching nothing is the plain run bit for bit; every head gives the clean last position', () => {
  const model = models['llama-gqa'];
  const p = patchingOf('llama-gqa');
  const clean = model.forward(p.clean_ids, { keepHeads: true, needAttention: false });
  const plain = model.forward(p.corrupted_ids, { needAttention: false });
  assert.deepEqual(model.forward(p.corrupted_ids, { needAttention: false, patch: [], patchFrom: clean.heads }).logits.data, plain.logits.data);
  const every = [];
  for (let layer = 0; layer < model.config.layers; layer++) for (let head = 0; head < model.config.heads; head++) every.push({ layer, head });
  assert.deepEqual(model.forward(p.clean_ids, { needAttention: false, patch: every, patchFrom: clean.heads }).logits.data, clean.logits.data);
  // Into the corrupted prompt: its last token is the clean one's, and norms and MLPs act per position, so there
  // every input is the clean run's: the clean logits (to rounding).
  const all = model.forward(p.corrupted_ids, { needAttention: false, patch: every, patchFrom: clean.heads });
  assert.ok(maxRelativeError(last(all.logits), p.clean_logits) < 1e-4);
  // The kept heads are the caller's: changing them after the call changes nothing already returned, and a patch
  // reads them as they are at its call.
  clean.heads.data.fill(0);
  const zeroed = model.forward(p.clean_ids, { needAttention: false, patch: every, patchFrom: clean.heads });
  const ablated = model.forward(p.clean_ids, { needAttention: false, ablate: every });
  assert.deepEqual(zeroed.logits.data, ablated.logits.data);
});

test('a kept run that does not fit, flags out of range and wrong types are refused, naming the call and option', () => {
  const model = models['gpt2-lm'];
  const kept = model.forward([266, 261, 263], { keepHeads: true }).heads;
  const call = (options) => () => model.forward([266, 261], options);
  assert.throws(call({ patch: [{ layer: 0, head: 0 }], patchFrom: kept }),
    { name: 'RangeError', message: 'LanguageModel.forward: patchFrom: expected a kept run of 2 tokens (this request\'s), got one of 3' });
  assert.throws(call({ patch: [{ layer: 0, head: 0 }] }), { name: 'RangeError', message: /LanguageModel\.forward: patchFrom: expected a kept run's heads/ });
  assert.throws(call({ patch: [{ layer: 2, head: 0 }], patchFrom: kept }), { name: 'RangeError', message: /LanguageModel\.forward: options\.patch\[0\]\.layer/ });
  assert.throws(call({ patch: [{ layer: 0, head: 0 }], patchFrom: kept.data }), { name: 'TypeError', message: /LanguageModel\.forward: options\.patchFrom: expected a kept run's heads/ });
  assert.throws(call({ patch: [{ layer: 0, head: 0 }], patchFrom: { data: kept.data, shape: [2, 3, 2, 4] } }),
    { name: 'RangeError', message: /patchFrom: expected \[2, T, 2, 8\] \(a kept run of this model\), got another shape/ });
  assert.throws(call({ ablation: 'median' }), { name: 'RangeError', message: "LanguageModel.forward: options.ablation: expected 'zero' or 'mean', got 'median'" });
  assert.throws(call({ ablation: 1 }), { name: 'TypeError', message: /options\.ablation: expected 'zero' or 'mean', got/ });
  assert.throws(call({ keepHeads: 'yes' }), { name: 'TypeError', message: /options\.keepHeads/ });
});
