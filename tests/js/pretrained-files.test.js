// How loadModel reads a Hugging Face checkpoint's files, checked against a stand-in for the C++ loader that records
// every byte it is handed: each kind of source (bytes, Blob, file: URL, http URL, folder URL), shards, progress,
// cancellation, and what a failed load leaves behind (nothing).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { init, memoryUsage } from 'attnscope';
import { loadCheckpointWith as loadPretrained } from '../../dist/load-model.js';
import { module } from '../../dist/runtime.js';

const folder = new URL('../fixtures/hf/gpt2-lm/', import.meta.url);
const read = (name, at = folder) => new Uint8Array(readFileSync(new URL(name, at)));

// A sharded checkpoint made here from the fixture's single file: the same bytes, cut into two safetensors files.
function shardedFiles() {
  const bytes = read('model.safetensors');
  const length = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
  const data = bytes.subarray(8 + length);
  const names = Object.keys(header).filter((k) => k !== '__metadata__').sort();
  const encode = (keys) => {
    const part = {};
    let at = 0;
    const pieces = keys.map((k) => {
      const [b, e] = header[k].data_offsets;
      part[k] = { ...header[k], data_offsets: [at, at + e - b] };
      at += e - b;
      return data.subarray(b, e);
    });
    const text = new TextEncoder().encode(JSON.stringify(part));
    const out = new Uint8Array(8 + text.length + at);
    new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
    out.set(text, 8);
    let o = 8 + text.length;
    for (const p of pieces) o += (out.set(p, o), p.length);
    return out;
  };
  const half = Math.ceil(names.length / 2);
  const shards = { 'model-00001-of-00002.safetensors': names.slice(0, half), 'model-00002-of-00002.safetensors': names.slice(half) };
  const files = { 'config.json': read('config.json') };
  const weightMap = {};
  for (const [name, keys] of Object.entries(shards)) {
    files[name] = encode(keys);
    for (const k of keys) weightMap[k] = name;
  }
  files['model.safetensors.index.json'] = new TextEncoder().encode(JSON.stringify({ metadata: {}, weight_map: weightMap }));
  return files;
}

/**
 * A stand-in for the binding's loader: it reads the heap where it is told to, checks that writes continue where
 * the last ended, and records each file's bytes. `loads` keeps every loader made, to see that all were deleted.
 */
function recordingLoader(loads) {
  return (configText) => {
    const wasm = module('test');
    const load = { config: JSON.parse(configText), files: ['model.safetensors'], got: new Map(), deleted: false, calls: [] };
    loads.push(load);
    const heap = (address, size) => wasm.HEAPU8.slice(address, address + size);
    return {
      setIndex(text) { load.files = [...new Set(Object.values(JSON.parse(text).weight_map))].sort(); },
      files: () => load.files,
      neededHeaderBytes(name, address, fileSize) {
        const n = 8 + Number(new DataView(heap(address, 8).buffer).getBigUint64(0, true));
        if (n > fileSize) throw new RangeError(`loadModel: header longer than the file`);
        return n;
      },
      addHeader(name, address, size, fileSize) {
        const bytes = new Uint8Array(fileSize);
        bytes.set(heap(address, size));
        load.got.set(name, { bytes, next: size });
        load.calls.push(`header ${name}`);
        return size;
      },
      plan: () => ({ parameters: 0, parameterBytes: 0, tokens: 0, workspaceBytes: 0, bytes: 0, availableBytes: 0, exact: true }),
      allocate() { load.calls.push('allocate'); },
      write(name, offset, address, size) {
        const file = load.got.get(name);
        assert.equal(offset, file.next, `${name}: a write continues where the last ended`);
        file.bytes.set(heap(address, size), offset);
        file.next += size;
      },
      finish() {
        for (const [name, file] of load.got) if (file.next !== file.bytes.length) throw new RangeError(`loadModel: ${name}: incomplete`);
        load.calls.push('finish');
        const handle = { deleted: false, config: () => ({ family: load.config.model_type, layers: 2, heads: 2 }), parameterBytes: () => 0, delete() { handle.deleted = true; } };
        load.handle = handle;
        return handle;
      },
      delete() { load.deleted = true; },
    };
  };
}

// A 9 MiB weight file (one F32 tensor of a byte pattern): more than two of the loader's 4 MiB chunks.
function bigFile() {
  const n = (9 << 20) / 4;
  const text = new TextEncoder().encode(JSON.stringify({ w: { dtype: 'F32', shape: [n], data_offsets: [0, 4 * n] } }));
  const out = new Uint8Array(8 + text.length + 4 * n);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  for (let i = 8 + text.length; i < out.length; i++) out[i] = (i * 7) & 0xff;
  return out;
}

let server;
let base;
let big;
const requests = [];
before(async () => {
  await init();
  // Serves tests/fixtures/hf/ with Content-Length, as a static server or the Hub does; /sharded/ serves shardedFiles().
  const sharded = shardedFiles();
  big = bigFile();
  server = createServer((req, res) => {
    requests.push(req.url);
    const path = decodeURIComponent(req.url);
    let body = null;
    if (path.startsWith('/chunked-json/') && path.endsWith('.json')) {
      // JSON as a compressing server sends it: no Content-Length.
      try {
        const text = read(path.slice('/chunked-json/'.length), new URL('../fixtures/hf/', import.meta.url));
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write(text.subarray(0, 10));
        res.end(text.subarray(10));
      } catch {
        res.writeHead(404).end();
      }
      return;
    }
    if (path.startsWith('/chunked-json/')) body = read(path.slice('/chunked-json/'.length), new URL('../fixtures/hf/', import.meta.url));
    else if (path === '/big/model.safetensors') body = big;
    else if (path.startsWith('/sharded/')) body = sharded[path.slice('/sharded/'.length)] ?? null;
    else if (path.startsWith('/sharded-missing/') && !path.includes('model-00002-')) body = sharded[path.slice('/sharded-missing/'.length)] ?? null;
    else if (path.startsWith('/nolength/')) {
      res.writeHead(200); // chunked: no Content-Length
      res.end(read('model.safetensors'));
      return;
    } else {
      try {
        body = read(path.slice(1), new URL('../fixtures/hf/', import.meta.url));
      } catch {
        body = null;
      }
    }
    if (!body) return res.writeHead(404).end();
    res.writeHead(200, { 'Content-Length': body.length });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}/`;
});
after(() => server.close());

const names = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
const sourceKinds = {
  ArrayBuffer: (name) => read(name).slice().buffer,
  Uint8Array: (name) => read(name),
  'Uint8Array (a view into a larger buffer)': (name) => {
    const bytes = read(name);
    const big = new Uint8Array(bytes.length + 13);
    big.set(bytes, 7);
    return big.subarray(7, 7 + bytes.length);
  },
  Blob: (name) => new Blob([read(name)]),
  File: (name) => new File([read(name)], name),
  'file: URL': (name) => new URL(name, folder),
  'file path string': (name) => new URL(name, folder).pathname,
  'http URL': (name) => new URL(`gpt2-lm/${name}`, base),
  'http URL string': (name) => `${base}gpt2-lm/${name}`,
};

for (const [kind, make] of Object.entries(sourceKinds)) {
  test(`files given as ${kind}: the loader gets every byte of the weights, in order, and the model its tokenizer`, async () => {
    const loads = [];
    const files = Object.fromEntries(names.map((n) => [n, make(n)]));
    const model = await loadPretrained(files, undefined, recordingLoader(loads));
    assert.equal(loads.length, 1);
    assert.deepEqual(loads[0].calls, ['header model.safetensors', 'allocate', 'finish']);
    assert.deepEqual(loads[0].got.get('model.safetensors').bytes, read('model.safetensors'));
    assert.equal(loads[0].deleted, true, 'the loader is deleted once the model is made');
    assert.equal(model.hasTokenizer, true);
    assert.deepEqual(model.tokenize('the cat').ids.length > 0, true);
    model.dispose();
    assert.equal(loads[0].handle.deleted, true);
  });
}

test('an array of Files (an <input type="file" multiple>) is named by each file\'s name', async () => {
  const loads = [];
  const model = await loadPretrained(names.map((n) => new File([read(n)], n)), undefined, recordingLoader(loads));
  assert.deepEqual(loads[0].got.get('model.safetensors').bytes, read('model.safetensors'));
  model.dispose();
});

for (const [kind, where] of [['http folder URL', () => `${base}gpt2-lm/`], ['file: folder URL', () => folder], ['folder path string', () => folder.pathname]]) {
  test(`a ${kind}: config.json, no index (404) → model.safetensors, and the tokenizer files`, async () => {
    const loads = [];
    requests.length = 0;
    const model = await loadPretrained(where(), undefined, recordingLoader(loads));
    assert.deepEqual(loads[0].got.get('model.safetensors').bytes, read('model.safetensors'));
    assert.equal(model.hasTokenizer, true);
    if (kind.startsWith('http')) {
      assert.deepEqual(requests, ['config.json', 'model.safetensors.index.json', 'tokenizer.json', 'tokenizer_config.json', 'model.safetensors'].map((n) => `/gpt2-lm/${n}`),
        'one request per file: the single weight file continues on the response its header came from');
    }
    model.dispose();
  });
}

test('JSON files sent without a Content-Length (as compressing servers do) are read whole; only weights need one', async () => {
  const loads = [];
  const model = await loadPretrained(`${base}chunked-json/gpt2-lm/`, undefined, recordingLoader(loads));
  assert.equal(loads[0].config.model_type, 'gpt2');
  assert.equal(model.hasTokenizer, true);
  assert.deepEqual(loads[0].got.get('model.safetensors').bytes, read('model.safetensors'));
  model.dispose();
});

test('a sharded folder URL: the index names the shards, each is read whole, in the index\'s order', async () => {
  const loads = [];
  const files = shardedFiles();
  const model = await loadPretrained(`${base}sharded/`, undefined, recordingLoader(loads));
  const shards = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
  assert.deepEqual(loads[0].calls, [...shards.map((s) => `header ${s}`), 'allocate', 'finish']);
  for (const s of shards) assert.deepEqual(loads[0].got.get(s).bytes, files[s]);
  model.dispose();
});

test('progress: loaded grows to total (every weight byte), file names each file; total is the files\' size', async () => {
  const files = shardedFiles();
  const events = [];
  const model = await loadPretrained(files, { onProgress: (p) => events.push(p) }, recordingLoader([]));
  const total = files['model-00001-of-00002.safetensors'].length + files['model-00002-of-00002.safetensors'].length;
  assert.ok(events.length >= 2);
  assert.ok(events.every((e) => e.total === total));
  assert.ok(events.every((e, i) => i === 0 || e.loaded >= events[i - 1].loaded));
  assert.deepEqual(events.at(-1), { loaded: total, total, file: 'model-00002-of-00002.safetensors' });
  assert.equal(events[0].file, 'model-00001-of-00002.safetensors');
  model.dispose();
});

test('a missing shard is a TypeError naming loadModel and the file; the loader is deleted', async () => {
  const loads = [];
  const files = shardedFiles();
  delete files['model-00002-of-00002.safetensors'];
  await assert.rejects(loadPretrained(files, undefined, recordingLoader(loads)), (e) => e instanceof TypeError &&
    /^loadModel: files\['model-00002-of-00002\.safetensors'\]: missing/.test(e.message));
  assert.equal(loads[0].deleted, true);
  await assert.rejects(loadPretrained(`${base}sharded-missing/`, undefined, recordingLoader(loads)),
    { message: /^loadModel: could not load http:\S+\/sharded-missing\/model-00002-of-00002\.safetensors: HTTP 404$/ });
  assert.ok(loads.every((l) => l.deleted));
});

test('a server that sends no Content-Length is refused with the reason, before any weights are allocated', async () => {
  const loads = [];
  const files = { 'config.json': read('config.json'), 'model.safetensors': `${base}nolength/model.safetensors` };
  await assert.rejects(loadPretrained(files, undefined, recordingLoader(loads)),
    { message: /^loadModel: files\['model\.safetensors'\]: http:\S+ was sent without its size \(no Content-Length\)/ });
  assert.deepEqual(loads[0].calls, []);
  assert.equal(loads[0].deleted, true);
});

test('wrong option and file types are TypeErrors naming loadModel and the option or file', async () => {
  const load = (files, options) => loadPretrained(files, options, recordingLoader([]));
  const files = { 'config.json': read('config.json'), 'model.safetensors': read('model.safetensors') };
  await assert.rejects(load(files, { onProgres: () => {} }), { name: 'TypeError', message: /^loadModel: options: unknown option 'onProgres'/ });
  await assert.rejects(load(files, { onProgress: 3 }), { name: 'TypeError', message: /^loadModel: options\.onProgress: expected a function .*got number 3/ });
  await assert.rejects(load(files, { signal: {} }), { name: 'TypeError', message: /^loadModel: options\.signal: expected an AbortSignal, got Object/ });
  await assert.rejects(load(files, 'fast'), { name: 'TypeError', message: /^loadModel: options: expected an options object/ });
  await assert.rejects(load({ ...files, 'model.safetensors': 42 }), { name: 'TypeError', message: /^loadModel: files\['model\.safetensors'\]: expected an ArrayBuffer, .* got number 42/ });
  await assert.rejects(load({ 'model.safetensors': files['model.safetensors'] }), { name: 'TypeError', message: /^loadModel: files\['config\.json'\]: missing/ });
  await assert.rejects(load({ ...files, 'tokenizer.json': new TextEncoder().encode('{"model": ') }), { name: 'TypeError', message: /^loadModel: tokenizer\.json: expected JSON/ });
  await assert.rejects(load({ ...files, 'config.json': new Uint8Array([0xff, 0xfe]) }), { name: 'TypeError', message: /^loadModel: files\['config\.json'\]: expected UTF-8 text/ });
});

for (const [when, abortAt] of [['before it starts', 'start'], ['in the middle of the weights', 'data'], ['while a server sends them', 'http']]) {
  test(`aborting ${when} rejects with the signal's reason and leaves WebAssembly memory flat`, async () => {
    const loads = [];
    const files = shardedFiles();
    const source = abortAt === 'http' ? `${base}sharded/` : files;
    await loadPretrained(source, undefined, recordingLoader([])).then((m) => m.dispose()); // warm-up: the arenas' size
    const start = memoryUsage().heapBytesInUse;
    const controller = new AbortController();
    if (abortAt === 'start') controller.abort(new Error('stop'));
    const onProgress = () => controller.abort(new Error('stop'));
    await assert.rejects(loadPretrained(source, { signal: controller.signal, onProgress }, recordingLoader(loads)), { message: 'stop' });
    assert.equal(memoryUsage().heapBytesInUse, start);
    assert.ok(loads.every((l) => l.deleted && !l.handle), 'every loader deleted, no model made');
  });
}

test('a 9 MiB file fetched in small pieces is written in 4 MiB chunks, with one progress call per chunk', async () => {
  const loads = [];
  const events = [];
  const files = { 'config.json': read('config.json'), 'model.safetensors': `${base}big/model.safetensors` };
  const model = await loadPretrained(files, { onProgress: (p) => events.push(p.loaded) }, recordingLoader(loads));
  assert.deepEqual(loads[0].got.get('model.safetensors').bytes, big);
  const header = 8 + Number(new DataView(big.buffer).getBigUint64(0, true));
  const chunk = 4 << 20;
  assert.deepEqual(events, [header, header + chunk, header + 2 * chunk, big.length]);
  model.dispose();
});
