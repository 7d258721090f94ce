// `npm run bench`: attnscope against the peers a user would pick instead (tfjs-wasm, onnxruntime-web, plain JS) on
// the same seeded inputs, at 1 and 2 threads (one process per thread count: every library's thread pool is per
// process); cold starts and a long sequence in child processes; the same forward pass natively and as WASM from C++
// (bench/native); the machine's SIMD peak; and the issue's targets.
//
//   node bench/run.mjs [--browser] [--smoke] [--threads=1,2] [--simd=auto|baseline|relaxed] [--no-cold] [--no-long] [--no-native]
//                      [--only=attnscope,ort,...] [--configs=16x64x4,...] [--all-variants] [--long-runs=N] [--busy=N] [--out=FILE]
//
// --browser runs the forward comparison in headless Chromium instead of Node (bench/browser.mjs) and skips the
// Node-only parts. --smoke runs every library once at tiny sizes, to show the bench itself works (seconds).
// --simd picks attnscope's build (init({ simd })); under Node 20, relaxed runs the forward children with
// --experimental-wasm-relaxed-simd. Run once per build to compare them (the peers are the same in both runs).
// --busy=N keeps N threads spinning beside the libraries while the forward tables run (bench/busy.mjs): the threads
// under contention, judged by 2 threads against 1 under the same neighbours.
// Markdown tables go to stdout (bench/README.md quotes them), the paste-ready summary last; progress goes to stderr.
// The numbers are also written to build/bench/results.json (results-browser.json with --browser; --out=FILE).
// The native section is bench/native-report.mjs, the targets' verdicts bench/targets.mjs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  CONFIGS,
  LONG_CONFIG,
  SMOKE_CONFIGS,
  THREAD_COUNTS,
  flops,
  fmtBytes,
  fmtDiff,
  fmtMs,
  formatTable,
  maxAbsDiff,
  median,
} from './common.mjs';
import { ROOT } from './node-paths.mjs';
import { PEER_IDS, importPeer } from './peers/index.mjs';
import { nativeSection } from './native-report.mjs';
import { targetLines } from './targets.mjs';

const flag = { type: 'boolean', default: false };
const { values: options } = parseArgs({
  options: {
    browser: flag, smoke: flag, 'no-cold': flag, 'no-long': flag, 'no-native': flag, 'all-variants': flag,
    threads: { type: 'string' }, simd: { type: 'string', default: 'auto' }, only: { type: 'string' }, configs: { type: 'string' }, 'long-runs': { type: 'string' }, busy: { type: 'string', default: '0' }, out: { type: 'string' },
  },
});
const { smoke, browser } = options;
if (!['auto', 'baseline', 'relaxed'].includes(options.simd)) throw new Error(`--simd: expected auto, baseline or relaxed, got '${options.simd}'`);
process.env.ATTNSCOPE_BENCH_SIMD = options.simd;
// Node 20 validates relaxed SIMD only with this flag (22 and later by default).
const relaxedFlags = options.simd === 'relaxed' && Number(process.versions.node.split('.')[0]) < 22 ? ['--experimental-wasm-relaxed-simd'] : [];
const busy = Number(options.busy);
if (!Number.isInteger(busy) || busy < 0) throw new Error(`--busy: expected a whole number of threads, got '${options.busy}'`);
const only = options.only?.split(',') ?? PEER_IDS;
const configs = options.configs?.split(',').map((c) => c.split('x').map(Number)) ?? (smoke ? SMOKE_CONFIGS : CONFIGS);
const threadCounts = options.threads?.split(',').map(Number) ?? THREAD_COUNTS;
for (const id of only) if (!PEER_IDS.includes(id)) throw new Error(`--only: unknown library '${id}'`);
// The smoke mode and the browser run skip the parts that take minutes or only exist under Node.
if (smoke || browser) for (const skip of ['no-cold', 'no-long', 'no-native']) options[skip] = true;

const LONG_TIMEOUT_MS = 600_000;
const COLD_RUNS = 3;
const progress = (msg) => process.stderr.write(`[bench] ${msg}\n`);
const out = (s = '') => process.stdout.write(s + '\n');
const results = { machine: {}, forward: [], forwardPeers: {}, cold: [], long: [], native: null, wasmCpp: null, peak: null };
const names = {};
for (const id of only) names[id] = (await importPeer(id)).name;

// ---- machine ------------------------------------------------------------------------------------------------------
const cpuModel = (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) ?? [])[1] ?? os.cpus()[0]?.model;
results.machine = {
  nproc: os.availableParallelism?.() ?? os.cpus().length,
  cpu: cpuModel,
  node: process.version,
  v8: process.versions.v8,
  loadAverageAtStart: os.loadavg().map((x) => +x.toFixed(2)),
  busy,
};
const started = performance.now();
out(`# attnscope benchmark — ${new Date().toISOString()}${smoke ? ' (smoke mode: tiny sizes, not a measurement)' : ''}`);
out();
out(`nproc ${results.machine.nproc} · CPU ${cpuModel} · Node ${process.version} (V8 ${process.versions.v8}) · ` +
    `load average at start ${results.machine.loadAverageAtStart.join(' ')}` +
    (busy ? ` · ${busy} busy neighbour thread(s) spinning beside the libraries (--busy)` : ''));

// ---- the package must be built; the run uses a copy of it ----------------------------------------------------------
let distPath = null; // the copy's URL path under the repository root, for the browser page
if (only.includes('attnscope')) {
  const dist = path.join(ROOT, 'dist');
  if (!fs.existsSync(path.join(dist, 'index.js'))) {
    progress('dist/index.js is missing: running `npm run build` first');
    const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) throw new Error('`npm run build` failed; the benchmark needs the built package in dist/');
  }
  // A rebuild of dist/ while the benchmark runs (minutes) would mix two versions: this process, the child processes
  // and the browser page all import one copy, this run's own (two runs at once each keep theirs).
  const snapshot = path.join(ROOT, 'build', 'bench', 'dist-snapshot', String(process.pid));
  results.machine.distBuilt = fs.statSync(path.join(dist, 'attnscope.wasm')).mtime.toISOString();
  fs.rmSync(snapshot, { recursive: true, force: true });
  fs.cpSync(dist, snapshot, { recursive: true });
  process.on('exit', () => fs.rmSync(snapshot, { recursive: true, force: true }));
  process.env.ATTNSCOPE_BENCH_DIST = pathToFileURL(path.join(snapshot, 'index.js')).href;
  distPath = '/' + path.relative(ROOT, path.join(snapshot, 'index.js')).split(path.sep).join('/');
  const git = (...a) => spawnSync('git', a, { cwd: ROOT, encoding: 'utf8' }).stdout?.trim();
  results.machine.commit = git('rev-parse', '--short', 'HEAD');
  results.machine.dirty = Boolean(git('status', '--porcelain', '--untracked-files=no'));
  results.machine.distWasmBytes = fs.statSync(path.join(snapshot, 'attnscope.wasm')).size;
  out(`attnscope: commit ${results.machine.commit}${results.machine.dirty ? ' + uncommitted changes' : ''}, ` +
      `dist/ built ${results.machine.distBuilt}`);
}
out();

// ---- forward pass with per-head weights, one process (or page) per thread count ------------------------------------
function runForwardChild(threads) {
  const r = spawnSync(process.execPath, [
    ...relaxedFlags,
    path.join(ROOT, 'bench', 'forward.mjs'),
    `--threads=${threads}`,
    `--busy=${busy}`,
    `--only=${only.join(',')}`,
    `--configs=${configs.map((c) => c.join('x')).join(',')}`,
    ...(options['all-variants'] ? ['--all-variants'] : []),
    ...(smoke ? ['--quick'] : []),
  ], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 1024 * 1024 });
  const line = r.stdout?.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) throw new Error(`bench/forward.mjs --threads=${threads} failed (exit ${r.status ?? r.signal})`);
  return JSON.parse(line);
}

let browserInfo = null;
const forwardRuns = [];
if (browser) {
  const { runBrowserForward } = await import('./browser.mjs');
  const r = await runBrowserForward({ ids: only, configs, threadCounts, distPath, busy, allVariants: options['all-variants'], quick: smoke, simd: options.simd, progress });
  browserInfo = r.browser;
  forwardRuns.push(...r.runs);
} else {
  for (const threads of threadCounts) forwardRuns.push(runForwardChild(threads));
}
for (const run of forwardRuns) {
  results.forwardPeers[run.threads] = run.peers;
  for (const row of run.rows) results.forward.push({ threads: run.threads, ...row });
}
results.machine.environment = (browser ? `headless Chromium ${browserInfo.version} (crossOriginIsolated ${browserInfo.crossOriginIsolated})` : `Node ${process.version}`) +
  `, attnscope init({ simd: '${options.simd}' })`;

const variantNote = (e) => {
  if (!e.variant) return '';
  const others = (e.others ?? []).map((o) => `${o.variant} ${o.error ? 'failed' : fmtMs(o.ms)}`).join(', ');
  return others ? `${e.variant} (${others})` : e.variant;
};
const cellStatus = (e) => (e.unavailable ? 'n/a' : e.skipped ? 'skipped' : e.error ? `failed: ${e.error}` : null);

out(`## Forward pass with every head's weights, ${results.machine.environment}`);
out();
out('Each library is warmed up (3 untimed calls, or 1 when a call takes over 100 ms), then they take turns in ~50 ms');
out('slices until each has ≥ 7 timed runs and ≥ 0.4 s (≥ 5 runs when a call takes over 1 s; at most 5000 runs, and 8 s');
out('once it has 5). Median of the runs; "best" is the fastest. GFLOP/s counts 8·L·E² + 4·L²·E. "÷ attnscope" is the');
out('library\'s median over attnscope\'s at the same thread count: above 1 means attnscope is faster. The Δ columns are');
out('the largest absolute differences from attnscope\'s output and weights. "variant" is the path that was fastest, with');
out('the other paths\' medians in brackets; the table reports the library by its fastest.');
out();
for (const threads of threadCounts) {
  const rows = [['config (seq, embed, heads)', 'library', 'median ms', 'best ms', 'runs', 'GFLOP/s', '÷ attnscope', 'max abs Δ output', 'max abs Δ weights', 'variant']];
  for (const e of results.forward.filter((r) => r.threads === threads)) {
    const status = cellStatus(e);
    rows.push([
      `(${e.L}, ${e.E}, ${e.H})`,
      names[e.id],
      status ?? fmtMs(e.ms),
      status ? '' : fmtMs(e.bestMs),
      e.reps ?? '',
      e.gflops ? e.gflops.toFixed(2) : '',
      e.ratio ? `${e.ratio.toFixed(2)}×` : '',
      e.id === 'attnscope' ? (status ? '' : '(reference)') : fmtDiff(e.diffOutput),
      e.id === 'attnscope' ? (status ? '' : '(reference)') : fmtDiff(e.diffWeights),
      variantNote(e),
    ]);
  }
  out(`### ${threads} thread${threads > 1 ? 's' : ''}`);
  out();
  out(formatTable(rows, [0, 1, 9]));
  out();
  // Reasons once per library, not on every row.
  const notes = new Map();
  for (const e of results.forward.filter((r) => r.threads === threads && (r.unavailable || r.skipped)))
    notes.set(`${e.id} ${e.unavailable ? 'n/a' : 'skipped'}`, `${names[e.id]} ${e.unavailable ? `n/a: ${e.unavailable}` : `skipped ${e.skipped}`}`);
  for (const note of notes.values()) out(`- ${note}.`);
  if (notes.size) out();
}

// ---- child processes ---------------------------------------------------------------------------------------------
function runChild(script, childArgs, timeoutMs) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', script), ...childArgs], {
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

if (!options['no-cold']) {
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
  out('## Cold start: import → first forward result at (16, 64, 4), one thread, fresh process each');
  out();
  out('".wasm loaded" is the size of the module the library actually compiled, recorded by bench/wasm-probe.mjs.');
  out();
  out(formatTable(rows));
  out();
}

if (!options['no-long']) {
  const [L, E, H] = LONG_CONFIG;
  const runs = Number(options['long-runs'] ?? 1);
  const rows = [['library', 'no-weights path', `median ms (${runs} warm run${runs > 1 ? 's' : ''})`, 'GFLOP/s', '÷ attnscope', 'max abs Δ first row', 'peak WASM memory', 'peak RSS', 'result']];
  const paths = {
    attnscope: 'needWeights: false (key tiles, online softmax)',
    ort: 'com.microsoft.MultiHeadAttention over query blocks',
    tfjs: 'per head over query blocks',
  };
  for (const id of only.filter((i) => i !== 'plain')) {
    progress(`long sequence (${L}, ${E}, ${H}) without weights: ${names[id]} (timeout ${LONG_TIMEOUT_MS / 1000} s)`);
    const r = { id, ...runChild('long-seq.mjs', [id, String(L), String(E), String(H), '--threads=1', `--runs=${runs}`], LONG_TIMEOUT_MS) };
    // onnxruntime's messages carry its build machine's source path; the file and the reason are what matter.
    if (r.error) r.error = r.error.replace(/\/\S*\/onnxruntime\//, 'onnxruntime/').replace(/static void \S+::/, '');
    results.long.push(r);
  }
  const ref = results.long.find((r) => r.id === 'attnscope' && r.ms);
  for (const r of results.long) {
    if (ref && r !== ref && r.firstRow) r.diffFirstRow = maxAbsDiff(r.firstRow, ref.firstRow);
    if (ref && r.ms) r.ratio = r.ms / ref.ms;
  }
  for (const r of results.long) {
    rows.push([
      names[r.id],
      paths[r.id] ?? '',
      r.ms ? fmtMs(r.ms) : '—',
      r.ms ? (flops(L, E) / (r.ms * 1e6)).toFixed(2) : '',
      r.ratio ? `${r.ratio.toFixed(2)}×` : '',
      r === ref ? '(reference)' : fmtDiff(r.diffFirstRow),
      fmtBytes(r.wasmBytes),
      fmtBytes(r.maxRssBytes),
      r.error ? `failed: ${r.error}` : r.finite ? 'ok (finite output)' : 'non-finite output',
    ]);
    delete r.firstRow;
  }
  out(`## Long sequence (${L}, ${E}, ${H}) without weights, one thread, fresh process each`);
  out();
  out('Each library\'s best no-weights path. onnxruntime-web\'s fused attention operators (opset-23 `Attention`,');
  out('`com.microsoft.MultiHeadAttention`) hold every head\'s scores for the whole call and stop with an integer overflow');
  out('from 8192 tokens up, so its path here runs the fused operator over blocks of queries; tfjs has no fused attention,');
  out('so its path runs each head over blocks of queries; both keep a block\'s scores under 512 MiB. Warm: one untimed');
  out('run at 2048 tokens first. Peak WASM memory is the module\'s memory after the run (it never shrinks). Plain JS is');
  out('skipped (about 12 minutes at its 1.2 GFLOP/s).');
  out();
  out(formatTable(rows, [0, 1, 8]));
  out();
}

if (!options['no-native']) nativeSection({ configs, results, out, progress });

// ---- the issue's targets ---------------------------------------------------------------------------------------------
{
  const lines = targetLines({ results, configs, threadCounts, only, names, busy });
  if (lines.length && !smoke) {
    out('## Targets');
    out();
    for (const l of lines) out(l);
    out();
  }
}

// ---- the paste-ready summary: one row per configuration and thread count -------------------------------------------
{
  const cell = (e) => {
    if (!e) return '—';
    if (e.unavailable) return 'n/a';
    if (e.skipped) return 'skipped';
    if (e.error) return 'failed';
    const t = e.ms >= 1000 ? `${(e.ms / 1000).toFixed(2)} s` : `${fmtMs(e.ms)} ms`;
    return e.id === 'attnscope' ? `**${t}**` : e.ratio ? `${t} (${e.ratio.toFixed(2)}×)` : t;
  };
  const rows = [['(seq, embed, heads)', 'threads', ...only.map((id) => names[id])]];
  for (const [L, E, H] of configs)
    for (const threads of threadCounts)
      rows.push([`(${L}, ${E}, ${H})`, String(threads), ...only.map((id) => cell(results.forward.find((r) =>
        r.threads === threads && r.id === id && r.L === L && r.E === E && r.H === H)))]);
  const ort = results.forward.filter((r) => r.id === 'ort' && r.variant);
  const graphs = [...new Set(ort.map((r) => r.variant))];
  out(`## Summary (${results.machine.environment}, ${new Date().toISOString().slice(0, 10)}; paste into bench/README.md)`);
  out();
  out(formatTable(rows, [0]));
  out();
  out('Median times; in brackets the time relative to attnscope at the same thread count (above 1: attnscope is faster).');
  if (graphs.length) out(`onnxruntime-web: the faster of its graphs per row (${graphs.join(', ')} won at least once; see the tables above).`);
  const outWins = results.forward.filter((r) => r.id === 'attnscope' && r.variant === 'out');
  if (outWins.length)
    out(`attnscope: the faster of fresh result arrays and caller-owned \`out\` arrays per row (out won ${outWins.length} of ` +
      `${results.forward.filter((r) => r.id === 'attnscope' && r.ms).length}; neither peer can write into the caller's arrays).`);
  for (const threads of threadCounts)
    for (const [id, p] of Object.entries(results.forwardPeers[threads] ?? {}))
      if (p.unavailable) out(`n/a at ${threads} thread${threads > 1 ? 's' : ''}: ${names[id]}, ${p.unavailable}.`);
  out();
}

results.machine.loadAverageAtEnd = os.loadavg().map((x) => +x.toFixed(2));
results.machine.seconds = Math.round((performance.now() - started) / 1000);
out(`load average at end ${results.machine.loadAverageAtEnd.join(' ')} · ${results.machine.seconds} s`);
const resultsFile = path.resolve(ROOT, options.out ?? path.join('build', 'bench', browser ? 'results-browser.json' : 'results.json'));
fs.mkdirSync(path.dirname(resultsFile), { recursive: true });
fs.writeFileSync(resultsFile, JSON.stringify(results, null, 2));
progress(`results written to ${path.relative(ROOT, resultsFile)}`);
