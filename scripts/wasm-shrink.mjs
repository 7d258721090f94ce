// The modules' last post-link step (CMakeLists.txt, after the relaxed builds' fusing), run on a .wasm in place:
// binaryen 132's wasm-opt (npm) optimises it for size once more, -Oz --converge. Emscripten 3.1.6 links with its own
// binaryen 108 at -Oz; the newer optimiser takes another 2.1-2.7 KB off each module
// (bench/records/2026-12-06-module-size-again.md).
// - Nothing is renamed: every import and export keeps its name, so the module still fits the glue Emscripten wrote.
// - Custom sections stay (the relaxed builds' attnscope.simd), and so do function names where the link kept them
//   (--profiling-funcs).
// - The features are the module's own, named one by one as in wasm-relaxed-madd.mjs (a module written with all of
//   them enabled is refused by V8): relaxed SIMD and threads only when asked for, so that a SIMD128 module holding
//   a relaxed instruction, or a single-threaded one holding an atomic, fails to validate and fails the build.
// - No pass that assumes the program never traps (-tnh, -iit): those change what a bug would do.
//
//   node scripts/wasm-shrink.mjs <file.wasm> [--relaxed-simd] [--threads]
import { spawnSync } from 'node:child_process';
import { readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { customSection } from '../web/src/wasm-build.js';

const { positionals: [file], values: { 'relaxed-simd': relaxed, threads } } = parseArgs({
  allowPositionals: true,
  options: { 'relaxed-simd': { type: 'boolean', default: false }, threads: { type: 'boolean', default: false } },
});
// What Emscripten 3.1.6 emits for every module (SIMD128, bulk memory, WebAssembly exceptions), and what some add.
const FEATURES = ['simd', 'bulk-memory', 'bulk-memory-opt', 'mutable-globals', 'sign-ext', 'nontrapping-float-to-int',
  'exception-handling', 'reference-types', 'multivalue', ...(relaxed ? ['relaxed-simd'] : []), ...(threads ? ['threads'] : [])]
  .map((f) => `--enable-${f}`);

if (!file) throw new Error('usage: node scripts/wasm-shrink.mjs <file.wasm> [--relaxed-simd] [--threads]');
const before = statSync(file).size;
// The npm package's own wasm-opt (a Node program), not one found on PATH: Debian's binaryen is 108.
const wasmOpt = path.join(path.dirname(createRequire(import.meta.url).resolve('binaryen/package.json')), 'bin', 'wasm-opt');
const named = customSection(readFileSync(file), 'name') !== null;
const run = spawnSync(process.execPath, [wasmOpt, ...FEATURES, '-Oz', '--converge', ...(named ? ['--debuginfo'] : []), file, '-o', `${file}.tmp`],
  { stdio: 'inherit' });
if (run.status !== 0) {
  rmSync(`${file}.tmp`, { force: true });
  console.error(`wasm-shrink: ${file}: wasm-opt failed (${run.error?.message ?? `exit status ${run.status}`})`);
  process.exit(1);
}
renameSync(`${file}.tmp`, file);
console.log(`wasm-shrink: ${file}: ${before} → ${statSync(file).size} bytes`);

