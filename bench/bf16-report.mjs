// The tables of `npm run bench:bf16` (bench/bf16.mjs), from its JSON (build/bench/bf16.json): memory after the load
// against the target, forward time BF16 ÷ F32 per round, the same-bits check, and the 1B checkpoint's run.
// `node bench/bf16-report.mjs [FILE]` prints them again from a saved JSON.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const ms = (x) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`);
const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const gib = (b) => `${(b / 2 ** 30).toFixed(2)} GiB`;
const table = (head, rows) => {
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map(() => '---').join('|')}|`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  console.log('');
};
// The targets of issue #35.
const MEMORY_FACTOR = 0.55, SPEED_TARGET = 0.95;

function speedRows(runs, env, model, threads) {
  const rows = [];
  const mine = runs.filter((r) => r.env === env && r.model === model && r.threads === threads && !r.failed);
  const lengths = mine[0]?.lengths ?? [];
  for (const T of lengths) {
    const of = (dtype) => mine.filter((r) => r.dtype === dtype && r.forward?.[T]);
    const f32 = of('f32'), bf16 = of('bf16');
    if (!f32.length || !bf16.length) continue;
    // Per round: F32's median ÷ BF16's (above 1: BF16 faster), the two processes of one round next to each other.
    const rounds = [...new Set(f32.map((r) => r.round))].filter((k) => bf16.some((r) => r.round === k));
    const perRound = rounds.map((k) => f32.find((r) => r.round === k).forward[T].medianMs / bf16.find((r) => r.round === k).forward[T].medianMs);
    const wall = (xs) => median(xs.map((r) => r.forward[T].medianMs));
    const cpu = (xs) => (xs[0].forward[T].cpuTimes ? median(xs.flatMap((r) => r.forward[T].cpuTimes)) : NaN);
    const ratio = wall(f32) / wall(bf16), cpuRatio = cpu(f32) / cpu(bf16);
    rows.push([model, threads, T, ms(wall(f32)), ms(wall(bf16)), perRound.map((x) => `${x.toFixed(2)}×`).join(' '),
      `**${ratio.toFixed(2)}×**${Number.isNaN(cpuRatio) ? '' : ` (CPU ${cpuRatio.toFixed(2)}×)`}`,
      Math.min(ratio, Number.isNaN(cpuRatio) ? ratio : cpuRatio) >= SPEED_TARGET ? 'yes' : ratio >= SPEED_TARGET ? 'wall only' : 'no']);
  }
  return rows;
}

function memoryRow(runs, env, model) {
  const first = (dtype) => runs.find((r) => r.env === env && r.model === model && r.dtype === dtype && !r.failed);
  const f32 = first('f32'), bf16 = first('bf16');
  if (!f32 || !bf16) return null;
  // The workspace two ways: what the F32 run holds beyond its parameters after the same load and first pass
  // (activations of that pass, the runtime, growth's slack), and the plan's (one pass of `tokens` with every map).
  const used = f32.memoryAfterLoad.wasmBytes - f32.memoryAfterLoad.parameterBytes;
  const params = MEMORY_FACTOR * f32.memoryAfterLoad.parameterBytes;
  const after = bf16.memoryAfterLoad.wasmBytes;
  const verdict = (limit) => `${mib(limit)}: **${(after / limit).toFixed(2)}** ${after <= limit ? 'yes' : 'no'}`;
  const share = bf16.memoryAfterLoad.parameterBytes / f32.memoryAfterLoad.parameterBytes;
  return [model, mib(f32.memoryAfterLoad.parameterBytes), `${mib(bf16.memoryAfterLoad.parameterBytes)} (${share.toFixed(3)})`,
    `${mib(f32.memoryAfterLoad.wasmBytes)} / ${mib(after)}`, `${mib(used)}; ${mib(bf16.plan.workspaceBytes)} (${bf16.plan.tokens})`,
    verdict(params + used), verdict(params + bf16.plan.workspaceBytes),
    `${mib(f32.memoryAfterRuns.wasmBytes)} / ${mib(bf16.memoryAfterRuns.wasmBytes)}`];
}

function bitsRows(runs, env, model) {
  const of = (dtype) => runs.filter((r) => r.env === env && r.model === model && r.dtype === dtype && r.outputs);
  const f32 = of('f32'), bf16 = of('bf16');
  if (!f32.length || !bf16.length) return [];
  return Object.keys(f32[0].outputs).map((T) => {
    const all = [...f32, ...bf16].map((r) => r.outputs[T]).filter(Boolean);
    const same = (key) => (all.every((s) => s[key] === all[0][key]) ? 'yes' : 'no');
    return [model, T, `${all.length}`, same('logits'), same('attention'), all.every((s) => s.finite) ? 'yes' : 'no', all[0].maxAbsLogit.toPrecision(3)];
  });
}

/** Prints every table of a bench:bf16 result (bench/bf16.mjs's JSON). */
export function printBf16Tables(results) {
  const { runs } = results;
  const envs = [...new Set(runs.map((r) => r.env))];
  const pairs = [...new Set(runs.filter((r) => r.dtype === 'f32').map((r) => r.model))];
  const { loadAtStart, loadAtEnd } = results.machine;
  const seconds = results.seconds?.toFixed(0);
  console.log(`## bench:bf16 (${results.started}, ${seconds} s, load average ${loadAtStart} → ${loadAtEnd}, simd ${results.options.simd})\n`);
  for (const env of envs) {
    console.log(`### ${env === 'node' ? `Node ${results.machine.node}` : `Chromium ${results.machine.chromium}`}\n`);
    const threads = [...new Set(runs.filter((r) => r.env === env).map((r) => r.threads))];
    const speed = pairs.flatMap((m) => threads.flatMap((t) => speedRows(runs, env, m, t)));
    if (speed.length) {
      console.log('Forward with every attention map, median of each process\'s timed passes; F32 ÷ BF16 time per round, then of the ' +
        `medians (target ≥ ${SPEED_TARGET}×):\n`);
      table(['network', 'threads', 'T', 'F32', 'BF16', 'F32 ÷ BF16, per round', 'F32 ÷ BF16', 'target'], speed);
    }
    const memory = pairs.map((m) => memoryRow(runs, env, m)).filter(Boolean);
    if (memory.length) {
      console.log(`WebAssembly memory (the buffer's byteLength) after load → first result, against ${MEMORY_FACTOR} × the F32 parameter ` +
        'bytes + a workspace:\n');
      table(['network', 'F32 parameterBytes', 'BF16 parameterBytes (÷ F32)', 'memory after load F32 / BF16',
        'workspace: F32 memory − its parameters; plan (tokens)', 'limit with the first: BF16 ÷ limit', 'limit with the plan\'s',
        'after the passes F32 / BF16'], memory);
    }
    const bits = pairs.flatMap((m) => bitsRows(runs, env, m));
    if (bits.length) {
      console.log('The same values as F32 and as BF16: SHA-256 of every first output at each length, across processes:\n');
      table(['network', 'T', 'outputs', 'logits same bits', 'attention same bits', 'logits finite', 'max |logit|'], bits);
    }
    const big = runs.filter((r) => r.env === env && r.model === 'llama-3.2-1b');
    if (big.length) {
      console.log('Llama-3.2-1B-shaped BF16 checkpoint (random weights), streamed into the load:\n');
      table(['threads', 'parameterBytes', 'plan: workspace (tokens), total, available', 'load → first result (load alone)',
        'WASM memory after load / after the passes', 'forward', 'logits finite, max |logit|'],
        big.map((r) => (r.failed ? [r.threads, `failed: ${r.failed}`, '', '', '', '', ''] : [r.threads, gib(r.memoryAfterLoad.parameterBytes),
          `${mib(r.plan.workspaceBytes)} (${r.plan.tokens}), ${gib(r.plan.bytes)}, ${gib(r.plan.availableBytes)}`, `${ms(r.loadMs)} (${ms(r.loadOnlyMs)})`,
          `${gib(r.memoryAfterLoad.wasmBytes)} / ${gib(r.memoryAfterRuns.wasmBytes)}`,
          Object.entries(r.forward).map(([T, f]) => `${T}: ${ms(f.medianMs)}`).join(', '),
          Object.values(r.outputs).map((s) => `${s.finite ? 'yes' : 'NO'}, ${s.maxAbsLogit.toPrecision(3)}`).join('; ')])));
    }
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'build', 'bench', 'bf16.json');
  printBf16Tables(JSON.parse(fs.readFileSync(file, 'utf8')));
}
