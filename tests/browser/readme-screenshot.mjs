// Regenerates web/demo/screenshot.png (the README's picture) from the built page: `node tests/browser/readme-screenshot.mjs`
// after `npm run build:demo`. The default view (trained language model, English), top of the page.
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../../scripts/chromium.mjs';
import { join } from 'node:path';
import { startServer } from '../../scripts/serve.mjs';
import { ROOT, SITE } from './helpers.js';

const { server, url } = await startServer(SITE, 0);
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage({ viewport: { width: 1104, height: 1400 }, locale: 'en-US', serviceWorkers: 'block' });
  await page.goto(url + '#lang=en');
  await page.waitForSelector('body.ready:not([data-loading])');
  await page.waitForFunction(() => window.__attnscopeDemo.idle);
  await page.screenshot({ path: join(ROOT, 'web/demo/screenshot.png'), clip: { x: 0, y: 0, width: 1104, height: 1400 } });
} finally {
  await browser.close();
  server.close();
}
