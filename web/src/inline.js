// attnscope with attnscope.wasm embedded as base64, for bundlers that cannot follow new URL(…, import.meta.url)
// (esbuild, plain Rollup) and for single-file bundles. Same API as 'attnscope'; init() needs no .wasm file.
import { init as initFromBytes } from './runtime.js';
import { wasmBase64 } from './attnscope-wasm-base64.js';

export * from './index.js';

/** @type {Uint8Array | null} */
let wasmBinary = null;

/**
 * Instantiates the embedded module. Later calls return the same promise. Options as in 'attnscope': a `wasmUrl`
 * or `wasmBinary` given here replaces the embedded bytes.
 * @param {{ wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | Uint8Array }} [options]
 */
export function init(options = {}) {
  if (options === null || typeof options !== 'object' || options.wasmUrl !== undefined || options.wasmBinary !== undefined) {
    return initFromBytes(options);
  }
  // Decoded once and kept: every init() then passes the same bytes, which runtime.js sees as the same options.
  wasmBinary ??= Uint8Array.from(atob(wasmBase64), (c) => c.charCodeAt(0));
  return initFromBytes({ ...options, wasmBinary });
}
