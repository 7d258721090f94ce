// Offline behaviour of the demo: after one visit the service worker has the whole build (both models included) and
// the page works with the network off; a download that failed offline is retried when the network returns; a page
// opened from file:// says how to serve it instead of staying blank.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { useBrowser, open, demo, settled, shot, SITE, datesModelShown } from './helpers.js';

const env = useBrowser();

test('after one visit the whole demo, both trained models included, works offline', async () => {
  const { page, context, problems, close } = await open('', { serviceWorkers: 'allow' });
  // The service worker has installed (precached every file of the build) and controls the page after a reload.
  await page.evaluate(() => navigator.serviceWorker.ready);
  const cached = await page.evaluate(async () => (await (await caches.open((await caches.keys())[0])).keys()).map((r) => new URL(r.url).pathname.split('/').pop()));
  assert.ok(cached.includes('index.html'), `index.html is not cached: ${cached}`);
  assert.ok(cached.some((f) => /^char-lm-.*\.safetensors$/.test(f)) && cached.some((f) => /^dates-seq2seq-.*\.safetensors$/.test(f)), `models not cached: ${cached}`);
  assert.ok(cached.some((f) => f.endsWith('.wasm')), `no .wasm cached: ${cached}`);

  await context.setOffline(true);
  await page.reload();
  await page.waitForSelector('body.ready:not([data-loading])', { timeout: 15_000 });
  await settled(page);
  let d = await demo(page);
  assert.equal(d.last.kind, 'lm');
  assert.ok(d.last.L > 10);
  // The dates model was never opened online: it comes from the cache too.
  await page.click('#mode-tabs [data-mode="s2s"]');
  await datesModelShown(page);
  await settled(page);
  d = await demo(page);
  assert.equal(d.last.error ?? null, null);
  assert.equal(d.last.text, '1990-03-05');
  await shot(page, 'offline-dates');
  await context.setOffline(false);
  assert.deepEqual(problems.filter((p) => !/ERR_INTERNET_DISCONNECTED|Failed to load resource/.test(p)), []);
  await close();
});

test('a model download that failed offline is retried when the network returns', async () => {
  const { page, context, close } = await open('#mode=self&model=untrained');
  await context.setOffline(true);
  await page.click('#mode-tabs [data-mode="s2s"]');
  await page.waitForSelector('#model-status.error');
  assert.match(await page.textContent('#model-status'), /Failed to fetch|network|fetch/i);
  await context.setOffline(false);
  // The page listens for 'online' and fetches again, without a reload.
  await page.waitForFunction(() => window.__attnscopeDemo.last.kind === 's2s' && !window.__attnscopeDemo.last.loading && !window.__attnscopeDemo.last.error, null, { timeout: 15_000 });
  await settled(page);
  assert.equal((await demo(page)).last.text, '1990-03-05');
  assert.ok(await page.isHidden('#model-status'));
  await close();
});

test('opened from file:// the page says how to serve it', async () => {
  const context = await env.browser.newContext();
  const page = await context.newPage();
  await page.goto(pathToFileURL(join(SITE, 'index.html')).href);
  await page.waitForSelector('.file-warning');
  const text = await page.textContent('.file-warning');
  assert.match(text, /npm start/);
  assert.match(text, /static server/);
  assert.equal(await page.getAttribute('.file-warning', 'role'), 'alert');
  // Styled: the stylesheet loads from file:// too (no crossorigin attribute).
  assert.notEqual(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgba(0, 0, 0, 0)');
  await shot(page, 'file-protocol');
  await context.close();
});
