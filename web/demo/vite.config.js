// Vite config of the demo page: `vite build --config web/demo/vite.config.js` -> build/site.
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = resolve(here, '../..');

/** Emits sw.js: the service worker of web/demo/sw-template.js with the list of every file of the build. */
function precache() {
  return {
    name: 'attnscope-precache',
    apply: 'build',
    // A stylesheet with `crossorigin` is refused from file://; without it the page there is styled, and can say
    // how to serve it (index.html).
    transformIndexHtml: { order: 'post', handler: (html) => html.replace(/(<link rel="stylesheet")\s+crossorigin/g, '$1') },
    generateBundle(_, bundle) {
      const files = ['./', './index.html', ...Object.keys(bundle).filter((f) => f !== 'index.html').map((f) => `./${f}`)].sort();
      const version = createHash('sha256').update(files.join('\n')).digest('hex').slice(0, 12);
      const source = readFileSync(resolve(here, 'sw-template.js'), 'utf8')
        .replace('self.__PRECACHE__', JSON.stringify(files))
        .replace('self.__PRECACHE_VERSION__', JSON.stringify(version));
      this.emitFile({ type: 'asset', fileName: 'sw.js', source });
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
      for (const file of readdirSync(dist).filter((f) => f === 'runtime-threads.js' || /^attnscope-mt\.(mjs|wasm|worker\.js)$/.test(f))) {
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
