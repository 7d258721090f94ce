// The set-up: the README's table of Debian packages per command is scripts/requirements.mjs's list, and each
// command's messages name exactly what is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { requirements } from '../../scripts/requirements.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const packagesFor = (command) => requirements.filter((r) => r.commands.includes(command)).map((r) => r.debian);

test("the README's package table matches the requirements of npm start and npm test", () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const row = (command) => new RegExp(`^\\| \`npm ${command}\`[^|]*\\| (.*) \\|$`, 'm').exec(readme)?.[1];
  const start = row('start')?.match(/`([^`]+)`/)?.[1].split(' ');
  assert.deepEqual(start, packagesFor('start'));
  const test = row('test');
  assert.ok(test?.startsWith('those four and '), `npm test row: ${test}`);
  assert.deepEqual([...start, ...test.match(/`([^`]+)`/)[1].split(' ')].sort(), packagesFor('test').sort());
  assert.deepEqual(row('run fuzz')?.match(/`([^`]+)`/)?.[1].split(' '), packagesFor('fuzz'));
});

test('with nothing on PATH, as a non-root user, setup names every missing tool of its command and the apt-get line', () => {
  const run = (command) => spawnSync(process.execPath, ['scripts/setup.mjs', command], {
    cwd: root, encoding: 'utf8', env: { PATH: '/nonexistent', CHROMIUM_PATH: '/nonexistent/chromium' },
    // As root, run as nobody: root would install the packages instead of printing the command.
    ...(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}),
  });
  const start = run('start');
  assert.equal(start.status, 1);
  for (const pkg of ['emscripten', 'cmake', 'ninja-build']) assert.ok(start.stderr.includes(`(Debian package ${pkg})`), start.stderr);
  assert.doesNotMatch(start.stderr, /chromium|clang-14|g\+\+/, 'npm start does not ask for what only the tests use');
  const test = run('test');
  assert.equal(test.status, 1);
  for (const pkg of ['emscripten', 'cmake', 'ninja-build', 'g++', 'chromium']) assert.ok(test.stderr.includes(`(Debian package ${pkg})`), test.stderr);
  assert.match(test.stderr, /apt-get install -y --no-install-recommends emscripten cmake ninja-build g\+\+ chromium/);
  assert.doesNotMatch(test.stderr, /clang-14/, 'npm test does not ask for what only npm run fuzz uses');
  const fuzz = run('fuzz');
  assert.equal(fuzz.status, 1);
  assert.match(fuzz.stderr, /^npm run fuzz needs:/m);
  assert.match(fuzz.stderr, /apt-get install -y --no-install-recommends cmake ninja-build clang-14'/);
});
