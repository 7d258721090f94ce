// init({ threads }): the threaded build loads only when asked, reports itself, gives bit-identical results to the
// single-threaded build, and lets Node exit on its own. Each build runs in a fresh process (a process loads one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `code` as an ES module in a fresh Node process; a process that does not exit by itself fails the test. */
function runFresh(code) {
  return execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: repo, encoding: 'utf8', timeout: 120_000 });
}

// Forward passes large enough to be split between threads (64-row query blocks, row-blocked projections), with
// every weights option and a causal mask, plus scaled dot-product attention; prints a SHA-256 of every result's
// bytes and what runtimeInfo() says.
const passes = (threads) => `
  import { createHash } from 'node:crypto';
  import { init, runtimeInfo, MultiHeadAttention, scaledDotProductAttention } from 'attnscope';
  import { randomTensor } from './tests/js/helpers.js';
  await init({ threads: ${JSON.stringify(threads)} });
  const digests = [];
  const digest = (t) => digests.push(t ? createHash('sha256').update(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength)).digest('hex') : 'none');
  const mha = new MultiHeadAttention({ embedDim: 96, numHeads: 6, seed: 3 });
  const x = randomTensor([2, 150, 96], 11);
  for (const options of [{}, { averageWeights: true }, { needWeights: false }, { causal: true }]) {
    const { output, weights } = mha.forward(x, null, null, options);
    digest(output);
    digest(weights);
  }
  mha.dispose();
  const q = randomTensor([2, 3, 70, 16], 4), k = randomTensor([2, 3, 90, 16], 5), v = randomTensor([2, 3, 90, 16], 6);
  const sdpa = scaledDotProductAttention(q, k, v);
  digest(sdpa.output);
  console.log(JSON.stringify({ info: runtimeInfo(), digests }));
`;

test('threads: 2 runs the threaded build with bit-identical results to the single-threaded build', () => {
  const single = JSON.parse(runFresh(passes(1)));
  const threaded = JSON.parse(runFresh(passes(2)));
  assert.deepEqual(single.info, { build: 'single', threads: 1, simd: 'baseline' });
  assert.deepEqual(threaded.info, { build: 'threads', threads: 2, simd: 'baseline' });
  assert.equal(single.digests.length, 9);
  assert.equal(new Set(single.digests).size, 8, 'distinct passes differ (the output alone does not depend on averageWeights)');
  assert.deepEqual(threaded.digests, single.digests);
});

test("threads: 'auto' uses every hardware thread (one thread is the single-threaded build)", async () => {
  const { availableParallelism } = await import('node:os');
  const { info } = JSON.parse(runFresh(passes('auto')));
  const hardware = availableParallelism();
  assert.deepEqual(info, hardware > 1 ? { build: 'threads', threads: hardware, simd: 'baseline' }
    : { build: 'single', threads: 1, simd: 'baseline', fallbackReason: 'one hardware thread' });
});

test('the default is the single-threaded build, which runs without the threaded files', () => {
  // A copy of the package without runtime-threads.js and attnscope-mt*: the default must never need them.
  const copy = mkdtempSync(path.join(tmpdir(), 'attnscope-single-'));
  try {
    cpSync(path.join(repo, 'dist'), copy, { recursive: true, filter: (from) => !/[\\/](runtime-threads\.js|attnscope-mt[.-][^\\/]*)$/.test(from) });
    assert.deepEqual(readdirSync(copy).filter((f) => /runtime-threads|-mt\./.test(f)), []);
    const out = runFresh(`
      import { init, runtimeInfo, MultiHeadAttention } from ${JSON.stringify(pathToFileURL(path.join(copy, 'index.js')).href)};
      await init();
      const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2 });
      const { output } = mha.forward({ data: new Float32Array(24), shape: [3, 8] });
      console.log(JSON.stringify({ info: runtimeInfo(), outputLength: output.data.length }));
    `);
    assert.deepEqual(JSON.parse(out), { info: { build: 'single', threads: 1, simd: 'baseline' }, outputLength: 24 });
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
});

test('init({ threads }) rejects bad counts with a RangeError and a changed count after loading with an Error', () => {
  const out = runFresh(`
    import { init, runtimeInfo } from 'attnscope';
    const errors = [];
    try { runtimeInfo(); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); }
    for (const threads of [0, 1.5, 'many', -2, 65]) {
      try { init({ threads }); errors.push('accepted ' + threads); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); }
    }
    await init({ threads: 2 });
    await init();
    try { init({ threads: 1 }); errors.push('accepted a change'); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); }
    console.log(JSON.stringify({ errors, info: runtimeInfo() }));
  `);
  const { errors, info } = JSON.parse(out);
  assert.match(errors[0], /^Error: runtimeInfo: attnscope is not initialised/);
  assert.deepEqual(errors.slice(1, 6).map((e) => e.split(':')[0]), Array(5).fill('RangeError'));
  assert.match(errors[2], /threads must be 'auto' or an integer from 1 to 64, got number 1\.5/);
  assert.match(errors[3], /got string "many"/);
  assert.match(errors[6], /^Error: init: attnscope is already initialised with \{ threads: number 2 \}; it cannot load again with \{ threads: number 1 \}/);
  assert.deepEqual(info, { build: 'threads', threads: 2, simd: 'baseline' });
});

test("the threaded build leaves the process's error handling and globals to the program", () => {
  // Emscripten's Node glue adds process-wide listeners that rethrow unless linked with NODEJS_CATCH_EXIT=0 and
  // NODEJS_CATCH_REJECTION=0 (CMakeLists.txt); with them, a program's own handler did not keep it running. The glue
  // also reads `require` and `__dirname` and sets a global `Worker`: runtime-threads.js gives the program its
  // globals back once the pool runs. A program without a `Worker`, and one with its own (a polyfill, Deno's).
  const run = (setUp) => JSON.parse(runFresh(`
    import { init, runtimeInfo } from 'attnscope';
    ${setUp}
    const globalsNow = () => ['require', '__dirname', 'Worker'].map((name) => [name, globalThis[name]]);
    const count = () => [...['uncaughtException', 'unhandledRejection', 'exit'].map((e) => process.listenerCount(e)),
      ...globalsNow().map(([, value]) => typeof value)];
    const before = count(), globalsBefore = globalsNow();
    await init({ threads: 2 });
    const after = count(), same = globalsNow().map(([name, value], i) => [name, value === globalsBefore[i][1]]);
    const seen = [];
    process.on('unhandledRejection', (reason) => seen.push(String(reason)));
    Promise.reject(new Error('the program handles this'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    console.log(JSON.stringify({ before, after, same, seen, build: runtimeInfo().build }));
  `));
  const everySame = [['require', true], ['__dirname', true], ['Worker', true]];
  const bare = run('');
  assert.equal(bare.build, 'threads');
  assert.deepEqual(bare.before.slice(3), ['undefined', 'undefined', 'undefined']);
  assert.deepEqual(bare.after, bare.before);
  assert.deepEqual(bare.same, everySame);
  assert.deepEqual(bare.seen, ['Error: the program handles this']);
  const withWorker = run('globalThis.Worker = class ProgramWorker {};');
  assert.equal(withWorker.build, 'threads');
  assert.deepEqual(withWorker.before.slice(3), ['undefined', 'undefined', 'function']);
  assert.deepEqual(withWorker.same, everySame);
  // An error the program does not catch is reported at its own line, not at the glue's (one line of about 90 KB).
  const crash = spawnSync(process.execPath, ['--input-type=module', '-e', `
    import { init } from 'attnscope';
    await init({ threads: 2 });
    throw new RangeError('the program fails');
  `], { cwd: repo, encoding: 'utf8', timeout: 120_000 });
  assert.equal(crash.status, 1);
  assert.match(crash.stderr, /RangeError: the program fails/);
  assert.ok(crash.stderr.length < 2000, `stderr holds ${crash.stderr.length} characters: ${crash.stderr.slice(0, 300)}`);
});

test('threadsUrl: threads from a folder holding the threaded files; one thread, with the reason, from a folder without them', () => {
  // The package without its threaded files, and those files in a folder of their own: a bundled app's layout.
  const work = mkdtempSync(path.join(tmpdir(), 'attnscope-threadsurl-'));
  const isThreaded = (from) => /[\\/](runtime-threads\.js|attnscope-mt[.-][^\\/]*)$/.test(from);
  try {
    cpSync(path.join(repo, 'dist'), path.join(work, 'pkg'), { recursive: true, filter: (from) => !isThreaded(from) });
    cpSync(path.join(repo, 'dist'), path.join(work, 'threaded'), { recursive: true, filter: (from) => from === path.join(repo, 'dist') || isThreaded(from) });
    const run = (options) => JSON.parse(runFresh(`
      import { init, runtimeInfo, MultiHeadAttention } from ${JSON.stringify(pathToFileURL(path.join(work, 'pkg', 'index.js')).href)};
      const errors = [];
      try { init({ threads: 2, threadsUrl: 42 }); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); }
      await init(${options});
      const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
      const { output } = mha.forward({ data: Float32Array.from({ length: 24 }, (_, i) => i / 10), shape: [3, 8] });
      console.log(JSON.stringify({ errors, info: runtimeInfo(), output: Array.from(output.data) }));
    `));
    const served = run(`{ threads: 2, threadsUrl: ${JSON.stringify(path.join(work, 'threaded'))} }`);
    assert.deepEqual(served.info, { build: 'threads', threads: 2, simd: 'baseline' });
    assert.deepEqual(served.errors, ['TypeError: init: threadsUrl must be a string or a URL, got number 42']);
    const missing = run('{ threads: 2 }');
    assert.equal(missing.info.build, 'single');
    assert.match(missing.info.fallbackReason, /^the threaded build's files \(runtime-threads\.js, attnscope-mt\*\) could not be loaded from beside attnscope \(Cannot find module .*runtime-threads\.js.*\); a bundle does not include them: .* pass init\(\{ threads, threadsUrl \}\) with its URL \(see README › Threads\)$/);
    const wrong = run(`{ threads: 2, threadsUrl: new URL('file:///nonexistent/') }`);
    assert.match(wrong.info.fallbackReason, /could not be loaded from threadsUrl file:\/\/\/nonexistent\/ \(.*\); copy them there from node_modules\/attnscope\/dist\//);
    assert.deepEqual(missing.output, served.output, 'one thread and two give the same bits');
    assert.deepEqual(wrong.output, served.output);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
