// Shared by every benchmark entry point, in Node and in the browser page alike: configurations, seeded inputs and
// weights, FLOP count, timing, diffs and table formatting. No Node imports here (bench/node-paths.mjs has those).
import { mulberry32 } from '../tests/random.js';

/** Whether this runs under Node (the browser bench imports the same modules into a page). */
export const IN_NODE = typeof process !== 'undefined' && Boolean(process.versions?.node);

// A full garbage collection on demand: Chromium is launched with --js-flags=--expose-gc, and under Node the flag is
// set at run time, so no caller has to remember --expose-gc.
async function findGc() {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  if (!IN_NODE) return () => {};
  const [v8, vm] = await Promise.all([import('node:v8'), import('node:vm')]);
  v8.default.setFlagsFromString('--expose-gc');
  return vm.default.runInNewContext('gc');
}
const collectGarbage = await findGc();

/**
 * Thrown by a peer's load() when it cannot run at the requested thread count here (no threaded build, no
 * cross-origin isolation, …). The tables print its message as "n/a (…)" instead of a failure.
 */
export class Unavailable extends Error {}

/** The thread counts the forward tables compare, every library at the same count. */
export const THREAD_COUNTS = [1, 2];

/** The configurations: [seq, embed, heads]. */
export const CONFIGS = [
  [16, 64, 4],
  [64, 256, 4],
  [128, 512, 8],
  [512, 768, 12],
  [2048, 768, 12],
];

/** The long sequence, run without weights. */
export const LONG_CONFIG = [16384, 768, 12];

/** The tiny configuration of the smoke mode (`--smoke`): every peer once, to show the bench itself works. */
export const SMOKE_CONFIGS = [[40, 48, 3]]; // odd sequence length, head size 16

/**
 * The largest number of query rows per block for a peer's query-blocked no-weights path: one block's scores for all
 * heads (4·H·rows·keyLen bytes) stay within 512 MiB, well inside WebAssembly's 4 GiB.
 */
export function queryBlockRows(H, keyLen, budgetBytes = 512 * 2 ** 20) {
  const rows = Math.floor(budgetBytes / (4 * H * keyLen));
  return Math.max(16, Math.min(keyLen, rows - (rows % 16)));
}

/** Forward FLOPs: four E×E projections (8·L·E²) plus q·kᵀ and weights·v over all heads (4·L²·E). */
export function flops(L, E) {
  return 8 * L * E * E + 4 * L * L * E;
}

function uniform(rng, n, bound) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = (2 * rng() - 1) * bound;
  return a;
}

/**
 * Seeded input [1, L, E] and a PyTorch-style state dict for (E, H). The biases are nonzero on purpose, so a
 * peer that drops a bias shows up in the diff columns. Same seed → same numbers in every process.
 */
export function makeCase(L, E, H, seed = 1234) {
  const rng = mulberry32(seed ^ Math.imul(L, 73856093) ^ Math.imul(E, 19349663) ^ Math.imul(H, 83492791));
  const state = {
    in_proj_weight: { data: uniform(rng, 3 * E * E, Math.sqrt(6 / (4 * E))), shape: [3 * E, E] },
    in_proj_bias: { data: uniform(rng, 3 * E, 0.1), shape: [3 * E] },
    'out_proj.weight': { data: uniform(rng, E * E, 1 / Math.sqrt(E)), shape: [E, E] },
    'out_proj.bias': { data: uniform(rng, E, 0.1), shape: [E] },
  };
  const x = uniform(rng, L * E, 1);
  return { L, E, H, x, state };
}

/** Largest |a[i] − b[i]|; NaN anywhere (or a length mismatch) gives NaN so it cannot hide. */
export function maxAbsDiff(a, b) {
  if (!a || !b || a.length !== b.length) return NaN;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (Number.isNaN(d)) return NaN;
    if (d > m) m = d;
  }
  return m;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/**
 * Times several functions (sync or async) against each other on a shared machine: after each one's warm-up, they take
 * turns in rounds of about `sliceMs` of calls each, so a burst of other work lands on all of them rather than on
 * whichever happened to be running. Within a turn the calls follow each other, so caches stay as warm as in a
 * caller's loop. Each turn starts after a full garbage collection (not timed), so the garbage one library leaves is
 * collected on its own time, never during another's turn.
 *
 * Every measurement is warm: calls under 100 ms get `warmup` untimed calls first, slower ones one. A function stops
 * at `maxReps` runs, or once it has `minReps` runs and `minMs` of measured time; a function whose warm-up call took
 * longer than `slowMs` needs only `slowReps` runs, and any function stops after `budgetMs` once it has `slowReps`.
 * Returns { [id]: { ms, bestMs, reps, last } } (median and fastest of the timed runs).
 */
export async function timeInterleaved(
  fns,
  { warmup = 3, minReps = 7, slowReps = 5, slowMs = 1000, minMs = 400, maxReps = 5000, budgetMs = 8000, sliceMs = 50 } = {},
) {
  const state = {};
  for (const [id, fn] of Object.entries(fns)) {
    collectGarbage();
    const t0 = performance.now();
    let last = await fn();
    const first = performance.now() - t0;
    if (first < 100) for (let i = 1; i < warmup; i++) last = await fn();
    state[id] = { fn, times: [], spent: 0, last, need: first > slowMs ? slowReps : minReps };
  }
  const done = (st) =>
    st.times.length >= maxReps ||
    (st.times.length >= st.need && st.spent >= minMs) ||
    (st.times.length >= slowReps && st.spent >= budgetMs);
  for (;;) {
    const open = Object.values(state).filter((st) => !done(st));
    if (!open.length) break;
    for (const st of open) {
      collectGarbage();
      let slice = 0;
      do {
        const s = performance.now();
        st.last = await st.fn();
        const dt = performance.now() - s;
        st.times.push(dt);
        st.spent += dt;
        slice += dt;
      } while (slice < sliceMs && !done(st));
    }
  }
  return Object.fromEntries(
    Object.entries(state).map(([id, st]) => [id, { ms: median(st.times), bestMs: Math.min(...st.times), reps: st.times.length, last: st.last }]),
  );
}

/**
 * A Markdown table from rows of strings (the first row is the header): the columns in `textColumns` (indexes)
 * left-aligned, the numbers right-aligned.
 */
export function formatTable(rows, textColumns = [0]) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c] ?? '').length)));
  const left = (c) => textColumns.includes(c);
  const line = (r) =>
    '| ' + r.map((cell, c) => (left(c) ? String(cell ?? '').padEnd(widths[c]) : String(cell ?? '').padStart(widths[c]))).join(' | ') + ' |';
  const sep = '|' + widths.map((w, c) => '-'.repeat(w + 1) + (left(c) ? '-' : ':')).join('|') + '|';
  return [line(rows[0]), sep, ...rows.slice(1).map(line)].join('\n');
}

export function fmtMs(ms) {
  if (ms == null || Number.isNaN(ms)) return '—';
  if (ms < 1) return ms.toFixed(3);
  if (ms < 100) return ms.toFixed(2);
  return ms.toFixed(0);
}

export function fmtDiff(d) {
  if (d === undefined) return '—';
  if (Number.isNaN(d)) return 'NaN';
  return d.toExponential(1);
}

export function fmtBytes(b) {
  if (b == null) return '—';
  if (b >= 1 << 30) return (b / 2 ** 30).toFixed(2) + ' GiB';
  if (b >= 1 << 20) return (b / 2 ** 20).toFixed(1) + ' MiB';
  return (b / 1024).toFixed(1) + ' KiB';
}
