// Issue 32's hostile Hugging Face checkpoints through loadModel in the 32-bit WASM build: a 600-byte config naming
// 10^7 layers, JSON files past their limits (given whole, as Blobs, and sent by a server without a size), shard
// names that are paths, degenerate rotary settings, NaN and infinite weights, and our own format's metadata bomb.
// Each is a TypeError or RangeError naming the call, the file and the field, within 1 s, with WebAssembly memory
// grown by at most 64 MiB; a good model loads and runs after every one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { init, loadModel, memoryUsage } from 'attnscope';
import { hostile } from '../fuzz/hostile_models.mjs';

const MiB = 1024 ** 2;
const LIMIT_MS = 1000;
const fixture = (name, file) => readFileSync(new URL(`../fixtures/hf/${name}/${file}`, import.meta.url));
const json = (name, file) => JSON.parse(fixture(name, file).toString('utf8'));
const bytes = (value) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));
const gpt2 = () => ({ 'config.json': fixture('gpt2-lm', 'config.json'), 'model.safetensors': fixture('gpt2-lm', 'model.safetensors'),
  'tokenizer.json': fixture('gpt2-lm', 'tokenizer.json'), 'tokenizer_config.json': fixture('gpt2-lm', 'tokenizer_config.json') });

let server;
let base;
const requests = [];
before(async () => {
  await init();
  // A folder whose config.json never ends and is sent without a size; the llama-sharded fixture with an index
  // naming '..' as a shard; every path asked for is recorded.
  server = createServer((req, res) => {
    requests.push(req.url);
    if (req.url === '/endless/config.json') {
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no Content-Length
      const chunk = Buffer.alloc(1 << 20, 0x20);
      let sent = 0;
      const more = () => {
        while (sent < 1024 && res.write(chunk)) sent += 1;
        if (sent < 1024) res.once('drain', more);
        else res.end();
      };
      res.on('close', () => { sent = 1024; });
      more();
      return;
    }
    const dotted = /^\/dotted\/(.*)$/.exec(req.url);
    if (dotted) {
      const index = json('llama-sharded', 'model.safetensors.index.json');
      index.weight_map['model.norm.weight'] = '..';
      const body = dotted[1] === 'model.safetensors.index.json' ? bytes(index) : dotted[1] === 'config.json' ? fixture('llama-sharded', 'config.json') : null;
      if (!body) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-length': body.length }).end(body);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}/`;
});
after(() => server.close());

/** Runs a load that must fail: within LIMIT_MS and 64 MiB of growth, with `Kind` and a message matching `pattern`. */
async function refused(label, load, Kind, pattern) {
  const before = memoryUsage().wasmBytes;
  const t0 = performance.now();
  let error;
  try {
    await load();
  } catch (e) {
    error = e;
  }
  const ms = performance.now() - t0;
  assert.ok(error, `${label}: accepted`);
  assert.ok(error instanceof Kind, `${label}: ${error.name}: ${error.message}`);
  assert.match(error.message, pattern, label);
  assert.ok(error.message.length < 700, `${label}: a message of ${error.message.length} characters`);
  assert.ok(ms < LIMIT_MS, `${label}: took ${ms.toFixed(0)} ms`);
  const grown = memoryUsage().wasmBytes - before;
  assert.ok(grown <= 64 * MiB, `${label}: WebAssembly memory grew by ${(grown / MiB).toFixed(1)} MiB`);
  // A good model loads and runs after it.
  const model = await loadModel(gpt2());
  assert.equal(model.forward([1, 2, 3]).logits.shape[0], 3);
  model.dispose();
}

test('a 600-byte config naming 10^7 layers is refused by its field, within 1 s and without growing memory', async () => {
  const llama = { model_type: 'llama', hidden_size: 2, intermediate_size: 1, num_attention_heads: 1, num_key_value_heads: 1, vocab_size: 2,
    max_position_embeddings: 2, num_hidden_layers: 1e7 };
  assert.ok(bytes(llama).length < 600);
  await refused('llama, 1e7 layers', () => loadModel({ 'config.json': bytes(llama), 'model.safetensors': new Uint8Array(16) }), RangeError,
    /^loadModel: config\.json: num_hidden_layers: expected an integer from 1 to 1024, got 10000000$/);
  for (const [field, value] of [['n_layer', 1e6], ['n_head', 1e6], ['n_positions', 1e9], ['vocab_size', 1e9]]) {
    const config = { ...json('gpt2-lm', 'config.json'), [field]: value };
    await refused(`gpt2, ${field} ${value}`, () => loadModel({ ...gpt2(), 'config.json': bytes(config) }), RangeError,
      new RegExp(`^loadModel: config\\.json: ${field}: expected an integer from 1 to \\d+, got ${value}$`));
  }
});

test('JSON files past their limits are refused before they are read whole, naming the file, the size and the limit', async () => {
  const padded = (name, file, size) => {
    const text = new Uint8Array(size).fill(0x20);
    text.set(fixture(name, file));
    return text;
  };
  const big = 100 * 1000 * 1000;
  const cases = [
    ['config.json', 'gpt2-lm', big, 4 * MiB, 'bytes', (f) => ({ ...gpt2(), 'config.json': f })],
    ['config.json', 'gpt2-lm', big, 4 * MiB, 'Blob', (f) => ({ ...gpt2(), 'config.json': new Blob([f]) })],
    ['tokenizer.json', 'gpt2-lm', big, 64 * MiB, 'bytes', (f) => ({ ...gpt2(), 'tokenizer.json': f })],
    ['tokenizer_config.json', 'gpt2-lm', 5 * MiB, 4 * MiB, 'Blob', (f) => ({ ...gpt2(), 'tokenizer_config.json': new Blob([f]) })],
  ];
  for (const [file, name, size, limit, kind, files] of cases) {
    const data = padded(name, file, size);
    await refused(`${file} of ${size} bytes as ${kind}`, () => loadModel(files(data)), RangeError,
      new RegExp(`^loadModel: ${file.replace('.', '\\.')}: ${size} bytes, more than the ${limit} bytes a ${file.replace('.', '\\.')} may have`));
  }
  const sharded = { 'config.json': fixture('llama-sharded', 'config.json'),
    'model.safetensors.index.json': padded('llama-sharded', 'model.safetensors.index.json', big) };
  await refused('an index of 100 MB', () => loadModel(sharded), RangeError,
    /^loadModel: model\.safetensors\.index\.json: 100000000 bytes, more than the 67108864 bytes/);
  // A server that sends a config without its size, and never stops: refused once 4 MiB have arrived.
  await refused('an endless config.json without a Content-Length', () => loadModel(`${base}endless/`), RangeError,
    /^loadModel: config\.json: at least \d+ bytes, more than the 4194304 bytes a config\.json may have/);
});

test('a shard named ".." is refused from the index, before anything is fetched from the folder or its parent', async () => {
  requests.length = 0;
  await refused('a shard named ".."', () => loadModel(`${base}dotted/`), RangeError,
    /^loadModel: model\.safetensors\.index\.json: weight_map\['model\.norm\.weight'\]: expected a file name, got ".."$/);
  assert.deepEqual(requests.filter((url) => !url.endsWith('.json')), [], 'no weight file, no parent folder');
});

test('degenerate rotary settings are refused by name', async () => {
  const files = (config) => ({ 'config.json': bytes(config), 'model.safetensors': fixture('llama-gqa', 'model.safetensors') });
  const llama = json('llama-gqa', 'config.json');
  await refused('rope_theta 1e-300', () => loadModel(files({ ...llama, rope_theta: 1e-300 })), RangeError,
    /^loadModel: config\.json: rope_theta: expected a number above 1, got 1e-300$/);
  await refused('rope_theta 1', () => loadModel(files({ ...llama, rope_theta: 1 })), RangeError, /^loadModel: config\.json: rope_theta: /);
  await refused('rope_scaling.factor 1e-300', () => loadModel(files({ ...llama, rope_scaling: { rope_type: 'linear', factor: 1e-300 } })), RangeError,
    /^loadModel: config\.json: rope_scaling\.factor: expected a number from 1\/1024 to 1000000, got 1e-300$/);
});

/** The gpt2-lm fixture's model.safetensors with `values` (F32) written at element `at` of `tensor`. */
function withValues(tensor, at, values) {
  const file = new Uint8Array(fixture('gpt2-lm', 'model.safetensors'));
  const n = Number(new DataView(file.buffer, file.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + n)));
  const view = new DataView(file.buffer, file.byteOffset + 8 + n + header[tensor].data_offsets[0]);
  values.forEach((v, i) => view.setFloat32(4 * (at + i), v, true));
  return file;
}

test('NaN and infinite weights are refused naming the tensor and the count, unless allowNonFinite', async () => {
  const files = { ...gpt2(), 'model.safetensors': withValues('transformer.h.0.attn.c_proj.weight', 3, [NaN, Infinity, -Infinity, 1]) };
  await refused('NaN weights', () => loadModel(files), RangeError,
    /^loadModel: model\.safetensors: 'transformer\.h\.0\.attn\.c_proj\.weight' holds 3 values that are NaN or infinite \(.*allowNonFinite: true/);
  const model = await loadModel(files, { allowNonFinite: true });
  assert.ok(model.forward([1, 2]).logits.data.some(Number.isNaN), 'allowed: the NaN reaches the logits, as the caller asked');
  model.dispose();
});

test("our own format's metadata that is not an object is refused at its first byte, not after parsing it", async () => {
  // The safetensors header around it is still read (a string of 16 MiB); the config inside is never parsed.
  const file = hostile.metadataBomb(16 * MiB);
  const t0 = performance.now();
  await assert.rejects(loadModel(file), (error) => error instanceof TypeError &&
    /^loadModel: __metadata__\.config: expected a JSON object, got an array \[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0…$/.test(error.message));
  const ms = performance.now() - t0;
  assert.ok(ms < 2 * LIMIT_MS, `took ${ms.toFixed(0)} ms`);
});

test('a header with 100,000 entries the config cannot mean is refused once parsed, before any is read', async () => {
  const file = fixture('gpt2-lm', 'model.safetensors');
  const n = Number(file.readBigUInt64LE(0));
  const header = JSON.parse(file.subarray(8, 8 + n).toString('utf8'));
  const extra = {};
  for (let i = 0; i < 1e5; ++i) extra[`transformer.h.${i}.attn.bias`] = { dtype: 'F32', shape: [0], data_offsets: [0, 0] };
  const text = bytes({ ...extra, ...header });
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(text.length));
  // An 8 MB header, parsed once (issue 32: every entry was read; a million took 10.5 s natively, 100 s in WASM, 10 s now).
  await refused('1e5 ignored entries', () => loadModel({ ...gpt2(), 'model.safetensors': Buffer.concat([length, text, file.subarray(8 + n)]) }), RangeError,
    /^loadModel: model\.safetensors: header: 100031 entries, more than the \d+ tensors a checkpoint with this config can hold$/);
});

test("a tokenizer.json with more entries than config.json's vocabulary is refused before the library builds it", async () => {
  const tokenizer = json('gpt2-lm', 'tokenizer.json');
  for (let i = 0; i < 1e5; ++i) tokenizer.model.vocab[`tok${i}`] = 268 + i;
  const text = bytes(tokenizer);
  // Issue 32: a 2-million-entry vocabulary took 17 s to load, most of it in the library's constructor.
  await refused('100,000 vocabulary entries', () => loadModel({ ...gpt2(), 'tokenizer.json': text }), RangeError,
    /^loadModel: tokenizer\.json: model\.vocab: expected at most 268 entries \(config\.json's vocabulary\), got 100,268$/);
});
