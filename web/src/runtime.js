// Loads the WebAssembly module once and gives the wrappers checked access to it. Nothing here is public API
// except init(); every Emscripten detail stays in this file and the two wrappers.
import createAttnscopeModule from './attnscope.mjs';

/** @type {any} */
let wasm = null;
/** @type {Promise<void> | null} */
let loading = null;

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';

async function readWasm(source) {
  const url = source instanceof URL ? source : new URL(String(source), import.meta.url);
  if (isNode && url.protocol === 'file:') {
    // Hidden from bundlers: they must not try to pull node:fs into a browser build.
    const fsModule = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ /* webpackIgnore: true */ fsModule);
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`attnscope: could not load ${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

/**
 * Loads and instantiates the WebAssembly module. Idempotent: later calls return the same promise.
 * @param {{ wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | Uint8Array }} [options]
 */
export function init(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`init: options must be an object, got ${describe(options)}`);
  }
  if (!loading) {
    loading = (async () => {
      const wasmBinary = options.wasmBinary ?? (await readWasm(options.wasmUrl ?? new URL('./attnscope.wasm', import.meta.url)));
      wasm = await createAttnscopeModule({ wasmBinary });
    })();
    loading.catch(() => {
      loading = null; // a failed load (wrong URL, offline) can be retried
    });
  }
  return loading;
}

/**
 * WebAssembly memory of the module: its current size and the bytes allocated inside it. Useful to check that a
 * long-running page does not leak (allocated bytes stay flat) — every layer's memory is released by dispose().
 * Both are exact up to the 4 GiB limit.
 * @returns {{ wasmBytes: number, heapBytesInUse: number }}
 */
export function memoryUsage() {
  const wasm = module('memoryUsage');
  return { wasmBytes: wasm.HEAPU8.buffer.byteLength, heapBytesInUse: wasm._heapBytesInUse() };
}

/** The instantiated module, or a clear error naming the caller when init() has not finished. */
export function module(caller) {
  if (!wasm) throw new Error(`${caller}: attnscope is not initialised; call \`await init()\` first`);
  return wasm;
}

/** Throws the JS error class the binding's Status names (README "Errors and limits"); `ok` returns. */
export function check(status, caller) {
  const { _Status: Status } = wasm;
  if (status === Status.ok) return;
  const message = `${caller}: ${wasm._lastError()}`;
  throw status === Status.rangeError ? new RangeError(message) : new Error(message);
}

/** Bytes the WebAssembly memory may grow to (the module's -sMAXIMUM_MEMORY, asked of the binding). */
export function memoryLimit() {
  return wasm._memoryLimitBytes();
}

/** Short description of a value for error messages: "Float64Array(6)", "string", "null". */
export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `Array(${value.length})`;
  if (ArrayBuffer.isView(value)) return `${value.constructor.name}(${value.length})`;
  if (typeof value === 'object') return value.constructor?.name ?? 'object';
  if (typeof value === 'string') return `string "${value.length > 20 ? value.slice(0, 20) + '…' : value}"`;
  return `${typeof value} ${String(value)}`;
}

const ALIGN = 16;

/**
 * Places typed arrays in one arena of the WASM heap. `byteSizes` lists their sizes; returns their addresses
 * (16-byte aligned) after reserving room for all of them at once.
 */
export function reserve(arena, byteSizes, caller) {
  let total = 0;
  const offsets = byteSizes.map((bytes) => {
    const offset = total;
    total += Math.ceil(bytes / ALIGN) * ALIGN;
    return offset;
  });
  if (total > memoryLimit()) {
    throw new RangeError(`${caller}: this call needs ${formatBytes(total)} of WebAssembly memory, more than its ${formatBytes(memoryLimit())} limit`);
  }
  const base = arena.reserve(total);
  if (base === 0) check(wasm._lastStatus(), caller);
  return offsets.map((offset) => base + offset);
}

/** Copies a typed array into the heap at `address`. Reads the heap view anew: memory may have grown. */
export function copyIn(address, data) {
  if (data instanceof Float32Array) wasm.HEAPF32.set(data, address >>> 2);
  else wasm.HEAPU8.set(data, address);
}

/** A fresh Float32Array copy of `length` floats at `address`. */
export function copyOut(address, length) {
  return wasm.HEAPF32.slice(address >>> 2, (address >>> 2) + length);
}

/** Copies `target.length` floats at `address` into the caller's `target`: one memcpy, no allocation. */
export function copyInto(address, target) {
  target.set(wasm.HEAPF32.subarray(address >>> 2, (address >>> 2) + target.length));
  return target;
}

export function formatBytes(bytes) {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${bytes} bytes`;
}

// The wrappers' embind handles are deleted by dispose(); this only catches objects dropped without it.
export const leakGuard =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((handles) => {
        for (const handle of handles) if (!handle.isDeleted()) handle.delete();
      })
    : { register() {}, unregister() {} };
