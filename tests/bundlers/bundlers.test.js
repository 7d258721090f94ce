// The packed tarball in a consumer app built by each bundler a user may have, without bundler configuration, and
// run in headless Chromium (esbuild's Node bundles in Node): init(), one forward pass, the numbers the package
// gives in Node. The bundlers are this folder's pinned devDependencies; the tarball is unpacked into its
// node_modules/attnscope exactly as npm installs it (a copy, not a link).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS as ARGS } from '../../scripts/chromium.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const app = path.join(here, 'app');
const out = path.join(root, 'build', 'bundlers');
// Results must equal the package's own in Node: the same WebAssembly on the same input.
const TOLERANCE = 1e-6;

let browser;
let expected;

before(async () => {
  assert.ok(existsSync(path.join(here, 'node_modules', 'vite5')), 'the bundlers are not installed: run `node scripts/setup.mjs test`');
  // npm pack, then unpack into node_modules/attnscope: what `npm install attnscope` puts there.
  const work = mkdtempSync(path.join(tmpdir(), 'attnscope-pack-'));
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: root, encoding: 'utf8' }));
  const installed = path.join(here, 'node_modules', 'attnscope');
  rmSync(installed, { recursive: true, force: true });
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', path.join(work, packed.filename), '-C', installed, '--strip-components=1']);
  rmSync(work, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });

  const { init, MultiHeadAttention } = await import(path.join(installed, 'dist', 'index.js'));
  const { report } = await import('./app/report.js');
  const log = console.log;
  console.log = (line) => (expected = JSON.parse(line));
  try {
    await report(init, MultiHeadAttention);
  } finally {
    console.log = log;
  }
  assert.equal(expected.error, undefined);
  assert.equal(expected.output.length, 24);
  assert.equal(expected.weights.length, 18);

  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});

after(() => browser?.close());

function assertResult(result, label) {
  assert.equal(result.error, undefined, `${label}: ${result.error}`);
  for (const key of ['output', 'weights']) {
    assert.equal(result[key].length, expected[key].length, `${label}: ${key} length`);
    const worst = Math.max(...result[key].map((v, i) => Math.abs(v - expected[key][i])));
    assert.ok(worst <= TOLERANCE, `${label}: ${key} differs from Node's by ${worst}`);
  }
}

/** Opens `url` in a fresh page; returns the app's result, every console error or warning, and failed requests. */
async function openApp(url) {
  const page = await browser.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  try {
    await page.goto(url);
    const result = await page.waitForFunction(() => window.__result, null, { timeout: 30_000 }).then((h) => h.jsonValue());
    return { result, problems };
  } finally {
    await page.close();
  }
}

/** Serves a built folder and checks the app in it. */
async function checkBuilt(dir, label) {
  const { server, url } = await startServer(dir, 0);
  try {
    const { result, problems } = await openApp(url);
    assertResult(result, label);
    assert.deepEqual(problems, [], label);
  } finally {
    await new Promise((ok) => server.close(ok));
  }
  // Nothing of the build machine ends up in what users ship.
  for (const file of readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('.js'))) {
    assert.ok(!readFileSync(path.join(dir, file), 'utf8').includes('file:///'), `${label}: ${file} embeds a file:/// URL`);
  }
}

/** The user's one-line recipe: copy node_modules/attnscope/dist/attnscope.wasm into `sub` of the output. */
function copyWasm(dir, sub) {
  mkdirSync(path.join(dir, sub), { recursive: true });
  // Both builds: init() picks attnscope-relaxed.wasm where the engine runs relaxed SIMD (Chromium does).
  for (const file of ['attnscope.wasm', 'attnscope-relaxed.wasm']) cpSync(path.join(here, 'node_modules', 'attnscope', 'dist', file), path.join(dir, sub, file));
}

const html = (dir, script, type = 'module') =>
  writeFileSync(path.join(dir, 'index.html'), `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="${type}" src="./${script}"></script>\n`);

/** A Vite logger that collects warnings and errors (the test fails on any) and prints nothing else. */
function viteLogger(vite) {
  const customLogger = vite.createLogger('warn');
  const warnings = [];
  customLogger.warn = (message) => warnings.push(message);
  customLogger.warnOnce = (message) => warnings.push(message);
  customLogger.error = (message) => warnings.push(message);
  return { customLogger, warnings };
}

for (const major of [5, 6, 7, 8]) {
  test(`Vite ${major}: build`, { timeout: 120_000 }, async () => {
    const vite = await import(`vite${major}`);
    const outDir = path.join(out, `vite${major}`);
    const { customLogger, warnings } = viteLogger(vite);
    await vite.build({ root: app, configFile: false, customLogger, logLevel: 'warn', cacheDir: path.join(out, `vite${major}-cache`), build: { outDir, emptyOutDir: true } });
    assert.deepEqual(warnings, []);
    await checkBuilt(outDir, `Vite ${major} build`);
  });

  test(`Vite ${major}: dev server`, { timeout: 120_000 }, async () => {
    const vite = await import(`vite${major}`);
    // Vite's default cache (node_modules/.vite beside package.json), emptied: the dependency optimizer runs as on a
    // user's first `vite`.
    rmSync(path.join(here, 'node_modules', '.vite'), { recursive: true, force: true });
    const { customLogger, warnings } = viteLogger(vite);
    const server = await vite.createServer({ root: app, configFile: false, customLogger, logLevel: 'warn', server: { host: '127.0.0.1', port: 0, strictPort: false } });
    await server.listen();
    try {
      const { port } = server.httpServer.address();
      const { result, problems } = await openApp(`http://127.0.0.1:${port}/`);
      assertResult(result, `Vite ${major} dev`);
      assert.deepEqual(problems.filter((p) => !p.includes('[vite]')), [], `Vite ${major} dev`);
      assert.deepEqual(warnings, [], `Vite ${major} dev`);
    } finally {
      await server.close();
    }
  });

  test(`Vite ${major}: dev server sending COOP/COEP: threads: 2 runs the threaded build with no configuration`, { timeout: 120_000 }, async () => {
    const vite = await import(`vite${major}`);
    rmSync(path.join(here, 'node_modules', '.vite'), { recursive: true, force: true });
    const { customLogger, warnings } = viteLogger(vite);
    const headers = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
    const server = await vite.createServer({ root: app, configFile: false, customLogger, logLevel: 'warn', server: { host: '127.0.0.1', port: 0, strictPort: false, headers } });
    await server.listen();
    try {
      const { port } = server.httpServer.address();
      const { result, problems } = await openApp(`http://127.0.0.1:${port}/threads.html`);
      assertResult(result, `Vite ${major} dev, threads: 2`);
      assert.deepEqual(result.info, { build: 'threads', threads: 2, simd: 'relaxed' });
      assert.deepEqual(problems.filter((p) => !p.includes('[vite]')), [], `Vite ${major} dev, threads: 2`);
      assert.deepEqual(warnings, [], `Vite ${major} dev, threads: 2`);
    } finally {
      await server.close();
    }
  });
}

/**
 * A bundled app asking for threads, served cross-origin isolated: without the threaded files it runs one thread and
 * says what to copy and pass; with them copied to a folder and `threadsUrl` pointing there it runs two threads.
 * The results equal Node's either way, within the tolerance (Chromium runs the relaxed-SIMD builds, Node 20 SIMD128).
 */
async function checkThreadsApp(dir, page, label) {
  const threaded = path.join(here, 'node_modules', 'attnscope', 'dist');
  mkdirSync(path.join(dir, 'attnscope-threads'), { recursive: true });
  for (const file of readdirSync(threaded).filter((f) => f === 'runtime-threads.js' || f.startsWith('attnscope-mt'))) {
    cpSync(path.join(threaded, file), path.join(dir, 'attnscope-threads', file));
  }
  const { server, url } = await startServer(dir, 0);
  try {
    const missing = await openApp(`${url}${page}`);
    assertResult(missing.result, `${label}, no threaded files`);
    assert.equal(missing.result.info.build, 'single', label);
    assert.match(missing.result.info.fallbackReason, /^the threaded build's files \(runtime-threads\.js, attnscope-mt\*\) could not be loaded from beside attnscope \(.*runtime-threads\.js.*\); a bundle does not include them: copy them from node_modules\/attnscope\/dist\/ to one folder your server sends and pass init\(\{ threads, threadsUrl \}\) with its URL \(see README › Threads\)$/);
    // The one request that fails is the loader's, which the fallback reason names.
    assert.ok(missing.problems.length >= 1 && missing.problems.every((p) => /runtime-threads\.js|404/.test(p)), `${label}: ${missing.problems}`);
    const served = await openApp(`${url}${page}?threadsUrl=/attnscope-threads/`);
    assertResult(served.result, `${label}, threadsUrl`);
    assert.deepEqual(served.result.info, { build: 'threads', threads: 2, simd: 'relaxed' }, label);
    assert.deepEqual(served.problems, [], label);
  } finally {
    await new Promise((ok) => server.close(ok));
  }
}

test('Vite 8: build of an app asking for threads: no warnings; one thread with a reason, or two with threadsUrl', { timeout: 120_000 }, async () => {
  const vite = await import('vite8');
  const outDir = path.join(out, 'vite8-threads');
  const { customLogger, warnings } = viteLogger(vite);
  await vite.build({ root: app, configFile: false, customLogger, logLevel: 'warn', cacheDir: path.join(out, 'vite8-threads-cache'), build: { outDir, emptyOutDir: true, rollupOptions: { input: path.join(app, 'threads.html') } } });
  assert.deepEqual(warnings, []);
  await checkThreadsApp(outDir, 'threads.html', 'Vite 8 build, threads: 2');
});

// `npm link attnscope`: node_modules/attnscope is a symlink to the package's own folder, outside the app's.
test('Vite 5 dev server, linked install: a clear HTTP 403 without configuration, and working with server.fs.allow', { timeout: 120_000 }, async () => {
  const vite = await import('vite5');
  const linked = path.join(out, 'vite5-linked');
  const linkedApp = path.join(linked, 'app');
  mkdirSync(path.join(linked, 'node_modules'), { recursive: true });
  cpSync(app, linkedApp, { recursive: true });
  writeFileSync(path.join(linked, 'package.json'), JSON.stringify({ name: 'linked-consumer', private: true, type: 'module' }));
  symlinkSync(root, path.join(linked, 'node_modules', 'attnscope'), 'dir');
  for (const fsAllow of [undefined, [linked, path.join(root, 'dist')]]) {
    const server = await vite.createServer({ root: linkedApp, configFile: false, logLevel: 'silent', server: { host: '127.0.0.1', port: 0, fs: fsAllow && { allow: fsAllow } } });
    await server.listen();
    try {
      const { port } = server.httpServer.address();
      const { result } = await openApp(`http://127.0.0.1:${port}/`);
      if (fsAllow) assertResult(result, 'Vite 5 dev, linked, with server.fs.allow');
      else assert.match(result.error ?? '', /^init: could not load http:.*\/attnscope(-relaxed)?\.wasm.*: HTTP 403: is a dev server refusing files outside its root\? \(Vite: server\.fs\.allow; see README › Bundlers\)$/);
    } finally {
      await server.close();
    }
  }
});

// webpack's performance hint warns about any asset over 244 KiB, and the .wasm with the Hugging Face loader is
// about 320 KiB: the README's bundler notes tell webpack users to leave the .wasm out of that hint, as here. Every
// other warning still fails the build checks below.
const wasmSizeHintOff = { assetFilter: (name) => !name.endsWith('.wasm') };

/** The app's `entry` built by webpack 5 in production mode into out/`name`: its folder and its errors and warnings. */
async function webpackBuild(entry, name) {
  const { default: webpack } = await import('webpack');
  const outDir = path.join(out, name);
  const stats = await new Promise((resolve, reject) =>
    webpack({ mode: 'production', performance: wasmSizeHintOff, context: app, entry, output: { path: outDir, filename: 'main.js', clean: true } },
      (error, s) => (error ? reject(error) : resolve(s))));
  return { outDir, ...stats.toJson({ all: false, errors: true, warnings: true }) };
}

test('webpack 5: production build with no warnings', { timeout: 120_000 }, async () => {
  const { outDir, errors, warnings } = await webpackBuild('./main.js', 'webpack');
  assert.deepEqual(errors.map((e) => e.message), []);
  assert.deepEqual(warnings.map((w) => w.message), []);
  html(outDir, 'main.js', 'text/javascript');
  await checkBuilt(outDir, 'webpack');
});

test('webpack 5: init({ wasmUrl }) pointing at a copy of the .wasm', { timeout: 120_000 }, async () => {
  const { outDir, errors, warnings } = await webpackBuild('./main-wasmurl.js', 'webpack-wasmurl');
  assert.deepEqual([...errors, ...warnings].map((w) => w.message), []);
  copyWasm(outDir, 'copied');
  html(outDir, 'main.js', 'text/javascript');
  await checkBuilt(outDir, 'webpack with wasmUrl');
});

test('webpack 5: an app asking for threads builds with no warnings; one thread with a reason, or two with threadsUrl', { timeout: 120_000 }, async () => {
  const { outDir, errors, warnings } = await webpackBuild('./main-threads.js', 'webpack-threads');
  assert.deepEqual([...errors, ...warnings].map((w) => w.message), []);
  html(outDir, 'main.js', 'text/javascript');
  await checkThreadsApp(outDir, '', 'webpack, threads: 2');
});

/** The app's `entry` bundled by Rollup 4 with node-resolve (browser) as an ES module into out/`name`: its folder and warnings. */
async function rollupBuild(entry, name) {
  const { rollup } = await import('rollup');
  const { nodeResolve } = await import('@rollup/plugin-node-resolve');
  const outDir = path.join(out, name);
  const warnings = [];
  const bundle = await rollup({ input: path.join(app, entry), plugins: [nodeResolve({ browser: true })], onwarn: (w) => warnings.push(w.message) });
  await bundle.write({ dir: outDir, format: 'es' });
  await bundle.close();
  return { outDir, warnings };
}

test('Rollup 4 with node-resolve: attnscope, with attnscope.wasm copied beside the bundle', { timeout: 120_000 }, async () => {
  const { outDir, warnings } = await rollupBuild('main.js', 'rollup-copied');
  assert.deepEqual(warnings, []);
  copyWasm(outDir, '.');
  html(outDir, 'main.js');
  await checkBuilt(outDir, 'Rollup with the .wasm copied');
});

test('Rollup 4 with node-resolve: attnscope/inline', { timeout: 120_000 }, async () => {
  const { outDir, warnings } = await rollupBuild('main-inline.js', 'rollup');
  assert.deepEqual(warnings, []);
  html(outDir, 'main-inline.js');
  await checkBuilt(outDir, 'Rollup');
});

/** The app's `entry` bundled by esbuild for browsers as an ES module into out/`name`: its folder and esbuild's result. */
async function esbuildBrowser(entry, name) {
  const esbuild = await import('esbuild');
  const outDir = path.join(out, name);
  const result = await esbuild.build({ entryPoints: [path.join(app, entry)], bundle: true, format: 'esm', outdir: outDir, logLevel: 'silent' });
  return { outDir, result };
}

test('esbuild, browser: attnscope/inline', { timeout: 120_000 }, async () => {
  const { outDir, result } = await esbuildBrowser('main-inline.js', 'esbuild-browser');
  assert.deepEqual(result.warnings.map((w) => w.text), []);
  html(outDir, 'main-inline.js');
  await checkBuilt(outDir, 'esbuild browser');
});

test('esbuild, browser: attnscope with init({ wasmUrl })', { timeout: 120_000 }, async () => {
  const { outDir, result } = await esbuildBrowser('main-wasmurl.js', 'esbuild-wasmurl');
  assert.deepEqual(result.warnings.map((w) => w.text), []);
  copyWasm(outDir, 'copied');
  html(outDir, 'main-wasmurl.js');
  await checkBuilt(outDir, 'esbuild with wasmUrl');
});

for (const format of ['esm', 'cjs']) {
  test(`esbuild, Node (${format}): attnscope/inline`, { timeout: 120_000 }, async () => {
    const esbuild = await import('esbuild');
    const outfile = path.join(out, `esbuild-node-${format}`, format === 'esm' ? 'main.mjs' : 'main.cjs');
    const result = await esbuild.build({ entryPoints: [path.join(app, 'main-inline.js')], bundle: true, platform: 'node', format, outfile, logLevel: 'silent' });
    assert.deepEqual(result.warnings.map((w) => w.text), []);
    // Run from elsewhere: the bundle must not need anything beside it.
    const printed = execFileSync(process.execPath, [outfile], { cwd: tmpdir(), encoding: 'utf8' });
    assertResult(JSON.parse(printed), `esbuild Node ${format}`);
  });
}

test('a classic worker runs an IIFE bundle of attnscope/inline (esbuild)', { timeout: 120_000 }, async () => {
  const esbuild = await import('esbuild');
  const outDir = path.join(out, 'classic-worker');
  mkdirSync(outDir, { recursive: true });
  // The worker reports through postMessage; the page puts the result where openApp() looks for it.
  writeFileSync(path.join(outDir, 'worker-entry.js'), `
    import { init, MultiHeadAttention } from 'attnscope/inline';
    import { report } from ${JSON.stringify(path.join(app, 'report.js'))};
    globalThis.window = { set __result(r) { postMessage(r); } };
    report(init, MultiHeadAttention);`);
  const result = await esbuild.build({ entryPoints: [path.join(outDir, 'worker-entry.js')], bundle: true, format: 'iife', outfile: path.join(outDir, 'worker.js'), nodePaths: [path.join(here, 'node_modules')], logLevel: 'silent' });
  assert.deepEqual(result.warnings.map((w) => w.text), []);
  writeFileSync(path.join(outDir, 'main.js'), `new Worker('./worker.js').onmessage = (e) => { window.__result = e.data; };`);
  html(outDir, 'main.js', 'text/javascript');
  await checkBuilt(outDir, 'classic worker');
});

/** A folder out/`name` as a static host serves it with no bundler: the installed package's dist/ as attnscope/, and report.js. */
function staticHost(name) {
  const outDir = path.join(out, name);
  mkdirSync(outDir, { recursive: true });
  cpSync(path.join(here, 'node_modules', 'attnscope', 'dist'), path.join(outDir, 'attnscope'), { recursive: true });
  cpSync(path.join(app, 'report.js'), path.join(outDir, 'report.js'));
  return outDir;
}

test('no bundler: a module worker imports the package from a static host', { timeout: 120_000 }, async () => {
  const outDir = staticHost('module-worker');
  writeFileSync(path.join(outDir, 'worker.js'), `
    import { init, MultiHeadAttention } from './attnscope/index.js';
    import { report } from './report.js';
    globalThis.window = { set __result(r) { postMessage(r); } };
    report(init, MultiHeadAttention);`);
  writeFileSync(path.join(outDir, 'main.js'), `new Worker('./worker.js', { type: 'module' }).onmessage = (e) => { window.__result = e.data; };`);
  html(outDir, 'main.js');
  await checkBuilt(outDir, 'module worker');
});

test('no bundler: a cross-origin isolated page imports the package from a static host and runs threads: 2', { timeout: 120_000 }, async () => {
  const outDir = staticHost('static-threads');
  writeFileSync(path.join(outDir, 'main.js'), `
    import { init, MultiHeadAttention, runtimeInfo } from './attnscope/index.js';
    import { report } from './report.js';
    report((options) => init({ ...options, threads: 2 }), MultiHeadAttention, runtimeInfo);`);
  html(outDir, 'main.js');
  const { server, url } = await startServer(outDir, 0);
  try {
    const { result, problems } = await openApp(url);
    assertResult(result, 'static host, threads: 2');
    assert.deepEqual(result.info, { build: 'threads', threads: 2, simd: 'relaxed' });
    assert.deepEqual(problems, []);
  } finally {
    await new Promise((ok) => server.close(ok));
  }
});

// The README's examples, type-checked as a user's TypeScript under `strict` without skipLibCheck, by the oldest
// TypeScript the README promises and the newest this project uses.
const readmeExamples = () => [...readFileSync(path.join(root, 'README.md'), 'utf8').matchAll(/```(js|html)\n([\s\S]*?)```/g)]
  .map(([, lang, code]) => (lang === 'html' ? code.replace(/^[\s\S]*?<script type="module">\n([\s\S]*?)<\/script>[\s\S]*$/, '$1') : code))
  .filter((code) => /from '(attnscope|\.\/node_modules\/attnscope\/dist\/index\.js)'/.test(code));

for (const [version, tsc] of [['5.0.4', path.join(here, 'node_modules', 'typescript', 'bin', 'tsc')], ['5.9.3', path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')]]) {
  test(`the README's examples type-check under TypeScript ${version} --strict`, { timeout: 120_000 }, () => {
    const project = path.join(out, `typescript-${version}`);
    rmSync(project, { recursive: true, force: true });
    mkdirSync(project, { recursive: true });
    cpSync(path.join(here, 'node_modules', 'attnscope'), path.join(project, 'node_modules', 'attnscope'), { recursive: true });
    const examples = readmeExamples();
    assert.ok(examples.length >= 3, `found ${examples.length} README examples`);
    const files = examples.map((code, i) => {
      writeFileSync(path.join(project, `readme-${i}.ts`), `${code}\nexport {};\n`);
      return `readme-${i}.ts`;
    });
    // The Node example reads a file: that one function, declared as Node's types declare it (Buffer is a Uint8Array).
    writeFileSync(path.join(project, 'node-fs.d.ts'), "declare module 'node:fs/promises' { export function readFile(path: string | URL): Promise<Uint8Array>; }\n");
    files.push('node-fs.d.ts');
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'ts-consumer', private: true, type: 'module' }));
    writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({
      // types: [] keeps the @types/node that other tools installed higher up out: the examples need only the DOM.
      compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, types: [], module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'] },
      files,
    }));
    const printed = execFileSync(process.execPath, [tsc, '--version'], { encoding: 'utf8' });
    assert.equal(printed.trim(), `Version ${version}`);
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      assert.fail(`tsc ${version}:\n${error.stdout}${error.stderr}`);
    }
  });
}
