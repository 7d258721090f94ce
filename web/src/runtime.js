// Loads the WebAssembly module once and gives the wrappers checked access to it. Nothing here is public API
// except init() and memoryUsage(); every Emscripten detail stays in this file and the two wrappers.
import createAttnscopeModule from './attnscope.mjs';
import { hardwareThreads, threadsUnavailableReason } from './threads-support.js';
import { describe } from './figures/input.js';
import { SEE_BUNDLERS, checkGivenBuild, checkMagic, chooseSimd, compile, gemmTileRows, isWasm, simdOfModule } from './wasm-build.js';

/** @type {any} */
let wasm = null;
/** @type {Promise<void> | null} */
let loading = null;
/** The options of the init() call that is loading (or has loaded) the module. */
let loadingWith = null;

// The options init() knows; anything else is a TypeError, so a misspelt option cannot be silently ignored.
const INIT_OPTIONS = ['wasmUrl', 'wasmBinary', 'threads', 'simd', 'threadedWasmUrl', 'threadsUrl'];
const SIMD_CHOICES = ['auto', 'baseline', 'relaxed'];

/**
 * The default location of a .wasm: beside this module, `attnscope.wasm` (SIMD128) or `attnscope-relaxed.wasm`
 * (relaxed SIMD). Each must stay this literal expression: Vite, webpack, Rollup plugins and Parcel recognise
 * `new URL('<literal>', import.meta.url)` and emit the file with the bundle. Evaluated only when needed, so bundles
 * without `import.meta.url` (esbuild's CommonJS output) still load when they pass `wasmBinary` (attnscope/inline
 * passes its own bytes).
 */
function defaultWasmUrl(simd = 'baseline') {
  try {
    return simd === 'relaxed' ? new URL('./attnscope-relaxed.wasm', import.meta.url) : new URL('./attnscope.wasm', import.meta.url);
  } catch (cause) {
    throw new Error(`init: cannot locate attnscope.wasm: this bundle has no import.meta.url to find it by (${cause.message}); import 'attnscope/inline' instead, or pass init({ wasmUrl }) or init({ wasmBinary }) (${SEE_BUNDLERS})`, { cause });
  }
}

/**
 * What a relative string given by a user is relative to: the page (document.baseURI), or in a worker, which has no
 * document, the worker's script (location.href); undefined in Node, where such strings are file paths.
 */
export const userUrlBase = () => globalThis.document?.baseURI ?? globalThis.location?.href;

/** A user's wasmUrl: URLs as given; strings relative to the page or worker (browsers) or as file paths (Node). */
function resolveWasmUrl(wasmUrl) {
  if (wasmUrl instanceof URL) return wasmUrl;
  const base = userUrlBase();
  if (base) return new URL(wasmUrl, base);
  return /^(file|https?|data|blob):/i.test(wasmUrl) ? new URL(wasmUrl) : wasmUrl;
}

/**
 * Node's fs/promises, or undefined outside Node. Not an import, not even a dynamic one: bundlers would pull node:fs
 * into browser bundles or warn about it (Vite 8's optimizer resolves `import(variable)`). Node ≥ 20.16 has it.
 */
export const nodeFs = () => globalThis.process?.getBuiltinModule?.('node:fs/promises');

/** The bytes at `source` (a URL, or in Node a file path). Errors name the source and keep the fs error's `code`. */
async function readWasm(source, isDefault) {
  const fs = nodeFs();
  if (fs && (typeof source === 'string' || source.protocol === 'file:')) {
    try {
      return new Uint8Array(await fs.readFile(source));
    } catch (cause) {
      throw Object.assign(new Error(`init: could not read ${source} (${cause.code ?? cause.message})${isDefault ? `: did a bundler move this module without its attnscope.wasm? Import 'attnscope/inline' instead (${SEE_BUNDLERS})` : ''}`, { cause }), { code: cause.code });
    }
  }
  let response;
  try {
    response = await fetch(source);
  } catch (cause) {
    throw new Error(`init: could not load ${source} (${cause.message})`, { cause });
  }
  if (response.status === 403) throw new Error(`init: could not load ${source}: HTTP 403: is a dev server refusing files outside its root? (Vite: server.fs.allow; ${SEE_BUNDLERS})`);
  if (!response.ok) throw new Error(`init: could not load ${source}: HTTP ${response.status}${isDefault ? `: did a bundler move this module without its attnscope.wasm? (${SEE_BUNDLERS})` : ''}`);
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * Vite 5–7's dev server pre-bundles dependencies into <cacheDir>/deps/ (node_modules/.vite/deps/ by default) and
 * leaves new URL('./attnscope.wasm', import.meta.url) pointing there, where no .wasm is (Vite 8's optimizer rewrites
 * the URL to the package's own file). With the default cacheDir the package itself is two folders up, at node_modules/attnscope/dist/, which the
 * dev server serves: that is where the .wasm is read from then. Anything else returns null.
 */
function viteOptimizedOriginal(url) {
  if (!(url instanceof URL) || !/\/node_modules\/\.vite\/deps(_temp_[^/]*)?\/[^/]*$/.test(url.pathname)) return null;
  return new URL(`../../attnscope/dist/${url.pathname.replace(/^.*\//, '')}`, url);
}

/**
 * Instantiates `compiled` with the Emscripten glue. Emscripten's console output goes to `log` instead of the
 * user's console; a module that is not the one the glue was built with fails with a message saying so, instead
 * of a TypeError deep inside the glue.
 */
function instantiate(compiled, where, log) {
  const notOurs = (detail, cause) =>
    new Error(`init: ${where} is a WebAssembly module, but not the attnscope.wasm this version of attnscope was built with (${detail}); use the .wasm from the same package`, { cause });
  const exported = WebAssembly.Module.exports(compiled);
  if (!exported.some((e) => e.kind === 'memory')) return Promise.reject(notOurs('it exports no memory'));
  return new Promise((resolve, reject) => {
    const moduleArgs = {
      print: log,
      printErr: log,
      instantiateWasm(imports, receiveInstance) {
        const missing = WebAssembly.Module.imports(compiled).find((i) => imports[i.module]?.[i.name] === undefined);
        if (missing) {
          reject(notOurs(`it imports ${missing.module}.${missing.name}, which the glue does not provide`));
          return {};
        }
        WebAssembly.instantiate(compiled, imports).then((instance) => {
          try {
            receiveInstance(instance, compiled);
          } catch (cause) {
            reject(notOurs(cause.message, cause));
          }
        }, (cause) => reject(notOurs(cause.message, cause)));
        return {}; // the glue waits for receiveInstance
      },
    };
    // Emscripten's own messages end in advice about its build flags, which users cannot act on.
    const reason = (cause) => String(cause?.message ?? cause).replace(/\. Build with -s ASSERTIONS=1.*$/s, '');
    createAttnscopeModule(moduleArgs).then(resolve, (cause) => reject(new Error(`init: the module failed to start: ${reason(cause)}`, { cause })));
  });
}

/** @type {{ build: 'single' | 'threads', threads: number, simd?: 'baseline' | 'relaxed', fallbackReason?: string } | null} */
let info = null;

function checkSimd(simd) {
  if (simd === undefined) return;
  if (typeof simd !== 'string') throw new TypeError(`init: options.simd must be one of ${SIMD_CHOICES.map((c) => `'${c}'`).join(', ')}, got ${describe(simd)}`);
  if (!SIMD_CHOICES.includes(simd)) throw new RangeError(`init: options.simd must be one of ${SIMD_CHOICES.map((c) => `'${c}'`).join(', ')}, got '${simd}'`);
}

function checkThreads(threads) {
  if (threads === undefined || threads === 'auto') return;
  if (!Number.isInteger(threads) || threads < 1 || threads > 64) {
    throw new RangeError(`init: threads must be 'auto' or an integer from 1 to 64, got ${describe(threads)}`);
  }
}

/** A user's threadsUrl as a folder URL: relative to the page (browsers) or a file path (Node); a trailing / added. */
function resolveThreadsUrl(threadsUrl) {
  let url = threadsUrl instanceof URL ? threadsUrl : resolveWasmUrl(threadsUrl);
  if (typeof url === 'string') url = globalThis.process.getBuiltinModule('node:url').pathToFileURL(url);
  return new URL(url.href.endsWith('/') ? url.href : `${url.href}/`);
}

/**
 * Where the threaded loader is by default: beside attnscope.wasm in the package's folder. Vite's dev servers move
 * this module into their dependency cache, where the loader is not (and asking there makes Vite warn), but serve the
 * package's folder, which the wasm URL leads to (viteOptimizedOriginal for Vite 5–7; Vite 8 rewrites it itself).
 * A relative specifier otherwise: no bare import.meta.url here, which webpack would replace by a file:// path.
 */
function defaultLoaderSpecifier() {
  let wasmUrl = null;
  try {
    wasmUrl = defaultWasmUrl();
  } catch {
    // no import.meta.url in this bundle: the relative specifier fails, and says so
  }
  // A wasm URL still named attnscope.wasm is the package's folder (unbundled, or a dev server's rewrite); bundles
  // hash the name, and there the relative specifier fails with the reason the user needs.
  const folder = viteOptimizedOriginal(wasmUrl) ?? (wasmUrl instanceof URL && wasmUrl.pathname.endsWith('/attnscope.wasm') ? wasmUrl : null);
  return folder ? new URL('runtime-threads.js', folder).href : './runtime-threads.js';
}

/**
 * The threaded build's loader (runtime-threads.js), imported by a specifier bundlers do not follow: its Emscripten
 * glue refers to Node built-ins, which Vite and webpack warn about. Unbundled (Node, a page served from dist/) the
 * relative specifier finds it beside this module; a bundle does not contain it, so a bundled app serves the files
 * itself and passes threadsUrl. Resolves with the loader, or with why it could not be loaded.
 */
async function importThreadedLoader(threadsUrl) {
  const specifier = threadsUrl === undefined ? defaultLoaderSpecifier() : new URL('runtime-threads.js', resolveThreadsUrl(threadsUrl)).href;
  try {
    return { loader: await import(/* webpackIgnore: true */ /* @vite-ignore */ specifier) };
  } catch (cause) {
    const files = "the threaded build's files (runtime-threads.js, attnscope-mt*)";
    return { failure: threadsUrl === undefined
      ? `${files} could not be loaded from beside attnscope (${cause?.message ?? cause}); a bundle does not include them: copy them from node_modules/attnscope/dist/ to one folder your server sends and pass init({ threads, threadsUrl }) with its URL (see README › Threads)`
      : `${files} could not be loaded from threadsUrl ${specifier.replace(/runtime-threads\.js$/, '')} (${cause?.message ?? cause}); copy them there from node_modules/attnscope/dist/ (see README › Threads)` };
  }
}

/**
 * `threads` > 1 or 'auto': the threaded module where threads can run and its files can be found. Returns true when
 * it loaded; otherwise records why not, and the single-threaded module loads as usual.
 */
async function loadThreaded(options, simd) {
  const wanted = options.threads === 'auto' ? Math.min(hardwareThreads(), 64) : options.threads;
  const unavailable = wanted > 1 ? threadsUnavailableReason() : 'one hardware thread';
  const { loader, failure } = unavailable ? {} : await importThreadedLoader(options.threadsUrl);
  if (unavailable || failure) {
    info = { build: 'single', threads: 1, fallbackReason: unavailable ?? failure };
    return false;
  }
  const given = options.threadedWasmUrl !== undefined;
  const source = given ? resolveWasmUrl(options.threadedWasmUrl) : loader.defaultThreadedWasmUrl(chooseSimd(simd));
  const bytes = await readWasm(source, false);
  checkMagic(bytes, String(source));
  const built = given ? checkGivenBuild(bytes, String(source), simd) : simdOfModule(bytes);
  const loaded = await loader.loadThreadedModule({ threads: wanted, wasmBinary: bytes, simd: built });
  wasm = loaded.wasm;
  wasm._setGemmTileRows(gemmTileRows(built));
  info = { build: 'threads', threads: loaded.threads, simd: built };
  return true;
}

/**
 * Loads the module. `embedded`, from attnscope/inline, gives the package's own two modules as bytes
 * ({ baseline, relaxed }: functions resolving to a Uint8Array) in place of the files beside this module.
 */
async function load(options, embedded) {
  info = null;
  if ((options.threads === 'auto' || options.threads > 1) && (await loadThreaded(options, options.simd))) return;
  info ??= { build: 'single', threads: 1 };
  // Emscripten's print/printErr: kept (the last few lines, for a debugger) instead of written to the user's console.
  const log = Object.assign((line) => log.lines.push(line) > 20 && log.lines.shift(), { lines: [] });
  let bytes;
  let where;
  let simd;
  if (options.wasmBinary !== undefined) {
    const b = options.wasmBinary;
    if (!(b instanceof ArrayBuffer) && !(b instanceof Uint8Array)) {
      throw new TypeError(`init: wasmBinary must be an ArrayBuffer or a Uint8Array, got ${describe(b)}`);
    }
    bytes = b instanceof Uint8Array ? b : new Uint8Array(b);
    where = 'wasmBinary';
  } else if (options.wasmUrl === undefined && embedded) {
    simd = chooseSimd(options.simd);
    bytes = await embedded[simd]();
    where = `the embedded ${simd === 'relaxed' ? 'attnscope-relaxed.wasm' : 'attnscope.wasm'}`;
  } else {
    const isDefault = options.wasmUrl === undefined;
    if (isDefault) simd = chooseSimd(options.simd);
    const source = isDefault ? defaultWasmUrl(simd) : resolveWasmUrl(options.wasmUrl);
    where = String(source);
    const original = isDefault ? viteOptimizedOriginal(source) : null;
    if (original) {
      bytes = await readWasm(original, false).catch(() => null);
      if (bytes && isWasm(bytes)) where = String(original);
      else throw new Error(`init: Vite's dependency optimizer moved attnscope to ${source.pathname.replace(/[^/]*$/, '')} without its .wasm, and ${original} did not answer with it either; add optimizeDeps: { exclude: ['attnscope'] } to vite.config.js (${SEE_BUNDLERS})`);
    } else {
      bytes = await readWasm(source, isDefault);
    }
  }
  checkMagic(bytes, where);
  // A module the caller named is used as it is: the one it is must agree with the simd asked for.
  simd = simd === undefined ? checkGivenBuild(bytes, where, options.simd) : simdOfModule(bytes);
  const compiled = await compile(bytes, where);
  wasm = await instantiate(compiled, where, log);
  wasm._setGemmTileRows(gemmTileRows(simd));
  info.simd = simd;
}

function sameOptions(a, b) {
  const same = (x, y) => x === y || (x instanceof URL && y instanceof URL && x.href === y.href);
  return INIT_OPTIONS.every((key) => same(a[key], b[key]));
}

const describeOptions = (o) => `{ ${INIT_OPTIONS.filter((k) => o[k] !== undefined).map((k) => `${k}: ${o[k] instanceof URL || typeof o[k] === 'string' ? String(o[k]) : describe(o[k])}`).join(', ')} }`.replace('{  }', '{}');

/**
 * Loads and instantiates the WebAssembly module. Later calls return the same promise; a later call with other
 * options throws (it could not be honoured), and `init()` without options just waits for the first.
 * `threads` > 1 (or 'auto') loads the threaded module where threads can run, else the single-threaded one, which is
 * also the default; `simd` picks the SIMD128 or the relaxed-SIMD build of it: see runtimeInfo().
 * @param {{ wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | Uint8Array, threads?: number | 'auto',
 *   simd?: 'auto' | 'baseline' | 'relaxed', threadedWasmUrl?: string | URL, threadsUrl?: string | URL }} [options]
 */
export function init(options = {}) {
  return initWith(options, null);
}

/** init(), with attnscope/inline's embedded modules (see load()). Not public API. */
export function initWith(options, embedded) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`init: options must be an object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!INIT_OPTIONS.includes(key)) throw new TypeError(`init: unknown option '${key}' (known: ${INIT_OPTIONS.join(', ')})`);
  }
  if (options.wasmUrl !== undefined && typeof options.wasmUrl !== 'string' && !(options.wasmUrl instanceof URL)) {
    throw new TypeError(`init: wasmUrl must be a string or a URL, got ${describe(options.wasmUrl)}`);
  }
  checkThreads(options.threads);
  checkSimd(options.simd);
  for (const key of ['threadedWasmUrl', 'threadsUrl']) {
    if (options[key] !== undefined && typeof options[key] !== 'string' && !(options[key] instanceof URL)) {
      throw new TypeError(`init: ${key} must be a string or a URL, got ${describe(options[key])}`);
    }
  }
  if (loading) {
    const given = Object.keys(options).some((key) => options[key] !== undefined);
    if (given && !sameOptions(options, loadingWith)) {
      throw new Error(`init: attnscope is already ${wasm ? 'initialised' : 'initialising'} with ${describeOptions(loadingWith)}; it cannot load again with ${describeOptions(options)} (call init() without options to wait for the first)`);
    }
    return loading;
  }
  loadingWith = { ...options };
  loading = load(options, embedded);
  loading.catch(() => {
    loading = null; // a failed load (wrong URL, offline) can be retried, with other options too
    loadingWith = null;
  });
  return loading;
}

/**
 * Which build runs and with how many threads (the calling thread included), and which SIMD: 'relaxed' (the GEMM's
 * multiply-adds fused by relaxed SIMD) or 'baseline' (SIMD128). `fallbackReason` says why a request for threads got
 * the single-threaded build.
 * @returns {{ build: 'single' | 'threads', threads: number, simd: 'baseline' | 'relaxed', fallbackReason?: string }}
 */
export function runtimeInfo() {
  module('runtimeInfo');
  const { build, threads, simd, fallbackReason } = info;
  return fallbackReason === undefined ? { build, threads, simd } : { build, threads, simd, fallbackReason };
}

/**
 * WebAssembly memory of the module: its current size and the bytes allocated inside it. Useful to check that a
 * long-running page does not leak (allocated bytes stay flat) — every layer's memory is released by dispose().
 * Both are exact up to the 4 GiB limit.
 * @returns {{ wasmBytes: number, heapBytesInUse: number }}
 */
export function memoryUsage() {
  return call('memoryUsage', (wasm) => ({ wasmBytes: wasm.HEAPU8.buffer.byteLength, heapBytesInUse: wasm._heapBytesInUse() }));
}

/**
 * Set when a call trapped inside WebAssembly (a RuntimeError: memory access out of bounds, unreachable, an abort):
 * the call stopped halfway, so the module's memory may hold half-written state, and nothing may run on it again.
 * @type {{ caller: string, message: string } | null}
 */
let broken = null;

/** The instantiated module, or a clear error naming the caller when init() has not finished or a call trapped. */
export function module(caller) {
  if (broken) {
    throw new Error(`${caller}: attnscope cannot run: its WebAssembly module trapped in an earlier call (${broken.caller}: ${broken.message}) and its memory can no longer be trusted; reload the page (or restart the process) to use attnscope again`);
  }
  if (!wasm) throw new Error(`${caller}: attnscope is not initialised; call \`await init()\` first`);
  return wasm;
}

/** Whether a call trapped: dispose() then frees nothing, since the memory it would free can no longer be trusted. */
export const isBroken = () => broken !== null;

/**
 * Runs one raw entry point of the binding, `invoke(wasm)`: the one place where its error protocol is read and where
 * a trap is caught. A result of null is a failure the binding recorded: thrown as the class it names (TypeError,
 * RangeError, else Error) with its message after `caller`. A trap marks the module broken (see `broken`).
 */
export function call(caller, invoke) {
  const m = module(caller);
  let result;
  try {
    result = invoke(m);
  } catch (error) {
    if (!(error instanceof WebAssembly.RuntimeError)) throw error;
    broken = { caller, message: error.message };
    throw new Error(`${caller}: attnscope's WebAssembly module trapped (${error.message}); its memory can no longer be trusted, so every later call throws: reload the page (or restart the process) to use attnscope again`, { cause: error });
  }
  if (result !== null) return result;
  const { _Status: Status } = m;
  const status = m._lastStatus();
  // The core names the C++ call in some messages (`LanguageModel.forward: tokens × d_ff: …`); when that is the
  // caller's own name, it is said once.
  const detail = m._lastError();
  const message = detail.startsWith(`${caller}: `) ? detail : `${caller}: ${detail}`;
  throw status === Status.typeError ? new TypeError(message) : status === Status.rangeError ? new RangeError(message) : new Error(message);
}

// The description of a value in error messages, one for the whole package: the figures' (figures/input.js imports
// nothing, so importing it here pulls in nothing either), re-exported for the modules that import it from here.
export { describe };

const ALIGN = 16;

/**
 * Places typed arrays in one arena of the WASM heap. `byteSizes` lists their sizes; returns their addresses
 * (16-byte aligned) after reserving room for all of them at once (C++ refuses what memory cannot hold).
 */
export function reserve(arena, byteSizes, caller) {
  let total = 0;
  const offsets = byteSizes.map((bytes) => {
    const offset = total;
    total += Math.ceil(bytes / ALIGN) * ALIGN;
    return offset;
  });
  const base = call(caller, () => arena.reserve(total) || null); // 0: the failure is recorded
  return offsets.map((offset) => base + offset);
}

// The wrappers' embind handles are deleted by dispose(); this only catches objects dropped without it.
export const leakGuard =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((handles) => {
        if (broken) return; // memory that can no longer be trusted is not freed
        for (const handle of handles) if (!handle.isDeleted()) handle.delete();
      })
    : { register() {}, unregister() {} };
