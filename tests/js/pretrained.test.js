// Hugging Face checkpoints end to end: every fixture case (tests/fixtures/hf) through loadModel from every kind of
// source, its hidden state, logits and attention against the float64 PyTorch reference, generate against the
// reference tokens, BERT's masks and token types, trace, and the errors and memory of loads that go wrong.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { init, loadModel, memoryUsage, EncoderModel, PretrainedLanguageModel } from 'attnscope';
import { maxRelativeError } from './helpers.js';

const fixtures = new URL('../fixtures/hf/', import.meta.url);
const cases = JSON.parse(readFileSync(new URL('cases.json', fixtures), 'utf8'));
const folderOf = (name) => new URL(`${name}/`, fixtures);
const filesOf = (name) => readdirSync(folderOf(name)).filter((f) => f !== 'reference.json');
const bytesOf = (name, file) => new Uint8Array(readFileSync(new URL(file, folderOf(name))));
const referenceOf = (name) => JSON.parse(readFileSync(new URL('reference.json', folderOf(name)), 'utf8'));

// The project's tolerances: logits and hidden states 1e-4 of their largest magnitude, attention weights 2e-5.
const maxAbsoluteError = (a, b) => (a.length !== b.length ? Infinity : a.reduce((w, x, i) => Math.max(w, Math.abs(x - b[i]) || (Number.isNaN(x) ? Infinity : 0)), 0));
function expectClose(actual, expected, label, kind) {
  assert.ok(actual, `${label}: ${kind} returned`);
  assert.deepEqual(actual.shape, expected.shape, `${label}: ${kind} shape`);
  const error = kind === 'attention' ? maxAbsoluteError(actual.data, expected.data) : maxRelativeError(actual.data, expected.data);
  assert.ok(error <= (kind === 'attention' ? 2e-5 : 1e-4), `${label}: ${kind} error ${error}`);
}

function checkInputs(model, name, label) {
  const reference = referenceOf(name);
  for (const [i, input] of reference.inputs.entries()) {
    const options = {};
    if (input.attention_mask) options.attentionMask = input.attention_mask;
    if (input.token_type_ids && model instanceof EncoderModel) options.tokenTypeIds = input.token_type_ids;
    const out = model.forward(input.input_ids, options);
    const at = `${label} input ${i}`;
    assert.deepEqual(out.ids, input.input_ids);
    expectClose(out.hidden, input.hidden, at, 'hidden');
    expectClose(out.attention, input.attention, at, 'attention');
    if (input.logits) expectClose(out.logits, input.logits, at, 'logits');
    else assert.equal(out.logits, null, `${at}: no head, no logits`);
  }
  if (reference.generate) {
    const { prompt, max_new_tokens: maxNewTokens, tokens } = reference.generate;
    assert.deepEqual(model.generate(prompt, { maxNewTokens, stopToken: null }).ids, tokens, `${label}: generate`);
  }
}

let server;
let base;
before(async () => {
  await init();
  // tests/fixtures/hf/ over HTTP with Content-Length, as a static server or the Hub sends files (Node's fetch cannot
  // read file: URLs, so this is how the URL sources are tested).
  server = createServer((req, res) => {
    try {
      const body = readFileSync(new URL(decodeURIComponent(req.url).slice(1), fixtures));
      res.writeHead(200, { 'Content-Length': body.length }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}/`;
});
after(() => server.close());

const sourceKinds = {
  ArrayBuffer: (name) => Object.fromEntries(filesOf(name).map((f) => [f, bytesOf(name, f).slice().buffer])),
  Uint8Array: (name) => Object.fromEntries(filesOf(name).map((f) => [f, bytesOf(name, f)])),
  Blob: (name) => Object.fromEntries(filesOf(name).map((f) => [f, new Blob([bytesOf(name, f)])])),
  'URL per file': (name) => Object.fromEntries(filesOf(name).map((f) => [f, new URL(`${name}/${f}`, base)])),
  'folder URL': (name) => `${base}${name}/`,
  'file: folder URL': (name) => folderOf(name),
};

test('the fixtures list their cases', () => assert.ok(cases.length >= 3));

for (const { case: name, family } of cases) {
  test(`${name}: from every source kind, hidden, logits, attention and generate match the reference`, async () => {
    for (const [kind, make] of Object.entries(sourceKinds)) {
      const model = await loadModel(make(name));
      try {
        assert.equal(model.config.family, family);
        assert.ok(family === 'bert' ? model instanceof EncoderModel : model instanceof PretrainedLanguageModel, `${kind}: class`);
        checkInputs(model, name, `${name} (${kind})`);
      } finally {
        model.dispose();
      }
    }
  });
}

test('grouped-query attention: one map per query head, and the config from the core says how heads share keys', async () => {
  const model = await loadModel(folderOf('llama-gqa'));
  const config = JSON.parse(readFileSync(new URL('llama-gqa/config.json', fixtures), 'utf8'));
  assert.equal(model.config.heads, config.num_attention_heads);
  assert.equal(model.config.kvHeads, config.num_key_value_heads);
  assert.ok(model.config.kvHeads < model.config.heads);
  const { attention } = model.forward([1, 2, 3, 4, 5]);
  assert.deepEqual(attention.shape, [config.num_hidden_layers, config.num_attention_heads, 5, 5]);
  assert.deepEqual(model.config.positions, { kind: 'rope', theta: config.rope_theta ?? 10000, rotaryDim: config.head_dim, scaling: null });
  model.dispose();
});

test('text in: gpt2-lm tokenizes the reference sentence to its ids, with readable tokens; generate gives text', async () => {
  const model = await loadModel(folderOf('gpt2-lm'));
  const [input] = referenceOf('gpt2-lm').inputs;
  const out = model.forward(input.text);
  assert.deepEqual(out.ids, input.input_ids);
  assert.deepEqual(out.tokens, ['the', '␣cat', '␣sat', '␣on', '␣the', '␣', 'm', 'at']);
  expectClose(out.logits, input.logits, 'gpt2-lm text', 'logits');
  const generated = model.generate('the cat', { maxNewTokens: 3 });
  assert.equal(generated.ids.length, 3);
  assert.equal(typeof generated.text, 'string');
  assert.equal(model.eosTokenId, 267);
  model.dispose();
});

test('BERT: attentionMask (1 = real, 0 = padding) and tokenTypeIds change the result as the reference says', async () => {
  const model = await loadModel(folderOf('bert-mlm'));
  const input = referenceOf('bert-mlm').inputs.find((i) => i.attention_mask.includes(0) && i.token_type_ids.includes(1));
  assert.ok(input, 'the fixture has a padded sentence pair');
  const full = model.forward(input.input_ids, { attentionMask: input.attention_mask, tokenTypeIds: input.token_type_ids });
  expectClose(full.hidden, input.hidden, 'bert pair', 'hidden');
  // Padded keys get no weight from any query.
  const T = input.input_ids.length;
  for (let row = 0; row < full.attention.data.length / T; row++) {
    input.attention_mask.forEach((m, key) => m === 0 && assert.equal(full.attention.data[row * T + key], 0));
  }
  // Without either option the numbers differ from the reference: the options are not ignored.
  const noMask = model.forward(input.input_ids, { tokenTypeIds: input.token_type_ids });
  const noTypes = model.forward(input.input_ids, { attentionMask: input.attention_mask });
  assert.ok(maxRelativeError(noMask.hidden.data, input.hidden.data) > 1e-3);
  assert.ok(maxRelativeError(noTypes.hidden.data, input.hidden.data) > 1e-3);
  // trace takes the same options: a padded key is not visible, and the weights are the reference's row.
  const [layer, head, query] = [1, 1, 2];
  const t = model.trace(input.input_ids, { layer, head, query, attentionMask: input.attention_mask, tokenTypeIds: input.token_type_ids });
  assert.deepEqual(Array.from(t.visible), input.attention_mask);
  const at = ((layer * model.config.heads + head) * T + query) * T;
  assert.ok(maxAbsoluteError(t.weights.data, input.attention.data.slice(at, at + T)) <= 2e-5);
  // A pair through the tokenizer: [CLS] a [SEP] b [SEP] and its token types.
  const { ids, tokenTypeIds } = model.tokenize('the dogs', { pair: 'played' });
  assert.equal(tokenTypeIds.at(-1), 1);
  assert.equal(model.forward(ids, { tokenTypeIds }).hidden.shape[0], ids.length);
  model.dispose();
});

test('trace: one head at one query, the same weights as forward and the reference, softmax of the scaled scores', async () => {
  const model = await loadModel(folderOf('llama-gqa'));
  const [input] = referenceOf('llama-gqa').inputs;
  const T = input.input_ids.length;
  const [layer, head, query] = [1, 3, T - 2];
  const t = model.trace(input.input_ids, { layer, head, query });
  assert.equal(t.kvHead, Math.floor(head / (model.config.heads / model.config.kvHeads)));
  const { heads } = model.config;
  const referenceRow = input.attention.data.slice(((layer * heads + head) * T + query) * T, ((layer * heads + head) * T + query + 1) * T);
  assert.ok(maxAbsoluteError(t.weights.data, referenceRow) <= 2e-5);
  // Computed here from the trace's own scores: softmax over the visible keys of scores × scale.
  const visible = Array.from(t.visible);
  assert.deepEqual(visible, Array.from({ length: T }, (_, k) => (k <= query ? 1 : 0)), 'causal');
  const scaled = Array.from(t.scores.data, (s, k) => (visible[k] ? s * t.scale : -Infinity));
  const top = Math.max(...scaled);
  const sum = scaled.reduce((a, s) => a + Math.exp(s - top), 0);
  assert.ok(maxAbsoluteError(t.weights.data, scaled.map((s) => Math.exp(s - top) / sum)) <= 1e-6);
  assert.deepEqual(t.keys.shape, [T, model.config.headDim]);
  assert.throws(() => model.trace(input.input_ids, { layer: model.config.layers, head, query }), { name: 'RangeError', message: /^LanguageModel\.trace: layer: / });
  assert.throws(() => model.trace(input.input_ids, { layer, head }), { name: 'TypeError', message: /^LanguageModel\.trace: options\.query: expected a whole number/ });
  model.dispose();
});

test('wrong inputs and options are TypeErrors, wrong values RangeErrors, each naming the call and the argument', async () => {
  const model = await loadModel(folderOf('gpt2-base')); // no tokenizer
  const f = 'LanguageModel.forward';
  assert.throws(() => model.forward(42), { name: 'TypeError', message: new RegExp(`^${f}: input: expected text or an array of token ids, got number 42`) });
  assert.throws(() => model.forward('text'), { name: 'TypeError', message: new RegExp(`^${f}: this checkpoint came without tokenizer\\.json`) });
  assert.throws(() => model.forward([1, '2']), { name: 'TypeError', message: new RegExp(`^${f}: input\\[1\\]: expected a token id \\(a whole number\\), got string`) });
  assert.throws(() => model.forward([1], { needAttention: 'yes' }), { name: 'TypeError', message: new RegExp(`^${f}: options\\.needAttention: expected true or false`) });
  assert.throws(() => model.forward([1], { tokenTypeIds: [0] }), { name: 'TypeError', message: new RegExp(`^${f}: options: unknown option 'tokenTypeIds'`) });
  assert.throws(() => model.trace([1], { layer: 0, head: 0, query: 0, tokenTypeIds: [0] }), { name: 'TypeError', message: /^LanguageModel\.trace: options: unknown option 'tokenTypeIds'/ });
  assert.throws(() => model.forward([1], { attentionMask: 'all' }), { name: 'TypeError', message: new RegExp(`^${f}: options\\.attentionMask: expected an array of 1`) });
  assert.throws(() => model.forward([model.config.vocabSize]), { name: 'RangeError', message: new RegExp(`^${f}: tokens\\[0\\]: .*${model.config.vocabSize - 1}`) });
  assert.throws(() => model.forward([1.5]), { name: 'RangeError', message: new RegExp(`^${f}: tokens\\[0\\]: expected a token id from 0 to \\d+, got 1\\.5`) });
  assert.throws(() => model.forward([1, 2], { attentionMask: [1, 2] }), { name: 'RangeError', message: new RegExp(`^${f}: attentionMask\\[1\\]`) });
  assert.throws(() => model.generate([1], { maxNewTokens: -1 }), { name: 'RangeError', message: /^LanguageModel\.generate: options\.maxNewTokens: / });
  assert.throws(() => model.generate([1], { stopToken: 'eos' }), { name: 'TypeError', message: /^LanguageModel\.generate: options\.stopToken: / });
  assert.equal(model.forward([1, 2]).tokens, null);
  assert.deepEqual(model.forward([1, 2]).ids, [1, 2], 'usable after errors');
  model.dispose();
});

test('a checkpoint folder without its trailing slash is a TypeError that says to add it', async () => {
  const folder = folderOf('gpt2-lm').href.slice(0, -1);
  await assert.rejects(loadModel(new URL(folder)), { name: 'TypeError', message: /^loadModel: source: file:.*gpt2-lm is a folder; .* trailing \/ / });
});

test('after dispose every call throws, naming the call; dispose twice is fine', async () => {
  const model = await loadModel(folderOf('bert-mlm'));
  model.dispose();
  model.dispose();
  assert.throws(() => model.forward([2, 3]), { message: /^EncoderModel\.forward: this model was disposed/ });
  assert.throws(() => model.tokenize('a'), { message: /^EncoderModel\.tokenize: this model was disposed/ });
  assert.throws(() => model.trace([2, 3], { layer: 0, head: 0, query: 0 }), { message: /^EncoderModel\.trace: this model was disposed/ });
});

const configOf = (name) => JSON.parse(readFileSync(new URL(`${name}/config.json`, fixtures), 'utf8'));
const withConfig = (name, config) => ({ ...sourceKinds.Uint8Array(name), 'config.json': new TextEncoder().encode(typeof config === 'string' ? config : JSON.stringify(config)) });

test('a corrupted config.json is a TypeError or RangeError naming loadModel, config.json and the field', async () => {
  const config = configOf('gpt2-lm');
  const table = [
    [{ ...config, n_head: 'two' }, TypeError, /n_head/],
    [{ ...config, n_layer: -1 }, RangeError, /n_layer/],
    [{ ...config, n_head: 3 }, RangeError, /n_head/],
    [{ ...config, model_type: 'gpt5' }, RangeError, /model_type/],
    ['{"model_type": "gpt2", ', RangeError, /JSON/],
  ];
  for (const [bad, ErrorClass, field] of table) {
    await assert.rejects(loadModel(withConfig('gpt2-lm', bad)), (e) => e instanceof ErrorClass && /^loadModel: config\.json: /.test(e.message) && field.test(e.message), JSON.stringify(bad).slice(0, 60));
  }
  // Sizes that cannot fit in WebAssembly memory are refused from the config alone, before any weights are read: a
  // size past its limit by name, sizes within their limits by the bytes they need.
  await assert.rejects(loadModel(withConfig('gpt2-lm', { ...config, vocab_size: 3e8 })), { name: 'RangeError', message: /^loadModel: config\.json: vocab_size: expected an integer from 1 to 4194304, got 300000000$/ });
  await assert.rejects(loadModel(withConfig('gpt2-lm', { ...config, vocab_size: 4e6, n_embd: 4096, n_head: 32 })), { name: 'RangeError', message: /^loadModel: .*bytes/ });
});

test('a missing shard is named; a truncated weight file is refused; memory stays flat across failures', async () => {
  const files = sourceKinds.Uint8Array('llama-sharded');
  const shard = Object.keys(files).find((f) => f.includes('00002'));
  const start = memoryUsage().heapBytesInUse;
  await assert.rejects(loadModel({ ...files, [shard]: undefined }), { name: 'TypeError', message: /^loadModel: files\[.*\]: expected/ });
  const { [shard]: _, ...missing } = files;
  await assert.rejects(loadModel(missing), { name: 'TypeError', message: new RegExp(`^loadModel: files\\['${shard}'\\]: missing`) });
  const whole = bytesOf('gpt2-lm', 'model.safetensors');
  await assert.rejects(loadModel({ ...sourceKinds.Uint8Array('gpt2-lm'), 'model.safetensors': whole.subarray(0, whole.length - 5) }), (e) => (e instanceof TypeError || e instanceof RangeError) && /^loadModel: /.test(e.message));
  // Cut inside its header: the message names the file, not just "safetensors".
  await assert.rejects(loadModel({ ...sourceKinds.Uint8Array('gpt2-lm'), 'model.safetensors': whole.subarray(0, 100) }), { name: 'RangeError', message: /^loadModel: model\.safetensors: header length \d+ runs past the end of the file \(100 bytes\)/ });
  assert.equal(memoryUsage().heapBytesInUse, start);
});

test('loading and disposing in a loop, and aborting mid-load, leave WebAssembly memory flat', async () => {
  const warm = await loadModel(`${base}llama-sharded/`);
  warm.dispose();
  const start = memoryUsage();
  for (let i = 0; i < 10; i++) (await loadModel(sourceKinds.Blob('qwen3-qknorm'))).dispose();
  for (const url of [`${base}llama-sharded/`, folderOf('llama-sharded')]) {
    const controller = new AbortController();
    let calls = 0;
    const onProgress = () => ++calls === 2 && controller.abort(new Error('cancelled'));
    await assert.rejects(loadModel(url, { signal: controller.signal, onProgress }), { message: 'cancelled' });
    assert.equal(calls, 2);
  }
  assert.equal(memoryUsage().heapBytesInUse, start.heapBytesInUse);
  assert.equal(memoryUsage().wasmBytes, start.wasmBytes);
});

test('gpt_neox: config fields of the wrong type or value are refused by name; the ones read change the result', async () => {
  const config = configOf('gpt-neox-parallel');
  const table = [
    [{ rotary_pct: '0.25' }, TypeError, /^loadModel: config\.json: rotary_pct: expected a number, got a string/],
    [{ rotary_pct: 2 }, RangeError, /^loadModel: config\.json: rotary_pct: expected a number from 0 to 1, got 2$/],
    [{ rotary_pct: 0.1875 }, RangeError, /^loadModel: config\.json: rotary_pct: 0\.1875 rotates 3 features of a head of 16/],
    [{ rotary_emb_base: 0.5 }, RangeError, /^loadModel: config\.json: rotary_emb_base: /],
    [{ use_parallel_residual: 1 }, TypeError, /^loadModel: config\.json: use_parallel_residual: expected a boolean/],
    [{ attention_bias: 'no' }, TypeError, /^loadModel: config\.json: attention_bias: expected a boolean/],
    [{ architectures: ['LlamaForCausalLM'] }, RangeError, /^loadModel: config\.json: architectures: "LlamaForCausalLM" is not a class of model_type "gpt_neox"/],
  ];
  for (const [change, ErrorClass, message] of table) {
    await assert.rejects(loadModel(withConfig('gpt-neox-parallel', { ...config, ...change })), (e) => e instanceof ErrorClass && message.test(e.message), JSON.stringify(change));
  }
  const model = await loadModel(folderOf('gpt-neox-parallel'));
  assert.deepEqual(model.config.positions, { kind: 'rope', theta: 10000, rotaryDim: 4, scaling: null });
  model.dispose();
  // Read, not ignored: the same weights with the other residual wiring, or more of each head rotated, differ.
  const [input] = referenceOf('gpt-neox-parallel').inputs;
  for (const change of [{ use_parallel_residual: false }, { rotary_pct: 0.5 }]) {
    const other = await loadModel(withConfig('gpt-neox-parallel', { ...config, ...change }));
    assert.ok(maxRelativeError(other.forward(input.input_ids).hidden.data, input.hidden.data) > 1e-3, JSON.stringify(change));
    other.dispose();
  }
});

test("openai-community/gpt2's own layout (no transformer. prefix, GPT2LMHeadModel) has its tied head; architectures must match model_type", async () => {
  const model = await loadModel(folderOf('gpt2-lm-noprefix'));
  assert.ok(Object.keys(sourceKinds.Uint8Array('gpt2-lm-noprefix')).includes('model.safetensors'));
  assert.equal(model.config.hasLmHead, true);
  const [input] = referenceOf('gpt2-lm-noprefix').inputs;
  expectClose(model.forward(input.input_ids).logits, input.logits, 'gpt2-lm-noprefix', 'logits');
  assert.equal(model.generate([3, 40, 7], { maxNewTokens: 2, stopToken: null }).ids.length, 2);
  model.dispose();
  // The same file saved as GPT2Model: hidden states only.
  const base = await loadModel(withConfig('gpt2-lm-noprefix', { ...configOf('gpt2-lm-noprefix'), architectures: ['GPT2Model'] }));
  assert.equal(base.forward(input.input_ids).logits, null);
  base.dispose();
  await assert.rejects(loadModel(withConfig('llama-gqa', { ...configOf('llama-gqa'), architectures: ['BertForMaskedLM'] })), {
    name: 'RangeError',
    message: /^loadModel: config\.json: architectures: "BertForMaskedLM" is not a class of model_type "llama" read here \(expected LlamaForCausalLM, LlamaModel\)$/,
  });
});

test('phi3: partial_rotary_factor and LongRoPE are read, their wrong values refused by name', async () => {
  const config = configOf('phi3-longrope-partial');
  const scaling = config.rope_scaling;
  const table = [
    [{ partial_rotary_factor: true }, TypeError, /^loadModel: config\.json: partial_rotary_factor: expected a number, got a boolean/],
    [{ partial_rotary_factor: 0.375 }, RangeError, /^loadModel: config\.json: partial_rotary_factor: 0\.375 rotates 3 features of a head of 8/],
    [{ rope_scaling: { ...scaling, type: 'dynamic' } }, RangeError, /^loadModel: config\.json: rope_scaling\.type: "dynamic" is not supported \(expected "longrope"/],
    [{ rope_scaling: { ...scaling, long_factor: [1, 2] } }, RangeError, /^loadModel: config\.json: rope_scaling\.long_factor: expected 3 numbers/],
    [{ rope_scaling: { ...scaling, short_factor: [1, null, 2] } }, TypeError, /^loadModel: config\.json: rope_scaling\.short_factor\[1\]: expected a number, got null/],
    [{ original_max_position_embeddings: -6 }, RangeError, /^loadModel: config\.json: original_max_position_embeddings: expected an integer from 2/],
  ];
  for (const [change, ErrorClass, message] of table) {
    await assert.rejects(loadModel(withConfig('phi3-longrope-partial', { ...config, ...change })), (e) => e instanceof ErrorClass && message.test(e.message), JSON.stringify(change));
  }
  const model = await loadModel(folderOf('phi3-longrope-partial'));
  assert.deepEqual(model.config.positions, { kind: 'rope', theta: 10000, rotaryDim: 6, scaling: { type: 'longrope', factor: 4096 / 6, originalMaxPositions: 6 } });
  model.dispose();
  // The long factors are read: with the short ones in their place, the 8-token input (past position 6) differs.
  const input = referenceOf('phi3-longrope-partial').inputs.find((i) => i.input_ids.length > 6);
  const short = await loadModel(withConfig('phi3-longrope-partial', { ...config, rope_scaling: { ...scaling, long_factor: scaling.short_factor } }));
  assert.ok(maxRelativeError(short.forward(input.input_ids).hidden.data, input.hidden.data) > 1e-3);
  short.dispose();
});
