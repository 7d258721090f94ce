// init({ simd }): the SIMD128 build and the relaxed-SIMD one (the GEMM's multiply-adds fused) behind one API. The
// probe picks relaxed where the engine validates it (Node 20: only with --experimental-wasm-relaxed-simd, so each
// build runs in a fresh process here), runtimeInfo() says which, and both give the same results within 1e-5 from
// every entry: 'attnscope', 'attnscope/inline', one thread and two.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gemmTileRows } from '../../dist/wasm-build.js';
import { maxRelativeError } from './helpers.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
// Node ≥ 22 runs relaxed SIMD by default; 20 validates it only with the flag (and a later Node may drop the flag).
const nodeMajor = Number(process.versions.node.split('.')[0]);
const relaxedArgs = nodeMajor < 22 ? [RELAXED_FLAG] : [];

/** Runs `code` as an ES module in a fresh Node process with `flags`; returns its JSON output. */
function runFresh(code, flags = []) {
  return JSON.parse(execFileSync(process.execPath, [...flags, '--input-type=module', '-e', code], { cwd: repo, encoding: 'utf8', timeout: 120_000, maxBuffer: 1 << 28 }));
}

// A layer large enough for whole 6-row tiles, short tiles and partial panels in every product, with and without
// the causal mask; the char-level model's logits and every layer's attention. Prints the numbers and runtimeInfo().
const passes = (entry, options) => `
  import { init, runtimeInfo, MultiHeadAttention, loadModel } from '${entry}';
  import { readFileSync } from 'node:fs';
  import { randomTensor } from './tests/js/helpers.js';
  await init(${JSON.stringify(options)});
  const results = {};
  const mha = new MultiHeadAttention({ embedDim: 96, numHeads: 6, seed: 3 });
  const x = randomTensor([2, 37, 96], 11);
  for (const causal of [false, true]) {
    const { output, weights } = mha.forward(x, null, null, { causal });
    results['mha' + causal] = Array.from(output.data);
    results['weights' + causal] = Array.from(weights.data);
  }
  const model = await loadModel(readFileSync('models/char-lm.safetensors'));
  const { logits, attention } = model.forward('the attention of the model ');
  results.logits = Array.from(logits.data);
  results.attention = Array.from(attention.data);
  console.log(JSON.stringify({ info: runtimeInfo(), results }));
`;


test('the probe picks the build: relaxed SIMD where the engine validates it, SIMD128 elsewhere; both agree within 1e-5', () => {
  const baseline = runFresh(passes('attnscope', {}));
  assert.deepEqual(baseline.info, { build: 'single', threads: 1, simd: nodeMajor < 22 ? 'baseline' : 'relaxed' });
  const forcedBaseline = runFresh(passes('attnscope', { simd: 'baseline' }), relaxedArgs);
  assert.deepEqual(forcedBaseline.info, { build: 'single', threads: 1, simd: 'baseline' });
  assert.deepEqual(forcedBaseline.results, nodeMajor < 22 ? baseline.results : forcedBaseline.results, 'the flag alone changes no bits');
  const runs = {
    relaxed: runFresh(passes('attnscope', {}), relaxedArgs),
    'relaxed, inline': runFresh(passes('attnscope/inline', { simd: 'relaxed' }), relaxedArgs),
    'relaxed, 2 threads': runFresh(passes('attnscope', { threads: 2 }), relaxedArgs),
    'baseline, inline': runFresh(passes('attnscope/inline', { simd: 'baseline' }), relaxedArgs),
  };
  assert.equal(runs.relaxed.info.simd, 'relaxed');
  assert.deepEqual(runs['relaxed, 2 threads'].info, { build: 'threads', threads: 2, simd: 'relaxed' });
  assert.deepEqual(runs['relaxed, inline'].results, runs.relaxed.results, 'the embedded relaxed build is the same module');
  assert.deepEqual(runs['relaxed, 2 threads'].results, runs.relaxed.results, 'threads change no bits within a build');
  assert.deepEqual(runs['baseline, inline'].results, forcedBaseline.results);
  let fused = 0;
  for (const key of Object.keys(forcedBaseline.results)) {
    // The golden tests' measure: max |Δ| over the largest |value| of the result.
    const d = maxRelativeError(runs.relaxed.results[key], forcedBaseline.results[key]);
    assert.ok(d <= 1e-5, `${key}: the relaxed build differs from SIMD128 by ${d} of its largest value`);
    fused = Math.max(fused, d);
  }
  assert.ok(fused > 0, 'the relaxed build rounds differently somewhere: its multiply-adds are fused');
});

test("init({ simd }) refuses bad values with a TypeError or RangeError naming options.simd, and 'relaxed' where it cannot run", () => {
  const { errors } = runFresh(`
    import { init } from 'attnscope';
    const errors = [];
    for (const simd of [1, null, 'fast', 'Relaxed']) {
      try { init({ simd }); errors.push('accepted ' + simd); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); }
    }
    try { await init({ simd: 'relaxed' }); errors.push('loaded'); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); }
    console.log(JSON.stringify({ errors }));
  `);
  assert.equal(errors[0], "TypeError: init: options.simd must be one of 'auto', 'baseline', 'relaxed', got number 1");
  assert.match(errors[1], /^TypeError: init: options\.simd must be one of .*, got null$/);
  assert.equal(errors[2], "RangeError: init: options.simd must be one of 'auto', 'baseline', 'relaxed', got 'fast'");
  assert.match(errors[3], /^RangeError: .*got 'Relaxed'$/);
  if (nodeMajor < 22) {
    assert.match(errors[4], /^Error: init: options\.simd is 'relaxed', but this JavaScript engine does not run relaxed SIMD .*--experimental-wasm-relaxed-simd/);
  }
});

test('a module passed by the caller is used as it is: runtimeInfo() says which build it is, and a contradicting simd is an Error', () => {
  const relaxedFile = `${repo}/dist/attnscope-relaxed.wasm`;
  const out = runFresh(`
    import { init, runtimeInfo } from 'attnscope';
    import { readFileSync } from 'node:fs';
    const errors = [];
    const wasmBinary = readFileSync(${JSON.stringify(relaxedFile)});
    try { await init({ wasmBinary, simd: 'baseline' }); errors.push('loaded'); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); }
    await init({ wasmUrl: ${JSON.stringify(relaxedFile)} });
    console.log(JSON.stringify({ errors, info: runtimeInfo() }));
  `, relaxedArgs);
  assert.deepEqual(out.errors, ["Error: init: options.simd is 'baseline', but wasmBinary is the relaxed-SIMD build; pass the other file, or simd: 'auto'"]);
  assert.deepEqual(out.info, { build: 'single', threads: 1, simd: 'relaxed' });
});

test('the relaxed builds hold relaxed SIMD and the SIMD128 builds hold none', () => {
  // Safari refuses a whole module that holds one relaxed instruction, so the baseline must hold none: Node 20
  // without the flag validates exactly the modules that hold none.
  for (const [file, relaxed] of [['attnscope.wasm', false], ['attnscope-mt.wasm', false], ['attnscope-relaxed.wasm', true], ['attnscope-mt-relaxed.wasm', true]]) {
    const bytes = readFileSync(`${repo}/dist/${file}`);
    assert.equal(WebAssembly.validate(bytes), !relaxed || nodeMajor >= 22, `${file}: validates in this Node only if it holds no relaxed SIMD`);
  }
});

test("the relaxed build's GEMM tile: 5 rows in slivers under a V8 before 11.4 (Node 20, which spills 6), its own 6 elsewhere", () => {
  assert.equal(gemmTileRows('relaxed', '11.3.244.8-node.33'), 5);
  assert.equal(gemmTileRows('relaxed', '10.2.154.26-node.26'), 5);
  assert.equal(gemmTileRows('relaxed', '11.4.183.25'), 6);
  assert.equal(gemmTileRows('relaxed', '12.4.254.21-node.33'), 6);
  assert.equal(gemmTileRows('relaxed', null), 6, 'a browser (no process.versions): its own 6 rows');
  assert.equal(gemmTileRows('baseline', '12.4.254.21'), 4, 'the SIMD128 build has only 4 rows');
  assert.equal(gemmTileRows('relaxed'), nodeMajor < 22 ? 5 : 6, 'this Node');
});

test('the relaxed build gives the same bits at each of its tiles: 5 rows in slivers (Node 20), its own 6, and 4', () => {
  // The tile is chosen by the engine's version (gemmTileRows), so this Node runs one of them by default; the module's
  // setter runs the same passes at the others. 37 and 28 rows: whole slivers, whole 6-row tiles and short tiles.
  const { tiles } = runFresh(`
    import { init } from 'attnscope';
    import { module } from './dist/runtime.js';
    import { MultiHeadAttention, loadModel } from 'attnscope';
    import { readFileSync } from 'node:fs';
    import { randomTensor } from './tests/js/helpers.js';
    await init({ simd: 'relaxed', threads: 1 });
    const mha = new MultiHeadAttention({ embedDim: 96, numHeads: 6, seed: 3 });
    const x = randomTensor([2, 37, 96], 11);
    const model = await loadModel(readFileSync('models/char-lm.safetensors'));
    const tiles = {};
    for (const rows of [5, 6, 4]) {
      const set = module('test')._setGemmTileRows(rows);
      const count = () => module('test')._gemmSliverProducts();
      const before = count();
      const { output, weights } = mha.forward(x, null, null, { causal: true });
      const layer = count();
      const { logits, attention } = model.forward('the attention of the model ');
      tiles[rows] = { set, slivers: [layer - before, count() - layer], output: Array.from(output.data),
        weights: Array.from(weights.data), logits: Array.from(logits.data), attention: Array.from(attention.data) };
    }
    console.log(JSON.stringify({ tiles }));
  `, relaxedArgs);
  for (const rows of ['5', '6', '4']) assert.equal(tiles[rows].set, Number(rows), `the relaxed build takes a ${rows}-row tile`);
  // The same bits would come from a fall-back to 4 rows, so the module counts the products that read slivers. At 5
  // rows every product by F32 weights does: the layer's q, k, v and output projections (74 rows each), and the
  // model's over its 28 rows (<bos> and 27 characters): each layer's q|k|v, output projection and two MLP products,
  // then the tied head.
  const layers = JSON.parse(safetensorsMetadata('models/char-lm.safetensors').config).n_layers;
  assert.equal(tiles['5'].slivers[0], 4, 'the layer: 4 products in slivers at 5 rows');
  assert.equal(tiles['5'].slivers[1], 4 * layers + 1, 'the model: every product in slivers at 5 rows');
  assert.deepEqual(tiles['6'].slivers, [0, 0], 'no slivers at 6 rows');
  assert.deepEqual(tiles['4'].slivers, [0, 0], 'no slivers at 4 rows');
  for (const rows of ['6', '4']) {
    const { set, slivers, ...results } = tiles[rows];
    const { set: _, slivers: __, ...sliverResults } = tiles['5'];
    assert.deepEqual(results, sliverResults, `${rows} rows and 5 rows in slivers give the same bits`);
  }
});

/** The `__metadata__` of a safetensors file's header. */
function safetensorsMetadata(file) {
  const bytes = readFileSync(new URL(`../../${file}`, import.meta.url));
  const length = Number(bytes.readBigUInt64LE(0));
  return JSON.parse(bytes.subarray(8, 8 + length).toString('utf8')).__metadata__;
}

test('at 5 rows the memory plan holds the largest product input in slivers, from the config alone', () => {
  // A product by F32 weights keeps its input's whole slivers of 5 rows while it runs (matmul_packed at Node 20's
  // setting): a forward pass of T tokens holds at most floor(T / 5) · 5 rows of its widest input, the MLP's inner
  // width for GPT-2's down projection. At 6 rows no product does.
  const { plans } = runFresh(`
    import { init, loadModel } from 'attnscope';
    import { module } from './dist/runtime.js';
    import { pathToFileURL } from 'node:url';
    await init({ simd: 'relaxed', threads: 1 });
    const plans = {};
    for (const rows of [5, 6]) {
      module('test')._setGemmTileRows(rows);
      const model = await loadModel(new URL('tests/fixtures/hf/gpt2-lm/', pathToFileURL(process.cwd() + '/')),
        { onPlan: (plan) => { plans[rows] = plan; } });
      model.dispose();
    }
    console.log(JSON.stringify({ plans }));
  `, relaxedArgs);
  const config = JSON.parse(readFileSync(new URL('../fixtures/hf/gpt2-lm/config.json', import.meta.url), 'utf8'));
  const T = plans['5'].tokens, widest = Math.max(config.n_embd, config.n_inner);
  assert.equal(T, config.n_positions);
  assert.equal(plans['5'].workspaceBytes - plans['6'].workspaceBytes, 4 * Math.floor(T / 5) * 5 * widest);
  assert.equal(plans['5'].parameterBytes, plans['6'].parameterBytes);
});

test('16-bit weights never read slivers: the same plan at 5 and 6 rows, and no product in slivers', () => {
  // A BF16 checkpoint's matrices keep their 16 bits in panels of the build's own tile (6 rows), whatever the setting.
  const { plans, slivers } = runFresh(`
    import { init, loadModel } from 'attnscope';
    import { module } from './dist/runtime.js';
    import { pathToFileURL } from 'node:url';
    await init({ simd: 'relaxed', threads: 1 });
    const plans = {}, slivers = {};
    for (const rows of [5, 6]) {
      module('test')._setGemmTileRows(rows);
      const model = await loadModel(new URL('tests/fixtures/hf/llama-bf16/', pathToFileURL(process.cwd() + '/')),
        { onPlan: (plan) => { plans[rows] = plan; } });
      const before = module('test')._gemmSliverProducts();
      model.forward(Array.from({ length: 23 }, (_, i) => (i * 7) % 48));
      slivers[rows] = module('test')._gemmSliverProducts() - before;
      model.dispose();
    }
    console.log(JSON.stringify({ plans, slivers }));
  `, relaxedArgs);
  assert.equal(plans['5'].workspaceBytes, plans['6'].workspaceBytes);
  assert.deepEqual(slivers, { 5: 0, 6: 0 });
});
