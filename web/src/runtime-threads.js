// Loads the threaded WebAssembly module (Emscripten pthreads over a SharedArrayBuffer). Imported by runtime.js
// only when init({ threads }) asks for more than one thread where threads can run, so the single-threaded
// default never downloads it; imported by URL, hidden from bundlers, because Emscripten's glue (built for web,
// worker and Node) and its worker refer to Node built-ins that bundlers warn about. It is served as it is in dist/.
// Each threaded build has its own glue and worker (attnscope-mt.* and attnscope-mt-relaxed.*): only the one
// that runs is imported.

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';
// Node's built-in modules without an import bundlers would follow (see runtime.js's nodeFs).
const builtin = (name) => globalThis.process?.getBuiltinModule?.(name);
// What Emscripten's Node glue reads from or writes to the global object (docs/toolchain.md, "Node ESM and Emscripten's glue").
const GLUE_GLOBALS = ['require', '__dirname', 'Worker'];

/**
 * Where the threaded .wasm is by default: beside this module, wherever it is served from; `attnscope-mt.wasm`
 * (SIMD128) or `attnscope-mt-relaxed.wasm` (relaxed SIMD), each loaded by its own glue.
 */
export const defaultThreadedWasmUrl = (simd = 'baseline') =>
  (simd === 'relaxed' ? new URL('./attnscope-mt-relaxed.wasm', import.meta.url) : new URL('./attnscope-mt.wasm', import.meta.url));

/**
 * Instantiates the threaded module with a pool of `threads - 1` workers (the calling thread is the last one) and
 * starts them. `simd` is the build `wasmBinary` is ('baseline' or 'relaxed'), whose glue loads it. Resolves with
 * the module and the thread count it runs.
 * @param {{ threads: number, wasmBinary: ArrayBuffer | Uint8Array, simd: 'baseline' | 'relaxed' }} options
 */
export async function loadThreadedModule({ threads, wasmBinary, simd }) {
  const { default: createThreadedModule } = simd === 'relaxed' ? await import('./attnscope-mt-relaxed.mjs') : await import('./attnscope-mt.mjs');
  const settings = { wasmBinary, attnscopePoolSize: threads - 1 };
  // The globals the Node glue reads or sets (`require`, `__dirname`; it assigns `Worker` itself) are the program's
  // again once the pool has started, the glue's last use of them: its helpers all start at instantiation, and the
  // thread count is read once. An ES module program finds no `require` or browser-like `Worker` after init(), and
  // a `Worker` of its own (a polyfill, Deno's or Bun's) is put back.
  const kept = isNode ? GLUE_GLOBALS.map((name) => [name, Object.getOwnPropertyDescriptor(globalThis, name)]) : [];
  try {
    if (isNode) {
      // Node ESM: Emscripten's node glue expects CommonJS's `require` and `__dirname` (see GLUE_GLOBALS), and
      // its workers must be CommonJS, which a `.js` file inside a "type": "module" package is not; the build ships a
      // `.cjs` copy of each worker for Node.
      const { createRequire } = builtin('node:module');
      const { fileURLToPath } = builtin('node:url');
      globalThis.require ??= createRequire(import.meta.url);
      globalThis.__dirname ??= fileURLToPath(new URL('.', import.meta.url));
      const workerFile = fileURLToPath(simd === 'relaxed' ? new URL('./attnscope-mt-relaxed.worker.cjs', import.meta.url)
        : new URL('./attnscope-mt.worker.cjs', import.meta.url));
      settings.locateFile = (name, prefix) => (name.endsWith('.worker.js') ? workerFile : prefix + name);
    }
    const wasm = await createThreadedModule(settings);
    if (isNode) {
      // Idle helpers sleep on a futex; they must not keep Node alive after the program is done (nor after a failed
      // start: the pool's workers exist once the module does).
      for (const worker of [...wasm.PThread.runningWorkers, ...wasm.PThread.unusedWorkers]) worker.unref();
    }
    return { wasm, threads: wasm._setNumThreads(threads) };
  } finally {
    for (const [name, descriptor] of kept) {
      if (descriptor) Object.defineProperty(globalThis, name, descriptor);
      else delete globalThis[name];
    }
  }
}
