// bench/run.mjs's targets: the issue's performance targets judged from a run's results, as lines of Markdown.
import { fmtMs } from './common.mjs';
import { wasmBudgetBytes } from '../scripts/lib.mjs';

/** One line per target, met or missed, for the configurations and thread counts this run timed. */
export function targetLines({ results, configs, threadCounts, only, names, busy = 0 }) {
  const fwd = (threads, id, L, E, H) =>
    results.forward.find((r) => r.threads === threads && r.id === id && r.L === L && r.E === E && r.H === H && r.ms);
  /** The median of one path of a library's row (the fastest is the row itself, the others are listed in it). */
  const pathMs = (e, variant) => (e.variant === variant ? e.ms : e.others?.find((o) => o.variant === variant)?.ms);
  const lines = [];
  for (const threads of threadCounts) {
    for (const [L, E, H] of configs.filter(([L]) => L >= 64)) {
      const a = fwd(threads, 'attnscope', L, E, H);
      const others = only.filter((id) => id !== 'attnscope').map((id) => fwd(threads, id, L, E, H)).filter(Boolean);
      if (!others.length) continue;
      const best = others.reduce((m, r) => (r.ms < m.ms ? r : m));
      const label = `${threads} thread${threads > 1 ? 's' : ''}, (${L}, ${E}, ${H})`;
      if (!a) {
        lines.push(`- ${label}: attnscope n/a — best peer ${names[best.id]} ${fmtMs(best.ms)} ms`);
        continue;
      }
      const speedup = best.ms / a.ms;
      const bestRun = Math.min(...others.map((r) => r.bestMs)) / a.bestMs;
      lines.push(`- ${label}: ${speedup.toFixed(2)}× the best peer (${names[best.id]}${best.variant ? ` ${best.variant}` : ''}, ` +
        `${fmtMs(best.ms)} ms) by median, ${bestRun.toFixed(2)}× by fastest run — ` +
        (speedup >= 1.25 ? 'met (≥ 1.25×)' : `MISSED: needs ≤ ${fmtMs(best.ms / 1.25)} ms, is ${fmtMs(a.ms)} ms`));
    }
  }
  // With busy neighbours (--busy) a core is taken, so the second thread cannot double the speed; what issue #21 asks
  // then is that it never costs: 2 threads at least as fast as 1 under the same neighbours, at every size.
  const [minSeq, wanted] = busy ? [64, 1.0] : [512, 1.8];
  for (const [L, E, H] of configs.filter(([L]) => L >= minSeq)) {
    const one = fwd(1, 'attnscope', L, E, H), two = fwd(2, 'attnscope', L, E, H);
    if (!one || !threadCounts.includes(2)) continue;
    if (!two) lines.push(`- (${L}, ${E}, ${H}) 2 threads ÷ 1 thread ≥ ${wanted.toFixed(1)}×: n/a (no threaded attnscope build)`);
    else {
      // Judged on the faster path at each thread count, as the peers are; the fresh-array path is given beside it
      // because its copy into new pages runs on one thread whatever the thread count.
      const s = one.ms / two.ms;
      const f1 = pathMs(one, 'fresh'), f2 = pathMs(two, 'fresh');
      const fresh = f1 && f2 ? `; with fresh arrays ${(f1 / f2).toFixed(2)}×` : '';
      lines.push(`- (${L}, ${E}, ${H}) 2 threads ÷ 1 thread ≥ ${wanted.toFixed(1)}×${busy ? ` with ${busy} busy neighbour(s)` : ''}: ` +
        `${s.toFixed(2)}× (${one.variant} ÷ ${two.variant}, measured in two processes${fresh}) — ${s >= wanted ? 'met' : 'MISSED'}`);
    }
  }
  if (results.peak?.v8 && results.wasmCpp) {
    // The issue's target is against the ceiling V8 reaches; the machine's native one is given beside it.
    const worst = results.wasmCpp.peak.filter((r) => r.seq).flatMap((r) => [
      { what: `q/k/v at (${r.seq}, ${r.embed}, ${r.heads})`, g: r.qkvGflops },
      { what: `out at (${r.seq}, ${r.embed}, ${r.heads})`, g: r.outGflops },
    ]).reduce((m, x) => (x.g < m.g ? x : m));
    const share = worst.g / results.peak.v8;
    const machine = results.peak.machine ? ` (${((100 * worst.g) / results.peak.machine).toFixed(0)}% of the machine's ${results.peak.machine.toFixed(1)})` : '';
    lines.push(`- projection GEMMs (WASM) ≥ 80% of V8's ${results.peak.v8.toFixed(1)} GFLOP/s mul+add ceiling: lowest is ${worst.what}, ` +
      `${worst.g.toFixed(1)} GFLOP/s = ${(100 * share).toFixed(0)}%${machine} — ${share >= 0.8 ? 'met' : 'MISSED'}`);
  }
  const small = fwd(1, 'attnscope', 16, 64, 4);
  if (small) lines.push(`- (16, 64, 4) from JS with weights under 50 µs: ${(small.ms * 1000).toFixed(1)} µs — ${small.ms < 0.05 ? 'met' : 'MISSED'}`);
  const cold = results.cold.find((r) => r.id === 'attnscope' && r.ms);
  if (cold) {
    lines.push(`- cold start under 50 ms: ${cold.ms.toFixed(1)} ms — ${cold.ms < 50 ? 'met' : 'MISSED'}`);
    lines.push(`- .wasm under ${wasmBudgetBytes.toLocaleString('en-US')} B: ${cold.wasmBytes.toLocaleString('en-US')} B — ${cold.wasmBytes < wasmBudgetBytes ? 'met' : 'MISSED'}`);
  }
  return lines;
}
