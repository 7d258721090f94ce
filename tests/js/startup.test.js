// Start-up as users meet it: init()'s errors name the cause (a dev server's index.html, a foreign module, a
// missing WebAssembly feature, conflicting options), Emscripten prints nothing, and require() works.
// Each case runs in a fresh process, since the module loads once per process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runIsolated } from './helpers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `code` as an ES module in a fresh Node; returns what it printed on stdout and stderr. */
function isolated(code) {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return { stdout: result.stdout, stderr: result.stderr };
}

const rejection = (options, prelude = '') => `
  import { init } from 'attnscope';
  ${prelude}
  try { await init(${options}); console.log('resolved'); } catch (e) { console.log(e.constructor.name + ': ' + e.message); }`;

test('HTML instead of the .wasm (a dev server answering with index.html) is named as such', () => {
  const { stdout, stderr } = isolated(rejection(`{ wasmBinary: new TextEncoder().encode('<!DOCTYPE html><html><head>') }`));
  assert.match(stdout, /^Error: init: wasmBinary is not a WebAssembly module \(expected it to start with 00 61 73 6d\); got HTML: is a dev server answering with index\.html\? \(see README › Bundlers\)\n$/);
  assert.equal(stderr, '');
});

test('other bytes: empty, JavaScript, anything else', () => {
  assert.match(isolated(rejection('{ wasmBinary: new Uint8Array(0) }')).stdout, /not a WebAssembly module .*; got an empty file/);
  assert.match(isolated(rejection(`{ wasmBinary: new TextEncoder().encode('export default 1;') }`)).stdout, /got JavaScript: is a bundler serving a module in place of the \.wasm\?/);
  assert.match(isolated(rejection('{ wasmBinary: new Uint8Array([1, 2, 3, 4, 5]) }')).stdout, /got 01 02 03 04 /);
});

test('a valid WebAssembly module that is not attnscope.wasm is named as such, with no console output', () => {
  // The smallest valid module: the header alone. Then one that exports a memory but imports what the glue lacks.
  const empty = '[0, 97, 115, 109, 1, 0, 0, 0]';
  const { stdout, stderr } = isolated(rejection(`{ wasmBinary: new Uint8Array(${empty}) }`));
  assert.match(stdout, /^Error: init: wasmBinary is a WebAssembly module, but not the attnscope\.wasm this version of attnscope was built with \(it exports no memory\); use the \.wasm from the same package\n$/);
  assert.equal(stderr, '');
  // (import "env" "nothing" (func)) (memory (export "m") 1)
  const foreign = '[0,97,115,109,1,0,0,0,1,4,1,96,0,0,2,15,1,3,101,110,118,7,110,111,116,104,105,110,103,0,0,5,3,1,0,1,7,5,1,1,109,2,0]';
  const other = isolated(rejection(`{ wasmBinary: new Uint8Array(${foreign}) }`));
  assert.match(other.stdout, /but not the attnscope\.wasm .* \(it imports env\.nothing, which the glue does not provide\)/);
  assert.equal(other.stderr, '');
});

test('bytes that do not compile, in an engine lacking WASM SIMD and exception handling, name both features and the browsers that have them', () => {
  // Node 20 cannot turn these features off, so the engine's answers are stubbed: validate() says no to everything.
  const stub = `WebAssembly.validate = () => false;`;
  const { stdout } = isolated(rejection(`{ wasmBinary: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 99]) }`, stub));
  assert.match(stdout, /^Error: init: this JavaScript engine lacks WebAssembly SIMD \(128-bit\) \(Chrome 91, Edge 91, Firefox 89, Safari 16\.4, Node 16\.4\) and exception handling \(Chrome 95, Edge 95, Firefox 100, Safari 15\.2, Node 17\), which attnscope needs\n$/);
  // With the features there, the same broken bytes are a compile error naming the source.
  assert.match(isolated(rejection(`{ wasmBinary: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 99]) }`)).stdout, /^Error: init: wasmBinary does not compile \(.*\); is it this version's attnscope\.wasm\?\n$/);
});

test('a second init() with other options throws; without options it waits for the first', () => {
  const printed = runIsolated(`
    import { readFile } from 'node:fs/promises';
    import { init } from 'attnscope';
    const first = init({ wasmUrl: './dist/attnscope.wasm' });
    try { init({ wasmUrl: './elsewhere/attnscope.wasm' }); } catch (e) { console.log(e.message); }
    console.log(init() === first, init({ wasmUrl: './dist/attnscope.wasm' }) === first);
    await first;
    try { init({ wasmBinary: new Uint8Array(await readFile('dist/attnscope.wasm')) }); } catch (e) { console.log(e.message); }`);
  assert.equal(printed,
    'init: attnscope is already initialising with { wasmUrl: ./dist/attnscope.wasm }; it cannot load again with { wasmUrl: ./elsewhere/attnscope.wasm } (call init() without options to wait for the first)\n' +
    'true true\n' +
    'init: attnscope is already initialised with { wasmUrl: ./dist/attnscope.wasm }; it cannot load again with { wasmBinary: Uint8Array(' + statSync(new URL('../../dist/attnscope.wasm', import.meta.url)).size + ') } (call init() without options to wait for the first)\n');
});

test('init() checks its options: unknown keys and wrong types are TypeErrors', () => {
  const printed = runIsolated(`
    import { init } from 'attnscope';
    for (const options of [{ wasmURL: 'x' }, { wasmUrl: 42 }, { wasmBinary: [0, 97, 115, 109] }]) {
      try { await init(options); } catch (e) { console.log(e.constructor.name + ': ' + e.message); }
    }`);
  assert.equal(printed,
    "TypeError: init: unknown option 'wasmURL' (known: wasmUrl, wasmBinary, threads, simd, threadedWasmUrl, threadsUrl)\n" +
    'TypeError: init: wasmUrl must be a string or a URL, got number 42\n' +
    'TypeError: init: wasmBinary must be an ArrayBuffer or a Uint8Array, got Array(4)\n');
});

test('a missing .wasm names the file and keeps the fs error code', () => {
  const printed = runIsolated(`
    import { init } from 'attnscope';
    try { await init({ wasmUrl: 'no/such/attnscope.wasm' }); } catch (e) { console.log(e.code + ' ' + e.message); }`);
  assert.equal(printed, 'ENOENT init: could not read no/such/attnscope.wasm (ENOENT)\n');
});

test("require('attnscope') works from CommonJS (Node >= 20.19, package.json engines)", () => {
  const printed = execFileSync(process.execPath, ['-e', `
    const { init, MultiHeadAttention } = require('attnscope');
    init().then(() => {
      const mha = new MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: 3 });
      console.log(JSON.stringify(mha.forward([[1, 2, 3, 4], [4, 3, 2, 1]]).weights.shape));
    });`], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  assert.equal(printed, '[2,2,2]\n');
  const [major, minor] = process.versions.node.split('.').map(Number);
  assert.ok(major > 20 || (major === 20 && minor >= 19), `this Node (${process.version}) is older than package.json's engines`);
});
