// The benchmark's smoke mode (`node bench/run.mjs --smoke`, every library once at tiny sizes) in Node and in headless
// Chromium: the bench itself runs, every peer's output and weights agree with attnscope's, and a library that cannot
// run at 2 threads is reported as n/a with a reason instead of failing. No timing is asserted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM } from '../../scripts/chromium.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PEERS = ['attnscope', 'tfjs', 'ort', 'plain'];

function smoke(...extra) {
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'attnscope-bench-')), 'results.json');
  const r = spawnSync(process.execPath, ['bench/run.mjs', '--smoke', `--out=${out}`, ...extra], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, `bench/run.mjs --smoke ${extra.join(' ')} failed:\n${r.stderr.slice(-2000)}`);
  assert.match(r.stdout, /## Summary/);
  return JSON.parse(readFileSync(out, 'utf8'));
}

function checkAgreement(results) {
  const one = results.forward.filter((r) => r.threads === 1);
  assert.equal(one.length, PEERS.length, 'the smoke configuration × four libraries at 1 thread');
  for (const r of one) {
    assert.ok(!r.error && !r.unavailable, `${r.id} at (${r.L}, ${r.E}, ${r.H}), 1 thread: ${r.error ?? r.unavailable}`);
    assert.ok(r.ms > 0 && r.reps === 1, `${r.id}: one timed run`);
    if (r.id === 'attnscope') {
      // Both ways of handing results back ran; the caller-owned `out` arrays hold exactly the fresh arrays' numbers.
      assert.deepEqual([r.variant, ...r.others.map((o) => o.variant)].sort(), ['fresh', 'out'], 'both attnscope paths ran');
      const out = r.variant === 'out' ? r : r.others.find((o) => o.variant === 'out');
      assert.equal(out.diffOutput, 0, 'attnscope out: output equals the fresh arrays');
      assert.equal(out.diffWeights, 0, 'attnscope out: weights equal the fresh arrays');
      continue;
    }
    // Every path of every peer (the fastest and the others), against attnscope: float32 round-off of differently
    // ordered sums on values of order 1.
    for (const path of [r, ...r.others]) {
      assert.ok(path.diffOutput < 1e-5, `${r.id} ${path.variant}: output differs from attnscope's by ${path.diffOutput}`);
      assert.ok(path.diffWeights < 1e-6, `${r.id} ${path.variant}: weights differ from attnscope's by ${path.diffWeights}`);
    }
  }
  const ort = one.find((r) => r.id === 'ort');
  assert.deepEqual([ort.variant, ...ort.others.map((o) => o.variant)].sort(), ['attention', 'plain'], 'both ONNX graphs ran');
  const tfjs = one.find((r) => r.id === 'tfjs');
  assert.deepEqual([tfjs.variant, ...tfjs.others.map((o) => o.variant)].sort(), ['batched', 'per-head'], 'both tfjs paths ran');
  for (const r of results.forward.filter((x) => x.threads === 2)) {
    assert.ok(!r.error, `${r.id} at 2 threads failed instead of running or saying n/a: ${r.error}`);
    assert.ok(r.ms > 0 || r.unavailable?.length > 0, `${r.id} at 2 threads: a time or a reason`);
  }
  assert.ok(results.forward.some((r) => r.threads === 2 && r.id === 'ort' && r.ms > 0), 'onnxruntime-web runs at 2 threads');
}

test('bench --smoke in Node: every library runs and agrees with attnscope', () => {
  checkAgreement(smoke());
});

test('bench --smoke --browser in headless Chromium: the same comparison, cross-origin isolated', { skip: !existsSync(CHROMIUM) && 'no Chromium' }, () => {
  const results = smoke('--browser');
  assert.match(results.machine.environment, /crossOriginIsolated true/);
  checkAgreement(results);
});
