// One cold start, run in a fresh process by bench/run.mjs: the time from importing a library to its first forward
// result at (16, 64, 4) with weights, and the bytes of the WebAssembly module it compiled on the way.
//   node bench/cold-start.mjs attnscope|tfjs|ort|plain   → one JSON line
import { wasmModuleBytes } from './wasm-probe.mjs'; // first: it must see the library's modules being compiled
import { parseArgs } from 'node:util';
import { makeCase } from './common.mjs';

const [id] = parseArgs({ allowPositionals: true }).positionals;
const [L, E, H] = [16, 64, 4];
const { x, state } = makeCase(L, E, H); // the inputs are the caller's, not the library's, so not timed

const t0 = performance.now();
const peer = await import(`./peers/${id}.mjs`);
const lib = await peer.load();
const mha = await peer.create(lib, { E, H, state, needWeights: true });
const { output, weights } = await mha.forward(x, L, true);
const ms = performance.now() - t0;
if (!(output.length === L * E && weights.length === H * L * L)) throw new Error(`${id}: wrong result sizes`);
await mha.dispose();
// performance.now() counts from the process's start, so the last field includes Node's own startup.
console.log(JSON.stringify({ id, ms, wasmBytes: wasmModuleBytes(), sinceProcessStartMs: performance.now() }));
