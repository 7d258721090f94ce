// Loads the threaded WebAssembly module (Emscripten pthreads over a SharedArrayBuffer). Imported by runtime.js
// only when init({ threads }) asks for more than one thread where threads can run, so the single-threaded
// default never downloads it.
import createThreadedModule from './attnscope-mt.mjs';

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';
// Node's built-in modules without an import bundlers would follow (see runtime.js's nodeFs).
const builtin = (name) => globalThis.process?.getBuiltinModule?.(name);

/**
 * Why threads cannot run here, or null when they can: they need SharedArrayBuffer, which browsers give only to
 * cross-origin-isolated pages (COOP: same-origin + COEP: require-corp), and Node always has.
 * @returns {string | null}
 */
export function threadsUnavailableReason() {
  if (!isNode && globalThis.crossOriginIsolated !== true) {
    return 'the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)';
  }
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') return 'SharedArrayBuffer is not available';
  if (!isNode && typeof Worker !== 'function') return 'Worker is not available';
  return null;
}

/** The threads the hardware runs at once: what `threads: 'auto'` asks for. */
export function hardwareThreads() {
  const os = isNode ? builtin('node:os') : null;
  if (os) return os.availableParallelism?.() ?? os.cpus().length;
  return globalThis.navigator?.hardwareConcurrency ?? 1;
}

/**
 * Instantiates the threaded module with a pool of `threads - 1` workers (the calling thread is the last one) and
 * starts them. Resolves with the module and the thread count it runs.
 * @param {{ threads: number, wasmBinary: ArrayBuffer | Uint8Array }} options
 */
export async function loadThreadedModule({ threads, wasmBinary }) {
  const settings = { wasmBinary, attnscopePoolSize: threads - 1 };
  if (isNode) {
    // Node ESM: Emscripten's node glue expects CommonJS's `require` and `__dirname` (TOOLCHAIN.md pitfall 4), and
    // its workers must be CommonJS, which a `.js` file inside a "type": "module" package is not; the build ships a
    // `.cjs` copy of the worker for Node.
    const { createRequire } = builtin('node:module');
    const { fileURLToPath } = builtin('node:url');
    globalThis.require ??= createRequire(import.meta.url);
    globalThis.__dirname ??= fileURLToPath(new URL('.', import.meta.url));
    const workerFile = fileURLToPath(new URL('./attnscope-mt.worker.cjs', import.meta.url));
    settings.locateFile = (name, prefix) => (name.endsWith('.worker.js') ? workerFile : prefix + name);
  }
  const wasm = await createThreadedModule(settings);
  const running = wasm._setNumThreads(threads);
  if (isNode) {
    // Idle helpers sleep on a futex; they must not keep Node alive after the program is done.
    for (const worker of [...wasm.PThread.runningWorkers, ...wasm.PThread.unusedWorkers]) worker.unref();
  }
  return { wasm, threads: running };
}
