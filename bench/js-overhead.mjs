// What the JS wrapper adds around the WebAssembly forward pass: the raw entry point (in-WASM time and its copies) against the public forward(), with
// fresh result arrays (the default) and with caller-owned `out` buffers, plus the cost of the copy and of fresh
// allocations on their own. Variants are interleaved within each round so machine load hits them alike.
//   node bench/js-overhead.mjs [rounds]        (npm run bench:js-overhead)
import v8 from 'node:v8';
import vm from 'node:vm';
import { parseArgs } from 'node:util';
import { CONFIGS, makeCase, median } from './common.mjs';

// A full GC before every timed call, so one variant's garbage (192 MiB of fresh weights) is not collected inside
// the next variant's timing.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc');

const lib = await import(process.env.ATTNSCOPE_BENCH_DIST || 'attnscope');
// The raw binding, for the in-WASM baseline only: the same module instance the package uses.
const runtime = await import(new URL('./runtime.js', import.meta.resolve(process.env.ATTNSCOPE_BENCH_DIST || 'attnscope')));
await lib.init();
const wasm = runtime.module('bench');

const rounds = Number(parseArgs({ allowPositionals: true }).positionals[0] ?? 7);
const configs = CONFIGS.filter(([L]) => L >= 128); // the small ones are all call overhead, see bench/README.md

const time = (f) => {
  collectGarbage();
  const t0 = performance.now();
  f();
  return performance.now() - t0;
};

/**
 * The binding's one forward entry point called directly, with caller-owned `out` arrays: the time spent inside
 * WebAssembly plus the copies in and out it makes (the wrapper adds only the conversion of its arguments).
 */
function rawForward(L, E, H, state, x) {
  const handle = wasm._createAttention({ embedDim: E, numHeads: H, kdim: E, vdim: E, bias: true, seed: 0 });
  runtime.call('bench', () => handle.loadStateDict(Object.keys(state).map((k) => [k, state[k].data, state[k].shape])));
  const none = { data: null, shape: [] };
  const noMask = { kind: wasm._MaskKind.none, data: null, shape: [] };
  const call = {
    query: { data: x, shape: [1, L, E] }, key: none, value: none, keyPaddingMask: noMask, attnMask: noMask,
    causal: false, needWeights: true, averageWeights: false,
    outOutput: new Float32Array(L * E), outWeights: new Float32Array(H * L * L),
  };
  return {
    run: () => runtime.call('bench', () => handle.forward(call)),
    dispose: () => handle.delete(),
  };
}

const rows = [];
for (const [L, E, H] of configs) {
  const { x, state } = makeCase(L, E, H);
  const raw = rawForward(L, E, H, state, x);
  const mha = new lib.MultiHeadAttention({ embedDim: E, numHeads: H, seed: 0 });
  mha.loadStateDict(state);
  const input = { data: x, shape: [1, L, E] };
  const weightsLength = H * L * L;
  const out = { output: new Float32Array(L * E), weights: new Float32Array(weightsLength) };
  const source = new Float32Array(weightsLength).fill(1);
  const samples = { wasm: [], fresh: [], out: [], copy: [], allocCopy: [] };
  raw.run(); mha.forward(input); mha.forward(input, null, null, { out }); // warm: arenas and workspace at full size
  for (let r = 0; r < rounds; r++) {
    samples.wasm.push(time(raw.run));
    samples.fresh.push(time(() => mha.forward(input)));
    samples.out.push(time(() => mha.forward(input, null, null, { out })));
    // The copy-out of the weights on its own: into a reused buffer, and into a fresh one (allocation + page faults).
    samples.copy.push(time(() => out.weights.set(source)));
    samples.allocCopy.push(time(() => source.slice()));
  }
  raw.dispose();
  mha.dispose();
  const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
  const best = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, Math.min(...v)]));
  rows.push({ L, E, H, weightsMiB: (4 * weightsLength) / 1024 ** 2, ...m, best });
}

const pct = (js, w) => `${(((js - w) / w) * 100).toFixed(1)} %`;
console.log(`attnscope JS overhead, self-attention with per-head weights: median of ${rounds} interleaved rounds in ms (overhead of the best runs in brackets)\n`);
console.log('| (seq, embed, heads) | weights MiB | in WASM | forward() fresh | overhead | forward() with out | overhead | weights copy into out | fresh copy |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| (${r.L}, ${r.E}, ${r.H}) | ${r.weightsMiB.toFixed(0)} | ${r.wasm.toFixed(1)} | ${r.fresh.toFixed(1)} | ${pct(r.fresh, r.wasm)} (${pct(r.best.fresh, r.best.wasm)}) | ${r.out.toFixed(1)} | ${pct(r.out, r.wasm)} (${pct(r.best.out, r.best.wasm)}) | ${r.copy.toFixed(1)} | ${r.allocCopy.toFixed(1)} |`);
}
