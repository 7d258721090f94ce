// loadModel's memory plan (issue #22): the bytes a checkpoint's parameters and one forward pass will take, known
// from config.json and the headers before anything is allocated, passed to onPlan, and a clear refusal of a model
// that cannot fit, made before its headers are read, with WebAssembly memory left flat.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { init, loadModel, memoryUsage } from 'attnscope';

const fixtures = new URL('../fixtures/hf/', import.meta.url);
const folderOf = (name) => new URL(`${name}/`, fixtures);
const filesOf = (name) => Object.fromEntries(readdirSync(folderOf(name)).filter((f) => f !== 'reference.json')
  .map((f) => [f, new Uint8Array(readFileSync(new URL(f, folderOf(name))))]));
const configOf = (name) => JSON.parse(readFileSync(new URL(`${name}/config.json`, fixtures), 'utf8'));
const withConfig = (name, config) => ({ ...filesOf(name), 'config.json': new TextEncoder().encode(JSON.stringify(config)) });

before(() => init());

// What a forward pass of T tokens must at least hold, from Hugging Face's shapes alone (GPT2LMHeadModel with
// output_attentions and use_cache): every layer's attention [L, H, T, T], the logits [T, vocab], the key and value
// caches [L, 2, T, n_embd] and the last hidden state [T, n_embd], all float32.
function gpt2WorkspaceAtLeast(config, T) {
  const { n_layer: L, n_head: H, n_embd: d, vocab_size: V } = config;
  return 4 * (L * H * T * T + T * V + 2 * L * T * d + T * d);
}

test('onPlan: called once, before the parameters are allocated, with what the loaded model then holds', async () => {
  const config = configOf('gpt2-lm');
  const start = memoryUsage().heapBytesInUse;
  const plans = [];
  let progressBeforePlan = false;
  const model = await loadModel(folderOf('gpt2-lm'), {
    onPlan: (plan) => plans.push({ plan, heldThen: memoryUsage().heapBytesInUse - start }),
    onProgress: () => { progressBeforePlan ||= plans.length === 0; },
  });
  try {
    assert.equal(plans.length, 1);
    assert.equal(progressBeforePlan, false, 'the plan comes before the first progress call');
    const [{ plan, heldThen }] = plans;
    assert.equal(plan.exact, true);
    assert.equal(plan.parameterBytes, model.parameterBytes, 'the plan\'s parameter bytes are what the model holds');
    assert.equal(plan.parameterBytes, 4 * plan.parameters);
    assert.ok(heldThen < plan.parameterBytes, `nothing in proportion to the model was allocated yet (${heldThen} bytes held)`);
    // n_positions is 12: the default 512 tokens is capped there.
    assert.equal(plan.tokens, config.n_positions);
    assert.ok(plan.workspaceBytes >= gpt2WorkspaceAtLeast(config, 12), `${plan.workspaceBytes} bytes of workspace`);
    assert.equal(plan.bytes, plan.parameterBytes + plan.workspaceBytes);
    assert.ok(plan.availableBytes >= plan.bytes && plan.availableBytes <= 2 ** 32);
    // The plan is enough: a forward pass of the planned length with every map runs.
    assert.equal(model.forward(Array.from({ length: plan.tokens }, (_, i) => i)).attention.shape[3], plan.tokens);
  } finally {
    model.dispose();
  }
});

test('a BF16 checkpoint keeps its matrices in 16 bits: the plan and the model say so', async () => {
  let plan;
  const model = await loadModel(folderOf('llama-bf16'), { onPlan: (p) => { plan = p; } });
  try {
    assert.equal(plan.exact, true);
    assert.equal(plan.parameterBytes, model.parameterBytes);
    assert.ok(plan.parameterBytes < 3 * plan.parameters, `${plan.parameterBytes} bytes for ${plan.parameters} parameters`);
    assert.ok(plan.parameterBytes >= 2 * plan.parameters);
  } finally {
    model.dispose();
  }
});

test('planTokens: the workspace follows the planned length; wrong types are TypeErrors, wrong values RangeErrors', async () => {
  const config = configOf('gpt2-lm');
  const planOf = async (planTokens) => {
    let got = null;
    (await loadModel(folderOf('gpt2-lm'), { planTokens, onPlan: (plan) => { got = plan; } })).dispose();
    return got;
  };
  const [four, twelve] = [await planOf(4), await planOf(12)];
  assert.equal(four.tokens, 4);
  assert.equal(four.parameterBytes, twelve.parameterBytes);
  assert.ok(four.workspaceBytes >= gpt2WorkspaceAtLeast(config, 4));
  assert.ok(four.workspaceBytes < twelve.workspaceBytes);
  assert.equal((await planOf(0)).tokens, 12, '0: the default, capped at n_positions');
  await assert.rejects(loadModel(folderOf('gpt2-lm'), { planTokens: 13 }), { name: 'RangeError', message: /^loadModel: planTokens: expected at most the model's 12 positions, got 13/ });
  await assert.rejects(loadModel(folderOf('gpt2-lm'), { planTokens: 2.5 }), { name: 'RangeError', message: /^loadModel: options\.planTokens: expected a whole number/ });
  await assert.rejects(loadModel(folderOf('gpt2-lm'), { planTokens: '8' }), { name: 'TypeError', message: /^loadModel: options\.planTokens: expected a number of tokens, got/ });
  await assert.rejects(loadModel(folderOf('gpt2-lm'), { onPlan: 1 }), { name: 'TypeError', message: /^loadModel: options\.onPlan: expected a function/ });
});

test('a config.json claiming a model too large to run is refused from the config alone, naming parameters and bytes; memory stays flat', async () => {
  // GPT-2 shaped, 48 layers × 64 heads of 16, n_embd 1024: about 655 M parameters (at least 1.3 GiB, its 604 M
  // matrix elements in 16 bits, under the 3.75 GiB the core accepts for parameters alone), but its attention maps
  // at 512 tokens take 48 · 64 · 512² · 4 bytes = 3 GiB more. The weight file given is the tiny fixture's: had its header been read, the load would
  // have failed on its shapes instead.
  const huge = { ...configOf('gpt2-lm'), n_layer: 48, n_head: 64, n_embd: 1024, n_inner: 4096, n_positions: 1024, n_ctx: 1024, vocab_size: 50257 };
  const files = withConfig('gpt2-lm', huge);
  const warm = await loadModel(filesOf('gpt2-lm'));
  warm.dispose();
  const start = memoryUsage();
  let planned = false;
  for (let i = 0; i < 3; i++) {
    await assert.rejects(loadModel(files, { onPlan: () => { planned = true; } }), (e) => {
      assert.equal(e.name, 'RangeError');
      assert.match(e.message, /^loadModel: config\.json: gpt2 with these sizes needs 4\.\d\d GiB \(\d{9} parameters: at least 1\.\d\d GiB held, and 3\.\d\d GiB to run 512 tokens with every attention map\), more than the \d\.\d\d GiB WebAssembly memory has left \(limit 4\.00 GiB\)/);
      return true;
    });
  }
  assert.equal(planned, false, 'refused before any header was read: no exact plan was made');
  assert.equal(memoryUsage().heapBytesInUse, start.heapBytesInUse);
  assert.equal(memoryUsage().wasmBytes, start.wasmBytes, 'WebAssembly memory did not grow');
  // Planned for fewer tokens, the same config gets past the plan to its (mismatching) header.
  await assert.rejects(loadModel(files, { planTokens: 16 }), { name: 'RangeError', message: /^loadModel: model\.safetensors: .*expected shape/ });
  // Parameters alone past what 4 GiB can hold (n_embd 40,000: about 19 G): refused before the plan, naming the file
  // too (before 2026-12-06 this message began "loadModel: gpt2 with these sizes").
  await assert.rejects(loadModel(withConfig('gpt2-lm', { ...huge, n_embd: 40_000, n_head: 40, n_inner: 160_000 })),
    { name: 'RangeError', message: /^loadModel: config\.json: gpt2 with these sizes has about \d+ parameters, which need \d+ bytes/ });
  // And the module is still usable.
  (await loadModel(filesOf('gpt2-lm'))).dispose();
  assert.equal(memoryUsage().heapBytesInUse, start.heapBytesInUse);
});

test('onPlan can stop the load before anything is allocated: by throwing, or by aborting', async () => {
  const start = memoryUsage();
  await assert.rejects(loadModel(folderOf('llama-gqa'), { onPlan: () => { throw new Error('too big for me'); } }), { message: 'too big for me' });
  const controller = new AbortController();
  await assert.rejects(loadModel(folderOf('llama-gqa'), { signal: controller.signal, onPlan: () => controller.abort(new Error('no')) }), { message: 'no' });
  assert.equal(memoryUsage().heapBytesInUse, start.heapBytesInUse);
});
