// The demo's service worker across a deploy (issue #24): its cache version follows the contents of every file, and a
// tab left open while a new build is deployed keeps running its own build, lazily loaded files included, until it
// reloads; then the old build's cache goes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import viteConfig from '../../web/demo/vite.config.js';
import { startServer } from '../../scripts/serve.mjs';
import { useBrowser, settled, SITE, datesModelShown } from './helpers.js';

const env = useBrowser();
const precache = viteConfig.plugins.find((p) => p.name === 'attnscope-precache');

/** Runs the build's sw.js step over `files` ({ name: contents }) as Rollup would; returns the emitted sw.js. */
function emitServiceWorker(files) {
  const bundle = Object.fromEntries(Object.entries(files).map(([fileName, source]) => [fileName, { type: 'asset', fileName, source }]));
  let sw;
  precache.generateBundle.handler.call({ emitFile: ({ fileName, source }) => { assert.equal(fileName, 'sw.js'); sw = source; } }, {}, bundle);
  return sw;
}
const versionOf = (sw) => sw.match(/const CACHE = `\$\{PREFIX\}\$\{"([0-9a-f]+)"\}`/)?.[1];

/** Every file of a built site folder but its sw.js, as emitServiceWorker takes them. */
function siteFiles(dir) {
  const files = {};
  for (const f of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!f.isFile()) continue;
    const name = relative(dir, join(f.parentPath ?? f.path, f.name)).split('\\').join('/');
    if (name !== 'sw.js') files[name] = readFileSync(join(dir, name));
  }
  return files;
}

test('the cache version is a hash of every cached file\'s contents, the fixed-name threaded files included', () => {
  const files = { 'index.html': '<!doctype html>', 'assets/index-abc.js': 'export {}', 'attnscope-mt/attnscope-mt.wasm': '\0asm1' };
  const sw = emitServiceWorker(files);
  const version = versionOf(sw);
  assert.match(version, /^[0-9a-f]{12}$/);
  assert.match(sw, /"\.\/attnscope-mt\/attnscope-mt\.wasm"/);
  assert.equal(versionOf(emitServiceWorker({ ...files })), version, 'the same build gives the same version');
  // Only the contents of a fixed-name file change: the names are the same, the version must not be.
  assert.notEqual(versionOf(emitServiceWorker({ ...files, 'attnscope-mt/attnscope-mt.wasm': '\0asm2' })), version);
  assert.notEqual(versionOf(emitServiceWorker({ ...files, 'index.html': '<!doctype html><p>' })), version);
  assert.notEqual(versionOf(emitServiceWorker({ ...files, 'assets/index-abd.js': 'export {}' })), version);
});

let dir, server, url;
before(async () => {
  // A copy of the built demo that the test can deploy a new build into.
  dir = mkdtempSync(join(tmpdir(), 'attnscope-deploy-'));
  cpSync(SITE, dir, { recursive: true });
  ({ server, url } = await startServer(dir, 0));
});
after(async () => {
  await new Promise((ok) => (server ? server.close(ok) : ok()));
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Deploys a second build into `dir`: a fixed-name threaded file with new contents, and the dates model under a new
 * hashed name (the old file is gone from the server, as after any real deploy), with a new sw.js for it all.
 */
function deploy() {
  appendFileSync(join(dir, 'attnscope-mt', 'runtime-threads.js'), '\n// the second build\n');
  const assets = join(dir, 'assets');
  const oldModel = readdirSync(assets).find((f) => /^dates-seq2seq-.*\.safetensors$/.test(f));
  const newModel = 'dates-seq2seq-2ndbuild.safetensors';
  renameSync(join(assets, oldModel), join(assets, newModel));
  for (const f of readdirSync(assets).filter((name) => name.endsWith('.js'))) {
    const text = readFileSync(join(assets, f), 'utf8');
    if (text.includes(oldModel)) writeFileSync(join(assets, f), text.split(oldModel).join(newModel));
  }
  writeFileSync(join(dir, 'sw.js'), emitServiceWorker(siteFiles(dir)));
}

const threadsFile = (page) => page.evaluate(() => fetch('./attnscope-mt/runtime-threads.js').then((r) => r.text()));
const cacheNames = (page) => page.evaluate(() => caches.keys());
async function datesModelWorks(page) {
  await page.click('#mode-tabs [data-mode="s2s"]');
  await datesModelShown(page);
  await settled(page);
  const last = await page.evaluate(() => window.__attnscopeDemo.last);
  assert.equal(last.error ?? null, null);
  assert.equal(last.text, '1990-03-05');
}
async function openPage(context) {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForSelector('body.ready:not([data-loading])', { timeout: 15_000 });
  await settled(page);
  return page;
}

test('a tab open across a deploy keeps its own build until it reloads; then the old cache is deleted', async () => {
  const context = await env.browser.newContext({ serviceWorkers: 'allow' });
  const problems = [];
  context.on('weberror', (e) => problems.push(`pageerror: ${e.error().message}`));
  try {
    const tab = await openPage(context);
    await tab.evaluate(() => navigator.serviceWorker.ready);
    await tab.waitForFunction(() => navigator.serviceWorker.controller);
    await tab.evaluate(() => navigator.serviceWorker.addEventListener('controllerchange', () => (window.__swChanged = true)));
    const firstThreads = await threadsFile(tab);
    const [firstCache] = await cacheNames(tab);

    deploy();
    // Another tab's navigation makes the browser check sw.js: the second build installs and takes over both tabs.
    const other = await openPage(context);
    await tab.waitForFunction(() => window.__swChanged, null, { timeout: 15_000 });
    const caches = await cacheNames(tab);
    assert.equal(caches.length, 2, `both builds' caches while a tab uses the first: ${caches}`);

    // The reader comes back to the first tab. Headless Chromium runs animation frames only in the front page, and the
    // page draws (and settled() polls) on them: without this, the dates view took 12 s to settle here, and more than
    // the 15 s timeout on a busy machine.
    await tab.bringToFront();
    // The open tab still gets the first build: the fixed-name file's old contents, and the model file that the
    // server no longer has.
    assert.equal(await threadsFile(tab), firstThreads);
    await datesModelWorks(tab);

    // After a reload it runs the second build, and with no tab left on the first, its cache goes at the next check.
    await other.close();
    await tab.reload();
    await tab.waitForSelector('body.ready:not([data-loading])', { timeout: 15_000 });
    await settled(tab);
    assert.match(await threadsFile(tab), /the second build/);
    await datesModelWorks(tab);
    await tab.reload();
    await tab.waitForFunction((old) => caches.keys().then((keys) => keys.length === 1 && keys[0] !== old), firstCache, { timeout: 15_000, polling: 200 });
    // A file of the build opened as a page is that file, not the demo page.
    const opened = await tab.goto(`${url}attnscope-mt/runtime-threads.js`);
    assert.ok(opened.fromServiceWorker());
    assert.match(await opened.text(), /the second build/);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
