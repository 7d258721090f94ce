// Model files as hostile input: the shipped safetensors files read by an independent reader (plain DataView), and
// a table of corrupted files, each of which must give a clear TypeError/RangeError naming loadModel or, when the
// corruption leaves the model's meaning intact, exactly the intact model's output — never something in between.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { init, loadModel, memoryUsage, readSafetensors, MultiHeadAttention } from 'attnscope';
import { randomTensor } from './helpers.js';

const modelPath = (name) => new URL(`../../models/${name}`, import.meta.url);
const seq2seqBytes = new Uint8Array(readFileSync(modelPath('dates-seq2seq.safetensors')));
const lmBytes = new Uint8Array(readFileSync(modelPath('char-lm.safetensors')));

// --- an independent reader and writer of the safetensors layout (the spec, not our code) ---------------------------
function parseFile(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = Number(view.getBigUint64(0, true));
  const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + length));
  return { length, text, header: JSON.parse(text), dataStart: 8 + length };
}

function encodeFile(header, data) {
  let text = new TextEncoder().encode(JSON.stringify(header));
  const padded = new Uint8Array(Math.ceil(text.length / 8) * 8).fill(0x20);
  padded.set(text);
  text = padded;
  const out = new Uint8Array(8 + text.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  out.set(data, 8 + text.length);
  return out;
}

const dataOf = (bytes) => bytes.subarray(parseFile(bytes).dataStart);
const withHeader = (bytes, edit) => {
  const header = parseFile(bytes).header;
  edit(header);
  return encodeFile(header, dataOf(bytes));
};
const withMetadata = (bytes, key, edit) => withHeader(bytes, (h) => {
  const value = JSON.parse(h.__metadata__[key]);
  const replaced = edit(value);
  h.__metadata__[key] = JSON.stringify(replaced === undefined ? value : replaced);
});
const withLength = (bytes, length) => {
  const out = bytes.slice();
  new DataView(out.buffer).setBigUint64(0, BigInt(length), true);
  return out;
};

// --- the intact model's output, and the outcome of a corrupted file ----------------------------------------------
const sourceIds = [5, 17, 40, 3];
let intact;

function run(model) {
  const translated = model.translate(sourceIds);
  const forward = model.forward(sourceIds, [model.vocab.targetBosId, 4, 5]);
  return { ids: translated.outputIds, cross: Array.from(translated.crossAttention.data), logits: Array.from(forward.logits.data) };
}

const rejectTimes = [];

/** 'error' with the error, or 'exact' when the file loads and gives the intact model's output. Fails otherwise. */
async function outcome(bytes, label) {
  const started = performance.now();
  let model;
  try {
    model = await loadModel(bytes);
  } catch (error) {
    rejectTimes.push({ label, ms: performance.now() - started, bytes: bytes.length });
    assert.ok(error instanceof TypeError || error instanceof RangeError, `${label}: ${error.name}: ${error.message}`);
    assert.match(error.message, /^loadModel: \S/, label);
    assert.doesNotMatch(error.message, /undefined|\[object/, label);
    return { kind: 'error', error };
  }
  try {
    assert.deepEqual(run(model), intact, `${label}: loaded but its output differs from the intact model's`);
    return { kind: 'exact', model };
  } finally {
    model.dispose();
  }
}

async function expectError(bytes, label, name, pattern) {
  const r = await outcome(bytes, label);
  assert.equal(r.kind, 'error', `${label}: expected an error, the file loaded`);
  if (name) assert.equal(r.error.name, name, `${label}: ${r.error.message}`);
  if (pattern) assert.match(r.error.message, pattern, label);
}

before(async () => {
  await init();
  const model = await loadModel(seq2seqBytes);
  intact = run(model);
  model.dispose();
});

test('the shipped files follow the safetensors spec, read by an independent reader', () => {
  for (const bytes of [seq2seqBytes, lmBytes]) {
    const { length, header, dataStart } = parseFile(bytes);
    assert.equal(length % 8, 0, 'the header is padded to 8 bytes');
    const meta = header.__metadata__;
    assert.equal(meta.format, 'attnscope-model/1');
    for (const [key, value] of Object.entries(meta)) assert.equal(typeof value, 'string', `__metadata__.${key}`);
    const tensors = Object.entries(header).filter(([k]) => k !== '__metadata__').sort((a, b) => a[1].data_offsets[0] - b[1].data_offsets[0]);
    let end = 0;
    for (const [name, t] of tensors) {
      assert.equal(t.dtype, 'F32', name);
      assert.equal(t.data_offsets[0], end, `${name} follows on`);
      assert.equal(t.data_offsets[1] - t.data_offsets[0], 4 * t.shape.reduce((a, b) => a * b, 1), name);
      end = t.data_offsets[1];
    }
    assert.equal(dataStart + end, bytes.length, 'the tensors tile the data section');
    // readSafetensors agrees with this reader on every tensor, bit for bit.
    const read = readSafetensors(bytes);
    assert.deepEqual([...read.keys()], tensors.map(([name]) => name));
    for (const [name, t] of tensors) {
      const view = new DataView(bytes.buffer, bytes.byteOffset + dataStart + t.data_offsets[0], t.data_offsets[1] - t.data_offsets[0]);
      const expected = Float32Array.from({ length: view.byteLength / 4 }, (_, i) => view.getFloat32(4 * i, true));
      assert.deepEqual(read.get(name).shape, t.shape);
      assert.deepEqual(read.get(name).data, expected, name);
    }
  }
});

test('tools/attnscope_tools/safetensors_file.py writes the spec: read back by the independent reader and by readSafetensors', { skip: !existsSync('/usr/bin/python3') && 'no /usr/bin/python3' }, () => {
  const script = [
    'import sys; sys.path.insert(0, "tools"); from attnscope_tools import safetensors_file as s',
    'sys.stdout.buffer.write(s.encode({"in_proj_bias": [0.5, -1.25, 3.0], "w": [[1.0, 2.0], [3.0, 4.0]], "empty": []}, {"note": "é ok"}))',
  ].join('\n');
  const bytes = new Uint8Array(execFileSync('/usr/bin/python3', ['-c', script], { cwd: new URL('../..', import.meta.url) }));
  const { length, header, dataStart } = parseFile(bytes);
  assert.equal(length % 8, 0);
  assert.deepEqual(header.__metadata__, { note: 'é ok' });
  assert.deepEqual(header.in_proj_bias, { dtype: 'F32', shape: [3], data_offsets: [0, 12] });
  assert.deepEqual(header.w, { dtype: 'F32', shape: [2, 2], data_offsets: [12, 28] });
  assert.deepEqual(header.empty, { dtype: 'F32', shape: [0], data_offsets: [28, 28] });
  assert.equal(bytes.length, dataStart + 28);
  assert.equal(new DataView(bytes.buffer, bytes.byteOffset).getFloat32(dataStart + 4, true), -1.25);
  const read = readSafetensors(bytes);
  assert.deepEqual([...read.keys()], ['in_proj_bias', 'w', 'empty'], 'data order');
  assert.deepEqual(read.get('w'), { data: Float32Array.from([1, 2, 3, 4]), shape: [2, 2] });
  assert.deepEqual(read.get('in_proj_bias').data, Float32Array.from([0.5, -1.25, 3]));
  assert.deepEqual(read.get('empty'), { data: new Float32Array(0), shape: [0] });
});

test('readSafetensors → MultiHeadAttention.loadStateDict: a state dict round trip, and clear errors', () => {
  const source = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 7 });
  const state = source.stateDict();
  // Written in PyTorch's key order by the test's own writer, as safetensors.torch.save_file would.
  let offset = 0;
  const header = { __metadata__: { format: 'pt' } };
  const chunks = [];
  for (const [key, t] of Object.entries(state)) {
    header[key] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + t.data.byteLength] };
    chunks.push(new Uint8Array(t.data.buffer.slice(t.data.byteOffset, t.data.byteOffset + t.data.byteLength)));
    offset += t.data.byteLength;
  }
  const data = new Uint8Array(offset);
  chunks.reduce((at, c) => (data.set(c, at), at + c.length), 0);
  const file = encodeFile(header, data);
  const target = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 99 });
  target.loadStateDict(readSafetensors(file));
  const x = randomTensor([5, 8], 3);
  assert.deepEqual(target.forward(x).output.data, source.forward(x).output.data);
  source.dispose();
  target.dispose();

  assert.throws(() => readSafetensors('mha.safetensors'), { name: 'TypeError', message: /^readSafetensors: expected an ArrayBuffer or a Uint8Array, got string/ });
  assert.throws(() => readSafetensors(file.subarray(0, 20)), { name: 'RangeError', message: /^readSafetensors: header length \d+ runs past the end of the file \(20 bytes\)/ });
  const f16 = encodeFile({ ...header, out_proj: undefined, 'out_proj.bias': { ...header['out_proj.bias'], dtype: 'F16' } }, data);
  assert.throws(() => readSafetensors(f16), { name: 'RangeError', message: /header\['out_proj.bias'\]\.dtype: expected "F32".*got "F16"/ });
});

test('corrupted files: truncation at every section boundary', async () => {
  const { dataStart, header } = parseFile(seq2seqBytes);
  const boundaries = new Set([0, 1, 7, 8, 9, dataStart - 1, dataStart, dataStart + 1, seq2seqBytes.length - 1]);
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    for (const at of t.data_offsets) for (const d of [-1, 0, 1]) boundaries.add(dataStart + at + d);
  }
  boundaries.delete(seq2seqBytes.length);
  for (const size of [...boundaries].filter((s) => s >= 0 && s < seq2seqBytes.length)) {
    await expectError(seq2seqBytes.subarray(0, size), `truncated to ${size} bytes`, 'RangeError');
  }
  const longer = new Uint8Array(seq2seqBytes.length + 4);
  longer.set(seq2seqBytes);
  const dataBytes = seq2seqBytes.length - parseFile(seq2seqBytes).dataStart;
  await expectError(longer, '4 bytes appended', 'RangeError', new RegExp(`the tensors cover ${dataBytes} bytes of the data section's ${dataBytes + 4}`));
});

test('corrupted files: header length, JSON, and every tensor field', async () => {
  const bytes = seq2seqBytes;
  const { length } = parseFile(bytes);
  for (const [n, pattern] of [[2n ** 63n, /runs past the end/], [2n ** 32n, /runs past the end/], [0, /empty header/], [length - 1, /the tensors cover/], [length + 8, /invalid JSON|must start|cover/], [3, /invalid JSON: unterminated string at byte 3/]]) {
    await expectError(withLength(bytes, n), `header length ${n}`, 'RangeError', pattern);
  }
  await expectError(encodeFile({ a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]] }, dataOf(bytes)), 'nested 65 deep', 'RangeError', /nested too deeply/);
  const name = 'dec_blocks.1.cross_attn.in_proj_bias';
  const cases = [
    [(h) => { delete h[name].dtype; }, 'RangeError', /dtype: missing/],
    [(h) => { h[name].dtype = 'F16'; }, 'RangeError', /dtype: expected "F32"/],
    [(h) => { h[name].dtype = 'BF16'; }, 'RangeError', /got "BF16"/],
    [(h) => { h[name].dtype = 'f32'; }, 'RangeError', /got "f32"/],
    [(h) => { h[name].dtype = 7; }, 'TypeError', /dtype: expected a string, got a number 7/],
    [(h) => { delete h[name].shape; }, 'RangeError', /shape: missing/],
    [(h) => { h[name].shape = '192'; }, 'TypeError', /shape: expected an array of integers, got a string "192"/],
    [(h) => { h[name].shape = [-192]; }, 'RangeError', /shape\[0\]: expected an integer from 0 to 9007199254740991, got -192/],
    [(h) => { h[name].shape = [191.5]; }, 'RangeError', /got 191.5/],
    [(h) => { h[name].shape = [2 ** 40]; }, 'RangeError', /needs 4398046511104 bytes/],
    [(h) => { h[name].shape = [2 ** 52, 2 ** 52]; }, 'RangeError', /needs more than 2\^53 bytes/],
    [(h) => { h[name].shape = [64, 3]; }, 'RangeError', /the config implies shape \[192\] for 'dec_blocks\.1\.cross_attn\.in_proj_bias', got \[64, 3\]/],
    [(h) => { h[name].shape = [null]; }, 'TypeError', /shape\[0\]: expected a non-negative integer, got null/],
    [(h) => { delete h[name].data_offsets; }, 'RangeError', /data_offsets: missing/],
    [(h) => { h[name].data_offsets = { begin: 0 }; }, 'TypeError', /data_offsets: expected an array \[begin, end\], got an object/],
    [(h) => { h[name].data_offsets = [0]; }, 'RangeError', /expected \[begin, end\], got 1 entries/],
    [(h) => { h[name].data_offsets = [-1e8, 0]; }, 'RangeError', /data_offsets\[0\]: expected an integer from 0 to \d+, got -1e8|got -100000000/],
    [(h) => { h[name].data_offsets = [h[name].data_offsets[0] + 0.5, h[name].data_offsets[1] + 0.5]; }, 'RangeError', /\.5/],
    [(h) => { h[name].data_offsets = [h[name].data_offsets[1], h[name].data_offsets[0]]; }, 'RangeError', /is before begin/],
    [(h) => { h[name].data_offsets = h['dec_blocks.1.cross_attn.out_proj.bias'].data_offsets.slice(); }, 'RangeError', /./],
    [(h) => { h[name].data_offsets = h[name].data_offsets.map((o) => o - 4); }, 'RangeError', /overlaps/],
    [(h) => { h[name].data_offsets = h[name].data_offsets.map((o) => o + 4); }, 'RangeError', /overlaps|gap/],
    [(h) => { h[name].extra = 1; }, 'RangeError', /unknown field 'extra'/],
    [(h) => { h[name] = [1, 2]; }, 'TypeError', /expected an object with dtype, shape and data_offsets, got an array/],
    [(h) => { delete h[name]; }, 'RangeError', /a gap before it/],
    // Renamed: the model's own name is missing (checked before the strict load would find the extra one).
    [(h) => { h[`${name}x`] = h[name]; delete h[name]; }, 'RangeError', /the config implies a tensor 'dec_blocks\.1\.cross_attn\.in_proj_bias' of shape \[192\], which is missing/],
    [(h) => { h.__metadata__ = 'x'; }, 'TypeError', /__metadata__: expected an object of strings, got a string/],
    [(h) => { h.__metadata__.config = { d_model: 64 }; }, 'TypeError', /__metadata__\['config'\]: expected a string, got an object/],
    [(h) => { delete h.__metadata__; }, 'RangeError', /__metadata__.format: missing/],
    [(h) => { h.__metadata__.format = 'attnscope-model/2'; }, 'RangeError', /format: expected "attnscope-model\/1", got "attnscope-model\/2"/],
    [(h) => { h.__metadata__.kind = 'encoder'; }, 'RangeError', /kind: expected "decoder_lm", "seq2seq" or "rnn_seq2seq", got "encoder"/],
    [(h) => { h.__metadata__.kind = 'decoder_lm'; }, 'RangeError', /vocab_size: missing/],
    [(h) => { delete h.__metadata__.vocab; }, 'RangeError', /__metadata__.vocab: missing/],
    [(h) => { h.__metadata__.config = '{"d_model": 64,'; }, 'RangeError', /__metadata__.config: invalid JSON/],
    [(h) => { h.__metadata__.config = '[64]'; }, 'TypeError', /__metadata__.config: expected a JSON object, got an array/],
    [(h) => { h.__metadata__.named_heads = '{}'; }, 'TypeError', /named_heads: expected a JSON array/],
    [(h) => { h.__metadata__.training = '"none"'; }, 'TypeError', /training: expected a JSON object/],
  ];
  for (const [edit, errorName, pattern] of cases) await expectError(withHeader(bytes, edit), `${edit}`, errorName, pattern);
  // Unknown metadata and a swap of two equal-sized tensors' offsets stay readable: the first is ignored; the second is a
  // different model, checked below against the tensors it names.
  const r = await outcome(withHeader(bytes, (h) => { h.__metadata__.comment = 'made by hand'; }), 'extra metadata');
  assert.equal(r.kind, 'exact');
});

test('corrupted files: config and vocabulary against the tensors', async () => {
  const bytes = seq2seqBytes;
  const configCases = [];
  for (const key of ['src_vocab_size', 'tgt_vocab_size', 'd_model', 'n_heads', 'n_enc_layers', 'n_dec_layers', 'd_ff', 'max_src_len', 'max_tgt_len']) {
    configCases.push([key, -1, 'RangeError'], [key, 0, 'RangeError'], [key, 1.5, 'RangeError'], [key, '8', 'TypeError'], [key, null, 'TypeError'],
      [key, 2 ** 32, 'RangeError'], [key, 1e6, 'RangeError'], [key, undefined, 'RangeError']);
  }
  for (const [key, value, errorName] of configCases) {
    const edited = withMetadata(bytes, 'config', (c) => { if (value === undefined) delete c[key]; else c[key] = value; });
    await expectError(edited, `config.${key} = ${value}`, errorName, /config/);
  }
  const { n_enc_layers: layers, d_model: d, src_vocab_size: srcVocab, tgt_vocab_size: tgtVocab } = JSON.parse(parseFile(bytes).header.__metadata__.config);
  await expectError(withMetadata(bytes, 'config', (c) => { c.n_enc_layers = layers + 1; }), 'one layer too many', 'RangeError',
    new RegExp(`enc_blocks\\.${layers}\\.ln1\\.weight' of shape \\[${d}\\], which is missing`));
  // The named heads of the last encoder layer go too, so that the tensors, not named_heads' layer range, are what fails.
  const fewer = withMetadata(withMetadata(bytes, 'config', (c) => { c.n_enc_layers = layers - 1; }), 'named_heads',
    (heads) => heads.filter((h) => !(h.attn === 'enc_self' && h.layer === layers - 1)));
  await expectError(fewer, 'one layer too few', 'RangeError', new RegExp(`unexpected key 'enc_blocks\\.${layers - 1}`));
  await expectError(withMetadata(bytes, 'config', (c) => { c.n_heads = 5; }), 'heads', 'RangeError', /not divisible by n_heads/);
  await expectError(withMetadata(bytes, 'config', (c) => { c.activation = 'relu'; }), 'activation', 'RangeError', /activation: attnscope implements "gelu_erf", got "relu"/);
  await expectError(withMetadata(bytes, 'config', (c) => { c.ln_eps = 1e-6; }), 'ln_eps', 'RangeError', /ln_eps/);
  const vocabCases = [
    ['tgt_eos_id', 99, 'RangeError', new RegExp(`tgt_eos_id: expected an integer from 0 to ${tgtVocab - 1}, got 99`)],
    ['tgt_bos_id', -1, 'RangeError', /tgt_bos_id/],
    ['src_unk_id', srcVocab, 'RangeError', new RegExp(`src_unk_id: expected an integer from 0 to ${srcVocab - 1}, got ${srcVocab}`)],
    ['src_pad_id', '0', 'TypeError', /src_pad_id: expected an integer, got a string "0"/],
    ['tgt_tokens', ['a'], 'RangeError', new RegExp(`expected ${tgtVocab} tokens \\(config.tgt_vocab_size\\), got 1`)],
    ['src_tokens', 'abc', 'TypeError', /src_tokens: expected an array of strings/],
    ['src_tokenizer', 'bpe', 'RangeError', /src_tokenizer: attnscope implements "words_ascii_lower", got "bpe"/],
    ['tgt_tokenizer', undefined, 'RangeError', /tgt_tokenizer: missing/],
  ];
  for (const [key, value, errorName, pattern] of vocabCases) {
    await expectError(withMetadata(bytes, 'vocab', (v) => { if (value === undefined) delete v[key]; else v[key] = value; }), `vocab.${key}`, errorName, pattern);
  }
  await expectError(withMetadata(bytes, 'vocab', (v) => { v.tgt_tokens[5] = 5; }), 'a number token', 'TypeError', /tgt_tokens\[5\]: expected a string, got a number 5/);
  await expectError(withMetadata(bytes, 'named_heads', (n) => { n[0].head = 4; }), 'named head', 'RangeError', /named_heads\[0\]\.head: expected an integer from 0 to 3, got 4/);
  // The language model's vocabulary: specials must be the first tokens.
  await expectError(withMetadata(lmBytes, 'vocab', (v) => { v.specials = ['<bos>', '<unk>']; }), 'specials', 'RangeError', /specials\[0\]: expected tokens\[0\] = "<unk>", got "<bos>"/);
  await expectError(withMetadata(lmBytes, 'config', (c) => { c.n_layers = 1e6; }), 'the issue\'s n_layers 1e6', 'RangeError', /blocks\.999999\.ln1\.weight/);
  await expectError(withMetadata(lmBytes, 'config', (c) => { c.n_layers = 2 ** 24 + 1; }), 'n_layers 2^24 + 1', 'RangeError', /n_layers: expected an integer from 1 to 16777216, got 16777217/);
});

test('corrupted files: random byte flips in the header give an error or the intact output', async () => {
  const { dataStart } = parseFile(seq2seqBytes);
  let state = 12345;
  const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const tally = { error: 0, exact: 0, different: 0 };
  for (let i = 0; i < 300; i++) {
    const bytes = seq2seqBytes.slice();
    const at = Math.floor(random() * dataStart);
    bytes[at] ^= 1 << Math.floor(random() * 8);
    let model;
    try {
      model = await loadModel(bytes);
    } catch (error) {
      assert.ok(error instanceof TypeError || error instanceof RangeError, `flip at ${at}: ${error.name}: ${error.message}`);
      assert.match(error.message, /^loadModel: \S/);
      tally.error++;
      continue;
    }
    try {
      const output = run(model);
      // A flip may leave a valid file of a different model (a vocabulary id, a token's spelling): then its config and
      // ids must differ from the intact file's, and it must still run consistently. Otherwise the output is exact.
      // The file's config keys are snake_case; the model's camelCase config has as many, read here through the
      // file's names (the deprecated aliases).
      const original = parseFile(seq2seqBytes).header.__metadata__;
      const config = JSON.parse(original.config), vocab = JSON.parse(original.vocab);
      const same = Object.keys(model.config).length === Object.keys(config).length
        && Object.entries(config).every(([key, value]) => model.config[key] === value)
        && model.vocab.targetBosId === vocab.tgt_bos_id && model.vocab.targetEosId === vocab.tgt_eos_id;
      if (same) {
        assert.deepEqual(output, intact, `flip at byte ${at} loaded with the intact config but different output`);
        tally.exact++;
      } else {
        assert.ok(output.ids.length >= 1 && output.logits.every(Number.isFinite), `flip at byte ${at}`);
        tally.different++;
      }
    } finally {
      model.dispose();
    }
  }
  console.log(`# header flips: ${tally.error} errors, ${tally.exact} exact, ${tally.different} valid files of a different model`);
  assert.ok(tally.error > 100);
});

test('failed loads free everything synchronously; a hostile config cannot grow memory', async () => {
  const bad = [
    withMetadata(seq2seqBytes, 'vocab', (v) => { v.tgt_eos_id = 99; }),                    // fails before the model exists
    withMetadata(seq2seqBytes, 'config', (c) => { c.n_dec_layers = 3; }),                  // fails while the model is built
    withHeader(seq2seqBytes, (h) => { h['head.biax'] = h['head.bias']; delete h['head.bias']; }), // fails at the strict load
  ];
  for (const bytes of bad) await assert.rejects(loadModel(bytes));
  const before = memoryUsage();
  for (let i = 0; i < 1000; i++) await assert.rejects(loadModel(bad[i % bad.length]));
  const after = memoryUsage();
  assert.equal(after.heapBytesInUse, before.heapBytesInUse, '1,000 failed loads leave the heap flat (no GC involved)');
  await assert.rejects(loadModel(withMetadata(lmBytes, 'config', (c) => { c.n_layers = 1000000; })), RangeError);
  assert.ok(memoryUsage().wasmBytes - after.wasmBytes < 64 * 1024 ** 2, 'a million-layer config does not grow WASM memory');
  // The model still works afterwards.
  const model = await loadModel(seq2seqBytes);
  assert.deepEqual(run(model), intact);
  model.dispose();
});

test('rejection times of the corrupted files above (printed, not asserted)', () => {
  assert.ok(rejectTimes.length > 100);
  const sorted = rejectTimes.map((r) => r.ms).sort((a, b) => a - b);
  const worst = rejectTimes.reduce((a, b) => (b.ms > a.ms ? b : a));
  console.log(`# ${rejectTimes.length} rejections: median ${sorted[sorted.length >> 1].toFixed(2)} ms, max ${worst.ms.toFixed(2)} ms (${worst.label.slice(0, 60)}, ${worst.bytes} bytes)`);
});
