// Small helpers shared by the project's scripts (tests, build, fuzzer, benchmarks): run a command visibly, and
// configure, build and test a CMake preset (CMakePresets.json).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The download budget of dist/attnscope.wasm and of attnscope-relaxed.wasm, each: 336 KiB, issue #35's target
 * (issue #12 set the first budget; issues #20 and #23 raised it to 336 KiB, round 4's families, caches, research
 * outputs, 16-bit tiles and patchEach to 412 KiB, and it is back at 336 KiB now that they fit in it; CHANGELOG says
 * what each part cost). tests/js/size.test.js enforces it, bench/run.mjs
 * reports it. The bookkeeping (the walk over the plan, config readers, the loader) is built -Oz and the inner loops
 * -O3 without partial unrolling (CMakeLists.txt): a whole link built -Oz runs the models' forward passes slower
 * (bench/compare-builds.mjs).
 */
export const wasmBudgetBytes = 344_064;

/**
 * Emscripten's CMake toolchain file, found the way the wasm preset's cmake/emscripten-toolchain.cmake finds it (from
 * the em++ on PATH, or $ATTNSCOPE_EMSCRIPTEN_ROOT); null when there is none.
 */
export function emscriptenToolchain() {
  const inRoot = (dir) => path.join(dir, 'cmake', 'Modules', 'Platform', 'Emscripten.cmake');
  const found = (dir) => (dir && existsSync(inRoot(dir)) ? inRoot(dir) : null);
  if (process.env.ATTNSCOPE_EMSCRIPTEN_ROOT) return found(process.env.ATTNSCOPE_EMSCRIPTEN_ROOT);
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const emxx = path.join(dir, 'em++');
    if (!existsSync(emxx)) continue;
    // em++ is a symlink into Emscripten's folder (Debian) or a script inside it (emsdk); elsewhere Emscripten says
    // where it is itself.
    return found(path.dirname(realpathSync(emxx))) ?? found(spawnSync('em-config', ['EMSCRIPTEN_ROOT'], { encoding: 'utf8' }).stdout?.trim());
  }
  return null;
}

// Debian's Emscripten runs its JS optimiser with Debian's acorn, which lives in /usr/share/nodejs, outside Node's
// default search path. Debian offers no way to ask for that folder; elsewhere the entry is a folder that does not
// exist, which changes nothing (docs/toolchain.md, "Emscripten's JS optimiser and acorn").
//
// Debian's Emscripten also runs binaryen's tools (wasm-opt, wasm-metadce) by bare name, so under `npm test` or
// `npm run build`, which put node_modules/.bin first on PATH, it would run the npm `binaryen` package's newer tools
// (the relaxed builds' post-link step needs that package): a different module, whose import names no longer match
// its glue. The project's node_modules/.bin folders go last (docs/toolchain.md, "Emscripten runs binaryen by name").
const isPackageBin = (dir) => path.basename(dir) === '.bin' && path.basename(path.dirname(dir)) === 'node_modules';
const searchPath = (process.env.PATH ?? '').split(path.delimiter);
export const buildEnv = {
  ...process.env,
  NODE_PATH: ['/usr/share/nodejs', process.env.NODE_PATH].filter(Boolean).join(path.delimiter),
  PATH: [...searchPath.filter((dir) => !isPackageBin(dir)), ...searchPath.filter(isPackageBin)].join(path.delimiter),
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

// The build folders and their options are CMakePresets.json's presets (native, avx2, asan, tsan, fuzz, wasm): the
// tests, the benchmarks and the fuzzer name a preset, so each folder is always configured with the same options, and
// whichever script builds it first, the others reuse it as it is. `cmake --preset <name>` does the same by hand.
const presets = JSON.parse(readFileSync(path.join(root, 'CMakePresets.json'), 'utf8'));

/** The build folder of a configure preset (its own binaryDir or the one it inherits), relative to the repository. */
export function presetDir(name) {
  const find = (n) => {
    const preset = presets.configurePresets.find((p) => p.name === n);
    if (!preset) throw new Error(`no configure preset '${n}' in CMakePresets.json`);
    return preset;
  };
  let preset = find(name);
  while (preset.binaryDir === undefined && preset.inherits) preset = find([preset.inherits].flat()[0]);
  return path.relative(root, preset.binaryDir.replace('${sourceDir}', root).replace('${presetName}', name));
}

/**
 * Configures (quick when nothing changed) and builds one preset; `targets` limits the build. Returns the exit
 * status. `options` as for run().
 */
export function cmakeBuild(preset, targets = [], options = {}) {
  const status = run('cmake', ['--preset', preset], options);
  if (status !== 0) return status;
  const targetArgs = targets.length ? ['--target', ...targets] : [];
  return run('cmake', ['--build', '--preset', preset, ...targetArgs], options);
}

/**
 * ctest over one preset's build folder, as many tests at once as there are cores (each Catch2 source file is a test
 * of its own, CMakeLists.txt); its test preset makes a folder without tests an error, not a pass.
 */
export function ctest(preset, extra = []) {
  return run('ctest', ['--preset', preset, '--parallel', String(availableParallelism()), ...extra]);
}

/**
 * Whether this machine runs 32-bit x86 programs: a one-line program built with g++ -m32 (as the asan suite builds
 * its programs, the asan32 preset) is started. A kernel without IA-32 emulation (some virtual machines) refuses it
 * with ENOEXEC. A probe that does not build (no g++-multilib) counts as runnable: the suite's own build then says
 * what is missing.
 */
export function runs32Bit() {
  const exe = path.join(root, 'build', 'probe-m32');
  mkdirSync(path.dirname(exe), { recursive: true });
  const built = spawnSync('g++', ['-m32', '-x', 'c++', '-', '-o', exe], { input: 'int main() { return 0; }\n', stdio: ['pipe', 'ignore', 'ignore'] });
  if (built.status !== 0) return true;
  // execv itself: Node's spawn (execvp) hands a program the kernel refuses to /bin/sh, which fails differently.
  const probe = 'import os, sys\ntry:\n    os.execv(sys.argv[1], [sys.argv[1]])\nexcept OSError as e:\n    sys.exit(99 if e.errno == 8 else 98)';
  return spawnSync('/usr/bin/python3', ['-c', probe, exe], { stdio: 'ignore' }).status !== 99;
}

/** Whether this CPU runs AVX2 and FMA code (Linux: /proc/cpuinfo). */
export function cpuHasAvx2() {
  try {
    const flags = readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1].split(/\s+/) ?? [];
    return flags.includes('avx2') && flags.includes('fma');
  } catch {
    return false;
  }
}
