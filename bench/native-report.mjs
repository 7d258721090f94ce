// bench/run.mjs's native section: bench/native built natively and as WASM with the tests' own CMake presets, run,
// and reported against the JS forward pass (the same configurations, one thread) and the machine's SIMD peak.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fmtMs, formatTable } from './common.mjs';
import { ROOT } from './node-paths.mjs';
import { cmakeBuild, emscriptenToolchain, presetDir } from '../scripts/lib.mjs';

const benchTargets = ['attnscope_mha_bench', 'attnscope_peak'];

/** Builds the programs in the tests' build folder of that kind (the same CMake preset); null if that is impossible.
 * Build output goes to stderr: stdout is the report. */
function benchPrograms(kind, progress) {
  const ext = kind === 'wasm' ? '.cjs' : '';
  const dir = presetDir(kind);
  if (kind === 'wasm' && !emscriptenToolchain()) return null;
  progress(`building bench/native (${kind}) in ${dir}`);
  if (cmakeBuild(kind, benchTargets, { echo: progress, stdio: ['ignore', 2, 2] }) !== 0) return null;
  return { mha: path.join(ROOT, dir, 'bench', `mha_bench${ext}`), peak: path.join(ROOT, dir, 'bench', `peak${ext}`) };
}

function runProgram(file, argv, nodeFlags = []) {
  const isWasm = file.endsWith('.cjs');
  const r = spawnSync(isWasm ? process.execPath : file, isWasm ? [...nodeFlags, file, ...argv] : argv, {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (r.status !== 0) throw new Error(`${path.relative(ROOT, file)} failed: ${(r.stderr || '').slice(0, 300)}`);
  return r.stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

/**
 * Builds and runs bench/native's programs (native, then WASM: results.native, results.wasmCpp), writes their tables
 * with `out`, and sets results.peak. results.forward must already hold the JS forward pass.
 */
export function nativeSection({ configs, results, out, progress }) {
  for (const kind of ['native', 'wasm']) {
    const programs = benchPrograms(kind, progress);
    if (!programs) {
      progress(`no ${kind} build of bench/native could be made; skipping it`);
      continue;
    }
    progress(`running ${path.relative(ROOT, programs.mha)} and ${path.basename(programs.peak)}`);
    const key = kind === 'native' ? 'native' : 'wasmCpp';
    try {
      // The peak's kernels are short runs of functions called a few times: --no-liftoff times V8's optimised code
      // (what a warm forward pass runs) instead of its baseline tier. mha_bench warms up like the JS benchmark.
      results[key] = {
        forward: runProgram(programs.mha, ['--json']),
        peak: runProgram(programs.peak, ['--json'], ['--no-liftoff']),
      };
    } catch (e) {
      progress(String(e.message));
    }
  }

  const js = (L, E, H) => results.forward.find((r) => r.threads === 1 && r.id === 'attnscope' && r.L === L && r.E === E && r.H === H);
  const cpp = (key, L, E, H) => results[key]?.forward.find((r) => r.seq === L && r.embed === E && r.heads === H);
  const rows = [['config', 'attnscope from JS, ms', 'WASM from C++, ms', 'native C++, ms', 'JS ÷ native', 'JS wrapper share']];
  for (const [L, E, H] of configs) {
    const j = js(L, E, H)?.bestMs, w = cpp('wasmCpp', L, E, H)?.bestMs, n = cpp('native', L, E, H)?.bestMs;
    rows.push([
      `(${L}, ${E}, ${H})`,
      fmtMs(j),
      fmtMs(w),
      fmtMs(n),
      j && n ? `${(j / n).toFixed(2)}×` : '—',
      j && w ? `${((100 * (j - w)) / j).toFixed(0)}%` : '—',
    ]);
  }
  out('## WASM against native (one thread): the same forward pass with weights (bench/native/mha_bench.cpp)');
  out();
  out('Fastest run of each (these three are timed minutes apart on a shared machine, where medians drift with the');
  out('other work; the fastest run is what the code can do). "WASM from C++" is the library compiled by Emscripten');
  out('from the current cpp/ sources and timed inside WebAssembly: no JS wrapper, no copies. Native is g++ -O3 for');
  out('the default x86-64 target: the same 128-bit kernels (SSE2, two-operand encoding). The wrapper share is');
  out('(JS − WASM from C++) / JS: copying inputs into and results out of the WASM heap, and the binding.');
  out();
  out(formatTable(rows));
  out();

  const peakRow = (key) => results[key]?.peak.find((r) => r.peakGflops);
  const native = peakRow('native'), wasm = peakRow('wasmCpp');
  const machinePeak = native?.peakGflops ?? wasm?.peakGflops ?? null;
  results.peak = { native: native?.peakGflops, native16Registers: native?.peak16RegGflops, v8: wasm?.peakGflops, machine: machinePeak };
  const g = (x) => (x ? x.toFixed(1) : '—');
  const curve = (by) => Object.entries(by ?? {}).map(([c, x]) => `${c}: ${x.toFixed(1)}`).join(', ') || '—';
  const shapes = (row) => `mul chains + add chains ${g(row?.chainedGflops)} (by chain count ${curve(row?.byChains)}), ` +
    `add chains fed by loads ${g(row?.accumulatedGflops)} (by accumulator count ${curve(row?.byAccumulators)})`;
  out('## SIMD peak and the projection GEMMs (bench/native/peak.cpp)');
  out();
  out('128-bit mul+add peak of one core: the best of two loop shapes at several widths, four steps per loop iteration,');
  out('best of 25 runs each (bench/README.md, "Peak"). Two ceilings: **V8\'s**, the same source compiled to WASM and run');
  out(`by Node: ${g(wasm?.peakGflops)} GFLOP/s (${shapes(wasm)}), what SIMD128 code can reach here; and the`);
  out(`**machine's**, natively: ${g(native?.peakGflops)} GFLOP/s, ${g(native?.peak16RegGflops)} with the 16 XMM registers of plain x86-64`);
  out(`(${shapes(native)}; the rest with AVX-512VL's 32 registers).`);
  out("The projections are the library's GEMM (detail::matmul_packed, weights packed once as at load) on the forward");
  out("pass's shapes: q/k/v = [L×E]·[E×3E], out = [L×E]·[E×E], bias included, best of 15 runs of about 20 M multiply-adds each.");
  out();
  const gemm = (key, L, E, H) => results[key]?.peak.find((r) => r.seq === L && r.embed === E && r.heads === H);
  const pct = (x, ceiling) => (x && ceiling ? `${((100 * x) / ceiling).toFixed(0)}%` : '—');
  const v8Peak = wasm?.peakGflops;
  const prow = [['config', 'WASM q/k/v GFLOP/s', '% of V8 / machine', 'WASM out GFLOP/s', '% of V8 / machine', 'native q/k/v', 'native out']];
  for (const [L, E, H] of configs) {
    const w = gemm('wasmCpp', L, E, H), n = gemm('native', L, E, H);
    prow.push([`(${L}, ${E}, ${H})`, w?.qkvGflops?.toFixed(1) ?? '—', `${pct(w?.qkvGflops, v8Peak)} / ${pct(w?.qkvGflops, machinePeak)}`,
      w?.outGflops?.toFixed(1) ?? '—', `${pct(w?.outGflops, v8Peak)} / ${pct(w?.outGflops, machinePeak)}`,
      n?.qkvGflops?.toFixed(1) ?? '—', n?.outGflops?.toFixed(1) ?? '—']);
  }
  out(formatTable(prow));
  out();
}
