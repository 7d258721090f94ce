// Builds the libFuzzer targets through CMake (the fuzz preset, build/fuzz: ATTNSCOPE_BUILD_FUZZER, clang-14, ASan + UBSan; see
// tests/fuzz/CMakeLists.txt) and runs one of them.
// Usage:
//   node scripts/fuzz.mjs [--seconds N]     fuzz for N seconds (default 60) on build/fuzz/corpus-<target>, a working
//                                           copy of the target's committed corpus that keeps what earlier runs found
//   node scripts/fuzz.mjs --replay          replay every target's committed corpus once, deterministically (what
//                                           `npm test` runs, through ctest)
//   node scripts/fuzz.mjs --merge           minimise what runs found into the committed corpus
//   node scripts/fuzz.mjs --run FILE...     run the target once on each file (to reproduce a finding)
//   node scripts/fuzz.mjs --build           only build
//   --target NAME                           which fuzzer (default attention_fuzzer; build/fuzz/fuzzers.tsv lists them;
//                                           the _fuzzer suffix may be left out). model_reader_fuzzer explores from
//                                           tests/fuzz/model_reader_corpus plus models/*.safetensors
//   --keep-going                            for long runs: libFuzzer's fork mode, which saves every finding and
//                                           carries on instead of stopping at the first
//   --ignore ID,ID                          skip checks already reported (ATTNSCOPE_FUZZ_IGNORE; see the harness)
// Exits non-zero on a finding (printing where libFuzzer saved the input) and ends with "fuzz: P passed, F failed".
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cmakeBuild, ctest, presetDir, root } from './lib.mjs';

const buildDir = path.join(root, presetDir('fuzz'));
const rel = (p) => path.relative(root, p) || '.';
// Set once the target is known (after the build wrote build/fuzz/fuzzers.tsv).
let binary, seeds, workCorpus, artifacts, logFile;

// node:util's parser with the flags above; --run takes every file that follows it, up to the next option.
function parseArguments(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv, allowPositionals: true, tokens: true,
      options: {
        seconds: { type: 'string', default: '60' }, target: { type: 'string', default: 'attention_fuzzer' }, ignore: { type: 'string', default: '' },
        merge: { type: 'boolean', default: false }, replay: { type: 'boolean', default: false }, build: { type: 'boolean', default: false },
        'keep-going': { type: 'boolean', default: false }, run: { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    usage(err.message);
  }
  const { values, tokens } = parsed;
  const run = [];
  let inRun = false;
  for (const token of tokens) {
    if (token.kind === 'option') inRun = token.name === 'run';
    else if (token.kind === 'positional' && inRun) run.push(token.value);
    else if (token.kind === 'positional') usage(`unknown argument '${token.value}'`);
  }
  if (values.run && !run.length) usage('--run needs at least one file');
  const seconds = Number(values.seconds);
  if (!Number.isInteger(seconds) || seconds < 1) usage('--seconds must be a positive integer');
  return { seconds, merge: values.merge, build: values.build, replay: values.replay, keepGoing: values['keep-going'], run, ignore: values.ignore, target: values.target };
}

function usage(message) {
  console.error(`fuzz: ${message}\nusage: node scripts/fuzz.mjs [--target NAME] [--seconds N] [--keep-going] [--replay] [--merge] [--run FILE...] [--build] [--ignore ID,ID]`);
  process.exit(2);
}

function finish(ok, detail) {
  console.log(`fuzz: ${ok ? 1 : 0} passed, ${ok ? 0 : 1} failed${detail ? ` (${detail})` : ''}`);
  process.exit(ok ? 0 : 1);
}

function filesUnder(dir, pattern) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && pattern.test(e.name))
    .map((e) => path.join(e.parentPath ?? e.path, e.name));
}

// CMake rebuilds what changed; returns the targets it knows (name → binary, corpus) or null when the build failed.
function build() {
  if (cmakeBuild('fuzz') !== 0) return null;
  const lines = readFileSync(path.join(buildDir, 'fuzzers.tsv'), 'utf8').split('\n').filter(Boolean);
  return Object.fromEntries(lines.map((line) => {
    const [name, file, corpus] = line.split('\t');
    return [name, { binary: file, corpus }];
  }));
}

// Runs the binary, teeing its output to build/fuzz/last-run.log and echoing only findings and progress.
function runFuzzer(args, env, { echoProgressEvery = 0 } = {}) {
  return new Promise((resolve) => {
    const log = createWriteStream(logFile);
    const child = spawn(binary, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const state = { lastStatus: '', lastCall: '', lastCase: '', artifacts: [], tail: [], echoing: false, lastEcho: Date.now() };
    let pending = '';
    const onData = (chunk) => {
      log.write(chunk);
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) {
        if (/^#\d+/.test(line)) {
          state.lastStatus = line;
          state.echoing = false; // fork mode carries on after a finding: stop echoing at the next status line
        }
        if (/^calling /.test(line)) state.lastCall = line;
        if (/^\s+case: /.test(line) && !state.echoing) state.lastCase = line;
        const written = line.match(/Test unit written to (\S+)/);
        if (written) state.artifacts.push(written[1]);
        // From the first error report on, show everything: it is the finding.
        if (/^(==\d+==ERROR|FINDING|.*runtime error:|==\d+== ERROR: libFuzzer)/.test(line)) state.echoing = true;
        if (/^model_reader: /.test(line)) console.log(line);
        if (state.echoing) console.log(line);
        else if (echoProgressEvery && /^#\d+(\s+(pulse|NEW|REDUCE)|: cov)/.test(line) && Date.now() - state.lastEcho > echoProgressEvery) {
          console.log(line);
          state.lastEcho = Date.now();
        }
        state.tail.push(line);
        if (state.tail.length > 40) state.tail.shift();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (code, signal) => {
      if (pending) onData('\n');
      log.end();
      resolve({ code, signal, ...state });
    });
  });
}

// What a saved input does when replayed: its FINDING line or sanitizer error, for the summary.
function classify(file) {
  const replay = spawnSync(binary, ['-runs=1', file], { cwd: root, env: process.env, encoding: 'utf8', maxBuffer: 64 << 20 });
  const text = `${replay.stdout}\n${replay.stderr}`;
  const what = text.match(/FINDING \[[^\]]+\]: .*|ERROR: AddressSanitizer: \S+|runtime error: .*|ERROR: libFuzzer: [\w-]+/)?.[0];
  const where = text.match(/^\s+#\d+ 0x[0-9a-f]+ in (?!__|fuzzer::)(\S+) (\S+)/m);
  return replay.status === 0 ? 'passes when replayed alone' : `${what ?? `exit ${replay.status}`}${where && !/^FINDING/.test(what ?? '') ? ` at ${where[1]} ${rel(where[2])}` : ''}`;
}

function parseStatus(line) {
  const number = (re) => {
    const m = line.match(re);
    return m ? Number(m[1]) : null;
  };
  return { execs: number(/^#(\d+)/), cov: number(/cov: (\d+)/), ft: number(/ft: (\d+)/), corpus: line.match(/corp: (\S+)/)?.[1] };
}

const args = parseArguments(process.argv.slice(2));
const env = { ...process.env };
if (args.ignore) env.ATTNSCOPE_FUZZ_IGNORE = args.ignore;

const targets = build();
if (!targets) finish(false, 'build failed');
if (args.build) process.exit(0);
if (args.replay) finish(ctest('fuzz') === 0, `replayed the corpora of ${Object.keys(targets).join(', ')}`);
if (!args.target.endsWith('_fuzzer')) args.target += '_fuzzer';
const target = targets[args.target];
if (!target) usage(`unknown --target '${args.target}' (have ${Object.keys(targets).join(', ')})`);
binary = target.binary;
seeds = target.corpus || path.join(root, 'tests', 'fuzz', `corpus-${args.target}`);
workCorpus = path.join(buildDir, args.target === 'attention_fuzzer' ? 'corpus' : `corpus-${args.target}`);
artifacts = path.join(buildDir, 'artifacts', args.target) + path.sep;
logFile = path.join(buildDir, `last-run-${args.target}.log`);

if (args.run.length) {
  // Reproduce: libFuzzer runs each file once and reports the first that fails.
  const result = await runFuzzer(['-runs=1', ...args.run.map((f) => path.resolve(f))], { ...env, ATTNSCOPE_FUZZ_VERBOSE: '1' });
  if (!result.echoing && result.code !== 0) console.log(result.tail.join('\n'));
  if (result.code !== 0 && result.lastCall) console.log(`fuzz: the failing call was the last one announced:\n${result.lastCall}\n${result.lastCase}`);
  finish(result.code === 0, `${args.run.length} input${args.run.length > 1 ? 's' : ''} replayed`);
}

mkdirSync(workCorpus, { recursive: true });
mkdirSync(artifacts, { recursive: true });
// The model reader also starts from the shipped models (not copied into git a second time).
const extraSeeds = args.target === 'model_reader_fuzzer' ? filesUnder(path.join(root, 'models'), /\.safetensors$/) : [];
for (const file of [...filesUnder(seeds, /.*/), ...extraSeeds]) copyFileSync(file, path.join(workCorpus, path.basename(file)));

if (args.merge) {
  // -merge=1 keeps the seeds and adds the fewest working-corpus inputs that reach new coverage; -use_counters=0
  // counts only new edges, not new hit counts of known ones, which keeps the committed corpus a few KiB.
  mkdirSync(seeds, { recursive: true });
  const before = filesUnder(seeds, /.*/).length;
  const result = await runFuzzer(['-merge=1', '-use_counters=0', `-artifact_prefix=${artifacts}`, seeds, workCorpus], env);
  const after = filesUnder(seeds, /.*/).length;
  const bytes = filesUnder(seeds, /.*/).reduce((sum, f) => sum + statSync(f).size, 0);
  console.log(`fuzz: merged ${after - before} new input(s) into ${rel(seeds)} (${after} files, ${(bytes / 1024).toFixed(0)} KiB)`);
  finish(result.code === 0, 'merge');
}

console.log(`fuzz: ${args.seconds} s on ${rel(workCorpus)} (${filesUnder(workCorpus, /.*/).length} inputs); log in ${rel(logFile)}`);
const started = Date.now();
const artifactsBefore = new Set(filesUnder(artifacts, /.*/));
const result = await runFuzzer([
  `-max_total_time=${args.seconds}`, '-timeout=10', '-rss_limit_mb=2048',
  `-artifact_prefix=${artifacts}`, '-print_final_stats=1',
  ...(args.keepGoing ? ['-fork=1', '-ignore_crashes=1', '-ignore_timeouts=1', '-ignore_ooms=1'] : []),
  workCorpus,
], env, { echoProgressEvery: args.seconds > 120 ? 60_000 : 0 });
if (args.keepGoing) {
  // Fork mode exits 0 after ignored crashes: the findings are the new files in the artifacts folder.
  const found = filesUnder(artifacts, /.*/).filter((f) => !artifactsBefore.has(f));
  result.artifacts = found;
  if (found.length && result.code === 0) result.code = 1;
}
const seconds = Math.round((Date.now() - started) / 1000);
const status = parseStatus(result.lastStatus);
const stats = result.tail.join('\n');
const execs = Number(stats.match(/stat::number_of_executed_units: (\d+)/)?.[1] ?? status.execs ?? 0);
console.log(`fuzz: ${execs} executions in ${seconds} s (${Math.round(execs / Math.max(seconds, 1))}/s), coverage cov: ${status.cov ?? '?'} ft: ${status.ft ?? '?'}, corpus ${status.corpus ?? '?'}`);
if (result.code !== 0) {
  if (!result.echoing) console.log(result.tail.join('\n'));
  for (const file of result.artifacts) {
    console.log(`fuzz: the failing input was saved to ${rel(path.resolve(root, file))}; replay it with: node scripts/fuzz.mjs --run ${rel(path.resolve(root, file))}`);
    console.log(`      ${classify(path.resolve(root, file))}`);
  }
  if (!result.artifacts.length) console.log(`fuzz: libFuzzer exited with ${result.signal ?? result.code}; see ${rel(logFile)}`);
}
finish(result.code === 0, `${execs} executions`);
