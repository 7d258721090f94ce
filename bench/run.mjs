// `npm run bench`: attnscope against the peers a user would pick instead (tfjs-wasm, onnxruntime-web, plain JS) in
// one Node process on the same seeded inputs; cold starts and a long sequence in child processes; the same forward
// pass natively and as WASM from C++ (bench/native); the machine's SIMD peak; and the lead's targets.
//
//   node bench/run.mjs [--no-cold] [--no-long] [--no-native] [--only=attnscope,ort,...] [--configs=16x64x4,...]
//
// Markdown tables go to stdout (bench/README.md quotes them); progress goes to stderr. The numbers are also written
// to build/bench/results.json.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CONFIGS,
  LONG_CONFIG,
  ROOT,
  flops,
  fmtBytes,
  fmtDiff,
  fmtMs,
  formatTable,
  makeCase,
  maxAbsDiff,
  median,
  timeInterleaved,
} from './common.mjs';
import { PEER_IDS, importPeer } from './peers/index.mjs';
import { cmakeBuild, emscriptenToolchain, nativeConfigure, wasmConfigure } from '../scripts/lib.mjs';

const args = new Set(process.argv.slice(2));
const option = (name) => process.argv.slice(2).find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const only = option('only')?.split(',') ?? PEER_IDS;
const configs = option('configs')?.split(',').map((c) => c.split('x').map(Number)) ?? CONFIGS;
for (const id of only) if (!PEER_IDS.includes(id)) throw new Error(`--only: unknown library '${id}'`);

const LONG_TIMEOUT_MS = { attnscope: 240_000, tfjs: 90_000, ort: 90_000 };
const COLD_RUNS = 3;
const progress = (msg) => process.stderr.write(`[bench] ${msg}\n`);
const out = (s = '') => process.stdout.write(s + '\n');
const results = { machine: {}, forward: [], cold: [], long: [], native: null, wasmCpp: null, peak: null };

// ---- machine ------------------------------------------------------------------------------------------------------
const cpuModel = (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) ?? [])[1] ?? os.cpus()[0]?.model;
results.machine = {
  nproc: os.availableParallelism?.() ?? os.cpus().length,
  cpu: cpuModel,
  node: process.version,
  v8: process.versions.v8,
  loadAverageAtStart: os.loadavg().map((x) => +x.toFixed(2)),
};
out(`# attnscope benchmark — ${new Date().toISOString()}`);
out();
out(`nproc ${results.machine.nproc} · CPU ${cpuModel} · Node ${process.version} (V8 ${process.versions.v8}) · ` +
    `load average at start ${results.machine.loadAverageAtStart.join(' ')}`);
out('Single thread everywhere: attnscope has no threads; tfjs-wasm setThreadsCount(1); onnxruntime-web numThreads = 1.');
out();

// ---- the package must be built; the run uses a copy of it ----------------------------------------------------------
if (only.includes('attnscope')) {
  const dist = path.join(ROOT, 'dist');
  if (!fs.existsSync(path.join(dist, 'index.js'))) {
    progress('dist/index.js is missing: running `npm run build` first');
    const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) throw new Error('`npm run build` failed; the benchmark needs the built package in dist/');
  }
  // A rebuild of dist/ while the benchmark runs (minutes) would mix two versions: this process and the child
  // processes all import the same copy.
  const snapshot = path.join(ROOT, 'build', 'bench', 'dist-snapshot');
  results.machine.distBuilt = fs.statSync(path.join(dist, 'attnscope.wasm')).mtime.toISOString();
  fs.rmSync(snapshot, { recursive: true, force: true });
  fs.cpSync(dist, snapshot, { recursive: true });
  process.env.ATTNSCOPE_BENCH_DIST = pathToFileURL(path.join(snapshot, 'index.js')).href;
  const git = (...a) => spawnSync('git', a, { cwd: ROOT, encoding: 'utf8' }).stdout?.trim();
  results.machine.commit = git('rev-parse', '--short', 'HEAD');
  results.machine.dirty = Boolean(git('status', '--porcelain', '--untracked-files=no'));
  results.machine.distWasmBytes = fs.statSync(path.join(snapshot, 'attnscope.wasm')).size;
  out(`attnscope: commit ${results.machine.commit}${results.machine.dirty ? ' + uncommitted changes' : ''}, ` +
      `dist/ built ${results.machine.distBuilt}`);
  out();
}

// ---- forward pass with per-head weights, all libraries in this process ---------------------------------------------
const peers = {};
for (const id of only) {
  const peer = await importPeer(id);
  peers[id] = { peer, lib: await peer.load() };
}
const names = Object.fromEntries(only.map((id) => [id, peers[id].peer.name]));

{
  const rows = [['config (seq, embed, heads)', 'library', 'median ms', 'best ms', 'runs', 'GFLOP/s', '÷ attnscope', 'max abs Δ output', 'max abs Δ weights']];
  for (const [L, E, H] of configs) {
    const c = makeCase(L, E, H);
    const byId = {};
    const layers = {};
    for (const id of only) {
      const { peer, lib } = peers[id];
      try {
        layers[id] = await peer.create(lib, { E, H, state: c.state, needWeights: true });
      } catch (e) {
        byId[id] = { id, L, E, H, error: String(e?.message ?? e).split('\n')[0] };
      }
    }
    progress(`forward (${L}, ${E}, ${H}) with weights: ${Object.keys(layers).map((id) => names[id]).join(', ')}, interleaved`);
    const fns = Object.fromEntries(Object.entries(layers).map(([id, mha]) => [id, () => mha.forward(c.x, L, true)]));
    let timings = {};
    try {
      timings = await timeInterleaved(fns);
    } catch (e) {
      // One library throwing must not hide the others: time them one by one to find and report it.
      for (const [id, fn] of Object.entries(fns)) {
        try {
          timings[id] = (await timeInterleaved({ [id]: fn }))[id];
        } catch (err) {
          byId[id] = { id, L, E, H, error: String(err?.message ?? err).split('\n')[0] };
        }
      }
    }
    for (const [id, t] of Object.entries(timings))
      byId[id] = { id, L, E, H, ms: t.ms, bestMs: t.bestMs, reps: t.reps, gflops: flops(L, E) / (t.ms * 1e6), last: t.last };
    for (const mha of Object.values(layers)) await mha.dispose();
    const ref = byId.attnscope;
    for (const id of only) {
      const e = byId[id];
      if (ref?.last && e.last && id !== 'attnscope') {
        e.diffOutput = maxAbsDiff(e.last.output, ref.last.output);
        e.diffWeights = maxAbsDiff(e.last.weights, ref.last.weights);
      }
      if (ref?.ms && e.ms) e.ratio = e.ms / ref.ms;
    }
    for (const id of only) {
      const e = byId[id];
      delete e.last;
      results.forward.push(e);
      rows.push([
        `(${L}, ${E}, ${H})`,
        names[id],
        e.error ? `failed: ${e.error}` : fmtMs(e.ms),
        e.bestMs ? fmtMs(e.bestMs) : '',
        e.reps ?? '',
        e.gflops ? e.gflops.toFixed(2) : '',
        e.ratio ? `${e.ratio.toFixed(2)}×` : '',
        id === 'attnscope' ? '(reference)' : fmtDiff(e.diffOutput),
        id === 'attnscope' ? '(reference)' : fmtDiff(e.diffWeights),
      ]);
    }
  }
  out('## Forward pass with every head\'s weights (one Node process, same seeded inputs)');
  out();
  out('Each library is warmed up, then they take turns in ~50 ms slices until each has ≥ 7 runs and ≥ 0.4 s (at most');
  out('5000 runs or 8 s; a single run longer than 4 s is timed once). GFLOP/s counts 8·L·E² + 4·L²·E. "÷ attnscope"');
  out('is the library\'s median time over attnscope\'s: above 1 means attnscope is faster. "best ms" is the fastest run,');
  out('the one least disturbed by other work on the machine. The Δ columns are the largest absolute differences from');
  out('attnscope\'s output and weights.');
  out();
  out(formatTable(rows, [0, 1]));
  out();
}
for (const id of only) delete peers[id]; // let the libraries' heaps go before the child processes run

// ---- child processes ---------------------------------------------------------------------------------------------
function runChild(script, argv, timeoutMs) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', script), ...argv], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = r.stdout?.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (line) return JSON.parse(line);
  if (r.error?.code === 'ETIMEDOUT' || (r.signal === 'SIGKILL' && r.status === null))
    return { error: `timed out after ${timeoutMs / 1000} s` };
  const why = (r.stderr ?? '').split('\n').filter((l) => /error|abort|memory/i.test(l)).pop() ?? `exit ${r.status ?? r.signal}`;
  return { error: why.trim().slice(0, 200) };
}

if (!args.has('--no-cold')) {
  const rows = [['library', 'import → first result, ms (median of 3 processes)', 'node start → first result, ms', '.wasm loaded']];
  for (const id of only) {
    progress(`cold start: ${names[id]} (${COLD_RUNS} fresh processes)`);
    const runs = [];
    for (let i = 0; i < COLD_RUNS; i++) runs.push(runChild('cold-start.mjs', [id], 60_000));
    const ok = runs.filter((r) => !r.error);
    const entry = ok.length
      ? { id, ms: median(ok.map((r) => r.ms)), sinceProcessStartMs: median(ok.map((r) => r.sinceProcessStartMs)), wasmBytes: ok[0].wasmBytes }
      : { id, error: runs[0].error };
    results.cold.push(entry);
    rows.push([
      names[id],
      entry.error ? `failed: ${entry.error}` : entry.ms.toFixed(1),
      entry.error ? '' : entry.sinceProcessStartMs.toFixed(1),
      entry.wasmBytes ? `${entry.wasmBytes.toLocaleString('en-US')} B (${fmtBytes(entry.wasmBytes)})` : entry.error ? '' : 'none',
    ]);
  }
  out('## Cold start: import → first forward result at (16, 64, 4), fresh process each');
  out();
  out('".wasm loaded" is the size of the module the library actually compiled, recorded by bench/wasm-probe.mjs.');
  out();
  out(formatTable(rows));
  out();
}

if (!args.has('--no-long')) {
  const [L, E, H] = LONG_CONFIG;
  const rows = [['library', 'median ms (1 run)', 'GFLOP/s', 'peak WASM memory', 'peak RSS', 'result']];
  for (const id of only.filter((i) => i !== 'plain')) {
    progress(`long sequence (${L}, ${E}, ${H}) without weights: ${names[id]} (timeout ${LONG_TIMEOUT_MS[id] / 1000} s)`);
    const r = { id, ...runChild('long-seq.mjs', [id, String(L), String(E), String(H)], LONG_TIMEOUT_MS[id]) };
    // onnxruntime's messages carry its build machine's source path; the file and the reason are what matter.
    if (r.error) r.error = r.error.replace(/\/\S*\/onnxruntime\//, 'onnxruntime/').replace(/static void \S+::/, '');
    results.long.push(r);
    rows.push([
      names[id],
      r.ms ? fmtMs(r.ms) : '—',
      r.ms ? (flops(L, E) / (r.ms * 1e6)).toFixed(2) : '',
      fmtBytes(r.wasmBytes),
      fmtBytes(r.maxRssBytes),
      r.error ? `failed: ${r.error}` : r.finite ? 'ok (finite output)' : 'non-finite output',
    ]);
  }
  out(`## Long sequence (${L}, ${E}, ${H}) without weights (needWeights: false), fresh process each`);
  out();
  out('Peak WASM memory is the module\'s memory after the run (WebAssembly memory never shrinks). The plain-JS peer is');
  out('skipped here (about 12 minutes at its 1.2 GFLOP/s).');
  out();
  out(formatTable(rows, [0, 5]));
  out();
}

// ---- native and WASM-from-C++ builds of bench/native --------------------------------------------------------------
const benchTargets = ['attnscope_mha_bench', 'attnscope_peak'];

/** Builds the programs in the tests' build folder of that kind (scripts/lib.mjs: same folder, same options); null
 * if that is impossible. Build output goes to stderr: stdout is the report. */
function benchPrograms(kind) {
  const ext = kind === 'wasm' ? '.cjs' : '';
  const dir = path.join('build', kind);
  if (kind === 'wasm' && !fs.existsSync(emscriptenToolchain)) return null;
  progress(`building bench/native (${kind}) in ${dir}`);
  const configure = kind === 'wasm' ? wasmConfigure : nativeConfigure;
  if (cmakeBuild(dir, configure, benchTargets, { echo: progress, stdio: ['ignore', 2, 2] }) !== 0) return null;
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

if (!args.has('--no-native')) {
  for (const kind of ['native', 'wasm']) {
    const programs = benchPrograms(kind);
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

  const js = (L, E, H) => results.forward.find((r) => r.id === 'attnscope' && r.L === L && r.E === E && r.H === H);
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
  out('## WASM against native: the same forward pass with weights (bench/native/mha_bench.cpp)');
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
  out('## SIMD peak and the projection GEMMs (bench/native/peak.cpp)');
  out();
  out('128-bit mul+add peak of one core, from independent 4-wide mul and add chains (best chain count, best of 25');
  out(`runs): **${g(native?.peakGflops)} GFLOP/s** natively — ${g(native?.peak16RegGflops)} with the 16 XMM registers of`);
  out(`plain x86-64, ${g(wasm?.peakGflops)} for the same loop compiled to WASM in V8 (16 registers, one kept as scratch:`);
  out('too few chains to hide the latency). The first number is the ceiling for the percentages below. The projections');
  out("are the library's GEMM (detail::matmul_packed, weights packed once as at load) on the forward pass's shapes:");
  out('q/k/v = [L×E]·[E×3E], out = [L×E]·[E×E], bias included, best of 15 runs.');
  out();
  const gemm = (key, L, E, H) => results[key]?.peak.find((r) => r.seq === L && r.embed === E && r.heads === H);
  const pct = (g) => (g && machinePeak ? `${((100 * g) / machinePeak).toFixed(0)}%` : '—');
  const prow = [['config', 'WASM q/k/v GFLOP/s', '% of peak', 'WASM out GFLOP/s', '% of peak', 'native q/k/v', 'native out']];
  for (const [L, E, H] of configs) {
    const w = gemm('wasmCpp', L, E, H), n = gemm('native', L, E, H);
    prow.push([`(${L}, ${E}, ${H})`, w?.qkvGflops?.toFixed(1) ?? '—', pct(w?.qkvGflops), w?.outGflops?.toFixed(1) ?? '—',
      pct(w?.outGflops), n?.qkvGflops?.toFixed(1) ?? '—', n?.outGflops?.toFixed(1) ?? '—']);
  }
  out(formatTable(prow));
  out();
}

// ---- the lead's targets ----------------------------------------------------------------------------------------------
{
  const lines = [];
  const fwd = (id, L, E, H) => results.forward.find((r) => r.id === id && r.L === L && r.E === E && r.H === H && r.ms);
  for (const [L, E, H] of configs.filter(([L]) => L >= 64)) {
    const a = fwd('attnscope', L, E, H);
    const others = only.filter((id) => id !== 'attnscope').map((id) => fwd(id, L, E, H)).filter(Boolean);
    if (!a || !others.length) continue;
    const best = others.reduce((m, r) => (r.ms < m.ms ? r : m));
    const speedup = best.ms / a.ms;
    const bestRun = Math.min(...others.map((r) => r.bestMs)) / a.bestMs;
    lines.push(`- (${L}, ${E}, ${H}): ${speedup.toFixed(2)}× faster than the best peer (${names[best.id]}, ${fmtMs(best.ms)} ms) by ` +
      `median, ${bestRun.toFixed(2)}× by fastest run — ` +
      (speedup >= 1.25 ? 'met (≥ 1.25×)' : `MISSED: needs ≤ ${fmtMs(best.ms / 1.25)} ms, is ${fmtMs(a.ms)} ms`));
  }
  if (results.peak?.machine && results.wasmCpp) {
    const worst = results.wasmCpp.peak.filter((r) => r.seq).flatMap((r) => [
      { what: `q/k/v at (${r.seq}, ${r.embed}, ${r.heads})`, g: r.qkvGflops },
      { what: `out at (${r.seq}, ${r.embed}, ${r.heads})`, g: r.outGflops },
    ]).reduce((m, x) => (x.g < m.g ? x : m));
    const share = worst.g / results.peak.machine;
    lines.push(`- projection GEMMs (WASM) ≥ 80% of the ${results.peak.machine.toFixed(1)} GFLOP/s peak: lowest is ${worst.what}, ` +
      `${worst.g.toFixed(1)} GFLOP/s = ${(100 * share).toFixed(0)}% — ${share >= 0.8 ? 'met' : 'MISSED'}`);
  }
  const small = fwd('attnscope', 16, 64, 4);
  if (small) lines.push(`- (16, 64, 4) from JS with weights under 50 µs: ${(small.ms * 1000).toFixed(1)} µs — ${small.ms < 0.05 ? 'met' : 'MISSED'}`);
  const cold = results.cold.find((r) => r.id === 'attnscope' && r.ms);
  if (cold) {
    lines.push(`- cold start under 50 ms: ${cold.ms.toFixed(1)} ms — ${cold.ms < 50 ? 'met' : 'MISSED'}`);
    lines.push(`- .wasm under 200 KB: ${cold.wasmBytes.toLocaleString('en-US')} B — ${cold.wasmBytes < 200_000 ? 'met' : 'MISSED'}`);
  }
  if (lines.length) {
    out('## Targets');
    out();
    for (const l of lines) out(l);
    out();
  }
}

results.machine.loadAverageAtEnd = os.loadavg().map((x) => +x.toFixed(2));
out(`load average at end ${results.machine.loadAverageAtEnd.join(' ')}`);
const resultsFile = path.join(ROOT, 'build', 'bench', 'results.json');
fs.mkdirSync(path.dirname(resultsFile), { recursive: true });
fs.writeFileSync(resultsFile, JSON.stringify(results, null, 2));
progress(`results written to ${path.relative(ROOT, resultsFile)}`);
