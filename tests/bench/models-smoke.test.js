// `npm run bench:models` at tools/references/make_bench_models.py's tiny shapes (--small), in Node at one thread: the bench runs
// end to end, both libraries agree on logits and attention, and generate with the cache gives the re-run's tokens.
// Skipped when build/bench-models-small/ has not been written (it needs Python and torch). No timing is asserted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SMALL = path.join(ROOT, 'build', 'bench-models-small');
const skip = existsSync(path.join(SMALL, 'smollm-135m', 'model.onnx')) ? false
  : 'no build/bench-models-small (/usr/bin/python3 tools/references/make_bench_models.py --small)';

test('bench:models --small: both libraries agree (attnscope in both builds), generate matches the re-run', { skip }, () => {
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'attnscope-models-')), 'models.json');
  const r = spawnSync(process.execPath, ['bench/models.mjs', '--small', '--env=node', '--threads=1', '--rounds=1', '--runs=1', `--out=${out}`],
    { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, `bench/models.mjs --small failed:\n${r.stderr.slice(-2000)}`);
  assert.match(r.stdout, /### Forward/);
  const results = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(results.runs.length, 6, 'two networks × (attnscope\'s two builds + onnxruntime-web)');
  assert.deepEqual(results.runs.filter((x) => x.lib === 'attnscope').map((x) => x.simd).sort(), ['baseline', 'baseline', 'relaxed', 'relaxed']);
  for (const [model, builds] of Object.entries(results.agreement))
    for (const [T, row] of Object.entries(builds).flatMap(([simd, rows]) => Object.entries(rows).map(([T, r]) => [`${T} (${simd})`, r]))) {
      // float32 sums in different orders over values of order 1
      assert.ok(row.logits.maxAbsDiff < 1e-5, `${model} at ${T}: logits differ by ${row.logits.maxAbsDiff}`);
      assert.ok(row.attention.maxAbsDiff < 1e-6, `${model} at ${T}: attention differs by ${row.attention.maxAbsDiff}`);
    }
  for (const run of results.runs.filter((x) => x.lib === 'attnscope'))
    assert.ok(run.generate?.same, `${run.model}: generate with the cache gave other tokens than the re-run`);
});
