// The threaded build in Chromium: the demo served cross-origin isolated (as `npm start` does) runs attnscope on
// every core, the same page served without the isolation headers falls back to the single-threaded build, and
// both give bit-identical forward passes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
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
  assert.deepEqual(threaded.info, threaded.cores > 1 ? { build: 'threads', threads: threaded.cores, simd: true }
    : { build: 'single', threads: 1, simd: true, fallbackReason: 'one hardware thread' });

  const context = await env.browser.newContext();
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
