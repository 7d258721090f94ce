// LanguageModel.trace and Seq2SeqModel.trace on the trained models: the weights are forward()'s own row (equal, not
// close), the numbers agree with a float64 walk-through written here from the model file's weights and the trace's
// own input, and bad options are TypeError / RangeError naming the call, with the model usable afterwards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadModel, readSafetensors } from 'attnscope';
import { maxRelativeError } from './helpers.js';

const path = (name) => new URL(`../../models/${name}`, import.meta.url);
let lm, s2s, lmWeights, s2sWeights;

before(async () => {
  await init();
  const lmBytes = readFileSync(path('char-lm.safetensors')), s2sBytes = readFileSync(path('dates-seq2seq.safetensors'));
  lm = await loadModel(lmBytes);
  s2s = await loadModel(s2sBytes);
  lmWeights = readSafetensors(lmBytes);
  s2sWeights = readSafetensors(s2sBytes);
});
after(() => {
  lm.dispose();
  s2s.dispose();
});

/** Row `query` of head `head` in layer `layer` of an [L, H, T, S] attention tensor. */
function row(attention, layer, head, query) {
  const [, H, T, S] = attention.shape;
  const at = ((layer * H + head) * T + query) * S;
  return Array.from(attention.data.subarray(at, at + S));
}

/**
 * The head's walk-through in float64, from nn.MultiheadAttention's definition: q = x·Wqᵀ + bq (rows 0..E of
 * in_proj), k and v likewise from rows E.. and 2E.., this head's columns; softmax(q·k/√hd) over the visible keys;
 * the context; its product with this head's columns of out_proj.weight.
 */
function walkThrough(weights, prefix, trace, causal) {
  const w = weights.get(`${prefix}.in_proj_weight`).data, b = weights.get(`${prefix}.in_proj_bias`).data;
  const wo = weights.get(`${prefix}.out_proj.weight`).data;
  const [T, E] = trace.attentionInput.shape;
  const kv = trace.keyInput ?? trace.attentionInput, S = kv.shape[0];
  const hd = trace.queryRaw.shape[0], col = trace.head * hd;
  const project = (x, r, first) => Array.from({ length: hd }, (_, o) => {
    let s = b[first + col + o];
    for (let i = 0; i < E; i++) s += x.data[r * E + i] * w[(first + col + o) * E + i];
    return s;
  });
  const q = project(trace.attentionInput, trace.query, 0);
  const k = [...Array(S).keys()].map((j) => project(kv, j, E)), v = [...Array(S).keys()].map((j) => project(kv, j, 2 * E));
  const scores = k.map((kj) => kj.reduce((s, x, c) => s + x * q[c], 0));
  const visible = scores.map((_, j) => !causal || j <= trace.query);
  const largest = Math.max(...scores.filter((_, j) => visible[j]).map((s) => s / Math.sqrt(hd)));
  const exps = scores.map((s, j) => (visible[j] ? Math.exp(s / Math.sqrt(hd) - largest) : 0));
  const z = exps.reduce((a, x) => a + x, 0);
  const softmax = exps.map((x) => x / z);
  const context = Array.from({ length: hd }, (_, c) => softmax.reduce((s, p, j) => s + p * v[j][c], 0));
  const headOutput = Array.from({ length: E }, (_, o) => context.reduce((s, x, c) => s + x * wo[o * E + col + c], 0));
  assert.equal(T, trace.layerInput.shape[0]);
  return { q, k: k.flat(), v: v.flat(), scores, visible, softmax, context, headOutput };
}

/** LayerNorm (eps 1e-5) of every row of x, float64. */
function layerNorm(x, gamma, beta) {
  const [T, E] = x.shape, y = [];
  for (let t = 0; t < T; t++) {
    const r = x.data.subarray(t * E, (t + 1) * E);
    const mean = r.reduce((a, b) => a + b, 0) / E;
    const variance = r.reduce((a, b) => a + (b - mean) ** 2, 0) / E;
    for (let c = 0; c < E; c++) y.push(((r[c] - mean) / Math.sqrt(variance + 1e-5)) * gamma[c] + beta[c]);
  }
  return y;
}

function checkAgainstWalkThrough(trace, weights, prefix, norm, causal) {
  const ref = walkThrough(weights, prefix, trace, causal);
  const close = (got, want, what) => assert.ok(maxRelativeError(got.data ?? got, want) < 1e-5, `${prefix} ${what}: ${maxRelativeError(got.data ?? got, want)}`);
  close(trace.attentionInput, layerNorm(trace.layerInput, weights.get(`${norm}.weight`).data, weights.get(`${norm}.bias`).data), 'LayerNorm(layerInput)');
  close(trace.queryRaw, ref.q, 'q');
  close(trace.keysRaw, ref.k, 'k');
  close(trace.values, ref.v, 'v');
  close(trace.scores, ref.scores, 'q·k');
  assert.deepEqual(Array.from(trace.visible), ref.visible.map(Number));
  assert.ok(Math.abs(trace.scale - 1 / Math.sqrt(trace.queryRaw.shape[0])) < 1e-7);
  trace.weights.data.forEach((x, j) => assert.ok(Math.abs(x - ref.softmax[j]) < 1e-6, `${prefix} weight ${j}`));
  close(trace.context, ref.context, 'context');
  close(trace.headOutput, ref.headOutput, 'head output');
}

test('LanguageModel.trace: the weights are forward()\'s row, every number is the float64 walk-through', () => {
  const { numLayers: L, numHeads: H, dModel: E } = lm.config;
  const text = 'The cat sat on the mat. The cat';
  const ablate = [{ layer: 0, head: 1 }];
  for (const options of [{}, { ablate }]) {
    const forward = lm.forward(text, options);
    const T = forward.ids.length;
    for (const [layer, head, query] of [[0, 0, T - 1], [L - 1, H - 1, 5], [1, 2, 0], [0, 1, 9]]) {
      const trace = lm.trace(text, { layer, head, query, ...options });
      assert.deepEqual(trace.ids, forward.ids);
      assert.deepEqual(trace.tokens, forward.tokens);
      assert.deepEqual([trace.layer, trace.head, trace.query, trace.kvHead], [layer, head, query, head]);
      assert.deepEqual(trace.layerInput.shape, [T, E]);
      assert.equal(trace.keyInput, null);
      assert.deepEqual(Array.from(trace.weights.data), row(forward.attention, layer, head, query), `layer ${layer} head ${head} query ${query}`);
      if (options.ablate && layer === 0 && head === 1) assert.ok(trace.context.data.every((x) => x === 0), 'a head off has no context');
      else checkAgainstWalkThrough(trace, lmWeights, `blocks.${layer}.attn`, `blocks.${layer}.ln1`, true);
    }
  }
  // Layer 0's input is the token and position embeddings.
  const first = lm.trace('ab', { layer: 0, head: 0, query: 0 });
  const tok = lmWeights.get('tok_emb.weight').data, pos = lmWeights.get('pos_emb.weight').data;
  first.ids.forEach((id, t) => {
    for (let c = 0; c < E; c++) assert.equal(first.layerInput.data[t * E + c], Math.fround(tok[id * E + c] + pos[t * E + c]));
  });
});

test('Seq2SeqModel.trace: encoder, decoder and cross-attention are forward()\'s rows and the walk-through', () => {
  const { numEncoderLayers: Le, numDecoderLayers: Ld, numHeads: H, dModel: E } = s2s.config;
  const date = 'the fifth of march nineteen ninety';
  const { outputIds } = s2s.translate(date);
  const target = [s2s.vocab.targetBosId, ...outputIds.slice(0, -1)];
  const forward = s2s.forward(date, target);
  const S = s2s.tokenizeSource(date).ids.length, T = target.length;
  assert.notEqual(S, T);
  const kinds = [
    ['encoder', forward.encoderAttention, Le, S, 'enc_blocks.%.attn', 'enc_blocks.%.ln1', false],
    ['decoder', forward.decoderAttention, Ld, T, 'dec_blocks.%.self_attn', 'dec_blocks.%.ln1', true],
    ['cross', forward.crossAttention, Ld, T, 'dec_blocks.%.cross_attn', 'dec_blocks.%.ln2', false],
  ];
  for (const [attention, maps, layers, rows, prefix, norm, causal] of kinds) {
    for (const [layer, head, query] of [[0, 0, 0], [layers - 1, H - 1, rows - 1]]) {
      const trace = s2s.trace(date, { target, attention, layer, head, query });
      assert.deepEqual(trace.targetIds, target);
      assert.deepEqual(trace.sourceTokens, s2s.tokenizeSource(date).tokens);
      assert.deepEqual(Array.from(trace.weights.data), row(maps, layer, head, query), `${attention} ${layer} ${head} ${query}`);
      assert.deepEqual(trace.keyInput?.shape ?? null, attention === 'cross' ? [S, E] : null);
      checkAgainstWalkThrough(trace, s2sWeights, prefix.replace('%', layer), norm.replace('%', layer), causal);
    }
  }
  // The encoder reads no target.
  assert.deepEqual(s2s.trace(date, { attention: 'encoder', layer: 1, head: 1, query: 2 }).weights, s2s.trace(date, { target, attention: 'encoder', layer: 1, head: 1, query: 2 }).weights);
});

test('trace: bad options are TypeError or RangeError naming the call; the models stay usable', () => {
  const { numLayers: L } = lm.config;
  const cases = [
    [() => lm.trace('abc'), TypeError, /^LanguageModel\.trace: options: expected \{ layer, head, query \}, got undefined$/],
    [() => lm.trace('abc', { layer: L, head: 0, query: 0 }), RangeError, new RegExp(`^LanguageModel\\.trace: layer: expected 0 to ${L - 1}, got ${L}$`)],
    [() => lm.trace('abc', { layer: 0, head: 0, query: 4 }), RangeError, /^LanguageModel\.trace: query: expected 0 to 3 \(one per token\), got 4$/],
    [() => lm.trace('abc', { layer: 0, head: 99, query: 0 }), RangeError, /^LanguageModel\.trace: head: expected 0 to \d+, got 99$/],
    [() => lm.trace('abc', { layer: -1, head: 0, query: 0 }), RangeError, /^LanguageModel\.trace: options\.layer: expected a whole number from 0 to \d+, got -1$/],
    [() => lm.trace('abc', { layer: 0.5, head: 0, query: 0 }), RangeError, /options\.layer: .*got 0\.5$/],
    [() => lm.trace('abc', { layer: '0', head: 0, query: 0 }), TypeError, /^LanguageModel\.trace: options\.layer: expected a whole number, got string "0"$/],
    [() => lm.trace('abc', { layer: 0, head: 0 }), TypeError, /options\.query: expected a whole number, got undefined/],
    [() => lm.trace('abc', { layer: 0, head: 0, query: 0, step: 1 }), TypeError, /unknown option 'step'/],
    [() => s2s.trace('the fifth of may', { attention: 'enc', layer: 0, head: 0, query: 0 }), RangeError, /^Seq2SeqModel\.trace: options\.attention: expected 'encoder', 'decoder' or 'cross', got 'enc'$/],
    [() => s2s.trace('the fifth of may', { attention: 1, layer: 0, head: 0, query: 0 }), TypeError, /^Seq2SeqModel\.trace: options\.attention: expected 'encoder', 'decoder' or 'cross', got number 1$/],
    [() => s2s.trace('the fifth of may', { attention: 'cross', layer: 0, head: 0, query: 0 }), RangeError, /^Seq2SeqModel\.trace: target: expected from 1 to \d+ token ids \(the model's limit\), got 0$/],
    [() => s2s.trace('the fifth of may', { target: [s2s.vocab.targetBosId], attention: 'decoder', layer: 0, head: 0, query: 1 }), RangeError, /^Seq2SeqModel\.trace: query: expected 0 to 0 \(one per target token\), got 1$/],
    [() => s2s.trace('the fifth of may', { attention: 'encoder', layer: 9, head: 0, query: 0 }), RangeError, /^Seq2SeqModel\.trace: layer: expected 0 to \d \(the encoder's layers\), got 9$/],
  ];
  for (const [call, type, message] of cases) assert.throws(call, (e) => e instanceof type && message.test(e.message), String(call));
  assert.equal(lm.trace('abc', { layer: 0, head: 0, query: 3 }).weights.shape[0], 4);
  assert.equal(s2s.trace('the fifth of may', { attention: 'encoder', layer: 0, head: 0, query: 3 }).weights.shape[0], 4);
});
