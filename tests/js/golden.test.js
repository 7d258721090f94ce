// The PyTorch golden cases (tests/fixtures/golden) through the public JS API.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { init, MultiHeadAttention, scaledDotProductAttention } from 'attnscope';
import { loadFixtureDir } from './fixtures.js';
import { maxRelativeError } from './helpers.js';

// PyTorch's own float32 round-off on these cases is about 2e-6 of the largest magnitude.
const tolerance = 1e-5;
const fixtures = loadFixtureDir();

before(() => init());

test('the golden fixtures are all there', () => {
  assert.ok(fixtures.filter((c) => c.strs.kind === 'mha').length >= 30);
  assert.ok(fixtures.filter((c) => c.strs.kind === 'sdpa').length >= 10);
});

for (const c of fixtures.filter((f) => f.strs.kind === 'mha')) {
  test(`MultiHeadAttention matches PyTorch: ${c.name}`, () => {
    const { ints, tensors } = c;
    const mha = new MultiHeadAttention({ embedDim: ints.embed_dim, numHeads: ints.num_heads, kdim: ints.kdim, vdim: ints.vdim, bias: ints.bias === 1 });
    const state = {};
    for (const key of ['in_proj_weight', 'q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']) {
      if (tensors[key]) state[key] = tensors[key];
    }
    mha.loadStateDict(state);
    const options = {
      causal: ints.causal === 1,
      needWeights: ints.need_weights === 1,
      averageWeights: ints.average_weights === 1,
      keyPaddingMask: tensors.key_padding_mask,
      attnMask: tensors.attn_mask,
    };
    const { output, weights } = ints.self_attention === 1
      ? mha.forward(tensors.query, undefined, undefined, options)
      : mha.forward(tensors.query, tensors.key, tensors.value, options);
    mha.dispose();
    assert.deepEqual(output.shape, tensors.expected_output.shape);
    assert.ok(output.data instanceof Float32Array);
    const outputError = maxRelativeError(output.data, tensors.expected_output.data);
    assert.ok(outputError < tolerance, `output error ${outputError}`);
    if (ints.need_weights === 1) {
      assert.deepEqual(weights.shape, tensors.expected_weights.shape);
      const weightsError = maxRelativeError(weights.data, tensors.expected_weights.data);
      assert.ok(weightsError < tolerance, `weights error ${weightsError}`);
    } else {
      assert.equal(weights, null);
    }
  });
}

for (const c of fixtures.filter((f) => f.strs.kind === 'sdpa')) {
  test(`scaledDotProductAttention matches PyTorch: ${c.name}`, () => {
    const { ints, floats, tensors } = c;
    const options = { causal: ints.causal === 1, attnMask: tensors.attn_mask };
    if (floats.scale !== undefined) options.scale = floats.scale;
    const { output, weights } = scaledDotProductAttention(tensors.q, tensors.k, tensors.v, options);
    assert.deepEqual(output.shape, tensors.expected_output.shape);
    assert.deepEqual(weights.shape, tensors.expected_weights.shape);
    assert.ok(maxRelativeError(output.data, tensors.expected_output.data) < tolerance);
    assert.ok(maxRelativeError(weights.data, tensors.expected_weights.data) < tolerance);
  });
}
