// Runs every test suite of the project in order and prints one summary line per suite and a total.
// Usage: node scripts/test.mjs [suite ...]   (suites: native avx2 asan tsan fuzz fuzz32 wasm js python js-threads bundlers browser bench; default all)
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { asanConfigure, avx2Configure, cmakeBuild, cpuHasAvx2, ctest, fuzz32Configure, fuzzConfigure, nativeConfigure, root, run, wasmConfigure } from './lib.mjs';

// The tests are forced on: a cached ATTNSCOPE_BUILD_TESTS=OFF must not turn a suite into an empty one (and ctest
// runs with --no-tests=error, scripts/lib.mjs).
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
  // The thread pool and the threaded forward pass under ThreadSanitizer (the [threads] tests only: the rest is serial).
  tsan: () => steps(() => cmakeBuild('build/tsan', withTests(['-DCMAKE_BUILD_TYPE=RelWithDebInfo', '-DATTNSCOPE_SANITIZE_THREADS=ON'])),
    () => run(path.join(root, 'build', 'tsan', 'attnscope_tests'), ['--use-colour', 'no', '[threads]'], { env: { ...process.env, TSAN_OPTIONS: 'halt_on_error=1' } })),
  // Every libFuzzer target (clang-14, ASan + UBSan) replays its committed corpus once: deterministic, no
  // exploration (that is `npm run fuzz`).
  fuzz: () => steps(() => cmakeBuild('build/fuzz', fuzzConfigure), () => ctest('build/fuzz')),
  // The same corpora replayed once by a 32-bit build (g++ -m32, ASan + UBSan): size_t is 32 bits there, as in WASM,
  // so a product of a model file's sizes that wraps is found here rather than only in the browser.
  fuzz32: () => steps(() => cmakeBuild('build/fuzz32', fuzz32Configure), () => ctest('build/fuzz32')),
  // The same Catch2 sources compiled to WASM and run under Node; builds the npm package's module too.
  wasm: () => steps(() => run('node', ['scripts/build.mjs', '--all']), () => ctest('build/wasm')),
  // The public JS API against the package in dist/.
  js: () => run('node', ['--test', '--test-reporter=spec', 'tests/js/']),
  // The Python that needs only NumPy (Debian's /usr/bin/python3; no torch): the independent NumPy model check
  // against the golden fixtures, and the tokenisers against the shared vectors.
  python: () => steps(() => run('/usr/bin/python3', ['tools/check_model_numpy.py']),
    () => run('/usr/bin/python3', ['-m', 'unittest', 'discover', '-s', 'tests/python', '-v'])),
  // The same JS tests against the threaded build (init({ threads: 2 }) preloaded); the package and threads tests
  // start their own builds, so they run once, above.
  'js-threads': () => run('node', ['--import', './tests/js/threaded-init.mjs', '--test', '--test-reporter=dot',
    ...readdirSync(path.join(root, 'tests', 'js')).filter((f) => f.endsWith('.test.js') && !/^(package|threads)\./.test(f)).map((f) => `tests/js/${f}`)]),
  // The packed tarball in small consumer apps, one per bundler (Vite 5–8 dev and build, webpack, Rollup, esbuild),
  // run in headless Chromium (and Node for esbuild's Node bundles).
  bundlers: () => run('node', ['--test', '--test-reporter=spec', 'tests/bundlers/']),
  // The demo, built as users get it, in headless Chromium.
  browser: () => steps(() => run('npx', ['vite', 'build', '--config', 'web/demo/vite.config.js', '--logLevel', 'warn']),
    () => run('node', ['--test', '--test-reporter=spec', 'tests/browser/'])),
  // The benchmark's smoke mode (every library once at tiny sizes, Node and Chromium): it runs and the peers agree.
  bench: () => run('node', ['--test', '--test-reporter=spec', 'tests/bench/']),
};

const requested = process.argv.slice(2);
for (const name of requested) if (!(name in suites)) throw new Error(`unknown suite '${name}' (have ${Object.keys(suites).join(', ')})`);
const selected = requested.length ? requested : Object.keys(suites);

/** Newest modification time of the files under `dir` (recursively), or of `dir` itself when it is a file. */
function newest(dir) {
  const st = statSync(dir);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(dir).map((name) => newest(path.join(dir, name))));
}
// The suites that test dist/ rebuild it first when it is missing or older than its sources, so they never test a
// stale package (the wasm suite always rebuilds it).
const usesDist = ['js', 'js-threads', 'bundlers', 'browser', 'bench'];
if (selected.some((name) => usesDist.includes(name)) && !selected.includes('wasm')) {
  const built = path.join(root, 'dist', 'index.js');
  const sources = ['web/src', 'cpp', 'cmake', 'CMakeLists.txt', 'scripts/build.mjs'].map((p) => path.join(root, p));
  const stale = !existsSync(built) || Math.min(...readdirSync(path.dirname(built)).map((f) => statSync(path.join(root, 'dist', f)).mtimeMs)) < Math.max(...sources.map(newest));
  if (stale) {
    console.log('\ndist/ is missing or older than its sources: rebuilding it');
    if (run('node', ['scripts/build.mjs']) !== 0) process.exit(1);
  }
}

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
