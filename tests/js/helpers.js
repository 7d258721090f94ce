// Shared by the JS tests: the error measure of the project's tolerances, seeded random tensors, a fresh process, and
// the shipped models.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../random.js';

/** Runs an ES module snippet in a new Node process (a truly fresh attnscope instance) and returns its stdout. */
export function runIsolated(code) {
  // The relaxed-SIMD suite's flag (scripts/test.mjs js-relaxed) reaches the fresh process too, so it can load that build.
  const flags = process.execArgv.filter((a) => a === '--experimental-wasm-relaxed-simd');
  return execFileSync(process.execPath, [...flags, '--input-type=module', '-e', code], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    encoding: 'utf8',
  });
}
/**
 * Runs `fn` (sync or async) and fails the test if it takes `limitMs` or more: the hostile-input tests' bound on a
 * call that must refuse or finish, not a speed measurement. Returns its value, or the error it threw.
 */
export async function withinTime(label, limitMs, fn) {
  const t0 = performance.now();
  let out;
  try {
    out = await fn();
  } catch (error) {
    out = error;
  }
  const ms = performance.now() - t0;
  assert.ok(ms < limitMs, `${label}: took ${ms.toFixed(0)} ms`);
  return out;
}

/** max |actual − expected| / max |expected|; NaN anywhere gives Infinity so it cannot pass. */
export function maxRelativeError(actual, expected) {
  if (actual.length !== expected.length) return Infinity;
  let largest = 0;
  let worst = 0;
  for (let i = 0; i < expected.length; i++) largest = Math.max(largest, Math.abs(expected[i]));
  for (let i = 0; i < expected.length; i++) {
    const diff = Math.abs(actual[i] - expected[i]);
    if (Number.isNaN(diff)) return Infinity;
    worst = Math.max(worst, diff);
  }
  return largest > 0 ? worst / largest : worst;
}

/** Deterministic uniform floats in [-1, 1) (mulberry32). */
export function randomTensor(shape, seed = 1) {
  const rng = mulberry32(seed);
  const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; i++) data[i] = rng() * 2 - 1;
  return { data, shape };
}

/** A model file of the repository's models/ folder. */
export const shippedModel = (name) => new URL(`../../models/${name}`, import.meta.url);

/**
 * For a test file that shares the two shipped transformer models: before its tests, init() and both loaded, handed to
 * `use` as `{ lm, s2s }` (char-lm, dates-seq2seq); after them, both disposed. attnscope is imported here, not at the
 * top, so that the tests that only need the other helpers do not load it.
 */
export function useShippedModels(use) {
  let models;
  before(async () => {
    const { init, loadModel } = await import('attnscope');
    await init();
    models = { lm: await loadModel(shippedModel('char-lm.safetensors')), s2s: await loadModel(shippedModel('dates-seq2seq.safetensors')) };
    use(models);
  });
  after(() => {
    models.lm.dispose();
    models.s2s.dispose();
  });
}
