// scripts/serve.mjs as Chromium sees it (issue #24): a redirect the server answers is followed to this origin,
// never to the host a crafted path names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser } from './helpers.js';

const env = useBrowser();

test('Chromium follows no redirect of the server to another origin', async () => {
  const context = await env.browser.newContext({ serviceWorkers: 'block' });
  // Stands in for the other host: the machine has no network, so a followed redirect would end here, visibly.
  const offsite = [];
  await context.route((u) => u.hostname.endsWith('evil.example'), (route) => {
    offsite.push(route.request().url());
    return route.fulfill({ status: 200, contentType: 'text/html', body: '<title>evil</title>' });
  });
  const page = await context.newPage();
  try {
    for (const path of ['%2fevil.example%2f..', '%2f%2fevil.example%2f..', '%5cevil.example%2f..', 'assets%2f..%2f%2fevil.example%2f..%2fassets']) {
      const response = await page.goto(env.url + path);
      assert.equal(new URL(page.url()).origin, new URL(env.url).origin, `${path} ended at ${page.url()}`);
      assert.notEqual(await page.title(), 'evil', path);
      assert.ok(response.status() < 500, `${path} gave ${response.status()}`);
    }
    assert.deepEqual(offsite, []);
  } finally {
    await context.close();
  }
});
