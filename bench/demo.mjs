// `npm run bench:demo`: how fast the built demo answers typing, in headless Chromium (Event Timing + Long Animation
// Frames). Types keys at 10 per second into (a) the trained language model near 128 characters and (b) the untrained
// layer at embed 256, 8 heads, 64 tokens, and prints a Markdown table (bench/README.md quotes it).
//
//   npm run build && npm run build:demo && node bench/demo.mjs [--runs=3] [--keys=20] [--base=DIR]
//   node bench/demo.mjs --open=DIR [--tokens=512]                      # an opened model: load, draw, hover, click
//   node bench/demo.mjs --open=DIR --typing [--tokens=128] [--keys=40]  # typing while that model computes
//
// --base=DIR also measures another build of the page (e.g. an older commit's build/site), taking turns with this one
// run by run, so both see the same load on a shared machine; the table then has a row for each.
//
// Per scenario and run:
//   - INP: for every keystroke, the longest Event Timing entry of its interaction (keydown → next paint). Chromium
//     reports only entries of ≥ 16 ms, so a keystroke without an entry counts as 16 ms (an upper bound).
//   - LoAF: long animation frames (> 50 ms) seen while typing and settling, and the longest one.
//   - consistent: from the last keydown until every visible view has drawn the text of that key (the page's
//     `__attnscopeDemo.consistentAt`), a view being the maps, head view, model view, steps, decoding panel and tokens.
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../scripts/chromium.mjs';
import { existsSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startServer } from '../scripts/serve.mjs';
import { benchOpen } from './demo-open.mjs';
import { benchOpenTyping } from './demo-open-typing.mjs';
import { initScript, inpPerKey, quantile, typeKeys } from './demo-typing.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SITE = join(ROOT, 'build/site');
// --open=DIR: only the "Open a model" tab with the checkpoint in DIR (bench/demo-open.mjs), at --tokens (512);
// with --typing, keys typed while that model computes (bench/demo-open-typing.mjs), at --tokens (128) and --keys
// (40); with --base, that build's tab too, taking turns.
const { values: options } = parseArgs({ options: { runs: { type: 'string', default: '3' }, keys: { type: 'string' }, base: { type: 'string' }, open: { type: 'string' }, tokens: { type: 'string' }, typing: { type: 'boolean', default: false } } });
const RUNS = Number(options.runs);
const KEYS = Number(options.keys ?? (options.typing ? 40 : 20));
const BASE = options.base;
const OPEN = options.open;
const progress = (msg) => process.stderr.write(`[bench:demo] ${msg}\n`);

const LM_TEXT = 'The cat sat on the mat. The cat sat on the mat. The dog lay by the door, and the cat looked at it for a bit';
const TYPED = ' long while then'.padEnd(KEYS, '.').slice(0, KEYS);
const WORDS = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
const SCENARIOS = [
  {
    name: `(a) trained language model, ${Array.from(LM_TEXT).length + KEYS + 1} tokens (<bos> + ${Array.from(LM_TEXT).length + KEYS} characters)`,
    hash: `#lang=en&mode=self&model=trained&text=${encodeURIComponent(LM_TEXT)}`,
  },
  {
    name: '(b) untrained layer, embed 256, 8 heads, 64 tokens',
    hash: `#lang=en&mode=self&model=untrained&d=256&h=8&text=${encodeURIComponent(WORDS)}`,
    typed: ' a b c d e f g h i j'.slice(0, KEYS),
  },
];

async function runOnce(browser, url, scenario) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  const page = await context.newPage();
  await page.addInitScript(initScript(() => {
    const perf = window.__bench;
    // When every view shows `text`: the page's own record if it keeps one, else the first frame whose state has it.
    perf.consistentAt = (text) => {
      const d = window.__attnscopeDemo;
      if (d?.consistentAt) return d.consistentAt(text);
      if (d?.state?.text !== text) return null;
      return (perf.seen ??= {})[text] ??= performance.now();
    };
  }));
  await page.goto(url + scenario.hash);
  await page.waitForSelector('body.ready:not([data-loading])', { timeout: 30_000 });
  await page.waitForFunction(() => window.__bench.consistentAt(document.querySelector('#text').value) != null, null, { timeout: 30_000 });
  await page.focus('#text');
  await page.keyboard.press('End');
  await page.waitForTimeout(300);
  const typed = scenario.typed ?? TYPED;
  const t0 = await typeKeys(page, typed.length, (k) => (typed[k] === ' ' ? 'Space' : typed[k]));
  const want = await page.evaluate(() => document.querySelector('#text').value);
  await page.waitForFunction((text) => window.__bench.consistentAt(text) != null, want, { timeout: 30_000, polling: 'raf' });
  await page.waitForTimeout(200);
  const r = await page.evaluate(({ text, t0 }) => {
    const b = window.__bench;
    const byId = new Map();
    for (const e of b.events) if (e.start >= t0) byId.set(e.id, Math.max(byId.get(e.id) ?? 0, e.duration));
    return {
      interactions: [...byId.values()],
      loafs: b.loafs.filter((x) => x.start >= t0).map((x) => x.duration),
      worst: b.loafs.filter((x) => x.start >= t0).sort((x, y) => y.duration - x.duration)[0],
      noLoaf: !!b.noLoaf,
      consistentMs: b.consistentAt(text) - b.keydowns[b.keydowns.length - 1],
      keys: b.keydowns.length,
      tokens: window.__attnscopeDemo.last.rows.length,
      timings: window.__attnscopeDemo.timings,
    };
  }, { text: want, t0 });
  await context.close();
  return { ...r, inp: inpPerKey(r.interactions, r.keys) };
}

async function main() {
  if (!existsSync(join(SITE, 'index.html'))) throw new Error('build/site is missing: run `npm run build && npm run build:demo` first');
  if (options.typing && !OPEN) throw new Error('--typing types into an opened model: give its folder with --open=DIR');
  if (OPEN && options.typing) {
    const sites = [];
    if (BASE) sites.push({ label: 'base', ...(await startServer(resolve(BASE), 0)) });
    sites.push({ label: BASE ? 'this build' : '', ...(await startServer(SITE, 0)) });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try { await benchOpenTyping({ browser, sites, dir: resolve(OPEN), runs: RUNS, tokens: Number(options.tokens ?? 128), keys: KEYS, progress }); } finally { await browser.close(); for (const s of sites) s.server.close(); }
    return;
  }
  if (OPEN) {
    const { server, url } = await startServer(SITE, 0);
    const other = BASE ? await startServer(resolve(BASE), 0) : null;
    try { await benchOpen({ url, base: other?.url, dir: resolve(OPEN), runs: RUNS, tokens: Number(options.tokens ?? 512), progress }); } finally { server.close(); other?.server.close(); }
    return;
  }
  const sites = [];
  if (BASE) sites.push({ label: 'base', ...(await startServer(resolve(BASE), 0)) });
  sites.push({ label: BASE ? 'this build' : '', ...(await startServer(SITE, 0)) });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const rows = [];
  try {
    for (const sc of SCENARIOS) {
      const acc = sites.map((site) => ({ site, inp: [], loafs: [], consistent: [], tokens: 0, noLoaf: false }));
      for (let run = 0; run < RUNS; run++) {
        for (const a of acc) {
          const r = await runOnce(browser, a.site.url, sc);
          a.inp.push(...r.inp);
          a.loafs.push(...r.loafs);
          a.consistent.push(r.consistentMs);
          a.tokens = r.tokens;
          a.noLoaf ||= r.noLoaf;
          if (process.env.BENCH_VERBOSE && r.worst) progress(`longest frame: ${JSON.stringify(r.worst)}`);
          progress(`${sc.name}${a.site.label ? ` [${a.site.label}]` : ''} run ${run + 1}: INP p95 ${quantile(r.inp, 0.95)} ms, ${r.loafs.length} LoAF > 50 ms (max ${Math.max(0, ...r.loafs).toFixed(0)}), consistent ${r.consistentMs.toFixed(0)} ms, ${r.tokens} tokens; last pass (ms): ${Object.entries(r.timings ?? {}).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`);
        }
      }
      for (const a of acc) rows.push({ name: sc.name + (a.site.label ? ` — ${a.site.label}` : ''), ...a });
    }
  } finally {
    await browser.close();
    for (const s of sites) s.server.close();
  }
  const out = (s = '') => process.stdout.write(s + '\n');
  out(`Typing ${KEYS} keys at 10 a second, ${RUNS} runs per scenario, headless Chromium, 1280×900 (\`node bench/demo.mjs --runs=${RUNS}${BASE ? ' --base=…' : ''}\`).`);
  out('INP ≤ 16 means Chromium reported no entry (it reports ≥ 16 ms only). Targets: INP p95 ≤ 50 ms, no long animation frame > 50 ms, consistent ≤ 100 ms.');
  out();
  out('| scenario | INP p50 | INP p95 | INP max | long animation frames > 50 ms (max) | views consistent after last key, p50 / max |');
  out('|---|---|---|---|---|---|');
  for (const r of rows) {
    const f = (x) => (x <= 16 ? '≤ 16 ms' : `${x.toFixed(0)} ms`);
    out(`| ${r.name} | ${f(quantile(r.inp, 0.5))} | ${f(quantile(r.inp, 0.95))} | ${f(Math.max(...r.inp))} | ${r.noLoaf ? 'n/a' : `${r.loafs.length} (${r.loafs.length ? Math.max(...r.loafs).toFixed(0) + ' ms' : '–'})`} | ${quantile(r.consistent, 0.5).toFixed(0)} / ${Math.max(...r.consistent).toFixed(0)} ms |`);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
