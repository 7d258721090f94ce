// `npm run bench:bf16` (issue #35): 16-bit weights kept in 16 bits, measured. The same random network as an F32 and
// as a BF16 safetensors file (tools/references/make_bf16_models.py: GPT-2 small's and SmolLM-135M's shapes, values
// rounded to BF16 so both files hold the same numbers), each load in its own process (Node) or page (Chromium), the
// two alternating round by round: WebAssembly memory after the load against 0.55 × the F32 parameter bytes plus the
// plan's workspace, forward time BF16 ÷ F32, and whether both gave the same bits. `llama-3.2-1b` (BF16 only, 2.47 GB,
// streamed into the load) checks that a Llama-3.2-1B-shaped checkpoint opens and runs. Markdown on stdout, progress
// on stderr, JSON in build/bench/bf16.json.
//
//   /usr/bin/python3 tools/references/make_bf16_models.py   # once: build/bench-bf16/ (~3.4 GB)
//   npm run bench:bf16 [-- --env=node,chromium --models=gpt2-small,smollm-135m,llama-3.2-1b --lengths=128,512
//                          --threads=1 --simd=baseline --rounds=3 --runs=2 --big-lengths=128 --big-runs=1 --dist=DIR]
//
// --dist runs another build's package folder (dist/ by default), to compare builds on the same files.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ROOT } from './node-paths.mjs';
import { printBf16Tables } from './bf16-report.mjs';

const { values: o } = parseArgs({
  options: {
    env: { type: 'string', default: 'node,chromium' },
    models: { type: 'string', default: 'gpt2-small,smollm-135m,llama-3.2-1b' },
    lengths: { type: 'string', default: '128,512' },
    threads: { type: 'string', default: '1' },
    simd: { type: 'string', default: 'baseline' },
    rounds: { type: 'string', default: '3' },
    runs: { type: 'string', default: '2' },
    // The 1B checkpoint: one process or page per environment, its own (shorter) lengths.
    'big-lengths': { type: 'string', default: '128' },
    'big-runs': { type: 'string', default: '1' },
    out: { type: 'string' },
    dist: { type: 'string' },
    // child mode: one checkpoint, one process
    child: { type: 'boolean', default: false },
    dir: { type: 'string' },
    stream: { type: 'boolean', default: false },
  },
});
const list = (s) => s.split(',').filter(Boolean);
const numbers = (s) => list(s).map(Number);
const progress = (msg) => process.stderr.write(`${msg}\n`);
const BIG = 'llama-3.2-1b';

if (o.child) {
  const { runCheckpoint } = await import('./bf16-core.mjs');
  const config = new Uint8Array(fs.readFileSync(path.join(o.dir, 'config.json')));
  const file = path.join(o.dir, 'model.safetensors');
  // A Blob over the file is read in chunks by loadModel (the 1B file is not held in JS); otherwise the bytes are in
  // memory before the load is timed, as in bench:models.
  const safetensors = o.stream ? await fs.openAsBlob(file) : new Uint8Array(fs.readFileSync(file));
  const result = await runCheckpoint({ files: { config, safetensors }, lengths: numbers(o.lengths), runs: Number(o.runs),
    threads: Number(o.threads), simd: o.simd, distUrl: process.env.ATTNSCOPE_BENCH_DIST, progress });
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  process.exit(0); // the threaded builds' workers would keep the process alive
}

const modelsDir = path.join(ROOT, 'build', 'bench-bf16');
const models = list(o.models);
const dtypesOf = (model) => (model === BIG ? ['bf16'] : ['f32', 'bf16']);
for (const m of models)
  for (const dtype of dtypesOf(m))
    if (!fs.existsSync(path.join(modelsDir, m, dtype, 'model.safetensors')))
      throw new Error(`${path.join(modelsDir, m, dtype)}: missing; run /usr/bin/python3 tools/references/make_bf16_models.py --only ${m}`);
const dist = path.resolve(o.dist ?? path.join(ROOT, 'dist'));
if (!fs.existsSync(path.join(dist, 'index.js'))) throw new Error(`${dist}: no index.js; run npm run build`);
// A snapshot of dist/: a rebuild during the run cannot mix versions.
const snapshot = path.join(ROOT, 'build', 'bench', 'dist-snapshot', `bf16-${process.pid}`);
fs.rmSync(snapshot, { recursive: true, force: true });
fs.cpSync(dist, snapshot, { recursive: true });
process.on('exit', () => fs.rmSync(snapshot, { recursive: true, force: true }));
const distFile = pathToFileURL(path.join(snapshot, 'index.js')).href;
const distPath = '/' + path.relative(ROOT, path.join(snapshot, 'index.js')).split(path.sep).join('/');

const loadAvg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const started = Date.now();
const results = { started: new Date().toISOString(), options: o, runs: [], machine: { loadAtStart: loadAvg(), node: process.version } };

function nodeRun({ model, dtype, threads, simd, lengths, runs }) {
  const args = [fileURLToPath(import.meta.url), '--child', `--dir=${path.join(modelsDir, model, dtype)}`, `--threads=${threads}`,
    `--simd=${simd}`, `--lengths=${lengths.join(',')}`, `--runs=${runs}`, ...(model === BIG ? ['--stream'] : [])];
  const flags = simd === 'relaxed' && Number(process.versions.node.split('.')[0]) < 22 ? ['--experimental-wasm-relaxed-simd'] : [];
  const r = spawnSync(process.execPath, [...flags, '--max-old-space-size=8192', ...args], {
    env: { ...process.env, ATTNSCOPE_BENCH_DIST: distFile }, encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) return { failed: `the child failed (status ${r.status}${r.signal ? `, ${r.signal}` : ''})` };
  return JSON.parse(line.slice(7));
}

async function openBrowser() {
  const { chromium } = await import('playwright-core');
  const { ARGS, CHROMIUM, benchPage, startServer } = await import('./browser.mjs');
  const { server, url } = await startServer(['/bench/', '/build/bench/dist-snapshot/', '/build/bench-bf16/']);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  return {
    version: browser.version(),
    async run({ model, dtype, ...options }) {
      const { context, page } = await benchPage(browser, progress);
      try {
        await page.goto(`${url}/bench/browser/bf16.html`);
        await page.waitForSelector('body[data-ready]', { state: 'attached', timeout: 60_000 });
        return await page.evaluate((opts) => window.runCheckpoint(opts),
          { ...options, stream: model === BIG, distUrl: distPath, base: `/build/bench-bf16/${model}/${dtype}/` });
      } catch (e) {
        return { failed: e.message.split('\n')[0].slice(0, 500) };
      } finally {
        await context.close();
      }
    },
    async close() {
      await browser.close();
      await new Promise((ok) => server.close(ok));
    },
  };
}

const envs = list(o.env);
let browser = null;
if (envs.includes('chromium')) {
  browser = await openBrowser();
  results.machine.chromium = browser.version;
}
try {
  for (const env of envs) {
    for (const model of models) {
      const big = model === BIG;
      const lengths = numbers(big ? o['big-lengths'] : o.lengths), runs = Number(big ? o['big-runs'] : o.runs);
      for (const threads of numbers(o.threads)) {
        for (let round = 0; round < (big ? 1 : Number(o.rounds)); round++) {
          // F32 and BF16 in an order that reverses every round.
          const order = round % 2 === 0 ? dtypesOf(model) : [...dtypesOf(model)].reverse();
          for (const dtype of order) {
            progress(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${env} ${model} ${dtype} ${threads}t round ${round + 1} (load ${loadAvg()})`);
            const spec = { model, dtype, threads, simd: o.simd, lengths, runs };
            const r = env === 'node' ? nodeRun(spec) : await browser.run(spec);
            if (r.failed) progress(`${env} ${model} ${dtype}: ${r.failed}`);
            results.runs.push({ env, model, dtype, round, threads, lengths, load: loadAvg(), ...r });
          }
        }
      }
    }
  }
} finally {
  await browser?.close();
}
results.machine.loadAtEnd = loadAvg();
results.seconds = (Date.now() - started) / 1000;
const out = o.out ?? path.join(ROOT, 'build', 'bench', 'bf16.json');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify(results, null, 1));
printBf16Tables(results);
