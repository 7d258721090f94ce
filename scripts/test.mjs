// Runs every test suite of the project in order and prints one summary line per suite and a total.
// Usage: node scripts/test.mjs [suite ...]   (suites: native avx2 asan tsan wasm js python js-threads js-relaxed bundlers browser bench;
// default all)
import { readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cmakeBuild, cpuHasAvx2, ctest, presetDir, root, run, runs32Bit } from './lib.mjs';

// Each C++ suite is a CMake preset (CMakePresets.json): the presets force the tests on, so a cached
// ATTNSCOPE_BUILD_TESTS=OFF cannot turn a suite into an empty one, and their test presets fail a folder with no tests.
const steps = (...commands) => {
  for (const command of commands) {
    const status = command();
    if (status !== 0) return status;
  }
  return 0;
};

/**
 * The native build installed under build/ and used from tests/cmake-consumer/, a project of its own that finds it
 * with find_package(attnscope CONFIG REQUIRED): the install rules and attnscopeConfig.cmake work for a C++ user.
 * Both folders start empty, so nothing from an earlier install or configure can stand in for a missing piece.
 */
function installedPackage() {
  const prefix = path.join(root, 'build', 'native-install');
  const consumer = path.join(root, 'build', 'cmake-consumer');
  for (const dir of [prefix, consumer]) rmSync(dir, { recursive: true, force: true });
  return steps(() => run('cmake', ['--install', presetDir('native'), '--prefix', prefix]),
    () => run('cmake', ['-S', path.join(root, 'tests', 'cmake-consumer'), '-B', consumer, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=Release',
      `-DCMAKE_PREFIX_PATH=${prefix}`, '-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF']),
    () => run('cmake', ['--build', consumer]),
    () => run(path.join(consumer, 'consumer'), []));
}

// Test files run two at a time (node --test runs one at a time on 2 cores): each file is its own process with its
// own module, server and browser, and much of a file's time is waiting on a page, a worker or a child process, so a
// second file fills it.
const files = '--test-concurrency=2';

/**
 * The test files of `dir` that `keep` accepts, largest first: node --test starts them in the order given, and a long
 * file started last ran alone at the end (why.test.js, the browser suite's longest, is last by name). Size stands in
 * for duration well enough: in the browser suite it ends the pair of runs within 1 % of the best order.
 */
const largestFirst = (dir, keep = () => true) => readdirSync(path.join(root, dir))
  .filter((f) => f.endsWith('.test.js') && keep(f))
  .map((f) => [`${dir}/${f}`, statSync(path.join(root, dir, f)).size])
  .sort((a, b) => b[1] - a[1])
  .map(([f]) => f);
// The JS files that never load a build (the docs, the set-up, the layout tables, the budget, the page's own logic, the
// tokenizers, which are JavaScript): run once, by the js suite, and not again against the threaded and relaxed builds.
const buildFree = /^(package|threads|docs|setup|readme-layout|size|presets|circuits-gram|demo-percent|demo-scheduler|demo-head-lines|demo-paint|demo-research-maps|hf-tokenizer|tokenizer-reference)\./;
// The files about the package's JavaScript over whichever build: the tokenizers' guards against hostile
// tokenizer.json files (12 s a run) and the figures' SVG. Run once, by the js suite.
const jsSide = /^(tokenizer-hostile|figures)\./;
// The relaxed-SIMD module is its own link of the same sources, the SIMD128 one's glue and memory settings, its GEMM's
// multiply-adds fused after the link (docs/toolchain.md, "Relaxed SIMD: two builds"). js-relaxed runs the files
// whose numbers go through a pass (errors.test.js and model-api.test.js check the layer's numbers after each
// refusal), not the ones about reading and refusing files, the memory plan, the registry, start-up (its own
// processes and builds) or the demo's Worker client, which the js suite runs on the SIMD128 module.
const gemmFree = /^(model-files|hostile-checkpoints|hostile-models|checkpoint-property|pretrained-files|pretrained-plan|model-header|families|startup|memory|demo-session|demo-client|demo-head-scores)\./;

const suites = {
  // The Catch2 suite natively, then the installed library from a separate CMake project.
  native: () => steps(() => cmakeBuild('native'), () => ctest('native'), installedPackage),
  // The same suite with the kernels at AVX2 + FMA width (the code is written once for every arch).
  avx2: () => {
    if (!cpuHasAvx2()) {
      console.log('avx2: skipped: this CPU has no AVX2 + FMA (no "avx2" and "fma" in /proc/cpuinfo flags)');
      return 0;
    }
    // The native build folder holds this suite's program too (CMakeLists.txt, ATTNSCOPE_AVX2_VARIANT): the code that
    // does not depend on the width is compiled once for both, and the native test preset leaves these tests out.
    return steps(() => cmakeBuild('native'), () => run('ctest', ['--test-dir', presetDir('native'), '--label-regex', '^avx2$',
      '--no-tests=error', '--output-on-failure', '--parallel', String(availableParallelism())]));
  },
  // The Catch2 suite under AddressSanitizer + UndefinedBehaviorSanitizer, and every fuzz target replaying its committed
  // corpus once over the same library build: the presets link the targets with replay_main.cpp instead of libFuzzer
  // (tests/fuzz/CMakeLists.txt); `npm run fuzz` explores with libFuzzer (the fuzz preset, clang-14).
  // Built 32-bit (g++ -m32, the asan32 preset) where the kernel runs 32-bit x86 programs: size_t is 32 bits there, as
  // in WASM, so a product of a model file's sizes that wraps is found here rather than only in the browser. (A 64-bit
  // build of the same suite and a 32-bit build of the fuzz targets alone were about 100 s more of compiling. No test
  // then runs sanitized with a 64-bit size_t, and the sanitized kernels are xsimd's sse4_1 ones, WASM's: the native
  // suite runs every test 64-bit, at SSE2 and AVX2 width, unsanitized.) A kernel that refuses 32-bit programs
  // (ENOEXEC, some virtual machines) gets the 64-bit asan preset, and the wasm suite still runs the library with a
  // 32-bit size_t.
  asan: () => {
    const preset = runs32Bit() ? 'asan32' : 'asan';
    if (preset === 'asan') console.log('asan: 64-bit: this machine\'s kernel does not run 32-bit x86 programs (ENOEXEC); the wasm suite runs the library with a 32-bit size_t');
    return steps(() => cmakeBuild(preset), () => ctest(preset));
  },
  // The thread pool and the threaded forward pass under ThreadSanitizer (the [threads] tests only: the rest is serial;
  // CMakeLists.txt builds only their files).
  tsan: () => steps(() => cmakeBuild('tsan'),
    () => run(path.join(root, presetDir('tsan'), 'attnscope_tests'), ['--use-colour', 'no', '[threads]'], { env: { ...process.env, TSAN_OPTIONS: 'halt_on_error=1' } })),
  // The same Catch2 sources compiled to WASM and run under Node; builds the npm package's module too.
  wasm: () => steps(() => run('node', ['scripts/build.mjs', '--all']), () => ctest('wasm')),
  // The public JS API against the package in dist/.
  js: () => run('node', ['--test', files, '--test-reporter=spec', ...largestFirst('tests/js')]),
  // The Python that needs only NumPy (Debian's /usr/bin/python3; no torch): the independent NumPy model check
  // against the golden fixtures, and the tokenisers against the shared vectors.
  python: () => steps(() => run('/usr/bin/python3', ['tools/references/check_model_numpy.py']),
    () => run('/usr/bin/python3', ['-m', 'unittest', 'discover', '-s', 'tests/python', '-v'])),
  // The same JS tests against the threaded build (init({ threads: 2 }) preloaded); the package and threads tests
  // start their own builds, so they run once, above, with the files that load no build.
  'js-threads': () => run('node', ['--import', './tests/js/threaded-init.mjs', '--test', files, '--test-reporter=dot',
    ...largestFirst('tests/js', (f) => !buildFree.test(f) && !jsSide.test(f))]),
  // The same JS tests against the relaxed-SIMD build (init({ simd: 'relaxed' }) preloaded; Node 20 runs relaxed SIMD
  // only with the flag). As for js-threads, the package and threads tests start builds of their own and run above;
  // simd-builds compares the two builds itself.
  'js-relaxed': () => run('node', [...(Number(process.versions.node.split('.')[0]) < 22 ? ['--experimental-wasm-relaxed-simd'] : []),
    '--import', './tests/js/relaxed-init.mjs', '--test', files, '--test-reporter=dot',
    ...largestFirst('tests/js', (f) => !buildFree.test(f) && !jsSide.test(f) && !gemmFree.test(f) && !f.startsWith('simd-builds.'))]),
  // The packed tarball in small consumer apps, one per bundler (Vite 5–8 dev and build, webpack, Rollup, esbuild),
  // run in headless Chromium (and Node for esbuild's Node bundles).
  bundlers: () => run('node', ['--test', '--test-reporter=spec', 'tests/bundlers/']),
  // The demo, built as users get it, in headless Chromium.
  browser: () => steps(() => run('npx', ['vite', 'build', '--config', 'web/demo/vite.config.js', '--logLevel', 'warn']),
    () => run('node', ['--test', files, '--test-reporter=spec', ...largestFirst('tests/browser')])),
  // The benchmark's smoke mode (every library once at tiny sizes, Node and Chromium): it runs and the peers agree.
  bench: () => run('node', ['--test', '--test-reporter=spec', 'tests/bench/']),
};

const { positionals: requested } = parseArgs({ allowPositionals: true, options: {} });
for (const name of requested) if (!(name in suites)) throw new Error(`unknown suite '${name}' (have ${Object.keys(suites).join(', ')})`);
const selected = requested.length ? requested : Object.keys(suites);

// The suites that test dist/ assemble it first, so they never test a stale package: CMake rebuilds only what
// changed, so this is quick when nothing did (the wasm suite builds it anyway).
const usesDist = ['js', 'js-threads', 'js-relaxed', 'bundlers', 'browser', 'bench'];
if (selected.some((name) => usesDist.includes(name)) && !selected.includes('wasm')) {
  console.log('\n=== dist/ (the package the suites below test) ===');
  if (run('node', ['scripts/build.mjs']) !== 0) process.exit(1);
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
