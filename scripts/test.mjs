// Runs every test suite of the project in order and prints one summary line per suite and a total.
// Usage: node scripts/test.mjs [suite ...]   (suites: native avx2 asan fuzz wasm js python browser bench; default all)
import { existsSync } from 'node:fs';
import path from 'node:path';
import { asanConfigure, avx2Configure, cmakeBuild, cpuHasAvx2, ctest, fuzzConfigure, nativeConfigure, root, run, wasmConfigure } from './lib.mjs';

// The runner forces the tests on, whatever an earlier configure of the folder cached.
const withTests = (configure) => [...configure, '-DATTNSCOPE_BUILD_TESTS=ON'];
const steps = (...commands) => {
  for (const command of commands) {
    const status = command();
    if (status !== 0) return status;
  }
  return 0;
};

const suites = {
  // The Catch2 suite natively, then under AddressSanitizer + UndefinedBehaviorSanitizer.
  native: () => steps(() => cmakeBuild('build/native', withTests(nativeConfigure)), () => ctest('build/native')),
  // The same suite with the kernels at AVX2 + FMA width (the code is written once for every arch).
  avx2: () => {
    if (!cpuHasAvx2()) {
      console.log('avx2: skipped: this CPU has no AVX2 + FMA (no "avx2" and "fma" in /proc/cpuinfo flags)');
      return 0;
    }
    return steps(() => cmakeBuild('build/native-avx2', withTests(avx2Configure)), () => ctest('build/native-avx2'));
  },
  asan: () => steps(() => cmakeBuild('build/asan', withTests(asanConfigure)), () => ctest('build/asan')),
  // Every libFuzzer target (clang-14, ASan + UBSan) replays its committed corpus once: deterministic, no
  // exploration (that is `npm run fuzz`).
  fuzz: () => steps(() => cmakeBuild('build/fuzz', fuzzConfigure), () => ctest('build/fuzz')),
  // The same Catch2 sources compiled to WASM and run under Node; builds the npm package's module too.
  wasm: () => steps(() => run('node', ['scripts/build.mjs', '--all']), () => ctest('build/wasm')),
  // The public JS API against the package in dist/.
  js: () => run('node', ['--test', '--test-reporter=spec', 'tests/js/']),
  // The Python that needs only NumPy (Debian's /usr/bin/python3; no torch): the independent NumPy model check
  // against the golden fixtures, and the tokenisers against the shared vectors.
  python: () => steps(() => run('/usr/bin/python3', ['tools/check_model_numpy.py']),
    () => run('/usr/bin/python3', ['-m', 'unittest', 'discover', '-s', 'tests/python', '-v'])),
  // The demo, built as users get it, in headless Chromium.
  browser: () => steps(() => run('npx', ['vite', 'build', '--config', 'web/demo/vite.config.js', '--logLevel', 'warn']),
    () => run('node', ['--test', '--test-reporter=spec', 'tests/browser/'])),
  // The benchmark's smoke mode (every library once at tiny sizes, Node and Chromium): it runs and the peers agree.
  bench: () => run('node', ['--test', '--test-reporter=spec', 'tests/bench/']),
};

const requested = process.argv.slice(2);
for (const name of requested) if (!(name in suites)) throw new Error(`unknown suite '${name}' (have ${Object.keys(suites).join(', ')})`);
const selected = requested.length ? requested : Object.keys(suites);
if (['js', 'browser', 'bench'].some((s) => selected.includes(s)) && !selected.includes('wasm') && !existsSync(path.join(root, 'dist', 'index.js'))) selected.unshift('wasm');

const results = [];
for (const name of selected) {
  const started = Date.now();
  console.log(`\n=== ${name} ===`);
  const status = suites[name]();
  results.push({ name, status, seconds: (Date.now() - started) / 1000 });
}

console.log('\nsuite     result  seconds');
for (const { name, status, seconds } of results) console.log(`${name.padEnd(9)} ${status === 0 ? 'pass  ' : 'FAIL  '}  ${seconds.toFixed(1).padStart(6)}`);
const failed = results.filter((r) => r.status !== 0).length;
console.log(`\nattnscope: ${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
