// Vite config of the demo page: `vite build --config web/demo/vite.config.js` -> build/site.
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = resolve(here, '../..');

export default {
  root: here,
  // Relative asset URLs, so the built site works from any path (a subfolder, file server, Pages).
  base: './',
  publicDir: false,
  resolve: {
    // The page imports the package by its name; the build uses the freshly built dist/.
    alias: { attnscope: resolve(repo, 'dist/index.js') },
  },
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
