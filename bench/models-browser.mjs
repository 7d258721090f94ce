// The Chromium half of `npm run bench:models`: one browser, a fresh page (its own WASM instance and thread pool) for
// every run of one library, served with COOP/COEP so that both libraries' threaded builds can run.
import path from 'node:path';
import { chromium } from 'playwright-core';
import { ARGS, CHROMIUM, benchPage, startServer } from './browser.mjs';
import { ROOT } from './node-paths.mjs';

export async function openBrowser({ distPath, modelsDir, progress }) {
  const modelsPath = '/' + path.relative(ROOT, modelsDir).split(path.sep).join('/') + '/';
  const { server, url } = await startServer(['/bench/', '/node_modules/', '/build/bench/dist-snapshot/', modelsPath]);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  return {
    version: browser.version(),
    async run({ lib, model, threads, simd, lengths, runs, generate }) {
      const { context, page } = await benchPage(browser, progress);
      try {
        await page.goto(`${url}/bench/browser/models.html`);
        await page.waitForSelector('body[data-ready]', { state: 'attached', timeout: 60_000 });
        if (threads > 1 && !(await page.evaluate(() => globalThis.crossOriginIsolated))) throw new Error('the page is not cross-origin isolated');
        return await page.evaluate((o) => window.runModel(o), { lib, threads, simd, lengths, runs, generate, distUrl: distPath, base: `${modelsPath}${model}/` });
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
