// Makes a machine ready for one command: `start` (build the package and serve the demo), `test` (every suite) or
// `fuzz` (`npm run fuzz`: libFuzzer's exploration, the only user of clang-14's fuzzer runtime).
// Each command checks only the tools it uses. On Debian, missing packages are installed when root and the exact
// apt-get command is printed otherwise; elsewhere the message names each missing tool, where it was looked for,
// and the Debian package that provides it. Then the npm dependencies.
// Usage: node scripts/setup.mjs [start|test|fuzz]   (default: test)
import { existsSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { root, mustRun } from './lib.mjs';
import { onPath, requirements } from './requirements.mjs';

// Not strict: an option where the command belongs is reported as that command, below.
const [first] = parseArgs({ allowPositionals: true, strict: false, tokens: true }).tokens;
const command = first === undefined ? 'test' : first.kind === 'positional' ? first.value : (first.rawName ?? '--');
if (command !== 'start' && command !== 'test' && command !== 'fuzz') {
  console.error(`usage: node scripts/setup.mjs [start|test|fuzz]   (got '${command}')`);
  process.exit(2);
}

// How the user runs the command, for the messages below.
const label = command === 'fuzz' ? 'npm run fuzz' : `npm ${command}`;

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  console.error(`attnscope needs Node.js 20.19 or newer (package.json "engines"); this is ${process.version}.`);
  process.exit(1);
}

const missing = requirements.filter((r) => r.commands.includes(command) && !r.found());
if (missing.length) {
  const packages = missing.map((r) => r.debian).join(' ');
  const apt = `apt-get update && apt-get install -y --no-install-recommends ${packages}`;
  const onDebian = existsSync('/etc/debian_version') && existsSync('/usr/bin/apt-get');
  const list = missing.map((r) => `  - ${r.tool}: looked for ${r.where} (Debian package ${r.debian})`).join('\n');
  if (onDebian && process.getuid?.() === 0) {
    console.log(`${label}: installing Debian packages: ${packages}`);
    mustRun('sh', ['-c', apt], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    const still = missing.filter((r) => !r.found());
    if (still.length) {
      console.error(`${label}: still missing after apt-get:\n${still.map((r) => `  - ${r.tool}: looked for ${r.where}`).join('\n')}`);
      process.exit(1);
    }
  } else if (onDebian) {
    console.error(`${label} needs:\n${list}\nInstall them as root:\n\n  sudo sh -c '${apt}'\n`);
    process.exit(1);
  } else {
    console.error(`${label} needs:\n${list}\nThis is not Debian: install these with your system's package manager (the paths above are where the ` +
      `build looks; Emscripten's CMake toolchain file is found from the em++ on PATH, or set ATTNSCOPE_EMSCRIPTEN_ROOT). The project is built and tested on Debian 12.\n`);
    process.exit(1);
  }
}

/** npm ci in `dir` when its node_modules is missing or older than its lock file (npm ci wipes node_modules). */
function npmCi(dir) {
  const lock = path.join(dir, 'package-lock.json');
  const installedLock = path.join(dir, 'node_modules', '.package-lock.json');
  if (!existsSync(installedLock) || statSync(installedLock).mtimeMs < statSync(lock).mtimeMs) {
    mustRun('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir });
  }
}
npmCi(root);
const check = spawnSync('node', ['-e', "require.resolve('vite')"], { cwd: root });
if (check.status !== 0) mustRun('npm', ['ci', '--no-audit', '--no-fund']);
// The bundler consumer apps have their own pinned bundlers (tests/bundlers/package.json).
if (command === 'test') npmCi(path.join(root, 'tests', 'bundlers'));
console.log(`setup: everything \`${label}\` needs is in place`);
