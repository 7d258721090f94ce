// The threaded build against the single-threaded one, in Node: forward passes (weights returned) at the issue's
// sizes with init({ threads: 1 }) and init({ threads: N }), each in its own process (a process loads one build),
// alternating over several rounds so machine load hits both alike. Prints medians and the speed-up per size.
//
//   npm run bench:threads [-- --threads 2 --rounds 5 --configs 64,256,4:512,768,12]
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const DEFAULT_CONFIGS = '64,256,4:128,512,8:512,768,12:2048,768,12';
const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '5' },
    configs: { type: 'string', default: DEFAULT_CONFIGS },
    child: { type: 'boolean', default: false },
  },
});
const configs = values.configs.split(':').map((c) => c.split(',').map(Number));

if (values.child) {
  // One process, one build: time each configuration (warm) and print one JSON line.
  const { init, runtimeInfo, MultiHeadAttention } = await import('attnscope');
  const { makeCase } = await import('./common.mjs');
  await init({ threads: Number(values.threads) });
  const results = [];
  for (const [L, E, H] of configs) {
    const { x, state } = makeCase(L, E, H);
    const mha = new MultiHeadAttention({ embedDim: E, numHeads: H });
    mha.loadStateDict(state);
    const input = { data: x, shape: [1, L, E] };
    mha.forward(input); // warm-up: the workspace grows once
    const times = [];
    const budget = performance.now() + 1500;
    while (times.length < 3 || (times.length < 25 && performance.now() < budget)) {
      const start = performance.now();
      mha.forward(input);
      times.push(performance.now() - start);
    }
    mha.dispose();
    times.sort((a, b) => a - b);
    results.push({ config: [L, E, H], ms: times[times.length >> 1] });
  }
  console.log(JSON.stringify({ info: runtimeInfo(), results }));
} else {
  const script = fileURLToPath(import.meta.url);
  const threads = Number(values.threads);
  const samples = { 1: configs.map(() => []), [threads]: configs.map(() => []) };
  let info;
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const t of [1, threads]) {
      const out = execFileSync(process.execPath, [script, '--child', '--threads', String(t), '--configs', values.configs], { encoding: 'utf8' });
      const run = JSON.parse(out.trim().split('\n').pop());
      if (t === threads) info = run.info;
      run.results.forEach((r, i) => samples[t][i].push(r.ms));
    }
    process.stderr.write(`round ${round + 1}/${values.rounds} done\n`);
  }
  const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  console.log(`attnscope forward with weights, Node ${process.versions.node}; threaded run: ${JSON.stringify(info)}`);
  console.log(`median over ${values.rounds} alternating rounds of per-process medians\n`);
  console.log(`| (seq, embed, heads) | 1 thread ms | ${threads} threads ms | speed-up |`);
  console.log('|---|---:|---:|---:|');
  configs.forEach((c, i) => {
    const one = median(samples[1][i]);
    const many = median(samples[threads][i]);
    console.log(`| (${c.join(', ')}) | ${one.toFixed(2)} | ${many.toFixed(2)} | ${(one / many).toFixed(2)}× |`);
  });
}
