// `node bench/research-node.mjs --open=DIR [--tokens=128] [--runs=5] [--threads=1] [--dist=DIR]`: the research
// tools of issue #34 in Node, without the page: the logit lens of --tokens ids (`logitLens`, k = 10, as the demo's
// Worker asks: on its own, and through the cache of a forward pass of the same ids, as the Worker passes it; a dist/
// before 2026-12-04 ignores the cache and runs the pass again), and sink mass for every head (`sinkMass` over
// forward's maps, key 0 from query 1 as Find heads ranks them) after the forward pass, timed apart from it. bench/research.mjs times the same calls in Chromium.
// DIR is a checkpoint without a tokenizer (bench/research.mjs says how to write one); --dist times another copy of
// dist/ (the code before a change). Add --experimental-wasm-relaxed-simd before the script to time the relaxed build
// (Node 20), which the demo runs in Chromium. Medians in ms on stdout, each run on stderr.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ROOT } from './node-paths.mjs';

const { values: o } = parseArgs({
  options: {
    open: { type: 'string' },
    tokens: { type: 'string', default: '128' },
    runs: { type: 'string', default: '5' },
    threads: { type: 'string', default: '1' },
    dist: { type: 'string' },
  },
});
if (!o.open) throw new Error('give the checkpoint folder with --open=DIR');
const dist = path.resolve(o.dist ?? path.join(ROOT, 'dist'));
const { init, loadModel, runtimeInfo, sinkMass } = await import(pathToFileURL(path.join(dist, 'index.js')).href);
await init({ threads: Number(o.threads) });  // SIMD 'auto': the relaxed build where the engine validates it
const dir = path.resolve(o.open);
const model = await loadModel(pathToFileURL(`${dir}/`));
const vocab = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')).vocab_size;
const T = Number(o.tokens), runs = Number(o.runs);

/** `n` ids below `vocab` from a fixed linear congruential generator (bench/research.mjs's). */
function ids(n, seed) {
  let x = seed;
  return Array.from({ length: n }, () => { x = (x * 1103515245 + 12345) % 2 ** 31; return x % vocab; });
}

// CPU time of the whole process beside the wall clock: on a machine shared with other work the wall clock of one
// thread measures the neighbours too, while its CPU time does not (with two threads it is their sum).
const cpuMs = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000; };
const times = { lens: [], lensCpu: [], cached: [], cachedCpu: [], forward: [], sinks: [] };
for (let run = 0; run < runs; run++) {
  const input = ids(T, 1 + run);
  let t0 = performance.now();
  let c0 = cpuMs();
  const lens = model.logitLens(input, { k: 10 });
  times.lens.push(performance.now() - t0);
  times.lensCpu.push(cpuMs() - c0);
  // As the demo's Worker asks: through the cache of the pass already made (the maps', keeping the last logits row).
  const { cache } = model.forward(input, { cache: true, logitsToKeep: 1 });
  t0 = performance.now();
  c0 = cpuMs();
  model.logitLens(input, { k: 10, cache });
  times.cached.push(performance.now() - t0);
  times.cachedCpu.push(cpuMs() - c0);
  cache.dispose();
  t0 = performance.now();
  const { attention } = model.forward(input);
  times.forward.push(performance.now() - t0);
  t0 = performance.now();
  const mass = sinkMass(attention, { key: 0, fromQuery: 1 });
  times.sinks.push(performance.now() - t0);
  process.stderr.write(`[research-node] run ${run + 1}: lens ${times.lens.at(-1).toFixed(0)} ms (CPU ${times.lensCpu.at(-1).toFixed(0)} ms, ${lens.layers} × ${T} rows), ` +
    `through the cache ${times.cached.at(-1).toFixed(0)} ms (CPU ${times.cachedCpu.at(-1).toFixed(0)} ms), ` +
    `forward ${times.forward.at(-1).toFixed(0)} ms, sink mass ${times.sinks.at(-1).toFixed(1)} ms (${mass.data.length} heads)\n`);
}
model.dispose();
const median = (list) => [...list].sort((a, b) => a - b)[list.length >> 1];
const info = runtimeInfo();
console.log(`T = ${T}, ${runs} runs, ${info.build} build, ${info.threads} thread(s), ${info.simd ?? 'baseline'} SIMD, medians in ms:`);
console.log(`  logit lens ${median(times.lens).toFixed(0)} (CPU ${median(times.lensCpu).toFixed(0)}), through its pass's cache ${median(times.cached).toFixed(0)} ` +
  `(CPU ${median(times.cachedCpu).toFixed(0)}); forward ${median(times.forward).toFixed(0)}, then sink mass ${median(times.sinks).toFixed(1)}`);
