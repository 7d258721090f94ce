// The research tools (forward's residual stream and values' norms, the logit lens, sinks, value-weighted attention,
// QK/OV circuits, the exported cache) against tools/references/hf_research_reference.py's float64 PyTorch runs
// (research.json) on three fixtures: GPT-2 (pre-LN), Llama with grouped-query attention, BERT with its MLM head.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cachePlan, exportCache, hideKeys, init, loadModel, readSafetensors, sinkMass, valueWeighted } from 'attnscope';

const fixtures = new URL('../fixtures/hf/', import.meta.url);
const CASES = ['gpt2-lm', 'llama-gqa', 'bert-mlm'];
const models = {};
const reference = (name) => JSON.parse(readFileSync(new URL(`${name}/research.json`, fixtures), 'utf8'));

before(async () => {
  await init();
  for (const name of [...CASES, 'bert-base']) models[name] = await loadModel(new URL(`${name}/`, fixtures));
});
after(() => Object.values(models).forEach((m) => m.dispose()));

/** Largest |a − b| over the largest |b|: float32 against float64. */
function relative(actual, expected) {
  let diff = 0, scale = 0;
  for (let i = 0; i < expected.length; i++) {
    diff = Math.max(diff, Math.abs(actual[i] - expected[i]));
    scale = Math.max(scale, Math.abs(expected[i]));
  }
  assert.equal(actual.length, expected.length);
  return diff / scale;
}

for (const name of CASES) {
  test(`${name}: the residual stream, the values' norms and the maps match PyTorch`, () => {
    const ref = reference(name);
    const { layers, hiddenSize, heads } = models[name].architecture;
    const T = ref.ids.length;
    const out = models[name].forward(ref.ids, { keepResidual: true, valueNorms: true });
    assert.deepEqual(out.residual.shape, [layers + 1, T, hiddenSize]);
    assert.deepEqual(out.residualMid.shape, [layers, T, hiddenSize]);
    assert.deepEqual(out.valueNorms.shape, [layers, heads, T]);
    assert.ok(relative(out.residual.data, ref.residual) < 1e-5, 'residual');
    assert.ok(relative(out.residualMid.data, ref.residual_mid) < 1e-5, 'residual_mid');
    assert.ok(relative(out.valueNorms.data, ref.value_norms) < 1e-5, 'value norms');
    assert.ok(relative(out.attention.data, ref.attention) < 1e-5, 'attention');
    const plain = models[name].forward(ref.ids);
    for (const key of ['residual', 'residualMid', 'qkv', 'valueNorms']) assert.equal(plain[key], null, `no ${key} unless asked`);
    assert.deepEqual(plain.attention.data, out.attention.data, 'keeping changes nothing computed');
  });

  test(`${name}: the logit lens gives PyTorch's most probable tokens of every layer and position`, () => {
    const ref = reference(name);
    const k = 5;
    const lens = models[name].logitLens(ref.ids, { k });
    const T = ref.ids.length, L = ref.layers, vocab = ref.lens_probabilities.length / ((L + 1) * T);
    assert.equal(lens.layers, L + 1);
    assert.deepEqual(lens.probabilities.shape, [L + 1, T, k]);
    for (let l = 0; l <= L; l++) {
      for (let t = 0; t < T; t++) {
        const probs = ref.lens_probabilities.slice((l * T + t) * vocab, (l * T + t + 1) * vocab);
        const kth = [...probs].sort((a, b) => b - a)[k - 1];
        const row = lens.at(l, t);
        row.forEach(({ id, probability }, i) => {
          assert.ok(Math.abs(probability - probs[id]) < 1e-5, `layer ${l} position ${t} #${i}: ${probability} vs ${probs[id]}`);
          assert.ok(probs[id] >= kth - 1e-6, `layer ${l} position ${t}: id ${id} is not among PyTorch's top ${k}`);
          if (i > 0) assert.ok(probability <= row[i - 1].probability);
        });
      }
    }
  });

  test(`${name}: a range of the lens's rows is those rows of the whole lens, bit for bit, and PyTorch's`, () => {
    const ref = reference(name);
    const k = 4, model = models[name];
    const T = ref.ids.length, L = ref.layers, vocab = ref.lens_probabilities.length / ((L + 1) * T);
    const whole = model.logitLens(ref.ids, { k });
    const ranges = [[0, 1], [1, L], [L, L + 1], [0, L + 1]];
    // Through a cache of this input's pass too (a causal model's): only the head runs, the same rows.
    const cache = model.kind === 'causal_lm' ? model.forward(ref.ids, { cache: true }).cache : null;
    try {
      for (const [start, end] of ranges) {
        for (const lens of [model.logitLens(ref.ids, { k, layers: [start, end] }), ...(cache ? [model.logitLens(ref.ids, { k, layers: [start, end], cache })] : [])]) {
          const label = `rows ${start} to ${end}${lens.fromCache ? ' through the cache' : ''}`;
          assert.equal(lens.firstLayer, start, label);
          assert.equal(lens.layers, end - start, label);
          assert.deepEqual(lens.probabilities.shape, [end - start, T, k], label);
          const cells = T * k;
          assert.deepEqual(lens.probabilities.data, whole.probabilities.data.slice(start * cells, end * cells), `${label}: probabilities`);
          assert.deepEqual(lens.topIds.data, whole.topIds.data.slice(start * cells, end * cells), `${label}: ids`);
          // at() takes the lens row itself; PyTorch's probability of each id at that row.
          const probs = ref.lens_probabilities.slice(((end - 1) * T + T - 1) * vocab, ((end - 1) * T + T) * vocab);
          lens.at(end - 1, T - 1).forEach(({ id, probability }) => assert.ok(Math.abs(probability - probs[id]) < 1e-5, label));
          assert.throws(() => lens.at(start - 1, 0), { name: 'RangeError', message: new RegExp(`at: layer: expected ${start} to ${end - 1}, got ${start - 1}$`) });
          assert.throws(() => lens.at(end, 0), { name: 'RangeError' });
        }
      }
      if (cache) assert.equal(model.logitLens(ref.ids, { k, layers: [1, 2], cache }).fromCache, true);
    } finally {
      cache?.dispose();
    }
  });

  test(`${name}: QK and OV circuits, their norms and singular values match PyTorch`, () => {
    const ref = reference(name);
    const { layer, head } = ref.circuit;
    const c = models[name].circuits(layer, head);
    const { hiddenSize, heads, kvHeads, headDim } = models[name].architecture;
    assert.equal(c.kvHead, Math.floor(head / (heads / kvHeads)));
    assert.deepEqual(c.qk.shape, [hiddenSize, hiddenSize]);
    assert.ok(relative(c.qk.data, ref.circuit.qk) < 1e-5, 'qk');
    assert.ok(relative(c.ov.data, ref.circuit.ov) < 1e-5, 'ov');
    assert.equal(c.qkSingularValues.data.length, headDim);
    assert.ok(relative(c.qkSingularValues.data, ref.circuit.qk_singular) < 1e-5, 'qk singular values');
    assert.ok(relative(c.ovSingularValues.data, ref.circuit.ov_singular) < 1e-5, 'ov singular values');
    const norms = models[name].circuitNorms();
    assert.deepEqual(norms.qk.shape, [ref.layers, heads]);
    assert.ok(relative(norms.qk.data, ref.qk_norms) < 1e-5, 'qk norms');
    assert.ok(relative(norms.ov.data, ref.ov_norms) < 1e-5, 'ov norms');
  });

  test(`${name}: sink mass, a hidden key and value-weighted attention against float64 sums of PyTorch's maps`, () => {
    const ref = reference(name);
    const out = models[name].forward(ref.ids, { valueNorms: true });
    const [L, H, T] = out.attention.shape;
    const a = (l, h, q, j) => ref.attention[((l * H + h) * T + q) * T + j];
    const expected = (keys, from) => {
      const mass = [];
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          let s = 0;
          for (let q = from; q < T; q++) for (const j of keys) s += a(l, h, q, j);
          mass.push(s / (T - from));
        }
      }
      return mass;
    };
    assert.ok(relative(sinkMass(out.attention).data, expected([0], 0)) < 1e-5);
    assert.ok(relative(sinkMass(out.attention, { key: 3, fromQuery: 3 }).data, expected([3], 3)) < 1e-5);
    assert.ok(relative(sinkMass(out.attention, { key: [0, T - 1] }).data, expected([0, T - 1], 0)) < 1e-5);

    const hidden = hideKeys(out.attention, 0);
    assert.equal(hidden.view, 'hiddenKeys');
    assert.deepEqual(hidden.hiddenKeys, [0]);
    const weighted = valueWeighted(out.attention, out.valueNorms);
    assert.equal(weighted.view, 'valueWeighted');
    const hideRef = [], weightRef = [];
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        for (let q = 0; q < T; q++) {
          let rest = 0, total = 0;
          for (let j = 1; j < T; j++) rest += a(l, h, q, j);
          for (let j = 0; j < T; j++) total += a(l, h, q, j) * ref.value_norms[(l * H + h) * T + j];
          for (let j = 0; j < T; j++) {
            hideRef.push(j === 0 || rest === 0 ? 0 : a(l, h, q, j) / rest);
            weightRef.push(a(l, h, q, j) * ref.value_norms[(l * H + h) * T + j] / total);
          }
        }
      }
    }
    // A causal first row gives all its weight to key 0: with it hidden, nothing is left.
    assert.ok(relative(hidden.data, hideRef) < 1e-5, 'hidden key');
    assert.ok(relative(weighted.data, weightRef) < 1e-5, 'value-weighted');
  });
}

test('exportCache: TransformerLens names and shapes, the size cachePlan said, the numbers forward returns', () => {
  const model = models['gpt2-lm'];
  const ref = reference('gpt2-lm');
  const T = ref.ids.length;
  const plan = cachePlan(model, ref.ids);
  const { file, config, hooks } = exportCache(model, ref.ids);
  assert.equal(file.length, plan.bytes);
  assert.deepEqual(hooks.map((h) => h.name), plan.hooks.map((h) => h.name));
  assert.equal(hooks.length, 2 * 8 + 1);
  const read = readSafetensors(file); // the core's strict reader: the header's offsets tile the data exactly
  assert.deepEqual([...read.keys()], plan.hooks.map((h) => h.name));
  const tensor = (n) => read.get(n);
  const headerLength = Number(new DataView(file.buffer).getBigUint64(0, true));
  const metadata = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + headerLength))).__metadata__;
  assert.deepEqual(tensor('blocks.1.attn.hook_pattern').shape, [1, 2, T, T]);
  assert.deepEqual(tensor('blocks.0.attn.hook_q').shape, [1, T, 2, 8]);
  assert.deepEqual(tensor('blocks.0.hook_resid_pre').shape, [1, T, 16]);
  assert.deepEqual(tensor('ln_final.hook_normalized').shape, [1, T, 16]);
  const out = model.forward(ref.ids, { keepHeads: true, keepQkv: true });
  const layer1 = out.attention.data.subarray(2 * T * T, 4 * T * T);
  assert.deepEqual(tensor('blocks.1.attn.hook_pattern').data, layer1);
  assert.deepEqual(tensor('blocks.1.attn.hook_z').data, out.heads.data.subarray(T * 16, 2 * T * 16));
  assert.deepEqual(tensor('ln_final.hook_normalized').data, out.hidden.data);
  assert.ok(relative(tensor('blocks.1.hook_resid_post').data, ref.residual.slice(2 * T * 16)) < 1e-5);
  assert.ok(relative(tensor('blocks.1.hook_resid_mid').data, ref.residual_mid.slice(T * 16)) < 1e-5);
  // hook_v of position t, head h is forward's q|k|v row t at columns 2·16 + h·8.
  assert.deepEqual(tensor('blocks.0.attn.hook_v').data.subarray(8, 16), out.qkv.data.subarray(32 + 8, 32 + 16));
  assert.deepEqual(JSON.parse(metadata.attnscope), config);
  assert.deepEqual(config.tokens, ref.ids);
  assert.equal(config.model_type, 'gpt2');

  const some = exportCache(model, ref.ids, { hooks: ['hook_pattern', 'blocks.0.hook_resid_pre'] });
  assert.deepEqual(some.hooks.map((h) => h.name), ['blocks.0.hook_resid_pre', 'blocks.0.attn.hook_pattern', 'blocks.1.attn.hook_pattern']);
  assert.equal(some.file.length, cachePlan(model, ref.ids, { hooks: ['hook_pattern', 'blocks.0.hook_resid_pre'] }).bytes);
  const gqa = cachePlan(models['llama-gqa'], [1, 2, 3], { hooks: ['hook_k', 'hook_q'] });
  assert.deepEqual(gqa.hooks[0], { name: 'blocks.0.attn.hook_q', shape: [1, 3, 4, 6], bytes: 4 * 3 * 4 * 6 });
  assert.deepEqual(gqa.hooks[1].shape, [1, 3, 2, 6], 'hook_k per key/value head');
  // BERT has no final norm, so no ln_final hook.
  assert.ok(!cachePlan(models['bert-mlm'], [2, 3]).hooks.some((h) => h.name.startsWith('ln_final')));
});

test('bad requests are refused, naming the call and the argument', () => {
  const gpt2 = models['gpt2-lm'];
  assert.throws(() => models['bert-base'].logitLens([2, 3]), { message: /^EncoderModel\.logitLens: this model has no language-model head/ });
  assert.throws(() => gpt2.logitLens([1, 2], { k: 0 }), { message: /^LanguageModel\.logitLens: options\.k: expected a whole number from 1 to 100 \(tokens per position\), got 0$/ });
  assert.throws(() => gpt2.logitLens([1, 2], { top: 3 }), { name: 'TypeError' });
  // The lens's rows: two numbers (JS), whole and within the model's layers + 1 rows, start before end (the core).
  for (const layers of [2, [1], [0, 1, 2], { 0: 0, 1: 1 }]) {
    assert.throws(() => gpt2.logitLens([1, 2], { layers }), { name: 'TypeError', message: /^LanguageModel\.logitLens: options\.layers: expected \[start, end\], two whole numbers, got / });
  }
  assert.throws(() => gpt2.logitLens([1, 2], { layers: [0, '1'] }), { name: 'TypeError', message: /^LanguageModel\.logitLens: options\.layers\[1\]: expected a whole number, got / });
  // eslint-disable-next-line no-sparse-arrays
  assert.throws(() => gpt2.logitLens([1, 2], { layers: [, 1] }), { name: 'TypeError', message: /options\.layers\[0\]: expected a whole number, got undefined/ });
  // The largest size of the 32-bit module is a number like any other, not "to the last row".
  assert.throws(() => gpt2.logitLens([1, 2], { layers: [0, 2 ** 32 - 1] }), { name: 'RangeError', message: /options\.layers: expected \[start, end\] .* got \[0, 4294967295\]$/ });
  assert.throws(() => gpt2.logitLens([1, 2], { layers: [-1, 1] }), { name: 'RangeError', message: /^LanguageModel\.logitLens: options\.layers\[0\]: expected a whole number from 0 to / });
  assert.throws(() => gpt2.logitLens([1, 2], { layers: [0, 1.5] }), { name: 'RangeError', message: /options\.layers\[1\]: expected a whole number/ });
  for (const [start, end] of [[1, 1], [2, 1], [0, 4], [3, 4]]) {
    assert.throws(() => gpt2.logitLens([1, 2], { layers: [start, end] }),
      { name: 'RangeError', message: new RegExp(`^LanguageModel\\.logitLens: options\\.layers: expected \\[start, end\\] with 0 ≤ start < end ≤ 3 \\(the lens's rows: the stream entering each layer, then leaving the last\\), got \\[${start}, ${end}\\]$`) });
  }
  // Only a causal model has a ForwardCache to read the stream from.
  assert.throws(() => models['bert-mlm'].logitLens([2, 3], { cache: true }),
    { name: 'TypeError', message: /^EncoderModel\.logitLens: options: unknown option 'cache'/ });
  assert.throws(() => gpt2.circuits(2, 0), { name: 'RangeError', message: /^LanguageModel\.circuits: layer: expected 0 to 1, got 2/ });
  assert.throws(() => gpt2.circuits(0, 2), { name: 'RangeError', message: /^LanguageModel\.circuits: head: expected 0 to 1, got 2/ });
  assert.throws(() => gpt2.forward([1, 2], { keepResidual: 'yes' }), { name: 'TypeError', message: /keepResidual/ });
  const { attention } = gpt2.forward([1, 2, 3]);
  assert.throws(() => sinkMass(attention, { key: 3 }), { name: 'RangeError', message: 'sinkMass: options.key: expected a key position from 0 to 2, got 3' });
  assert.throws(() => sinkMass({ data: [1], shape: [1] }), { name: 'TypeError', message: /^sinkMass: attention: expected forward's attention/ });
  assert.throws(() => hideKeys(attention, []), { name: 'RangeError' });
  assert.throws(() => valueWeighted(attention, { data: new Float32Array(2), shape: [1, 1, 2] }), { name: 'RangeError', message: /valueNorms: expected shape \[2, 2, 3\]/ });
  assert.throws(() => exportCache(gpt2, [1, 2], { hooks: ['hook_attn'] }), { name: 'RangeError', message: /^exportCache: options\.hooks: this model has no hook 'hook_attn'/ });
});

test('what a hostile-input review of 2026-12-06 found passing: each refused by name, the call working after', async () => {
  const gpt2 = models['gpt2-lm'];
  // The lens's cells: (0, T) once read row 1's first cell, and (99, 0) failed inside tokenStrings.
  const lens = gpt2.logitLens([1, 2, 3, 4, 5], { k: 3 });
  assert.throws(() => lens.at(0, 5), { name: 'RangeError', message: 'LanguageModel.logitLens: at: position: expected 0 to 4, got 5' });
  assert.throws(() => lens.at(3, 0), { name: 'RangeError', message: 'LanguageModel.logitLens: at: layer: expected 0 to 2, got 3' });
  assert.throws(() => lens.at('0', 0), { name: 'TypeError', message: /^LanguageModel\.logitLens: at: layer: expected a whole number, got/ });
  assert.equal(lens.at(2, 4).length, 3);
  // A translation model has no lens: the binding once met the request with an engine error.
  const dates = await loadModel(readFileSync(new URL('../../models/dates-seq2seq.safetensors', import.meta.url)));
  try {
    assert.throws(() => dates.logitLens([1, 2, 3]), { name: 'TypeError', message: /^Seq2SeqModel\.logitLens: a translation model has no logit lens/ });
  } finally {
    dates.dispose();
  }
  // detokenize takes the ids tokenStrings takes.
  assert.throws(() => gpt2.detokenize([5, -1]), { name: 'RangeError', message: 'LanguageModel.detokenize: ids[1]: expected a token id (a whole number from 0), got -1' });
  // Maps and norms that are not forward's: a shape of negative sizes whose product matched, norms too short or NaN
  // (rows of 0 without a word), a misspelt option (silently the first token).
  const { attention, valueNorms } = gpt2.forward([1, 2, 3], { valueNorms: true });
  assert.throws(() => sinkMass({ data: new Float32Array([1, 0, 0, 1]), shape: [-1, -1, 2, 2] }),
    { name: 'RangeError', message: 'sinkMass: attention: expected a shape of whole numbers from 1 (layers, heads, queries, keys), got [-1, -1, 2, 2]' });
  assert.throws(() => sinkMass({ data: new Float32Array(0), shape: [1, 1, 0, 0] }), { name: 'RangeError', message: /^sinkMass: attention: expected a shape of whole numbers from 1/ });
  assert.throws(() => sinkMass(attention, { keys: 1 }), { name: 'TypeError', message: "sinkMass: options: unknown option 'keys' (expected one of key, fromQuery)" });
  assert.throws(() => valueWeighted(attention, { data: new Float32Array(3).fill(1), shape: valueNorms.shape }),
    { name: 'RangeError', message: 'valueWeighted: valueNorms: its data (3 floats) do not match its shape [2, 2, 3]' });
  assert.throws(() => valueWeighted(attention, { data: new Float32Array(valueNorms.data.length).fill(NaN), shape: valueNorms.shape }),
    { name: 'RangeError', message: 'valueWeighted: valueNorms.data[0]: expected a norm (a finite number from 0), got NaN' });
  assert.deepEqual(valueWeighted(attention, valueNorms).shape, attention.shape);
  // Engine errors that escaped without the call: a hole in patches (map() skipped it, the binding read it), and an
  // object made from a cache with Object.create (instanceof holds; its private fields are missing).
  // cachePlan planned inputs forward refuses (100,000 ids: 160 GB); exportCache's refusals named forward.
  assert.throws(() => cachePlan(gpt2, new Array(100_000).fill(1)), { name: 'RangeError', message: "cachePlan: input: expected from 1 to 12 token ids (the model's limit), got 100000" });
  assert.throws(() => cachePlan(gpt2, []), { name: 'RangeError', message: /^cachePlan: input: expected from 1 to 12 token ids/ });
  assert.throws(() => cachePlan(gpt2, [99_999]), { name: 'RangeError', message: 'cachePlan: input[0]: expected a token id from 0 to 267, got 99999' });
  assert.throws(() => exportCache(gpt2, [1, 2], { hook: ['x'] }),
    { name: 'TypeError', message: "exportCache: options: unknown option 'hook' (expected one of hooks, attentionMask, tokenTypeIds, ablate, ablation)" });
  assert.throws(() => exportCache(gpt2, [1, 2], { ablate: [{ layer: 5, head: 0 }] }), { name: 'RangeError', message: /^exportCache: LanguageModel\.forward: options\.ablate\[0\]\.layer: / });
  const { heads } = gpt2.forward([1, 2], { keepHeads: true });
  assert.throws(() => gpt2.patchEach([1, 2], { patches: [, { layer: 0, head: 0 }], patchFrom: heads }), // eslint-disable-line no-sparse-arrays
    { name: 'TypeError', message: 'LanguageModel.patchEach: options.patches[0]: expected { layer, head, positions? }, got undefined' });
  const { cache } = gpt2.forward([1, 2], { cache: true });
  try {
    for (const call of [() => gpt2.forward([1, 2], { cache: Object.create(cache) }), () => gpt2.logitLens([1, 2], { cache: Object.create(cache) })]) {
      assert.throws(call, { name: 'TypeError', message: /^LanguageModel\.(forward|logitLens): options\.cache: expected / });
    }
    assert.deepEqual(gpt2.forward([1, 2, 3], { cache }).logits.shape, [3, 268]);
  } finally {
    cache.dispose();
  }
});
