// `node bench/gemm.mjs`: the library's GEMM alone on GPT-2 small's products (bench/native/gemm.cpp, compiled to WASM
// and run by Node, one thread), and, with --base, another build of the same program in alternating processes, so a
// kernel change is measured against the code before it on the same loaded machine: the ratio within a round is
// what to read, not the absolute rates. Markdown on stdout, progress on stderr.
//
//   node bench/gemm.mjs [--rows=128,512] [--runs=5] [--rounds=3] [--base=DIR] [--save=DIR] [--no-build] [--relaxed] [--bf16]
//                       [--tile=4|5] [--base-tile=4|5]
//
// --bf16 rounds the weights to BF16 and adds a "<product> bf16" row for each product: the same product over the
// 16-bit panels a BF16 checkpoint's matrices are kept in, alternating with the F32 panels in the same process.
//
// --relaxed times the relaxed-SIMD build of the program (gemm-relaxed: the fused multiply-add and that build's tile,
// CMake's ATTNSCOPE_RELAXED_GEMM_TILE_ROWS), every process with --experimental-wasm-relaxed-simd (Node 20), --base too.
//
// --tile=4 runs this build's program at a register tile of 4 rows (set_gemm_tile_rows; the relaxed build's own is 6),
// --tile=5 (with --relaxed) at 5 rows read from slivers, Node 20's tile; --base-tile=4 or 5 makes the base the same
// program at that tile, so --relaxed --tile=5 --base-tile=4 compares two tiles of the relaxed build, alternating
// processes, with the same checksums.
//
// --save=DIR copies this build's program (gemm.cjs + gemm.wasm) to DIR: build the code before a change, save it,
// change the code, then run with --base=DIR. The checksums say whether both builds computed the same bits.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cmakeBuild, presetDir } from '../scripts/lib.mjs';
import { ROOT } from './node-paths.mjs';

const { values: o } = parseArgs({
  options: {
    rows: { type: 'string', default: '128,512' },
    runs: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    base: { type: 'string' },
    save: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    relaxed: { type: 'boolean', default: false },
    bf16: { type: 'boolean', default: false },
    tile: { type: 'string' },
    'base-tile': { type: 'string' },
  },
});
const program = o.relaxed ? 'gemm-relaxed' : 'gemm';
const nodeFlags = o.relaxed && Number(process.versions.node.split('.')[0]) < 22 ? ['--experimental-wasm-relaxed-simd'] : [];
const progress = (msg) => process.stderr.write(`${msg}\n`);
const current = path.join(ROOT, presetDir('wasm'), 'bench', `${program}.cjs`);
if (!o['no-build'] && cmakeBuild('wasm', [o.relaxed ? 'attnscope_gemm_relaxed' : 'attnscope_gemm'], { echo: progress, stdio: ['ignore', 2, 2] }) !== 0) process.exit(1);
if (o.save) {
  fs.mkdirSync(o.save, { recursive: true });
  for (const f of [`${program}.cjs`, `${program}.wasm`]) fs.copyFileSync(path.join(path.dirname(current), f), path.join(o.save, f));
  progress(`saved ${path.relative(ROOT, current)} to ${o.save}`);
}

// --no-liftoff: each product is one long call, which V8 would otherwise leave in its baseline code.
function runOnce(file, tile) {
  const r = spawnSync(process.execPath, [...nodeFlags, '--no-liftoff', file, '--json', `--rows=${o.rows}`, `--runs=${o.runs}`, ...(o.bf16 ? ['--bf16'] : []),
    ...(tile ? [`--tile=${tile}`] : [])],
    { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) throw new Error(`${file} failed: ${(r.stderr || '').slice(0, 300)}`);
  return r.stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

for (const t of [o.tile, o['base-tile']]) if (t !== undefined && t !== '4' && t !== '5') throw new Error(`--tile, --base-tile: expected 4 or 5, got '${t}'`);
const base = o.base ? path.join(path.resolve(o.base), `${program}.cjs`) : o['base-tile'] ? current : null;
const builds = base ? [['base', base, o['base-tile']], ['this', current, o.tile]] : [['this', current, o.tile]];
const results = Object.fromEntries(builds.map(([id]) => [id, []]));
const rounds = Number(o.rounds);
for (let round = 0; round < rounds; ++round)
  for (const [id, file, tile] of round % 2 ? [...builds].reverse() : builds) {  // who goes first alternates too
    progress(`round ${round + 1}/${rounds}: ${id} (${path.relative(ROOT, file)}${tile ? `, tile ${tile}` : ''})`);
    results[id].push(runOnce(file, tile));
  }

const key = (r) => `${r.M} ${r.product}`;
const fmt = (x) => x.toFixed(1);
const med = (v) => { const s = [...v].sort((a, b) => a - b), n = s.length; return n % 2 ? s[n >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const rows = results.this[0];
console.log(`GEMM alone, one thread, WASM${o.relaxed ? ' (relaxed SIMD)' : ''} in Node ${process.version}: GFLOP/s by CPU time, median of ${o.runs} calls per process,` +
  ` ${rounds} process${rounds > 1 ? 'es' : ''} per build${base ? ', the two builds alternating' : ''}${o['base-tile'] ? ` (base: ${o['base-tile']}-row tile)` : ''}${o.tile ? ` (this: ${o.tile}-row tile)` : ''}; load average at the end ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log();
if (!base) {
  console.log('| M | product | K × N | GFLOP/s (CPU, median per process) | best call (CPU) | best call (wall) |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const all = results.this.map((run) => run.find((x) => key(x) === key(r)));
    console.log(`| ${r.M} | ${r.product} | ${r.K} × ${r.N} | ${all.map((x) => fmt(x.cpuMedian)).join(', ')} | ` +
      `${fmt(Math.max(...all.map((x) => x.cpuBest)))} | ${fmt(Math.max(...all.map((x) => x.wallBest)))} |`);
  }
} else {
  console.log('| M | product | K × N | base GFLOP/s per round | this GFLOP/s per round | this ÷ base per round | min | median | same bits |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const base = results.base.map((run) => run.find((x) => key(x) === key(r)));
    const mine = results.this.map((run) => run.find((x) => key(x) === key(r)));
    const ratios = mine.map((x, i) => x.cpuMedian / base[i].cpuMedian);
    const same = mine.every((x, i) => x.checksum === base[i].checksum);
    console.log(`| ${r.M} | ${r.product} | ${r.K} × ${r.N} | ${base.map((x) => fmt(x.cpuMedian)).join(', ')} | ` +
      `${mine.map((x) => fmt(x.cpuMedian)).join(', ')} | ${ratios.map((x) => x.toFixed(3)).join(', ')} | ` +
      `${Math.min(...ratios).toFixed(3)} | ${med(ratios).toFixed(3)} | ${same ? 'yes' : 'NO'} |`);
  }
}
