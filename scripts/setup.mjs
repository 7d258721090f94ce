// Makes a fresh Debian machine ready to build and test: the Debian packages (installed when root,
// otherwise the exact command is printed), then the npm dev dependencies.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { root, mustRun } from './lib.mjs';

const debianPackages = [
  'emscripten', // em++ 3.1.6 with clang 14 and binaryen
  'libxsimd-dev', // the SIMD kernels
  'catch2', // C++ tests
  'nlohmann-json3-dev', // the C++ tests read the trained models' JSON headers
  'cmake',
  'ninja-build',
  'g++',
  'python3-numpy', // tools/check_model_numpy.py and tests/python (npm test's python suite)
  'clang-14', // the fuzzer: libFuzzer with ASan and UBSan
  'libclang-rt-14-dev',
  'chromium', // browser tests (installed without recommends: 9 packages instead of 95)
];

const [major] = process.versions.node.split('.').map(Number);
if (major < 20) {
  console.error(`attnscope needs Node.js 20 or newer; this is ${process.version}.`);
  process.exit(1);
}

function installed(pkg) {
  try {
    return execFileSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).includes('install ok installed');
  } catch {
    return false;
  }
}

const missing = debianPackages.filter((pkg) => !installed(pkg));
if (missing.length) {
  const command = `apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`;
  if (process.getuid?.() === 0) {
    console.log(`Installing Debian packages: ${missing.join(' ')}`);
    mustRun('sh', ['-c', command], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  } else {
    console.error(`attnscope needs these Debian packages: ${missing.join(' ')}\nInstall them with:\n\n  sudo sh -c '${command}'\n`);
    process.exit(1);
  }
}

// npm ci only when node_modules is missing or older than the lock file: it wipes node_modules each time.
const lock = path.join(root, 'package-lock.json');
const installedLock = path.join(root, 'node_modules', '.package-lock.json');
if (!existsSync(installedLock) || statSync(installedLock).mtimeMs < statSync(lock).mtimeMs) {
  mustRun('npm', ['ci', '--no-audit', '--no-fund']);
}
const check = spawnSync('node', ['-e', "require.resolve('playwright-core')"], { cwd: root });
if (check.status !== 0) mustRun('npm', ['ci', '--no-audit', '--no-fund']);
console.log('setup: Debian packages and npm dependencies are in place');
