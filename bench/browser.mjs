// `npm run bench -- --browser`: the forward comparison of bench/forward-core.mjs in headless Chromium, one fresh page
// per thread count (thread pools are per page), served with COOP/COEP so the page is cross-origin isolated and the
// threaded builds (SharedArrayBuffer) can run. Used by bench/run.mjs, which prints the same tables as under Node.
import { createReadStream, existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../scripts/chromium.mjs';
import { MIME } from '../scripts/serve.mjs';
import { ROOT } from './node-paths.mjs';

export { CHROMIUM };
// --expose-gc gives the timing loop the same full collection between turns as under Node.
export const ARGS = [...CHROMIUM_ARGS, '--js-flags=--expose-gc'];
// Only what the page needs is served: the bench's modules, the seeded generator they share with the tests, the
// peers' packages and the snapshot of dist/.
const SERVED = ['/bench/', '/tests/random.js', '/web/demo/src/models/random.js', '/node_modules/', '/build/bench/dist-snapshot/'];
// Cross-origin isolation, which SharedArrayBuffer (every threaded WASM build) needs; the host must send these too.
export const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** A static server of `served` (URL path prefixes under the repository root) with the isolation headers. */
/** A fresh context and page of `browser`, its `[bench]` console lines and errors passed to `progress`. */
export async function benchPage(browser, progress) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.text().startsWith('[bench]')) progress(`chromium: ${m.text().slice(8)}`);
    else if (m.type() === 'error') progress(`chromium console error: ${m.text().slice(0, 300)}`);
  });
  page.on('pageerror', (e) => progress(`chromium page error: ${e.message.slice(0, 300)}`));
  return { context, page };
}

export function startServer(served = SERVED) {
  const server = createServer(async (req, res) => {
    let pathname = '';
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      // a malformed escape: answered as not found below
    }
    const file = path.resolve(ROOT, '.' + pathname);
    const allowed = served.some((p) => pathname.startsWith(p)) && file.startsWith(ROOT + path.sep) && !pathname.includes('\0');
    const info = allowed ? await stat(file).catch(() => null) : null;
    if (!info?.isFile()) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', ...ISOLATION });
      res.end('Not Found\n');
      return;
    }
    res.writeHead(200, {
      'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream',
      'Content-Length': info.size,
      'Cache-Control': 'no-store',
      ...ISOLATION,
    });
    createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok({ server, url: `http://127.0.0.1:${server.address().port}` })));
}

/**
 * Runs runForward in a fresh page per thread count, attnscope imported from `distPath` (a URL path under the
 * repository root, bench/run.mjs's copy of dist/); returns { browser: { version, crossOriginIsolated }, runs }. */
export async function runBrowserForward({ ids, configs, threadCounts, distPath, busy = 0, allVariants = false, quick = false, simd = 'auto', progress }) {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install --no-install-recommends chromium)`);
  const { server, url } = await startServer();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  try {
    const runs = [];
    let crossOriginIsolated = false;
    for (const threads of threadCounts) {
      const context = await browser.newContext();
      const page = await context.newPage();
      page.on('console', (m) => {
        if (m.text().startsWith('[bench]')) progress(`chromium: ${m.text().slice(8)}`);
        else if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) progress(`chromium console error: ${m.text().slice(0, 300)}`);
      });
      page.on('response', (r) => {
        if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) progress(`chromium: ${r.status()} for ${r.url()}`);
      });
      page.on('pageerror', (e) => progress(`chromium page error: ${e.message.slice(0, 300)}`));
      await page.goto(`${url}/bench/browser/page.html${distPath ? `?dist=${encodeURIComponent(distPath)}` : ''}`);
      await page.waitForSelector('body[data-ready]', { state: 'attached', timeout: 60_000 });
      crossOriginIsolated = await page.evaluate(() => globalThis.crossOriginIsolated);
      // attnscope's build (bench/peers/attnscope.mjs reads it at load).
      await page.evaluate((value) => { globalThis.ATTNSCOPE_BENCH_SIMD = value; }, simd);
      runs.push(await page.evaluate((options) => window.runBench(options), { ids, configs, threads, busy, allVariants, quick }));
      await context.close();
    }
    return { browser: { version: browser.version(), crossOriginIsolated }, runs };
  } finally {
    await browser.close();
    await new Promise((ok) => server.close(ok));
  }
}
