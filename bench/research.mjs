// `node bench/research.mjs --open=DIR [--tokens=128] [--runs=3] [--head=L,H] [--differ-at=P] [--compare-first] [--site=DIR] [--lens-only] [--no-scroll]`:
// the demo's research tools (issue #34) at scale, in headless Chromium, on the checkpoint in DIR (e.g. the random
// GPT-2-small-shaped one that `/usr/bin/python3 tools/references/make_bench_models.py --only gpt2-small --no-onnx
// --out build/bench-models` writes). The checkpoint has no tokenizer, so every input is token ids written out. Times,
// per run: the logit lens of --tokens ids (the Worker's logitLens call, and from the click to the table drawn), and
// one head patched at each position of two prompts of --tokens ids that differ in one token, the middle one or
// --differ-at's (the page's selected head, 0.0 once a model is open, or --head's; the Worker's sweep, and from the
// click to the positions map drawn; not with --lens-only): the patches before that token change nothing, and cost
// nothing since 2026-12-04, so --differ-at=0 is the most work; then the next head of its layer on the same prompts,
// which the Worker starts from the prompts' two passes kept since the first (--compare-first: the two prompts side by
// side before the first, whose passes the first then starts from); then sink mass for every head over maps of GPT-2
// small's shape. Needs
// build/site (`npm run build && npm run build:demo`), or another build of the page given by --site=DIR (the code
// before a change, built the same way).
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../scripts/chromium.mjs';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startServer } from '../scripts/serve.mjs';
import { quantile } from './demo-typing.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: options } = parseArgs({
  options: { open: { type: 'string' }, tokens: { type: 'string', default: '128' }, runs: { type: 'string', default: '3' }, site: { type: 'string' },
    'lens-only': { type: 'boolean', default: false }, head: { type: 'string' }, 'no-scroll': { type: 'boolean', default: false },
    'differ-at': { type: 'string' }, 'compare-first': { type: 'boolean', default: false } },
});
const SITE = options.site ? resolve(options.site) : join(ROOT, 'build/site');

/** `n` ids below `vocab` from a fixed linear congruential generator. */
function ids(n, vocab, seed) {
  let x = seed;
  return Array.from({ length: n }, () => { x = (x * 1103515245 + 12345) % 2 ** 31; return x % vocab; });
}

async function runOnce(browser, url, dir, T, run, lensOnly, noScroll) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  const page = await context.newPage();
  // The waits below watch the page's mutations, not a timer: a poll every few ms took the main thread about 170 ms
  // of a 2-second sweep on 2 cores, time the Worker's threads lost and a reader's page does not spend.
  await page.addInitScript(() => {
    window.__benchUntil = (test) => new Promise((ok) => {
      if (test()) return ok();
      const mo = new MutationObserver(() => { if (test()) { mo.disconnect(); ok(); } });
      mo.observe(document.body, { childList: true, subtree: true, attributes: true, characterData: true });
    });
  });
  await page.goto(`${url}#mode=open&lang=en`);
  await page.waitForSelector('body.ready', { timeout: 30_000 });
  await page.setInputFiles('#open-files', [join(dir, 'config.json'), join(dir, 'model.safetensors')]);
  await page.waitForSelector('#open-lens-btn', { state: 'visible', timeout: 600_000 });
  const vocab = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).vocab_size;
  const text = ids(T, vocab, 1 + run).join(' ');
  await page.fill('#open-text', text);
  // The maps of these T tokens drawn and every view done (the trace too), so that the click below finds the Worker
  // idle: the grid's first drawing is the sample text's, and the T tokens' forward pass would still be running.
  await page.waitForFunction((n) => document.querySelector('#open-model-text')?.textContent.startsWith(`${n} tokens;`) && window.__attnscopeDemo?.idle,
    T, { timeout: 600_000, polling: 100 });

  // The lens: from the click to the table of its cells in the page. The button is scrolled into view first, as a
  // reader's click finds it (a click on a button off screen leaves the lens an off-screen view, which the page draws
  // in its idle periods: --no-scroll times that, as the runs before 2026-12-04 did).
  const lens = await page.evaluate(async (scroll) => {
    if (scroll) {
      document.querySelector('#open-lens-btn').scrollIntoView({ block: 'start' });
      await new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 100)));
    }
    const start = performance.now();
    document.querySelector('#open-lens-btn').click();
    await window.__benchUntil(() => document.querySelector('#open-lens-out button[data-l]'));
    await new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 0)));
    return { wall: performance.now() - start, worker: Number(document.querySelector('#open-lens').dataset.ms) };
  }, !noScroll);

  if (lensOnly) {
    await context.close();
    return { lens };
  }
  // Two prompts that differ in one token (the middle one unless --differ-at), and the head patched at each position.
  const clean = ids(T, vocab, 100 + run), corrupted = clean.slice();
  corrupted[DIFFER_AT] = (corrupted[DIFFER_AT] + 1) % vocab;
  await page.fill('#open-patch-clean', clean.join(' '));
  await page.fill('#open-patch-corrupted', corrupted.join(' '));
  await page.fill('#open-patch-a', String(clean[1]));
  await page.fill('#open-patch-b', String(clean[2]));
  if (options.head) {  // the head patched: the layer and head pickers, as a reader picks them
    const [layer, head] = options.head.split(',');
    await page.selectOption('#open-layer', layer);
    await page.selectOption('#open-head', head);
  }
  // From the click to a new positions map drawn (a status whose time is not the last one's: the map of the head
  // before stays in the page until the page draws the running state).
  const clickPositions = () => page.evaluate(async () => {
    const before = document.querySelector('[data-positions-ms]')?.dataset.positionsMs;
    const start = performance.now();
    document.querySelector('#open-patchpos-btn').click();
    const drawn = () => document.querySelector('[data-positions-ms]')?.dataset.positionsMs !== before && document.querySelector('#open-positions-out td[data-value]');
    await window.__benchUntil(() => drawn());
    await new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 0)));
    const status = document.querySelector('[data-positions-ms]');
    const cells = document.querySelectorAll('#open-positions-out td[data-value]').length;
    return { wall: performance.now() - start, worker: Number(status?.dataset.positionsMs), cells };
  });
  // --compare-first: the two prompts side by side first (from the click to the moved-heads table drawn), as a reader
  // looks before patching; the Worker runs them as patching's two passes, so the click below runs no pass of its own.
  const compare = !options['compare-first'] ? null : await page.evaluate(async () => {
    const start = performance.now();
    document.querySelector('#open-compare-btn').click();
    await window.__benchUntil(() => document.querySelector('#open-compare-out td[data-value]'));
    await new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 0)));
    return { wall: performance.now() - start };
  });
  const positions = await clickPositions();
  // The next head of the same layer on the same prompts, as a reader goes on: the Worker kept the prompts' two passes.
  const heads = Number(await page.$eval('#open-head', (s) => s.options.length));
  await page.selectOption('#open-head', String((Number(await page.$eval('#open-head', (s) => s.value)) + 1) % heads));
  const nextHead = await clickPositions();
  await context.close();
  return { lens, compare, positions, nextHead };
}

/**
 * Sink mass for every head (the package's sinkMass, as Find heads ranks them: key 0 from query 1) over forward-shaped
 * maps of GPT-2 small at T tokens ([12, 12, T, T], causal rows summing to 1), in a page of this browser that imports
 * dist/index.js: the time after the forward pass. Median of `runs` calls, in ms.
 */
async function sinkMassInPage(browser, T, runs) {
  const { server, url: root } = await startServer(ROOT, 0);
  const page = await browser.newPage();
  try {
    await page.goto(`${root}/package.json`);
    return await page.evaluate(async ({ T, runs }) => {
      const { sinkMass } = await import('/dist/index.js');
      const L = 12, H = 12, data = new Float32Array(L * H * T * T);
      for (let row = 0; row < L * H * T; row++) {
        const q = row % T;
        for (let j = 0; j <= q; j++) data[row * T + j] = 1 / (q + 1);
      }
      const times = [];
      for (let run = 0; run < runs; run++) {
        const start = performance.now();
        sinkMass({ data, shape: [L, H, T, T] }, { key: 0, fromQuery: 1 });
        times.push(performance.now() - start);
      }
      return times.sort((a, b) => a - b)[times.length >> 1];
    }, { T, runs });
  } finally {
    await page.close();
    server.close();
  }
}

const OPEN = options.open;
if (!OPEN) throw new Error('give the checkpoint folder with --open=DIR');
if (!existsSync(join(SITE, 'index.html'))) throw new Error('build/site is missing: run `npm run build && npm run build:demo` first');
const T = Number(options.tokens), RUNS = Number(options.runs);
const DIFFER_AT = options['differ-at'] === undefined ? T >> 1 : Number(options['differ-at']);
if (!(Number.isInteger(DIFFER_AT) && DIFFER_AT >= 0 && DIFFER_AT < T)) throw new Error(`--differ-at: expected a position from 0 to ${T - 1}`);
const { server, url } = await startServer(SITE, 0);
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
try {
  const all = [];
  for (let run = 0; run < RUNS; run++) {
    const r = await runOnce(browser, url, resolve(OPEN), T, run, options['lens-only'], options['no-scroll']);
    process.stderr.write(`[bench:research] run ${run + 1}: ${JSON.stringify(r)}\n`);
    all.push(r);
  }
  const med = (f) => quantile(all.map(f).sort((a, b) => a - b), 0.5).toFixed(0);
  console.log(`T = ${T}, ${RUNS} runs, medians in ms:`);
  console.log(`  logit lens: Worker ${med((r) => r.lens.worker)}, click to table drawn ${med((r) => r.lens.wall)} ` +
    `(the rest: the message both ways, the page's scheduling and the table; median ${med((r) => r.lens.wall - r.lens.worker)})`);
  console.log(`  sink mass of every head after the forward pass (dist/'s sinkMass in a page): ${(await sinkMassInPage(browser, T, 5)).toFixed(1)}`);
  if (!options['lens-only']) {
    const cells = all[0].positions.cells, head = options.head?.replace(',', '.') ?? '0.0';
    if (options['compare-first']) console.log(`  the two prompts side by side, first: click to the moved-heads table drawn ${med((r) => r.compare.wall)}`);
    console.log(`  head ${head} patched at each of ${cells} positions (the prompts differ at position ${DIFFER_AT}): Worker ${med((r) => r.positions.worker)}, ` +
      `click to map drawn ${med((r) => r.positions.wall)}`);
    console.log(`  then the next head of its layer on the same prompts (their two passes kept): Worker ${med((r) => r.nextHead.worker)}, ` +
      `click to map drawn ${med((r) => r.nextHead.wall)}`);
  }
} finally {
  await browser.close();
  server.close();
}
