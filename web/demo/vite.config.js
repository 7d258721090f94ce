// Vite config of the demo page: `vite build --config web/demo/vite.config.js` -> build/site.
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = resolve(here, '../..');

/**
 * The service worker's cache version: a hash of the name and the contents of every file it caches. A hash of the
 * names alone missed a build that changed only the fixed-name attnscope-mt/ files, and kept serving the old ones.
 * `bundle` is Rollup's output bundle (chunks have `code`, assets `source`).
 */
export function precacheVersion(bundle, files) {
  const hash = createHash('sha256');
  for (const file of files) {
    const entry = bundle[file === './' ? 'index.html' : file.slice(2)];
    if (!entry) throw new Error(`precache: ${file} is not in the bundle`);
    const contents = entry.type === 'chunk' ? entry.code : entry.source;
    // Each file's name and its contents' own hash, so no two different builds can run together into the same bytes.
    hash.update(`${file}\0${createHash('sha256').update(contents).digest('hex')}\n`);
  }
  return hash.digest('hex').slice(0, 12);
}

/** Emits sw.js: the service worker of web/demo/sw-template.js with the list of every file of the build. */
function precache() {
  return {
    name: 'attnscope-precache',
    apply: 'build',
    // A stylesheet with `crossorigin` is refused from file://; without it the page there is styled, and can say
    // how to serve it (index.html).
    transformIndexHtml: { order: 'post', handler: (html) => html.replace(/(<link rel="stylesheet")\s+crossorigin/g, '$1') },
    // Last, so that every other plugin's files (and the final index.html) are in the bundle it hashes.
    generateBundle: {
      order: 'post',
      handler(_, bundle) {
        const files = ['./', './index.html', ...Object.keys(bundle).filter((f) => f !== 'index.html').map((f) => `./${f}`)].sort();
        const source = readFileSync(resolve(here, 'sw-template.js'), 'utf8')
          .replace('self.__PRECACHE__', JSON.stringify(files))
          .replace('self.__PRECACHE_VERSION__', JSON.stringify(precacheVersion(bundle, files)));
        this.emitFile({ type: 'asset', fileName: 'sw.js', source });
      },
    },
  };
}

/**
 * Emits the threaded build's files under attnscope-mt/: the bundle does not contain them (attnscope imports them by
 * a URL bundlers leave alone), so the page passes that folder as init({ threadsUrl }) (README › Threads).
 */
function threadedFiles() {
  const dist = resolve(repo, 'dist');
  return {
    name: 'attnscope-threaded-files',
    apply: 'build',
    generateBundle() {
      // Not the .cjs copy of the worker: that one is Node's.
      for (const file of readdirSync(dist).filter((f) => f === 'runtime-threads.js' || /^attnscope-mt(-relaxed)?\.(mjs|wasm|worker\.js)$/.test(f))) {
        this.emitFile({ type: 'asset', fileName: `attnscope-mt/${file}`, source: readFileSync(resolve(dist, file)) });
      }
    },
  };
}

export default {
  root: here,
  // Relative asset URLs, so the built site works from any path (a subfolder, file server, Pages).
  base: './',
  publicDir: false,
  resolve: {
    // The page imports the package by its name; the build uses the freshly built dist/.
    alias: [
      { find: /^attnscope$/, replacement: resolve(repo, 'dist/index.js') },
      { find: /^attnscope\/figures$/, replacement: resolve(repo, 'dist/figures/index.js') },
    ],
  },
  plugins: [threadedFiles(), precache()],
  // The model Worker (src/worker/) is a module Worker: it imports attnscope, which imports the tokenizer on demand.
  worker: { format: 'es' },
  build: {
    outDir: resolve(repo, 'build/site'),
    emptyOutDir: true,
    target: 'es2022',
    // The .wasm is the point of the page: keep it a separate, cacheable file.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  server: { fs: { allow: [repo] } },
};
