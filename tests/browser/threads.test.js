// The threaded build in Chromium: the demo served cross-origin isolated (as `npm start` does) runs attnscope on
// every core, the same page served without the isolation headers falls back to the single-threaded build, and
// both give bit-identical forward passes; served without them but with its service worker, it gets threads anyway.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../../scripts/serve.mjs';
import { SITE, open, useBrowser } from './helpers.js';

const env = useBrowser();
let plain; // the same site without COOP/COEP

before(async () => {
  plain = await startServer(SITE, 0, { isolated: false });
});
after(async () => {
  await new Promise((ok) => plain.server.close(ok));
});

/** In the page: what runtimeInfo() says, and SHA-256 digests of forward passes big enough to be split. */
function inPage() {
  return async () => {
    const { api } = window.__attnscopeDemo;
    const digest = async (t) => Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', t.data))).map((b) => b.toString(16).padStart(2, '0')).join('');
    const mha = new api.MultiHeadAttention({ embedDim: 96, numHeads: 6, seed: 3 });
    const data = new Float32Array(2 * 150 * 96).map((_, i) => Math.sin(i * 0.731) * 2);
    const digests = [];
    for (const options of [{}, { averageWeights: true }, { needWeights: false }, { causal: true }]) {
      const { output, weights } = mha.forward({ data, shape: [2, 150, 96] }, null, null, options);
      digests.push(await digest(output), weights ? await digest(weights) : 'none');
    }
    mha.dispose();
    return { info: api.runtimeInfo(), isolated: crossOriginIsolated, cores: navigator.hardwareConcurrency, digests };
  };
}

test('isolated page: the threaded build; plain page: the single-threaded fallback; identical results', async () => {
  const isolated = await open();
  let threaded, single;
  try {
    threaded = await isolated.page.evaluate(inPage());
    assert.deepEqual(isolated.problems.filter((p) => !/blocking on the main thread/i.test(p)), []);
  } finally {
    await isolated.close();
  }
  assert.equal(threaded.isolated, true);
  assert.deepEqual(threaded.info, threaded.cores > 1 ? { build: 'threads', threads: threaded.cores, simd: 'relaxed' }
    : { build: 'single', threads: 1, simd: 'relaxed', fallbackReason: 'one hardware thread' });

  // Without the service worker, which would make the page isolated after its first load (the last test).
  const context = await env.browser.newContext({ serviceWorkers: 'block' });
  try {
    const page = await context.newPage();
    await page.goto(plain.url);
    await page.waitForSelector('body.ready:not([data-loading])', { timeout: 15_000 });
    single = await page.evaluate(inPage());
  } finally {
    await context.close();
  }
  assert.equal(single.isolated, false);
  assert.equal(single.info.build, 'single');
  assert.equal(single.info.threads, 1);
  assert.match(single.info.fallbackReason, /not cross-origin isolated/);
  assert.equal(new Set(single.digests).size, 7, 'distinct passes differ (the output alone does not depend on averageWeights)');
  assert.deepEqual(threaded.digests, single.digests);
});

// A static host that sends no isolation headers: the service worker adds them to what it serves (sw-template.js), so
// after it takes control (the first visit reloads itself once: src/offline.js) the page and the model Worker of
// "Open a model" both run threads, the Worker two.
test('plain host: the service worker makes the page cross-origin isolated; the page and the model Worker run threads', { timeout: 120_000 }, async () => {
  const workerFile = readdirSync(join(SITE, 'assets')).find((f) => /^model-worker-[\w-]+\.js$/.test(f));
  assert.ok(workerFile, 'the build has the model Worker');
  const context = await env.browser.newContext({ serviceWorkers: 'allow' });
  try {
    const page = await context.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    // Each document loaded in a tab counts itself in the tab's sessionStorage, which a reload keeps (the page's own
    // hash updates are navigations too, within one document: they must not count as reloads).
    await context.addInitScript(() => {
      if (window === window.top) sessionStorage.setItem('test-loads', String(Number(sessionStorage.getItem('test-loads') ?? 0) + 1));
    });
    const loads = (p) => p.evaluate(() => Number(sessionStorage.getItem('test-loads')));
    await page.goto(plain.url);
    // The first load is not isolated; the worker installs, claims the page, and the page reloads into isolation.
    const deadline = Date.now() + 90_000;
    let isolated = false;
    while (!isolated && Date.now() < deadline) {
      isolated = await page.evaluate(() => globalThis.crossOriginIsolated).catch(() => false); // a reload in between
      if (!isolated) await new Promise((ok) => setTimeout(ok, 250));
    }
    assert.equal(isolated, true, 'the page became cross-origin isolated');
    await page.waitForSelector('body.ready:not([data-loading])', { timeout: 30_000 });
    assert.equal(await loads(page), 2, 'the first visit and one reload');
    const main = await page.evaluate(() => window.__attnscopeDemo.api.runtimeInfo());
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    assert.deepEqual(main, cores > 1 ? { build: 'threads', threads: cores, simd: 'relaxed' }
      : { build: 'single', threads: 1, simd: 'relaxed', fallbackReason: 'one hardware thread' });
    // The model Worker as the page starts it (open/client.js): its `start` answers with its runtimeInfo().
    const worker = await page.evaluate(async (file) => {
      const w = new Worker(new URL(`./assets/${file}`, document.baseURI), { type: 'module' });
      const reply = await new Promise((resolve) => {
        w.onmessage = ({ data }) => { if (data.type === 'reply') resolve(data); };
        w.postMessage({ type: 'start', id: 1, threadsUrl: new URL('./attnscope-mt/', document.baseURI).href });
      });
      w.terminate();
      return reply;
    }, workerFile);
    assert.equal(worker.error, undefined, JSON.stringify(worker.error));
    assert.deepEqual(worker.value, { build: 'threads', threads: 2, simd: 'relaxed' });
    // A second visit is controlled from its start: isolated at once, no reload.
    const second = await context.newPage();
    await second.goto(plain.url);
    await second.waitForSelector('body.ready:not([data-loading])', { timeout: 30_000 });
    assert.equal(await second.evaluate(() => globalThis.crossOriginIsolated), true);
    assert.equal(await loads(second), 1, 'a second visit is not reloaded');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
