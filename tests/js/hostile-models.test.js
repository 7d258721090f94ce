// Issue #24's hostile model files against the package in dist/, whose WASM build has 32-bit sizes: the products
// of config sizes that wrap there are refused with a RangeError, decoding stays small when <eos> comes early, and
// metadata bombs and repeated or mistyped named-head keys are refused while reading. The files are made by
// tests/fuzz/hostile_models.mjs (the fuzz corpus holds the same cases).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { init, loadModel, memoryUsage } from 'attnscope';
import { hostile } from '../fuzz/hostile_models.mjs';

const MiB = 1024 ** 2;
before(() => init());

test('translate("a") with default options on a file whose L·H·steps² wraps 32 bits: a RangeError, then the model still works', async () => {
  const bytes = hostile.seq2seqWrap();
  assert.ok(bytes.length < 270_000, `${bytes.length} bytes: the report's 266 KB file`);
  const model = await loadModel(bytes);
  assert.equal(model.config.maxTargetLen, 65537);
  // Before: self_weights of 1·1·65536² floats = 0 in 32 bits, and a heap overflow at the first decoding step. The
  // worst case of a maxSteps is checked before decoding; by default translate stops at 512 steps (issue 32).
  assert.throws(() => model.translate('a', { maxSteps: 65536 }), (error) => error instanceof RangeError &&
    /^Seq2SeqModel\.translate: maxSteps 65536: the caches and attention maps of 65536 steps would need \d+ MiB, more than WebAssembly's 4 GiB; pass a smaller maxSteps$/.test(error.message));
  assert.throws(() => model.translate('a', { maxSteps: 20000 }), (error) => error instanceof RangeError &&
    /^Seq2SeqModel\.translate: maxSteps 20000: after \d+ steps without the end token, .* MiB a call may take; pass a maxSteps of at most \d+$/.test(error.message));
  assert.equal(model.translate('a').outputIds.length, 512);
  const { outputIds, decoderAttention } = model.translate('a', { maxSteps: 50 });
  assert.deepEqual(outputIds, new Array(50).fill(0), 'head.bias never picks <eos>');
  assert.deepEqual(decoderAttention.shape, [1, 1, 50, 50]);
  model.dispose();
});

test('translate with max_tgt_len 20001 and <eos> at the first step grows no memory', async () => {
  const model = await loadModel(hostile.seq2seqLongTarget());
  const before = memoryUsage().wasmBytes;
  // Before: 2 layers × 1 head × 20000² floats (3.2 GB) allocated up front.
  const { outputIds, crossAttention } = model.translate('a');
  assert.deepEqual(outputIds, [model.vocab.targetEosId]);
  assert.deepEqual(crossAttention.shape, [2, 1, 1, 1]);
  const grown = memoryUsage().wasmBytes - before;
  assert.ok(grown < 16 * MiB, `WASM memory grew by ${grown} bytes`);
  model.dispose();
});

test("forward on max_len tokens of the report's language model (d_ff 2^20 + 1, 4096 tokens): a RangeError before anything is allocated", async () => {
  const bytes = hostile.wideMlp(2 ** 20 + 1, 4096);
  const model = await loadModel(bytes);
  const before = memoryUsage().wasmBytes;
  // Before: 4096 × 1048577 floats wrapped to 4096, and fc1 wrote 16 GB past them.
  assert.throws(() => model.forward(new Array(4096).fill(0), { needAttention: false }), (error) => error instanceof RangeError &&
    // The core's message names the call (for C++ callers); the wrapper does not name it a second time.
    /^LanguageModel\.forward: the MLP's workspace of 4096 tokens needs 4294971392 floats, more than the address space holds; pass fewer tokens$/.test(error.message));
  assert.equal(memoryUsage().wasmBytes, before, 'refused without growing WASM memory');
  assert.deepEqual(model.forward([0, 1]).logits.shape, [2, 2]);
  model.dispose();
});

test('a metadata bomb ("[0,0,…]" as config) is refused within about its own size of memory', async () => {
  const bytes = hostile.metadataBomb(32 * MiB);
  const before = memoryUsage().wasmBytes;
  await assert.rejects(loadModel(bytes), (error) => error instanceof TypeError &&
    /^loadModel: __metadata__\.config: expected a JSON object, got an array \[0,0,/.test(error.message));
  // Before: 16 bytes per JSON node (a node per 2 bytes) plus copies of the text: ~10× the file. Now the file's
  // copy in WASM memory and the metadata decoded once.
  const grown = memoryUsage().wasmBytes - before;
  assert.ok(grown < 3 * bytes.length, `WASM memory grew by ${(grown / MiB).toFixed(0)} MiB for a ${(bytes.length / MiB).toFixed(0)} MiB file`);
});

test('named heads with a key twice, or of the wrong type, are refused (C++ and JSON.parse would read different values)', async () => {
  await assert.rejects(loadModel(hostile.duplicateNamedHeads()), (error) => error instanceof RangeError &&
    /^loadModel: __metadata__\.named_heads: invalid JSON: the key 'head' appears twice in an object \(at bytes \d+ and \d+\)$/.test(error.message));
  await assert.rejects(loadModel(hostile.mistypedNamedHeads()), (error) => error instanceof TypeError &&
    /^loadModel: __metadata__\.named_heads\[0\]\.name: expected a string, got an object \{\}$/.test(error.message));
});
