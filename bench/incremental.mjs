// `npm run bench:incremental` (issue #35): the work a kept pass saves, on the GPT-2-small-shaped network of
// tools/references/make_bench_models.py, in Node through the npm API (dist/):
//   - append: 4 tokens appended to 512 through a ForwardCache (forward(ids, { cache })) against a fresh pass of the
//     516, every layer's attention returned (into fresh arrays, and into arrays of the caller's: `out`), and without
//     maps;
//   - patching: every head patched in turn on 8 tokens (the demo's sweep), fresh passes against patchEach through a
//     cache of the corrupted run, one call per layer: the layer's runs go through the layers from theirs together,
//     each computing only the rows its patch changes, and the head's product runs once over the layer's runs' last
//     rows (all the logit difference reads);
//   - positions (not run by default: its fresh side is one whole pass per position): one head patched at each
//     position in turn on 128 tokens (the demo's per-position map), fresh whole-run patches of a spliced kept run
//     against patchEach's positions through a cache (batches of 8), which compute only the rows from the head's
//     layer and the position on;
//   - layers (not run by default): the positions row's patchEach side alone (no fresh side) for the heads of
//     --layer-heads, one layer after another: how the per-position sweep's time depends on the patched layer.
// The two sides of each row alternate run by run in one process, at the same thread count; each row checks that both
// sides gave the same bits. Markdown on stdout, progress on stderr.
//
//   /usr/bin/python3 tools/references/make_bench_models.py --only gpt2-small --no-onnx   # once: build/bench-models/
//   npm run bench:incremental [-- --threads=1 --runs=3 --prompt=512 --append=4 --patch-tokens=8 --rows=append,patching]
//   npm run bench:incremental -- --rows=positions --runs=1 [--position-tokens=128 --position-head=L,H]
//   npm run bench:incremental -- --rows=layers [--position-tokens=128 --layer-heads=0.0,3.0,6.0,9.9,11.0]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './node-paths.mjs';
import { tokenIds } from './models-core.mjs';

const { values: o } = parseArgs({
  options: {
    threads: { type: 'string', default: '1' },
    runs: { type: 'string', default: '3' },
    prompt: { type: 'string', default: '512' },
    append: { type: 'string', default: '4' },
    'patch-tokens': { type: 'string', default: '8' },
    rows: { type: 'string', default: 'append,patching' },
    'position-tokens': { type: 'string', default: '128' },
    'position-head': { type: 'string', default: '9,9' },
    'layer-heads': { type: 'string', default: '0.0,3.0,6.0,9.9,11.0' },
    model: { type: 'string', default: path.join(ROOT, 'build', 'bench-models', 'gpt2-small') },
  },
});
const progress = (msg) => process.stderr.write(`${msg}\n`);
const runs = Number(o.runs), rows = o.rows.split(',');
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const now = () => performance.now();
const same = (a, b) => a === b || (a && b && Buffer.from(a.data.buffer).equals(Buffer.from(b.data.buffer)));
const lastRow = (logits) => ({ data: logits.data.slice(logits.data.length - logits.shape[1]) });

if (!fs.existsSync(path.join(o.model, 'model.safetensors')))
  throw new Error(`${o.model}: missing; run /usr/bin/python3 tools/references/make_bench_models.py --only gpt2-small --no-onnx`);
const a = await import(path.join(ROOT, 'dist', 'index.js'));
await a.init({ threads: Number(o.threads) });
const read = (f) => new Uint8Array(fs.readFileSync(path.join(o.model, f)));
const model = await a.loadModel({ 'config.json': read('config.json'), 'model.safetensors': read('model.safetensors') });
const { vocabSize: V, layers: L, heads: H } = model.architecture;
progress(`${model.architecture.family}: ${L} layers × ${H} heads, ${a.runtimeInfo().threads} thread(s), ${a.runtimeInfo().simd}`);

// CPU time of the process (every thread): on a loaded machine the wall clock measures the load, while the CPU time
// stays close to what the wall clock would be on an idle core.
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** `run()`'s result and the wall and CPU milliseconds of the part `timed` (run's argument) wraps. */
function measure(run) {
  let ms = 0, cpu = 0;
  const timed = (f) => {
    const start = now(), cpu0 = cpuNow();
    const out = f();
    ms += now() - start;
    cpu += cpuNow() - cpu0;
    return out;
  };
  const out = run(timed);
  return { out, ms, cpu };
}

/** Alternates `fresh` and `cached` `runs` times each; both return results (tensors) whose bits must agree. */
function alternate(name, fresh, cached) {
  const t = { fresh: [], cached: [], freshCpu: [], cachedCpu: [] };
  for (let r = 0; r < runs; r++) {
    for (const [side, run] of [['fresh', fresh], ['cached', cached]]) {
      const { out, ms, cpu } = measure(run);
      t[side].push(ms);
      t[`${side}Cpu`].push(cpu);
      t[`${side}Out`] = out;
    }
    progress(`${name} run ${r + 1}: fresh ${t.fresh.at(-1).toFixed(0)} ms (CPU ${t.freshCpu.at(-1).toFixed(0)}), ` +
      `cached ${t.cached.at(-1).toFixed(0)} ms (CPU ${t.cachedCpu.at(-1).toFixed(0)})`);
  }
  const ok = t.freshOut.every((x, i) => same(x, t.cachedOut[i]));
  const f = median(t.fresh), c = median(t.cached), fc = median(t.freshCpu), cc = median(t.cachedCpu);
  return `| ${name} | ${f.toFixed(0)} ms (CPU ${fc.toFixed(0)}) | ${c.toFixed(0)} ms (CPU ${cc.toFixed(0)}) | ` +
    `${(cc / fc * 100).toFixed(1)} % | ${(fc / cc).toFixed(2)}× | ${ok ? 'yes' : '**no**'} |`;
}

// Ratios by CPU time (medians of the runs).
const table = ['| row | fresh: wall (CPU) | through a cache: wall (CPU) | cached / fresh, CPU | speed-up, CPU | same bits |',
  '|---|---|---|---|---|---|'];
if (rows.includes('append')) {
  const P = Number(o.prompt), N = Number(o.append), ids = tokenIds(P + N, V);
  // The maps into fresh arrays, into arrays of the caller's (`out`, one per side, made once: a caller who runs
  // forward() again and again keeps one), and no maps.
  const maps = L * H * (P + N) * (P + N);
  const outs = { fresh: new Float32Array(maps), cached: new Float32Array(maps) };
  for (const [label, needAttention, out] of [['every map', true, null], ['every map, into out arrays', true, outs], ['no maps', false, null]]) {
    const extra = (side) => (out ? { out: { attention: out[side] } } : {});
    table.push(alternate(`append ${N} to ${P}, ${label}`,
      (timed) => timed(() => { const r = model.forward(ids, { needAttention, ...extra('fresh') }); return [r.logits, r.attention]; }),
      (timed) => {
        const { cache } = model.forward(ids.slice(0, P), { needAttention, cache: true }); // set-up: not timed
        const r = timed(() => model.forward(ids, { needAttention, cache, ...extra('cached') }));
        cache.dispose();
        return [r.logits, r.attention];
      }));
  }
}
if (rows.includes('patching')) {
  const T = Number(o['patch-tokens']);
  const clean = model.forward(tokenIds(T, V, 3), { keepHeads: true, needAttention: false });
  const corrupted = tokenIds(T, V, 4);
  // Each run's last row of logits: the fresh side's cut from every row (one forward() per head, as before patchEach),
  // the cached side's from patchEach, one call per layer.
  const sweep = (cache) => {
    const out = [];
    for (let layer = 0; layer < L; layer++) {
      if (!cache) {
        for (let head = 0; head < H; head++)
          out.push(lastRow(model.forward(corrupted, { needAttention: false, patch: [{ layer, head }], patchFrom: clean.heads }).logits));
        continue;
      }
      const patches = Array.from({ length: H }, (_, head) => ({ layer, head }));
      const { logits } = model.patchEach(corrupted, { patches, patchFrom: clean.heads, cache });
      for (let head = 0; head < H; head++) out.push({ data: logits.data.slice(head * V, (head + 1) * V) });
    }
    return out;
  };
  // The cached side's time includes the corrupted run it keeps.
  table.push(alternate(`patching all ${L * H} heads, ${T} tokens`, (timed) => timed(() => sweep(undefined)), (timed) => timed(() => {
    const base = model.forward(corrupted, { needAttention: false, cache: true });
    const out = sweep(base.cache);
    base.cache.dispose();
    return out;
  })));
}
const T = Number(o['position-tokens']);
const positionRuns = rows.includes('positions') || rows.includes('layers');
const clean = positionRuns ? model.forward(tokenIds(T, V, 5), { keepHeads: true, needAttention: false }) : null;
const corruptedIds = tokenIds(T, V, 6);
/**
 * One head patched at each position through a cache of the corrupted run, in calls of 8 positions with every logit
 * (the demo's Worker before 2026-12-04; it now returns the answers' logits alone, in calls of about 1,024 rows). The
 * two prompts differ from their first token, so no position is skipped.
 */
const patchedPositions = (layer, head) => {
  const base = model.forward(corruptedIds, { needAttention: false, cache: true });
  const out = [];
  for (let first = 0; first < T; first += 8) { // batches of 8 positions
    const patches = Array.from({ length: Math.min(8, T - first) }, (_, i) => ({ layer, head, positions: [first + i] }));
    const { logits } = model.patchEach(corruptedIds, { patches, patchFrom: clean.heads, cache: base.cache });
    patches.forEach((_, i) => out.push({ data: logits.data.slice(i * V, (i + 1) * V) }));
  }
  base.cache.dispose();
  return out;
};
if (rows.includes('positions')) {
  const [layer, head] = o['position-head'].split(',').map(Number);
  const { headDim: dh } = model.architecture;
  const own = model.forward(corruptedIds, { keepHeads: true, needAttention: false });
  const patch = [{ layer, head }];
  // Before patchPositions, a position was patched by splicing the clean context into the corrupted run's own.
  const fresh = (timed) => timed(() => Array.from({ length: T }, (_, p) => {
    const from = { data: own.heads.data.slice(), shape: own.heads.shape }, at = ((layer * T + p) * H + head) * dh;
    from.data.set(clean.heads.data.subarray(at, at + dh), at);
    return lastRow(model.forward(corruptedIds, { needAttention: false, patch, patchFrom: from }).logits);
  }));
  table.push(alternate(`head ${layer}.${head} patched at each of ${T} positions`, fresh, (timed) => timed(() => patchedPositions(layer, head))));
}
if (table.length > 2) process.stdout.write(`${table.join('\n')}\n`);
if (rows.includes('layers')) {
  const lines = ['', `| head patched at each of ${T} positions | through a cache: wall (CPU), median of ${runs} |`, '|---|---|'];
  for (const lh of o['layer-heads'].split(',')) {
    const [layer, head] = lh.split('.').map(Number);
    const wall = [], cpu = [];
    for (let r = 0; r < runs; r++) {
      const m = measure((timed) => timed(() => patchedPositions(layer, head)));
      wall.push(m.ms);
      cpu.push(m.cpu);
      progress(`head ${lh} run ${r + 1}: ${m.ms.toFixed(0)} ms (CPU ${m.cpu.toFixed(0)})`);
    }
    lines.push(`| ${lh} | ${median(wall).toFixed(0)} ms (CPU ${median(cpu).toFixed(0)}) |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
