// What the JS wrapper adds around the WebAssembly forward pass: in-WASM time against the public forward(), with
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

/** forward() on the raw handle with inputs already in the heap: the time spent inside WebAssembly. */
function rawForward(L, E, H, state, x) {
  const handle = wasm._createAttention({ embedDim: E, numHeads: H, kdim: E, vdim: E, bias: true, seed: 0 });
  const arena = new wasm._Arena();
  const keys = Object.keys(state);
  const sizes = keys.map((k) => state[k].data.byteLength);
  const at = runtime.reserve(arena, sizes, 'bench');
  keys.forEach((k, i) => runtime.copyIn(at[i], state[k].data));
  runtime.check(handle.loadStateDict(keys.map((k, i) => [k, at[i], state[k].shape])), 'bench');
  const plan = handle.plan({ batch: 1, queryLen: L, keyLen: L, keyPaddingMask: wasm._MaskKind.none, attnMask: wasm._MaskKind.none, attnMaskPerHead: false, causal: false, needWeights: true, averageWeights: false });
  const [xAt, outAt, weightsAt] = runtime.reserve(arena, [x.byteLength, 4 * L * E, 4 * plan.weightsShape.reduce((a, b) => a * b, 1)], 'bench');
  runtime.copyIn(xAt, x);
  const call = { batch: 1, queryLen: L, keyLen: L, keyPaddingMask: wasm._MaskKind.none, attnMask: wasm._MaskKind.none, attnMaskPerHead: false, causal: false, needWeights: true, averageWeights: false };
  const buffers = { query: xAt, key: xAt, value: xAt, keyPaddingMask: 0, attnMask: 0, output: outAt, weights: weightsAt };
  return {
    run: () => runtime.check(handle.forward(call, buffers), 'bench'),
    dispose: () => { handle.delete(); arena.delete(); },
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
