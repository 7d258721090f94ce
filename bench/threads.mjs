// The threaded build against the single-threaded one, in Node: forward passes (weights returned) at the issue's
// sizes with init({ threads: 1 }) and init({ threads: N }), each in its own process (a process loads one build),
// alternating over several rounds so machine load hits both alike. Prints medians and the speed-up per size.
//
// On Linux it also reads each thread's CPU time (/proc/self/task) over the timed runs. On a machine shared with
// other work the wall clock cannot show a speed-up (the scheduler shares CPU between sessions, not threads), but
// the busiest thread's CPU time per forward pass is what the wall time would be on idle cores: "CPU bound" is the
// 1-thread CPU time divided by it, the speed-up the split allows.
//
// --busy N keeps N threads spinning in each process while it times (bench/busy.mjs: another library's pool, a busy
// page): a core is taken, so the question becomes whether the second thread ever costs (speed-up below 1).
//
// --dist DIR times another build of the package (a copy of dist/) instead of the repository's.
//
//   npm run bench:threads [-- --threads 2 --rounds 5 --configs 64,256,4:512,768,12 --busy 1 --dist /tmp/dist-before]
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const DEFAULT_CONFIGS = '64,256,4:128,512,8:512,768,12:2048,768,12';
const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '5' },
    configs: { type: 'string', default: DEFAULT_CONFIGS },
    busy: { type: 'string', default: '0' },
    dist: { type: 'string' },
    child: { type: 'boolean', default: false },
  },
});
const configs = values.configs.split(':').map((c) => c.split(',').map(Number));

if (values.child) {
  // One process, one build: time each configuration (warm) and print one JSON line.
  const { init, runtimeInfo, MultiHeadAttention } = await import(values.dist ? pathToFileURL(path.resolve(values.dist, 'index.js')).href : 'attnscope');
  const { makeCase } = await import('./common.mjs');
  const { startBusy } = await import('./busy.mjs');
  await init({ threads: Number(values.threads) });
  const { existsSync, readdirSync, readFileSync } = await import('node:fs');
  // The threads of this process before the busy neighbours start (Node's, the build's pool): only theirs are counted.
  const ours = existsSync('/proc/self/task') ? readdirSync('/proc/self/task') : [];
  const stopBusy = await startBusy(Number(values.busy));
  // CPU time (ms) of each of those threads, by thread id; null off Linux.
  const threadCpu = () => {
    if (!existsSync('/proc/self/task')) return null;
    const cpu = new Map();
    for (const id of ours) {
      try {
        const fields = readFileSync(`/proc/self/task/${id}/stat`, 'utf8').split(') ')[1].split(' ');
        cpu.set(id, (Number(fields[11]) + Number(fields[12])) * 10); // utime + stime in 10 ms ticks
      } catch {
        // the thread ended meanwhile
      }
    }
    return cpu;
  };
  const results = [];
  for (const [L, E, H] of configs) {
    const { x, state } = makeCase(L, E, H);
    const mha = new MultiHeadAttention({ embedDim: E, numHeads: H });
    mha.loadStateDict(state);
    const input = { data: x, shape: [1, L, E] };
    mha.forward(input); // warm-up: the workspace grows once
    const times = [];
    const before = threadCpu();
    const budget = performance.now() + 1500;
    while (times.length < 3 || (times.length < 200 && performance.now() < budget)) {
      const start = performance.now();
      mha.forward(input);
      times.push(performance.now() - start);
    }
    const after = threadCpu();
    mha.dispose();
    times.sort((a, b) => a - b);
    let totalCpu = null, busiestCpu = null;
    if (before && after) {
      const used = [...after].map(([id, ms]) => ms - (before.get(id) ?? 0));
      totalCpu = used.reduce((a, b) => a + b, 0) / times.length;
      busiestCpu = Math.max(...used) / times.length;
    }
    results.push({ config: [L, E, H], ms: times[times.length >> 1], totalCpu, busiestCpu });
  }
  await stopBusy();
  console.log(JSON.stringify({ info: runtimeInfo(), results }));
} else {
  const script = fileURLToPath(import.meta.url);
  const threads = Number(values.threads);
  const samples = { 1: configs.map(() => []), [threads]: configs.map(() => []) };
  const cpu = { 1: configs.map(() => ({ total: 0, busiest: 0 })), [threads]: configs.map(() => ({ total: 0, busiest: 0 })) };
  let info;
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const t of [1, threads]) {
      const out = execFileSync(process.execPath, [script, '--child', '--threads', String(t), '--busy', values.busy, '--configs', values.configs, ...(values.dist ? ['--dist', values.dist] : [])], { encoding: 'utf8' });
      const run = JSON.parse(out.trim().split('\n').pop());
      if (t === threads) info = run.info;
      run.results.forEach((r, i) => {
        samples[t][i].push(r.ms);
        cpu[t][i].total += r.totalCpu ?? NaN;
        cpu[t][i].busiest += r.busiestCpu ?? NaN;
      });
    }
    process.stderr.write(`round ${round + 1}/${values.rounds} done\n`);
  }
  const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  console.log(`attnscope forward with weights, Node ${process.versions.node}; threaded run: ${JSON.stringify(info)}`);
  console.log(`median over ${values.rounds} alternating rounds of per-process medians` +
    `${Number(values.busy) ? `; ${values.busy} busy neighbour thread(s) spinning in every process` : ''}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} at the end\n`);
  console.log(`| (seq, embed, heads) | 1 thread ms | ${threads} threads ms | speed-up | CPU ms, 1 thread | busiest of ${threads} threads, CPU ms | CPU bound |`);
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  configs.forEach((c, i) => {
    const one = median(samples[1][i]);
    const many = median(samples[threads][i]);
    const oneCpu = cpu[1][i].total / Number(values.rounds), busiest = cpu[threads][i].busiest / Number(values.rounds);
    console.log(`| (${c.join(', ')}) | ${one.toFixed(2)} | ${many.toFixed(2)} | ${(one / many).toFixed(2)}× | ` +
      `${oneCpu.toFixed(2)} | ${busiest.toFixed(2)} | ${(oneCpu / busiest).toFixed(2)}× |`);
  });
}
