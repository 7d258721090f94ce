// Builds the WebAssembly module with CMake and assembles the npm package in dist/.
// Usage: node scripts/build.mjs [--all]   (--all also builds the WASM Catch2 tests)
import { copyFileSync, cpSync, mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { cmakeBuild, root, wasmConfigure } from './lib.mjs';

const all = process.argv.includes('--all');
const status = all
  ? cmakeBuild('build/wasm', [...wasmConfigure, '-DATTNSCOPE_BUILD_TESTS=ON']) // the test runner's build: tests forced on
  : cmakeBuild('build/wasm', wasmConfigure, ['attnscope_wasm']);
if (status !== 0) process.exit(status);

const dist = path.join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist);
const sources = path.join(root, 'web', 'src');
// Subfolders too (web/src/figures → dist/figures); folders are walked, files kept only if they ship.
cpSync(sources, dist, { recursive: true, filter: (from) => statSync(from).isDirectory() || (/\.(js|d\.ts)$/.test(from) && !from.endsWith('.test.js')) });
for (const file of ['attnscope.mjs', 'attnscope.wasm']) copyFileSync(path.join(root, 'build', 'wasm', file), path.join(dist, file));
console.log(`\npackage assembled in ${path.relative(process.cwd(), dist) || 'dist'}/`);
