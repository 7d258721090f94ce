// Builds the WebAssembly module with CMake and assembles the npm package in dist/.
// Usage: node scripts/build.mjs [--all]   (--all also builds the WASM Catch2 tests)
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cmakeBuild, root, wasmConfigure } from './lib.mjs';

const all = process.argv.includes('--all');
const status = cmakeBuild('build/wasm', wasmConfigure, all ? [] : ['attnscope_wasm', 'attnscope_mt_wasm']);
if (status !== 0) process.exit(status);

const dist = path.join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist);
const sources = path.join(root, 'web', 'src');
// Subfolders too (web/src/figures → dist/figures); folders are walked, files kept only if they ship.
cpSync(sources, dist, { recursive: true, filter: (from) => statSync(from).isDirectory() || (/\.(js|d\.ts)$/.test(from) && !from.endsWith('.test.js')) });
const built = (file) => path.join(root, 'build', 'wasm', file);
for (const file of ['attnscope.mjs', 'attnscope.wasm', 'attnscope-mt.mjs', 'attnscope-mt.wasm', 'attnscope-mt.worker.js']) {
  copyFileSync(built(file), path.join(dist, file));
}
// Node runs the pthread worker as CommonJS, which a .js file in this "type": "module" package is not; browsers want
// a .js name (their worker MIME check). The .cjs copy also defines the __dirname the ES module glue reads.
writeFileSync(path.join(dist, 'attnscope-mt.worker.cjs'),
  `globalThis.__dirname ??= __dirname;\n${readFileSync(built('attnscope-mt.worker.js'), 'utf8')}`);
console.log(`\npackage assembled in ${path.relative(process.cwd(), dist) || 'dist'}/`);
