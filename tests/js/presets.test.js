// CMakePresets.json as the scripts use it: every build folder is a configure preset with a build and a test preset of
// the same name, and scripts/lib.mjs resolves each one to the folder the other tools expect.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { emscriptenToolchain, presetDir } from '../../scripts/lib.mjs';

const presets = JSON.parse(readFileSync(new URL('../../CMakePresets.json', import.meta.url), 'utf8'));
const visible = (list) => list.filter((p) => !p.hidden).map((p) => p.name);

test('every configure preset has a build and a test preset of its name', () => {
  const configure = visible(presets.configurePresets);
  for (const name of ['native', 'avx2', 'asan', 'asan32', 'tsan', 'fuzz', 'wasm']) assert.ok(configure.includes(name), name);
  assert.deepEqual(visible(presets.buildPresets), configure);
  assert.deepEqual(visible(presets.testPresets), configure);
  for (const p of [...presets.buildPresets, ...presets.testPresets].filter((p) => !p.hidden)) assert.equal(p.configurePreset, p.name);
  // A folder with no tests is a failure, not a pass: a suite cannot go quietly empty.
  const base = presets.testPresets.find((p) => p.name === 'base');
  assert.equal(base.execution.noTestsAction, 'error');
});

test('native and asan (and asan32) are unity builds; tsan and wasm compile every source on its own', () => {
  // Unity sources cut the two largest native builds by 20-25 s each (about 8 library sources to a unit), but a source
  // that forgets an include compiles there when a neighbour has it: tsan and wasm build the library one source at a
  // time, so such a source still fails `npm test`. (The test files are six to a unit in every build, by
  // ATTNSCOPE_TEST_FILES_PER_UNIT.)
  const preset = (name) => presets.configurePresets.find((p) => p.name === name);
  // A cache variable as CMake resolves it: the preset's own, else the one it inherits.
  const variable = (name, key) => { const p = preset(name); return p.cacheVariables?.[key] ?? (p.inherits ? variable(p.inherits, key) : undefined); };
  const unity = (name) => variable(name, 'CMAKE_UNITY_BUILD') === 'ON';
  assert.deepEqual(['native', 'asan', 'asan32', 'tsan', 'wasm'].map(unity), [true, true, true, false, false]);
  // asan32 is asan with 32-bit sizes, nothing else: the sanitizers and the fuzz targets' replay come from asan.
  assert.equal(preset('asan32').inherits, 'asan');
  assert.deepEqual(Object.keys(preset('asan32').cacheVariables).sort(), ['CMAKE_CXX_COMPILER', 'CMAKE_CXX_FLAGS', 'CMAKE_EXE_LINKER_FLAGS', 'xsimd_DIR']);
});

test('presetDir gives each preset its build folder', () => {
  const want = { native: 'build/native', avx2: 'build/native-avx2', asan: 'build/asan', asan32: 'build/asan32', tsan: 'build/tsan', fuzz: 'build/fuzz', wasm: 'build/wasm' };
  for (const [name, dir] of Object.entries(want)) assert.equal(presetDir(name), dir, name);
  assert.throws(() => presetDir('nope'), /no configure preset 'nope'/);
});

test('emscriptenToolchain finds the toolchain file from em++ on PATH, and nothing without it', () => {
  const { PATH, ATTNSCOPE_EMSCRIPTEN_ROOT } = process.env;
  try {
    process.env.PATH = '/nonexistent';
    delete process.env.ATTNSCOPE_EMSCRIPTEN_ROOT;
    assert.equal(emscriptenToolchain(), null);
  } finally {
    process.env.PATH = PATH;
    if (ATTNSCOPE_EMSCRIPTEN_ROOT !== undefined) process.env.ATTNSCOPE_EMSCRIPTEN_ROOT = ATTNSCOPE_EMSCRIPTEN_ROOT;
  }
  const found = emscriptenToolchain();
  if (found !== null) assert.ok(existsSync(found) && found.endsWith('/cmake/Modules/Platform/Emscripten.cmake'), found);
});
