// `node bench/demo.mjs --open=DIR`: the "Open a model" tab at scale (issue #22), in headless Chromium. Opens the
// checkpoint in DIR (config.json + model.safetensors, e.g. the random GPT-2-small-shaped one that
// `/usr/bin/python3 tools/references/make_bench_models.py --only gpt2-small --no-onnx --out build/bench-models` writes), feeds
// it T random token ids, and times: the load; from the input to the model view drawn (forward pass in the Worker,
// transfer, the maps' pixels); the maps' own script time; a hover and a click on the model view until the next frame;
// the longest animation frame meanwhile; and how many lines the head view kept. BENCH_VERBOSE=1 prints each click. With `base` (demo.mjs --base=DIR)
// another build of the page takes turns with this one, run by run, so that both see the same load.
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../scripts/chromium.mjs';
import { join } from 'node:path';
import { quantile } from './demo-typing.mjs';


async function runOnce(browser, url, dir, T) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  const page = await context.newPage();
  await page.addInitScript(() => {
    const perf = (window.__bench = { loafs: [] });
    try { new PerformanceObserver((l) => { for (const e of l.getEntries()) perf.loafs.push({ start: e.startTime, duration: e.duration }); }).observe({ type: 'long-animation-frame', buffered: true }); } catch { perf.noLoaf = true; }
  });
  await page.goto(`${url}#mode=open&lang=en`);
  await page.waitForSelector('body.ready', { timeout: 30_000 });
  const t0 = Date.now();
  await page.setInputFiles('#open-files', [join(dir, 'config.json'), join(dir, 'model.safetensors')]);
  await page.waitForSelector('#open-text-row:not([hidden])', { timeout: 600_000 });
  const loadMs = Date.now() - t0;
  const status = await page.textContent('#open-status');
  const vocab = Number((await page.textContent('#open-info')).match(/up to (\d+)/) ? 50257 : 50257);
  let seed = 1;
  const ids = Array.from({ length: T }, () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % vocab; }).join(' ');
  // From the input event to the model view drawn for it (its `drawn` stamp is later than the input).
  const draw = await page.evaluate(async (ids) => {
    const el = document.querySelector('#open-text');
    const canvas = () => document.querySelector('#open-grid canvas');
    const before = Number(canvas().dataset.drawn ?? 0);
    const start = performance.now();
    el.value = ids;
    el.dispatchEvent(new Event('input', { bubbles: true }));
    await new Promise((ok) => { const wait = () => (Number(canvas().dataset.drawn ?? 0) > Math.max(before, start) && document.querySelector('#open-steps li') ? ok() : setTimeout(wait, 5)); wait(); });
    await new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 0)));
    return { wall: performance.now() - start, paint: Number(canvas().dataset.paintMs), paintWall: Number(canvas().dataset.paintWallMs), drawnAt: Number(canvas().dataset.drawn) - start };
  }, ids);
  await page.locator('#open-grid canvas').scrollIntoViewIfNeeded();
  // Hover and click, each until the frame after it: what the eye waits for.
  const interact = await page.evaluate(async () => {
    const canvas = document.querySelector('#open-grid canvas');
    const b = canvas.getBoundingClientRect();
    const frame = () => new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 0)));
    const hover = [], click = [];
    for (let k = 0; k < 20; k++) {
      const x = b.left + 40 + ((k * 97) % (b.width - 50)), y = b.top + 20 + ((k * 61) % (b.height - 25));
      const t = performance.now();
      canvas.dispatchEvent(new MouseEvent('mousemove', { clientX: x, clientY: y, bubbles: true }));
      await frame();
      hover.push(performance.now() - t);
    }
    for (let k = 0; k < 20; k++) {
      const x = b.left + 40 + ((k * 211) % (b.width - 50)), y = b.top + 20 + ((k * 83) % (b.height - 25));
      // The mouse comes to the point first, as a user's does: the page's tooltip says whether it is on a map. A
      // click between maps picks nothing, and is not made: it used to wait for any redraw, and counted the next
      // one (a trace arriving for the click before it, a second later) as its answer.
      canvas.dispatchEvent(new MouseEvent('mousemove', { clientX: x, clientY: y, bubbles: true }));
      await frame();
      if (document.querySelector('#tooltip').hidden) continue;
      const before = canvas.dataset.drawn;
      const t = performance.now();
      canvas.dispatchEvent(new MouseEvent('click', { clientX: x, clientY: y, bubbles: true }));
      // (A click on a map always redraws; 10 s without one would be a slow click, counted as it is.)
      await new Promise((ok) => { const wait = () => (canvas.dataset.drawn !== before || performance.now() - t > 10_000 ? ok() : setTimeout(wait, 1)); wait(); });
      await frame();
      click.push(performance.now() - t);
    }
    return { hover, click };
  });
  const extra = await page.evaluate(() => ({
    // The head view's note; an older build (--base) kept it outside the view, as #open-hv-note.
    hvNote: (document.querySelector('#open-hv .hv-note') ?? document.querySelector('#open-hv-note')).textContent,
    loafMax: Math.max(0, ...window.__bench.loafs.map((x) => x.duration)),
    noLoaf: !!window.__bench.noLoaf,
    timings: window.__attnscopeDemo?.timings ?? {},
  }));
  await context.close();
  return { loadMs, status, ...draw, ...interact, ...extra };
}

/** Runs `runs` times (per site: this build, and `base` when given, taking turns) and prints a Markdown table. */
export async function benchOpen({ url, base, dir, runs, tokens = 512, progress }) {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const sites = [...(base ? [{ label: 'base', url: base, all: [] }] : []), { label: base ? 'this build' : '', url, all: [] }];
  try {
    for (let k = 0; k < runs; k++) {
      for (const site of sites) {
        const r = await runOnce(browser, site.url, dir, tokens);
        progress(`open${site.label ? ` [${site.label}]` : ''} run ${k + 1}: load ${r.loadMs} ms; input → model view ${r.wall.toFixed(0)} ms (maps ${r.paint} ms script, ${r.paintWall} ms with pieces); hover p50/p95 ${quantile(r.hover, 0.5).toFixed(0)}/${quantile(r.hover, 0.95).toFixed(0)} ms; click p50/p95 ${quantile(r.click, 0.5).toFixed(0)}/${quantile(r.click, 0.95).toFixed(0)} ms (${r.click.length} clicks); LoAF max ${r.loafMax.toFixed(0)} ms; ${r.hvNote}; last pass (ms): ${Object.entries(r.timings).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`);
        if (process.env.BENCH_VERBOSE) progress(`  clicks (ms, in order): ${r.click.map((x) => x.toFixed(0)).join(' ')}`);
        site.all.push(r);
      }
    }
  } finally {
    await browser.close();
  }
  const out = (s = '') => process.stdout.write(s + '\n');
  out();
  out(`Open a model: ${dir}, ${tokens} token ids, ${runs} runs${base ? ' per build, taking turns' : ''} (\`node bench/demo.mjs --open=${dir} --runs=${runs}${base ? ' --base=…' : ''}\`), 20 hovers and 20 clicks a run.`);
  out();
  out(`| ${base ? 'build | ' : ''}load | input → model view drawn (p50 / max) | maps' pixels, script | hover → next frame, p50 / p95 | click → redrawn, p50 / p95 | longest animation frame | head view |`);
  out(`|${base ? '---|' : ''}---|---|---|---|---|---|---|`);
  for (const { label, all } of sites) {
    const p50 = (f) => quantile(all.map(f), 0.5);
    const q = (key, p) => quantile(all.flatMap((r) => r[key]), p).toFixed(0);
    out(`| ${base ? `${label} | ` : ''}${p50((r) => r.loadMs).toFixed(0)} ms | ${p50((r) => r.wall).toFixed(0)} / ${Math.max(...all.map((r) => r.wall)).toFixed(0)} ms | ${p50((r) => r.paint).toFixed(0)} ms | ${q('hover', 0.5)} / ${q('hover', 0.95)} ms | ${q('click', 0.5)} / ${q('click', 0.95)} ms | ${all[0].noLoaf ? 'n/a' : `${Math.max(...all.map((r) => r.loafMax)).toFixed(0)} ms`} | ${all[0].hvNote} |`);
  }
}
