// What a .wasm is and whether this engine runs it: which build its bytes are (SIMD128 or relaxed SIMD) and which one
// to load here, whether the bytes are a WebAssembly module at all, and the features compiling it needs. runtime.js
// finds the bytes and instantiates them; nothing here is public API.

// Where to read about each start-up failure; the README is in the npm tarball, so the pointer always resolves.
export const SEE_BUNDLERS = 'see README › Bundlers';

// (func (result v128) v128.const 0 v128.const 0 v128.const 0 f32x4.relaxed_madd): the instruction the relaxed build's
// GEMM uses, in its standard encoding (fd 85 02). Validating it parses 61 bytes: microseconds, once per page.
const RELAXED_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 61, 1, 59, 0,
  253, 12, ...new Array(16).fill(0), 253, 12, ...new Array(16).fill(0), 253, 12, ...new Array(16).fill(0), 253, 133, 2, 11]);
let relaxedSupported;
/** Whether this engine runs relaxed SIMD (Chromium, Firefox, Node ≥ 22; Node 20 only with its flag; not Safari). */
export const relaxedSimdSupported = () => (relaxedSupported ??= WebAssembly.validate(RELAXED_PROBE));

const RELAXED_MISSING = 'this JavaScript engine does not run relaxed SIMD (f32x4.relaxed_madd): Chromium-based browsers, ' +
  'Firefox and Node 22 do; Node 20 only with --experimental-wasm-relaxed-simd; Safari does not';

/**
 * The payload of a module's custom section `name` (a view of `bytes`), or null when it has none. Walks the section
 * headers only, so it reads a module this engine could not compile (a relaxed-SIMD one in Node 20).
 */
export function customSection(bytes, name) {
  const leb = (at) => {
    let value = 0, shift = 0, byte;
    do {
      byte = bytes[at.i++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80 && at.i < bytes.length);
    return value;
  };
  const at = { i: 8 };
  while (at.i < bytes.length) {
    const id = bytes[at.i++];
    const size = leb(at);
    const end = at.i + size;
    if (id === 0) {
      const length = leb(at);
      if (String.fromCharCode(...bytes.subarray(at.i, at.i + length)) === name) return bytes.subarray(at.i + length, end);
    }
    at.i = end;
  }
  return null;
}

/**
 * The build a module is, from its bytes: the relaxed-SIMD builds carry a custom section `attnscope.simd` holding
 * "relaxed" (written by their post-link step, scripts/wasm-relaxed-madd.mjs); every other module is SIMD128.
 */
export function simdOfModule(bytes) {
  const payload = customSection(bytes, 'attnscope.simd');
  return payload && String.fromCharCode(...payload) === 'relaxed' ? 'relaxed' : 'baseline';
}

/**
 * The build init() loads: `simd` 'baseline' forces SIMD128; 'relaxed' the relaxed-SIMD build, and an Error where the
 * engine cannot run it; 'auto' (the default) relaxed where the probe validates.
 */
export function chooseSimd(simd = 'auto') {
  if (simd === 'baseline') return 'baseline';
  if (relaxedSimdSupported()) return 'relaxed';
  if (simd === 'relaxed') throw new Error(`init: options.simd is 'relaxed', but ${RELAXED_MISSING}; pass simd: 'auto' or 'baseline'`);
  return 'baseline';
}

/**
 * The rows of the GEMM's register tile for `simd` on this engine (the module's _setGemmTileRows): the relaxed-SIMD
 * build's own 6, or 5 under a V8 older than 11.4 (Node 20, where relaxed SIMD runs only behind a flag). That V8
 * schedules all six broadcast loads of a k step before its multiply-adds and spills the 6-row tile, at half the 4-row
 * tile's speed (bench/records/2026-12-04-results-before-the-trim.md, "Relaxed SIMD in Node 20"). At 5 the module
 * packs the rows of each input to F32 weights so that one load gives four rows' values, broadcast by shuffles that V8
 * places next to their multiply-adds: 10 accumulators fit its registers, where the 4-row tile's 8 wait on the
 * multiply-add's latency (bench/records/2026-12-06-node-slivers.md). No feature test can see a code generator's
 * register allocation, and a timing at start-up would time V8's baseline compiler instead of the optimised code the
 * passes run, so the engine's version decides: Node's own `process.versions.v8` (the default of `v8`), never a user
 * agent string. Every browser that runs relaxed SIMD without a flag is V8 11.4 or later, or not V8. The SIMD128
 * build's tile is 4 rows anyway.
 */
export function gemmTileRows(simd, v8 = globalThis.process?.versions?.v8) {
  if (simd !== 'relaxed') return 4;
  const version = /^(\d+)\.(\d+)\./.exec(String(v8 ?? ''));
  if (!version) return 6;
  const [major, minor] = [Number(version[1]), Number(version[2])];
  return major < 11 || (major === 11 && minor < 4) ? 5 : 6;
}

/** A module the caller gave (`where`) must be the build `simd` asked for, when it asked for one. */
export function checkGivenBuild(bytes, where, simd) {
  const is = simdOfModule(bytes);
  if (simd !== undefined && simd !== 'auto' && simd !== is) {
    const build = is === 'relaxed' ? 'relaxed-SIMD' : 'SIMD128 (baseline)';
    throw new Error(`init: options.simd is '${simd}', but ${where} is the ${build} build; pass the other file, or simd: 'auto'`);
  }
  if (is === 'relaxed' && !relaxedSimdSupported()) {
    throw new Error(`init: ${where} is the relaxed-SIMD build, but ${RELAXED_MISSING}; use attnscope.wasm there`);
  }
  return is;
}

export const isWasm = (bytes) => bytes[0] === 0x00 && bytes[1] === 0x61 && bytes[2] === 0x73 && bytes[3] === 0x6d;

const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(' ');

/** Checks the WebAssembly magic number; otherwise names what the bytes look like and the likely cause. */
export function checkMagic(bytes, where) {
  if (isWasm(bytes)) return;
  const text = String.fromCharCode(...bytes.subarray(0, 64)).trimStart().toLowerCase();
  const cause =
    bytes.length === 0 ? 'got an empty file'
    : text.startsWith('<!doctype') || text.startsWith('<html') ? 'got HTML: is a dev server answering with index.html?'
    : text.startsWith('<') ? 'got XML or HTML: is a server answering with an error page?'
    : /^(import|export|var|let|const|function|\(function|"use strict"|'use strict')\b/.test(text) ? 'got JavaScript: is a bundler serving a module in place of the .wasm?'
    : `got ${hex(bytes.subarray(0, 4))}`;
  throw new Error(`init: ${where} is not a WebAssembly module (expected it to start with 00 61 73 6d); ${cause} (${SEE_BUNDLERS})`);
}

// Smallest modules using each feature attnscope.wasm needs (hand-assembled; validate() only parses them).
const FEATURES = [
  {
    name: 'SIMD (128-bit)',
    // (func (result v128) i32.const 0 i8x16.splat)
    probe: [0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 8, 1, 6, 0, 65, 0, 253, 15, 11],
    since: 'Chrome 91, Edge 91, Firefox 89, Safari 16.4, Node 16.4',
  },
  {
    name: 'exception handling',
    // (func try nop catch_all end), the encoding -fwasm-exceptions emits
    probe: [0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 10, 9, 1, 7, 0, 6, 64, 1, 25, 11, 11],
    since: 'Chrome 95, Edge 95, Firefox 100, Safari 15.2, Node 17',
  },
];

/** Features of attnscope.wasm that this JavaScript engine lacks, by name and with the browsers that have them. */
function missingWasmFeatures() {
  return FEATURES.filter((f) => !WebAssembly.validate(new Uint8Array(f.probe))).map(({ name, since }) => ({ name, since }));
}

/** Compiles the module; a failure names the WebAssembly features this engine lacks, if any, else the file. */
export async function compile(bytes, where) {
  try {
    return await WebAssembly.compile(bytes);
  } catch (cause) {
    const missing = missingWasmFeatures();
    if (missing.length) {
      throw new Error(`init: this JavaScript engine lacks WebAssembly ${missing.map((f) => `${f.name} (${f.since})`).join(' and ')}, which attnscope needs`, { cause });
    }
    throw new Error(`init: ${where} does not compile (${cause.message}); is it this version's attnscope.wasm?`, { cause });
  }
}
