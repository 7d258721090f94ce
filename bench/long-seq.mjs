// One long-sequence forward without weights, run in a fresh process (with a timeout) by bench/run.mjs, so a library
// that runs out of memory or crashes cannot take the whole benchmark down.
//   node bench/long-seq.mjs attnscope|tfjs|ort [SEQ EMBED HEADS]   → one JSON line
import fs from 'node:fs';
import { wasmMemoryBytes } from './wasm-probe.mjs';
import { LONG_CONFIG, makeCase } from './common.mjs';

// Peak resident memory of this process. Not resourceUsage().maxRSS: Linux carries the parent's high-water mark
// across fork+exec into it, so every child would report at least the parent's RSS. VmHWM belongs to this image.
function peakRssBytes() {
  const kb = /VmHWM:\s*(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1];
  return kb ? Number(kb) * 1024 : process.resourceUsage().maxRSS * 1024;
}

const id = process.argv[2];
const [L, E, H] = process.argv.length > 3 ? process.argv.slice(3, 6).map(Number) : LONG_CONFIG;
const report = (r) => console.log(JSON.stringify({ id, L, E, H, maxRssBytes: peakRssBytes(), ...r }));

try {
  const { x, state } = makeCase(L, E, H);
  const peer = await import(`./peers/${id}.mjs`);
  const lib = await peer.load();
  const mha = await peer.create(lib, { E, H, state, needWeights: false });
  // One run: at this size a run is tens of seconds, and the first run's workspace growth is part of what a user
  // pays for a one-off long sequence.
  const t0 = performance.now();
  const { output } = await mha.forward(x, L, false);
  const ms = performance.now() - t0;
  let finite = output.length === L * E;
  for (let i = 0; finite && i < output.length; i++) finite = Number.isFinite(output[i]);
  // attnscope reports its own module's memory; the probe sees every WebAssembly.Memory (both only grow: = peak).
  const wasmBytes = lib.memoryUsage ? lib.memoryUsage().wasmBytes : wasmMemoryBytes();
  await mha.dispose();
  report({ ms, wasmBytes, finite });
} catch (e) {
  report({ error: String(e?.message ?? e).split('\n')[0].slice(0, 300), wasmBytes: wasmMemoryBytes() });
}
