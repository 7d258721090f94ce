// Whether threads can run here and how many the hardware has: asked before the threaded files are looked for, so
// a page that cannot run threads never requests them. Bundled with runtime.js; the threaded loader is not.
const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';

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
  // Node's os module without an import bundlers would follow (see runtime.js's nodeFs).
  const os = isNode ? globalThis.process?.getBuiltinModule?.('node:os') : null;
  if (os) return os.availableParallelism?.() ?? os.cpus().length;
  return globalThis.navigator?.hardwareConcurrency ?? 1;
}
