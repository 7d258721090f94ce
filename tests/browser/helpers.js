// Shared set-up of the browser tests: build/site served on 127.0.0.1, driven in Debian's Chromium.
// Not a test file itself (node --test runs *.test.js only). Screenshots go to test-artifacts/browser/.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS as ARGS } from '../../scripts/chromium.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SITE = join(ROOT, 'build/site');
export const ART = join(ROOT, 'test-artifacts/browser');

const env = { server: null, url: '', browser: null };

/** Registers the suite's before/after hooks: one server and one browser per test file. */
export function useBrowser() {
  before(async () => {
    if (!existsSync(join(SITE, 'index.html'))) {
      throw new Error(`${SITE}/index.html is missing: run \`npm run build && npm run build:demo\` before the browser tests`);
    }
    assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM} (apt-get install --no-install-recommends chromium)`);
    mkdirSync(ART, { recursive: true });
    ({ server: env.server, url: env.url } = await startServer(SITE, 0));
    env.browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  });
  after(async () => {
    await env.browser?.close();
    await new Promise((ok) => (env.server ? env.server.close(ok) : ok()));
  });
  return env;
}

// Pages kept between the tests of a file, one per locale: the next open() of that locale loads its document in the
// same tab. A new context and tab for each of the suite's opens cost about 0.9 s of the 2.8 s an open took, and a
// new renderer compiles the page's script and module again. What a test can change beyond its own document is
// undone when it closes (its routes, its listeners, the tab's storage), and a test that takes the context (to route
// or add a tab) gets a tab of its own, closed with it. A test that does not close its page leaves it out of the pool.
const pool = [];

/**
 * The demo in a new document, once it has drawn (and loaded the trained model it needs, if any); records console
 * errors and warnings, page errors and any request off this server. `close()` ends the document.
 */
export async function open(hash = '', { locale = 'en-US', width = 1280, height = 900, serviceWorkers = 'block' } = {}) {
  // The service worker is blocked unless a test is about it: it would answer requests that tests route or count.
  // A test about it gets a tab of its own: a registration outlives its document.
  const key = serviceWorkers === 'block' ? locale : null;
  let entry = key === null ? null : pool.find((e) => e.key === key && !e.busy);
  if (entry) {
    entry.busy = true;
    await entry.page.setViewportSize({ width, height });
  } else {
    const context = await env.browser.newContext({ locale, viewport: { width, height }, acceptDownloads: true, serviceWorkers });
    entry = { key, context, page: await context.newPage(), busy: true, own: key === null };
    if (!entry.own) pool.push(entry);
  }
  const { page } = entry;
  const problems = [];
  const listeners = {
    console: (m) => {
      if (serviceWorkers === 'block' && /Service Worker registration blocked by Playwright/.test(m.text())) return;
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`);
    },
    pageerror: (e) => problems.push(`pageerror: ${e.message}`),
    request: (r) => {
      const u = r.url();
      if (!u.startsWith(env.url) && !u.startsWith('data:') && !u.startsWith('blob:')) problems.push(`off-site request: ${u}`);
    },
  };
  for (const [event, listener] of Object.entries(listeners)) page.on(event, listener);
  await page.goto(env.url + hash);
  // Polled every 20 ms in the page's own world: waitForSelector noticed the class about 0.45 s after the page set it
  // (page.goto's load event to body.ready: 0.97 s against 0.50 s, measured at 1280 px on an idle machine), and every
  // test opens a page or more.
  await page.waitForFunction(() => document.body?.matches('body.ready:not([data-loading])'), null, { timeout: 15_000, polling: 20 });
  await settled(page);
  const close = async () => {
    for (const [event, listener] of Object.entries(listeners)) page.off(event, listener);
    if (entry.own || page.isClosed()) {
      if (pool.includes(entry)) pool.splice(pool.indexOf(entry), 1);
      await entry.context.close();
      return;
    }
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await page.evaluate(() => { sessionStorage.clear(); localStorage.clear(); }).catch(() => {});
    // about:blank ends this document's work now, and the next open() loads a new one (not a change of hash).
    await page.goto('about:blank');
    entry.busy = false;
  };
  const session = { page, problems, close };
  // The context is the test's to change (routes, tabs, permissions): the tab then goes with it.
  Object.defineProperty(session, 'context', { enumerable: true, get: () => { entry.own = true; return entry.context; } });
  return session;
}

/**
 * The page's test hooks (window.__attnscopeDemo), every field but the two that copy the most: `exported` (the view's
 * JSON export, built afresh: about 0.8 s at 128 tokens) and `openMaps` (an opened model's maps as an array: seconds
 * at 512 tokens). Returning the hooks whole ran every getter, those two included, on each of the suite's calls; a test
 * reads those two with exported(page) and page.evaluate.
 */
export const demo = (page) => page.evaluate(() => {
  const hooks = window.__attnscopeDemo;
  const out = {};
  for (const k of Object.keys(hooks)) {
    if (k === 'exported' || k === 'openMaps') continue;
    // A getter that throws in the page's state of the moment leaves its field out, as serialising the hooks did.
    try { out[k] = hooks[k]; } catch { /* left out */ }
  }
  return out;
});
/**
 * Waits for the dates model, fetched on first use, to be shown: a page waiting for a model is idle (settled() returns)
 * with its panels hidden until it comes.
 */
export const datesModelShown = (page) =>
  page.waitForFunction(() => window.__attnscopeDemo.last.kind === 's2s' && !window.__attnscopeDemo.last.loading, null, { timeout: 15_000 });
/** The JSON export of the page's current view, as its download would hold it. */
export const exported = (page) => page.evaluate(() => window.__attnscopeDemo.exported);
export const shot = (page, name, opts = {}) => page.screenshot({ path: join(ART, `${name}.png`), ...opts });
export const canvasData = (page, sel) => page.$eval(sel, (c) => c.toDataURL());
/** The index of the largest value (the first of equal ones). */
export const argmax = (a) => a.reduce((b, x, i) => (x > a[b] ? i : b), 0);
/**
 * Wait until the page has recomputed and every view (on screen and off) has drawn the latest state: the page's
 * scheduler draws after the input's own frame, in slices.
 */
export const settled = async (page) => {
  // page.evaluate has no timeout: a page whose animation frames stop would hang the suite here. After 15 s the wait
  // below, which polls on frames too, fails instead.
  await page.evaluate(() => new Promise((ok) => { requestAnimationFrame(() => setTimeout(ok, 0)); setTimeout(ok, 15_000); }));
  await page.waitForFunction(() => window.__attnscopeDemo?.idle, null, { timeout: 15_000, polling: 'raf' });
};

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations on the page as it is now, or in the parts of it `within` names (a CSS
 * selector or a list of them; each must match). A feature's test checks the part of the page it is about: the whole
 * trained page took axe about 2 s, its head view's section 0.7 s, and axe ran about a hundred times in the suite.
 * Every mode's whole page is checked in both languages at both widths by a11y.test.js, and an opened model's by
 * open.test.js, open-tab.test.js and open-zh-phone.test.js.
 */
export async function axe(page, within) {
  // Injected once per document (about 0.1–0.3 s a time on the trained page): a reload or a new page needs it again.
  if (!(await page.evaluate(() => typeof window.axe?.run === 'function'))) await page.addScriptTag({ content: AXE });
  const include = within === undefined ? null : [within].flat();
  // axe itself refuses only a context none of whose selectors match: a renamed part of a list would shrink the check.
  for (const sel of include ?? []) if (!(await page.$(sel))) throw new Error(`axe: nothing on the page matches ${sel}`);
  const res = await page.evaluate((sel) => window.axe.run(sel ? { include: sel.map((s) => [s]) } : document, { resultTypes: ['violations'] }), include);
  return res.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}${v.nodes.length > 3 ? ` … ${v.nodes.length} nodes` : ''}`);
}
