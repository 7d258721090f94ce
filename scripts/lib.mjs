// Small helpers shared by the project's scripts (tests, build, fuzzer, benchmarks): run a command visibly, and the
// build folders with the CMake options each one is configured with.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The download budget of dist/attnscope.wasm (issue #12): tests/js/size.test.js enforces it, bench/run.mjs reports it. */
export const wasmBudgetBytes = 200_000;

export const emscriptenToolchain = '/usr/share/emscripten/cmake/Modules/Platform/Emscripten.cmake';

// Emscripten's JS optimiser needs Debian's acorn, which lives outside Node's default search path (TOOLCHAIN.md).
export const buildEnv = {
  ...process.env,
  NODE_PATH: ['/usr/share/nodejs', process.env.NODE_PATH].filter(Boolean).join(path.delimiter),
};

/**
 * Runs a command with inherited output; returns its exit status (never throws for a non-zero exit).
 * `options.echo` prints the command line (default console.log; the benchmark, whose stdout is its report, passes
 * console.error along with stdio: ['ignore', 2, 2]); the other options go to spawnSync.
 */
export function run(command, args, { echo = console.log, ...options } = {}) {
  echo(`\n$ ${[command, ...args].join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit', cwd: root, env: buildEnv, ...options });
  if (result.error) {
    console.error(`${command}: ${result.error.message}`);
    return 127;
  }
  return result.status ?? 1;
}

/** Like run(), but exits the process when the command fails. */
export function mustRun(command, args, options) {
  const status = run(command, args, options);
  if (status !== 0) {
    console.error(`\nfailed (exit ${status}): ${[command, ...args].join(' ')}`);
    process.exit(status);
  }
}

/** cmake configure (once) + build of one build folder. Returns the exit status. `options` as for run(). */
export function cmakeBuild(buildDir, configureArgs, targets = [], options = {}) {
  const dir = path.join(root, buildDir);
  let status = run('cmake', ['-S', root, '-B', dir, '-G', 'Ninja', ...configureArgs], options);
  if (status !== 0) return status;
  const targetArgs = targets.length ? ['--target', ...targets] : [];
  status = run('cmake', ['--build', dir, ...targetArgs], options);
  return status;
}

/** ctest over one build folder; a folder without tests is an error, not a pass. */
export function ctest(buildDir, extra = []) {
  return run('ctest', ['--test-dir', path.join(root, buildDir), '--output-on-failure', '--no-tests=error', ...extra]);
}

// The build folders and their options, shared by the tests, the benchmarks and the fuzzer. Each folder is always
// configured with the same options, so whichever script builds it first, the others reuse it as it is.
export const nativeConfigure = ['-DCMAKE_BUILD_TYPE=Release'];
// The same kernels at AVX2 + FMA width (xsimd picks its 8-lane arch); only where the CPU has AVX2.
export const avx2Configure = ['-DCMAKE_BUILD_TYPE=Release', '-DATTNSCOPE_AVX2=ON'];
export const asanConfigure = ['-DCMAKE_BUILD_TYPE=RelWithDebInfo', '-DATTNSCOPE_SANITIZE=ON'];
// libFuzzer needs clang; the library gets ASan + UBSan and coverage (tests/fuzz/CMakeLists.txt).
export const fuzzConfigure = [
  '-DCMAKE_BUILD_TYPE=RelWithDebInfo', '-DCMAKE_CXX_COMPILER=clang++-14',
  '-DATTNSCOPE_BUILD_FUZZER=ON', '-DATTNSCOPE_BUILD_TESTS=OFF', '-DATTNSCOPE_BUILD_BENCH=OFF',
];

// The fuzz targets' corpus replay with 32-bit sizes, as in WASM (where a product of config sizes wraps first): g++
// -m32 (Debian's g++-multilib) with ASan + UBSan, no libFuzzer (tests/fuzz/replay_main.cpp). SSE4.1 is the arch the
// WASM build's kernels use too, and -mfpmath=sse keeps x87's excess precision out of the checks.
export const fuzz32Configure = [
  '-DCMAKE_BUILD_TYPE=RelWithDebInfo', '-DCMAKE_CXX_COMPILER=g++', '-DCMAKE_CXX_FLAGS=-m32 -msse4.1 -mfpmath=sse',
  '-DCMAKE_EXE_LINKER_FLAGS=-m32', '-DATTNSCOPE_BUILD_FUZZER=ON', '-DATTNSCOPE_FUZZ_REPLAY=ON',
  '-DATTNSCOPE_BUILD_TESTS=OFF', '-DATTNSCOPE_BUILD_BENCH=OFF',
];

/** Whether this CPU runs AVX2 and FMA code (Linux: /proc/cpuinfo). */
export function cpuHasAvx2() {
  try {
    const flags = readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1].split(/\s+/) ?? [];
    return flags.includes('avx2') && flags.includes('fma');
  } catch {
    return false;
  }
}

export const wasmConfigure = [
  '-DCMAKE_BUILD_TYPE=Release',
  `-DCMAKE_TOOLCHAIN_FILE=${emscriptenToolchain}`,
  // emcmake's default emulator passes a flag Node 20 rejects (TOOLCHAIN.md pitfall 2).
  '-DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node',
];
