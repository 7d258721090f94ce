// Head ablation through the model API: `{ ablate: [{ layer, head }] }` switches heads off for a forward pass, a
// generation or a translation. Checked against the same model file with that layer's out_proj.weight zeroed (the
// head's output can then reach nothing: the effect ablation must have), and for its argument errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadModel } from 'attnscope';
import { maxRelativeError, shippedModel, useShippedModels } from './helpers.js';

let lm;
let s2s;
useShippedModels((models) => ({ lm, s2s } = models));

/** The file's bytes with columns [first, first + count) of every row of tensor `name` zeroed (F32, row-major). */
function zeroColumns(bytes, name, first, count) {
  const copy = new Uint8Array(bytes);
  const view = new DataView(copy.buffer);
  const headerLength = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(copy.subarray(8, 8 + headerLength)));
  const { shape, data_offsets: [begin] } = header[name];
  assert.equal(shape.length, 2, name);
  const floats = new Float32Array(copy.buffer, 8 + headerLength + begin, shape[0] * shape[1]);
  for (let row = 0; row < shape[0]; row++) floats.fill(0, row * shape[1] + first, row * shape[1] + first + count);
  return copy;
}

const argmaxRow = (t, row) => {
  const V = t.shape[1];
  let best = 0;
  for (let v = 1; v < V; v++) if (t.data[row * V + v] > t.data[row * V + best]) best = v;
  return best;
};

test('LanguageModel: an ablated head equals its out_proj columns zeroed in the file; every head of a layer too', async () => {
  const bytes = readFileSync(shippedModel('char-lm.safetensors'));
  const { numLayers: layers, numHeads: heads, headDim } = lm.config;
  const text = 'The cat sat on the mat. The cat sat on the';
  const plain = lm.forward(text);
  for (const [layer, head] of [[0, 1], [1, 3], [2, 0]]) {
    const pruned = await loadModel(zeroColumns(bytes, `blocks.${layer}.attn.out_proj.weight`, head * headDim, headDim));
    try {
      const ablated = lm.forward(text, { ablate: [{ layer, head }] });
      const expected = pruned.forward(text);
      assert.ok(maxRelativeError(ablated.logits.data, expected.logits.data) < 1e-5, `layer ${layer} head ${head}`);
      assert.ok(maxRelativeError(ablated.logits.data, plain.logits.data) > 1e-4, 'the head mattered');
      assert.deepEqual(ablated.attention.data, expected.attention.data, 'weights are still returned');
    } finally {
      pruned.dispose();
    }
  }
  const layer = 1;
  const all = Array.from({ length: heads }, (_, head) => ({ layer, head }));
  const pruned = await loadModel(zeroColumns(bytes, `blocks.${layer}.attn.out_proj.weight`, 0, heads * headDim));
  try {
    assert.ok(maxRelativeError(lm.forward(text, { ablate: all }).logits.data, pruned.forward(text).logits.data) < 1e-5);
    assert.deepEqual(lm.generate('Once upon a ', { ablate: all, maxNewTokens: 12 }).ids, pruned.generate('Once upon a ', { maxNewTokens: 12 }).ids);
  } finally {
    pruned.dispose();
  }
  assert.equal(layers, lm.header.config.numLayers);
});

test('LanguageModel: ablate takes namedHeads entries; [] and repeats change nothing; generation follows the ablated forward', () => {
  const text = 'abcabcabc';
  const plain = lm.forward(text);
  assert.deepEqual(lm.forward(text, { ablate: [] }).logits.data, plain.logits.data);
  const named = lm.namedHeads[0];
  const byName = lm.forward(text, { ablate: [named] });
  const twice = lm.forward(text, { ablate: [{ layer: named.layer, head: named.head }, { layer: named.layer, head: named.head }] });
  assert.deepEqual(byName.logits.data, twice.logits.data);
  assert.notDeepEqual(byName.logits.data, plain.logits.data);

  const ablate = [{ layer: 2, head: 1 }, { layer: 0, head: 3 }];
  const generated = lm.generate('The ', { ablate, maxNewTokens: 6 }).ids;
  const ids = lm.tokenize('The ').ids;
  for (const next of generated) {
    const out = lm.forward(ids, { ablate, needAttention: false });
    assert.equal(next, argmaxRow(out.logits, ids.length - 1));
    ids.push(next);
  }
});

test('Seq2SeqModel: ablation per kind of attention; translate follows the ablated teacher-forced pass', () => {
  const source = 'the fifth of march nineteen ninety';
  const plain = s2s.translate(source);
  const ablate = [{ attn: 'dec_cross', layer: 0, head: 0 }, { attn: 'dec_cross', layer: 0, head: 1 }, { attn: 'dec_cross', layer: 0, head: 2 },
    { attn: 'dec_cross', layer: 0, head: 3 }, { attn: 'dec_cross', layer: 1, head: 0 }, { attn: 'dec_cross', layer: 1, head: 1 },
    { attn: 'dec_cross', layer: 1, head: 2 }, { attn: 'dec_cross', layer: 1, head: 3 }];
  const blind = s2s.translate(source, { ablate });
  // With no cross-attention the decoder cannot read the source: the output no longer depends on it.
  assert.deepEqual(s2s.translate('the first of june two thousand', { ablate }).outputIds, blind.outputIds);
  assert.notDeepEqual(blind.outputIds, plain.outputIds);
  const target = [s2s.vocab.targetBosId, ...blind.outputIds.slice(0, -1)];
  const forced = s2s.forward(source, target, { ablate });
  blind.outputIds.forEach((id, t) => assert.equal(id, argmaxRow(forced.logits, t), `step ${t}`));
  for (const [attn, layers] of [['enc_self', s2s.config.numEncoderLayers], ['dec_self', s2s.config.numDecoderLayers]]) {
    const all = [...Array(layers).keys()].flatMap((layer) => [0, 1, 2, 3].map((head) => ({ attn, layer, head })));
    assert.ok(maxRelativeError(s2s.forward(source, target, { ablate: all }).logits.data, s2s.forward(source, target).logits.data) > 1e-4, attn);
  }
  assert.deepEqual(s2s.translate(source, { ablate: s2s.namedHeads.slice(0, 1) }).outputIds.length > 0, true);
});

test('ablate: TypeError / RangeError naming the call and the entry; the models stay usable', () => {
  const cases = [
    [() => lm.forward('abc', { ablate: { layer: 0, head: 0 } }), 'TypeError', /LanguageModel.forward: options.ablate: expected an array of heads such as \{ layer: 0, head: 1 \}, got Object/],
    [() => lm.generate('abc', { ablate: [3] }), 'TypeError', /LanguageModel.generate: options.ablate\[0\]: expected a head such as \{ layer: 0, head: 1 \}, got number 3/],
    [() => lm.forward('abc', { ablate: [null] }), 'TypeError', /options.ablate\[0\]: expected a head .* got null/],
    [() => lm.forward('abc', { ablate: [{ layer: 3, head: 0 }] }), 'RangeError', /LanguageModel.forward: options.ablate\[0\].layer: expected a whole number from 0 to 2, got 3/],
    [() => lm.forward('abc', { ablate: [{ layer: 0, head: 0 }, { layer: 0, head: 4 }] }), 'RangeError', /options.ablate\[1\].head: expected a whole number from 0 to 3, got 4/],
    [() => lm.forward('abc', { ablate: [{ layer: 0 }] }), 'TypeError', /options.ablate\[0\].head: expected a whole number, got undefined/],
    [() => lm.forward('abc', { ablate: [{ layer: 0.5, head: 0 }] }), 'RangeError', /ablate\[0\].layer: .*got 0.5/],
    [() => lm.generate('abc', { maxTokens: 3 }), 'TypeError', /unknown option 'maxTokens' \(expected one of maxNewTokens, stopToken, ablate\)/],
    [() => s2s.translate('may 1 2020', { ablate: [{ layer: 0, head: 0 }] }), 'TypeError', /Seq2SeqModel.translate: options.ablate\[0\].attn: expected one of 'enc_self', 'dec_self', 'dec_cross', got undefined/],
    [() => s2s.forward('may 1 2020', [1], { ablate: [{ attn: 'cross', layer: 0, head: 0 }] }), 'RangeError', /Seq2SeqModel.forward: options.ablate\[0\].attn: expected one of .*, got 'cross'/],
    [() => s2s.translate('may 1 2020', { ablate: [{ attn: 'enc_self', layer: s2s.config.numEncoderLayers, head: 0 }] }), 'RangeError',
      new RegExp(`ablate\\[0\\].layer: expected a whole number from 0 to ${s2s.config.numEncoderLayers - 1}, got ${s2s.config.numEncoderLayers}`)],
  ];
  for (const [call, name, message] of cases) assert.throws(call, { name, message }, String(call));
  assert.equal(lm.generate('abc', { maxNewTokens: 2, ablate: [{ layer: 0, head: 0 }] }).ids.length, 2);
  assert.ok(s2s.translate('may 1 2020').text.length > 0);
});

test('the shipped LM: the head its file names "induction" is what copies a repeated sentence', () => {
  // Causal evidence (issue #14): the second copy of a sentence is predicted mostly by copying, and switching off the
  // head the file names induction (not any other head) takes most of that away. The sentence is the demo's
  // Repetition example. Thresholds are loose bounds on what tools/measure/measure_heads.py reports, not our output copied.
  const sentence = 'The animal didn’t cross the street because it was too tired.';
  const induction = lm.namedHeads.filter((h) => /^induction/.test(h.name));
  assert.equal(induction.length, 1, 'the file names one induction head');
  const copied = (ablate) => {
    const { ids, logits } = lm.forward(`${sentence} ${sentence}`, { ablate });
    const first = ids.length - logits.shape[0];
    const start = ids.length - sentence.length; // the second copy's first character
    let right = 0;
    for (let t = start - 1; t < ids.length - 1; t++) right += argmaxRow(logits, t - first) === ids[t + 1];
    return right / sentence.length;
  };
  const plain = copied([]);
  const withoutInduction = copied(induction);
  assert.ok(plain >= 0.7, `copies ${plain}`);
  // Round 3's model lost 20 of 60 characters without it (46 -> 26), round 4's, trained on more Chinese, 14 (45 -> 31),
  // round 5's 20 (47 -> 27), round 6's 16 (45 -> 29): the bound is a fifth of the sentence, still well above what
  // another head of the layer costs (below).
  assert.ok(withoutInduction <= plain - 0.2, `with the induction head off: ${withoutInduction} (on: ${plain})`);
  const { layer } = induction[0];
  const other = { layer, head: (induction[0].head + 1) % lm.config.numHeads };
  assert.ok(copied([other]) > withoutInduction + 0.1, 'another head of the same layer matters less');
});
