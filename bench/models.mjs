// `npm run bench:models` (issue #21): the GPT-2-small- and SmolLM-135M-shaped networks of tools/references/make_bench_models.py,
// attnscope (loadModel of the safetensors) against onnxruntime-web (the same weights as ONNX), forward passes that
// return logits and every layer's attention, at 1 and 2 threads, in Node and in headless Chromium. Each library runs
// in its own process (Node) or page (Chromium) per run, the libraries alternating run by run: an idle thread pool
// of one must not slow the other. Markdown tables on stdout, progress on stderr, JSON in build/bench/models.json.
//
//   /usr/bin/python3 tools/references/make_bench_models.py   # once: build/bench-models/ (~2 GB)
//   npm run bench:models [-- --env=node,chromium --models=gpt2-small,smollm-135m --lengths=128,512 --threads=1,2
//                            --simd=baseline,relaxed --rounds=3 --runs=2 --no-generate --no-check --small]
//
// --simd lists attnscope's builds (init({ simd })), each a run of its own beside onnxruntime-web's in every round;
// under Node 20 the relaxed one runs with --experimental-wasm-relaxed-simd.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ROOT } from './node-paths.mjs';
import { agreement, printTables } from './models-report.mjs';

const { values: o } = parseArgs({
  options: {
    env: { type: 'string', default: 'node,chromium' },
    models: { type: 'string', default: 'gpt2-small,smollm-135m' },
    lengths: { type: 'string' },
    threads: { type: 'string', default: '1,2' },
    simd: { type: 'string', default: 'baseline,relaxed' },
    rounds: { type: 'string', default: '3' },
    runs: { type: 'string', default: '2' },
    'no-generate': { type: 'boolean', default: false },
    'no-check': { type: 'boolean', default: false },
    small: { type: 'boolean', default: false },
    out: { type: 'string' },
    // child mode: one library, one process
    child: { type: 'boolean', default: false },
    lib: { type: 'string' },
    model: { type: 'string' },
    dump: { type: 'string' },
    generate: { type: 'boolean', default: false },
  },
});
const list = (s) => s.split(',').filter(Boolean);
const lengths = (o.lengths ? list(o.lengths) : o.small ? ['16', '40'] : ['128', '512']).map(Number);
const GENERATE = o.small ? { prompt: 8, tokens: 8 } : { prompt: 128, tokens: 64 };
const progress = (msg) => process.stderr.write(`${msg}\n`);
const simds = list(o.simd);
for (const s of simds) if (!['baseline', 'relaxed'].includes(s)) throw new Error(`--simd: expected baseline and/or relaxed, got '${s}'`);
// A dump's name: attnscope's carries its build (models-report.mjs, agreement).
const dumpName = (lib, simd) => (lib === 'attnscope' ? `attnscope-${simd}` : lib);

function readModel(dir) {
  const read = (f) => new Uint8Array(fs.readFileSync(path.join(dir, f)));
  const config = read('config.json');
  const json = JSON.parse(new TextDecoder().decode(config));
  return { files: { config, safetensors: read('model.safetensors'), onnx: read('model.onnx') }, vocab: json.vocab_size };
}

if (o.child) {
  const { runLibrary } = await import('./models-core.mjs');
  const { files, vocab } = readModel(o.model);
  // Only the bytes this library reads stay referenced, so neither process holds the other's file.
  if (o.lib === 'attnscope') delete files.onnx;
  else delete files.safetensors;
  const keep = o.dump ? (T, out) => {
    fs.mkdirSync(o.dump, { recursive: true });
    for (const key of ['logits', 'attention'])
      fs.writeFileSync(path.join(o.dump, `${dumpName(o.lib, o.simd)}-${T}-${key}.f32`), new Uint8Array(out[key].buffer, out[key].byteOffset, out[key].byteLength));
  } : undefined;
  const result = await runLibrary({ lib: o.lib, threads: Number(o.threads), simd: o.simd, files, lengths, vocab, runs: Number(o.runs),
    generate: o.generate ? GENERATE : null, distUrl: process.env.ATTNSCOPE_BENCH_DIST, keep, progress });
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  process.exit(0); // the threaded builds' workers would keep the process alive
}

// The orchestrator: a snapshot of dist/ (a rebuild during the run cannot mix versions), then the runs.
const modelsDir = path.join(ROOT, 'build', o.small ? 'bench-models-small' : 'bench-models');
const models = list(o.models);
for (const m of models)
  if (!fs.existsSync(path.join(modelsDir, m, 'model.onnx')))
    throw new Error(`${path.join(modelsDir, m)}: missing; run /usr/bin/python3 tools/references/make_bench_models.py${o.small ? ' --small' : ''}`);
if (!fs.existsSync(path.join(ROOT, 'dist', 'index.js'))) throw new Error('dist/ missing: run npm run build');
const snapshot = path.join(ROOT, 'build', 'bench', 'dist-snapshot', `models-${process.pid}`);
fs.rmSync(snapshot, { recursive: true, force: true });
fs.cpSync(path.join(ROOT, 'dist'), snapshot, { recursive: true });
process.on('exit', () => fs.rmSync(snapshot, { recursive: true, force: true }));
const distFile = pathToFileURL(path.join(snapshot, 'index.js')).href;
const distPath = '/' + path.relative(ROOT, path.join(snapshot, 'index.js')).split(path.sep).join('/');
const dumps = path.join(ROOT, 'build', 'bench', 'models-out');

const started = Date.now();
const configs = Object.fromEntries(models.map((m) => [m, JSON.parse(fs.readFileSync(path.join(modelsDir, m, 'config.json'), 'utf8'))]));
const results = { started: new Date().toISOString(), lengths, generate: GENERATE, configs, runs: [], agreement: {}, machine: {} };
const loadAvg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
results.machine.loadAtStart = loadAvg();

function nodeRun({ lib, model, threads, simd, dump, generate }) {
  const args = [fileURLToPath(import.meta.url), '--child', `--lib=${lib}`, `--model=${path.join(modelsDir, model)}`,
    `--threads=${threads}`, `--simd=${simd}`, `--lengths=${lengths.join(',')}`, `--runs=${o.runs}`];
  if (o.small) args.push('--small');
  if (dump) args.push(`--dump=${dump}`);
  if (generate) args.push('--generate');
  const flags = lib === 'attnscope' && simd === 'relaxed' && Number(process.versions.node.split('.')[0]) < 22 ? ['--experimental-wasm-relaxed-simd'] : [];
  const r = spawnSync(process.execPath, [...flags, '--max-old-space-size=8192', ...args], {
    env: { ...process.env, ATTNSCOPE_BENCH_DIST: distFile }, encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`${lib} ${model} ${threads}t: the child failed (status ${r.status})`);
  return JSON.parse(line.slice(7));
}

const envs = list(o.env);
let browser = null;
if (envs.includes('chromium')) {
  const { openBrowser } = await import('./models-browser.mjs');
  browser = await openBrowser({ distPath, modelsDir, progress });
  results.machine.chromium = browser.version;
}
try {
  for (const env of envs) {
    for (const model of models) {
      // Every round runs every thread count, and in each every attnscope build and onnxruntime-web, in an order that
      // reverses every round: a library's 1- and 2-thread runs alternate too, so their ratio sees the same load.
      const entries = list(o.threads).map(Number).flatMap((threads) =>
        [...simds.map((simd) => ['attnscope', simd]), ['onnxruntime-web', simds[0]]].map(([lib, simd]) => ({ lib, simd, threads })));
      for (let round = 0; round < Number(o.rounds); round++) {
        const order = round % 2 === 0 ? entries : [...entries].reverse();
        for (const { lib, simd, threads } of order) {
          const first = round === 0;
          const spec = { lib, model, threads, simd, generate: first && lib === 'attnscope' && !o['no-generate'] };
          progress(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${env} ${model} ${lib}${lib === 'attnscope' ? ` (${simd})` : ''} ${threads}t round ${round + 1}`);
          let r;
          if (env === 'node') {
            const dump = first && !o['no-check'] && threads === 1 ? path.join(dumps, model) : undefined;
            r = nodeRun({ ...spec, dump });
          } else {
            r = await browser.run({ ...spec, lengths, runs: Number(o.runs), generate: spec.generate ? GENERATE : null });
          }
          results.runs.push({ env, model, round, ...r, simd: lib === 'attnscope' ? r.simd : undefined });
        }
      }
      if (env === 'node' && list(o.threads).map(Number).includes(1) && !o['no-check']) {
        results.agreement[model] = Object.fromEntries(simds.map((simd) => [simd, agreement(path.join(dumps, model), lengths, dumpName('attnscope', simd))]));
        fs.rmSync(path.join(dumps, model), { recursive: true, force: true });
      }
    }
  }
} finally {
  await browser?.close();
}
results.machine.loadAtEnd = loadAvg();
results.seconds = (Date.now() - started) / 1000;
const out = o.out ?? path.join(ROOT, 'build', 'bench', 'models.json');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify(results, null, 1));
printTables(results, configs);

