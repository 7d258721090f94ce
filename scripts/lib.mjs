// Small helpers shared by the project's scripts: run a command visibly, and the build folders.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const emscriptenToolchain = '/usr/share/emscripten/cmake/Modules/Platform/Emscripten.cmake';

// Emscripten's JS optimiser needs Debian's acorn, which lives outside Node's default search path (TOOLCHAIN.md).
export const buildEnv = {
  ...process.env,
  NODE_PATH: ['/usr/share/nodejs', process.env.NODE_PATH].filter(Boolean).join(path.delimiter),
};

/** Runs a command with inherited output; returns its exit status (never throws for a non-zero exit). */
export function run(command, args, options = {}) {
  console.log(`\n$ ${[command, ...args].join(' ')}`);
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

/** cmake configure (once) + build of one build folder. Returns the exit status. */
export function cmakeBuild(buildDir, configureArgs, targets = []) {
  const dir = path.join(root, buildDir);
  let status = run('cmake', ['-S', root, '-B', dir, '-G', 'Ninja', ...configureArgs]);
  if (status !== 0) return status;
  const targetArgs = targets.length ? ['--target', ...targets] : [];
  status = run('cmake', ['--build', dir, ...targetArgs]);
  return status;
}

export const wasmConfigure = [
  '-DCMAKE_BUILD_TYPE=Release',
  `-DCMAKE_TOOLCHAIN_FILE=${emscriptenToolchain}`,
  // emcmake's default emulator passes a flag Node 20 rejects (TOOLCHAIN.md pitfall 2).
  '-DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node',
];
