// attnscope with its .wasm files embedded as base64, for bundlers that cannot follow new URL(…, import.meta.url)
// (esbuild, plain Rollup) and for single-file bundles. Same API as 'attnscope'; init() needs no .wasm file. Each
// build is a module of its own, imported only when init() picks it: a bundle that splits chunks fetches one; a
// single-file bundle holds both.
import { initWith } from './runtime.js';

export * from './index.js';

const decode = (base64) => Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
// Decoded once and kept, as a retried init() asks again.
const embedded = {
  baseline: () => (embedded.baselineBytes ??= import('./attnscope-wasm-base64.js').then((m) => decode(m.wasmBase64))),
  relaxed: () => (embedded.relaxedBytes ??= import('./attnscope-relaxed-wasm-base64.js').then((m) => decode(m.wasmBase64))),
};

/**
 * Instantiates the embedded module (the relaxed-SIMD build where the engine runs it, as 'attnscope' picks). Later
 * calls return the same promise. Options as in 'attnscope': a `wasmUrl` or `wasmBinary` given here replaces the
 * embedded bytes.
 * @param {{ wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | Uint8Array, threads?: number | 'auto',
 *   simd?: 'auto' | 'baseline' | 'relaxed', threadedWasmUrl?: string | URL, threadsUrl?: string | URL }} [options]
 */
export function init(options = {}) {
  return initWith(options, embedded);
}
