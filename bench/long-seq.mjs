// One long-sequence forward without weights, in a fresh process (with a timeout) run by bench/run.mjs, so a library
// that runs out of memory or crashes cannot take the whole benchmark down. Each library takes its best no-weights
// path (peers/*.mjs say which). Warm: one untimed run at 2048 tokens first (same layer, so code, JIT and weights are
// warm; what stays cold is only the first touch of the larger buffers), then RUNS timed runs (median).
//   node bench/long-seq.mjs attnscope|tfjs|ort [SEQ EMBED HEADS] [--threads=N] [--runs=N]   → one JSON line
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { wasmMemoryBytes } from './wasm-probe.mjs';
import { LONG_CONFIG, makeCase, median } from './common.mjs';

// Peak resident memory of this process. Not resourceUsage().maxRSS: Linux carries the parent's high-water mark
// across fork+exec into it, so every child would report at least the parent's RSS. VmHWM belongs to this image.
function peakRssBytes() {
  const kb = /VmHWM:\s*(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1];
  return kb ? Number(kb) * 1024 : process.resourceUsage().maxRSS * 1024;
}

const { values: options, positionals: positional } = parseArgs({
  allowPositionals: true, options: { threads: { type: 'string', default: '1' }, runs: { type: 'string', default: '1' } },
});
const id = positional[0];
const [L, E, H] = positional.length > 1 ? positional.slice(1, 4).map(Number) : LONG_CONFIG;
const threads = Number(options.threads);
const runs = Number(options.runs);
const WARMUP_SEQ = Math.min(L, 2048);
const report = (r) => console.log(JSON.stringify({ id, L, E, H, threads, maxRssBytes: peakRssBytes(), ...r }));

try {
  const { x, state } = makeCase(L, E, H);
  const peer = await import(`./peers/${id}.mjs`);
  const lib = await peer.load({ threads });
  const mha = await peer.create(lib, { E, H, state, needWeights: false });
  await mha.forward(x.subarray(0, WARMUP_SEQ * E), WARMUP_SEQ, false);
  const times = [];
  let output;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    ({ output } = await mha.forward(x, L, false));
    times.push(performance.now() - t0);
  }
  let finite = output.length === L * E;
  for (let i = 0; finite && i < output.length; i++) finite = Number.isFinite(output[i]);
  // attnscope reports its own module's memory; the probe sees every WebAssembly.Memory (both only grow: = peak).
  const wasmBytes = lib.memoryUsage ? lib.memoryUsage().wasmBytes : wasmMemoryBytes();
  await mha.dispose();
  report({ ms: median(times), runs, wasmBytes, finite, firstRow: Array.from(output.subarray(0, E)) });
} catch (e) {
  report({ error: String(e?.message ?? e).split('\n')[0].slice(0, 300), wasmBytes: wasmMemoryBytes() });
}
process.exit(0); // thread pools would keep the process alive
