// The relaxed-SIMD builds' post-link step (CMakeLists.txt, attnscope_fuse_relaxed_madd), run on a .wasm in place:
// every call of the marker import (cmake/wasm_relaxed_madd.h: the GEMM's multiply-add, and nothing else) becomes one
// f32x4.relaxed_madd, and the import is dropped. Binaryen (npm, 132) reads the module, which Emscripten 3.1.6's own
// binaryen 108 cannot do once it holds relaxed instructions; the features are named one by one, as a module written
// with all of them enabled is refused by V8 (docs/toolchain.md, "Relaxed SIMD: two builds").
//
// With --glue and --as, the module is made to fit another build's Emscripten glue: Emscripten names imports and
// exports by short minified names given in order, so the marker shifts every name of the relaxed link. They are
// renamed to the names the other glue (the SIMD128 build's) gives the same functions, and the step fails unless the
// relaxed glue, with those names and without the marker, is then that glue exactly: one glue loads both modules.
//
//   node scripts/wasm-relaxed-madd.mjs <file.wasm> [--glue <its glue.mjs> --as <the SIMD128 build's glue.mjs>]
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import binaryen from 'binaryen';

const { positionals: [file], values: { glue, as: otherGlue } } = parseArgs({
  allowPositionals: true,
  options: { glue: { type: 'string' }, as: { type: 'string' } },
});
if (!file || (glue === undefined) !== (otherGlue === undefined)) {
  throw new Error('usage: node scripts/wasm-relaxed-madd.mjs <file.wasm> [--glue <its glue.mjs> --as <other glue.mjs>]');
}
const fail = (message) => {
  console.error(`wasm-relaxed-madd: ${file}: ${message}`);
  process.exit(1);
};

const F = binaryen.Features;
// What Emscripten 3.1.6 emits for these builds (SIMD128, exceptions, threads), plus relaxed SIMD.
const FEATURES = F.MutableGlobals | F.NontrappingFPToInt | F.SIMD128 | F.BulkMemory | F.BulkMemoryOpt | F.SignExt | F.ExceptionHandling |
  F.Atomics | F.ReferenceTypes | F.Multivalue | F.RelaxedSIMD;
const MARKER_TYPE = '(param v128 v128 v128) (result v128)';
const MARKER_JS = '_attnscope_relaxed_madd';

const input = binaryen.readBinary(readFileSync(file)); // read with every feature; written with FEATURES below
let text = input.emitText();
input.dispose();

// The marker is the one import of its type: no JS function can take or return v128, so no other import has it.
const markers = [...text.matchAll(/^ *\(import "(\w+)" "(\w+)" \(func (\$\S+) (.*)\)\)\n/gm)].filter((m) => m[4].endsWith(MARKER_TYPE));
if (markers.length !== 1) {
  fail(`expected one import of type ${MARKER_TYPE} (the GEMM's marked multiply-add), found ${markers.length}: ` +
    'was it built with cmake/wasm_relaxed_madd.h?');
}
const [importLine, , markerField, name] = markers[0];
// The name is followed by white space or a parenthesis, so $fimport$1 never matches inside $fimport$12.
const escaped = name.replace(/[$]/g, '\\$');
const calls = new RegExp(`\\(call ${escaped}(?=[\\s)])`, 'g');
const count = text.match(calls)?.length ?? 0;
if (count === 0) fail('the marker import is never called: the GEMM was not compiled with its multiply-add marked');
text = text.replace(importLine, '').replace(calls, '(f32x4.relaxed_madd');
if (new RegExp(`${escaped}(?=[\\s)])`).test(text)) fail('the marker import is still referenced other than by a direct call');

if (glue) {
  // The files a glue names (its .wasm, the threaded glue's worker) are named after its program: the relaxed glue's
  // names are read as the other program's, where a file name stands (after a quote or a slash, before its
  // extension), never inside an identifier.
  const program = (name) => path.basename(name, '.mjs');
  const fileNamed = new RegExp(`(?<=["'/])${program(glue).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=\\.)`, 'g');
  const own = readFileSync(glue, 'utf8').replace(fileNamed, program(otherGlue));
  text = renameLike(text, own, readFileSync(otherGlue, 'utf8'), markerField);
}

const output = binaryen.parseText(text);
output.setFeatures(FEATURES);
if (!output.validate()) fail('the rewritten module does not validate');
const bytes = withSection(output.emitBinary(), 'attnscope.simd', 'relaxed');
output.dispose();
writeFileSync(`${file}.tmp`, bytes);
renameSync(`${file}.tmp`, file);
console.log(`wasm-relaxed-madd: ${file}: ${count} multiply-adds fused (f32x4.relaxed_madd), ${bytes.length} bytes${glue ? `, names as in ${otherGlue}` : ''}`);

/**
 * `bytes` with a custom section appended: the relaxed builds say what they are (web/src/wasm-build.js, simdOfModule
 * reads it), so a module a user passes to init() is known by its bytes.
 */
function withSection(bytes, name, payload) {
  const leb = (n) => {
    const out = [];
    do {
      out.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
      n >>>= 7;
    } while (n);
    return out;
  };
  const content = [...leb(name.length), ...Buffer.from(name), ...Buffer.from(payload)];
  return Buffer.concat([bytes, Buffer.from([0, ...leb(content.length), ...content])]);
}

/**
 * The module's import and export names changed to those `other` (a glue of the same program without the marker)
 * uses for the same functions; fails unless `own` then reads exactly as `other`.
 */
function renameLike(wat, own, other, markerField) {
  const library = (js) => {
    const body = js.match(/var asmLibraryArg=\{([^}]*)\}/)?.[1];
    if (body === undefined) fail('no asmLibraryArg in the glue: not Emscripten 3.1.6 output?');
    return [...body.matchAll(/"([\w$]+)":([\w$]+)/g)].map(([, key, fn]) => ({ key, fn }));
  };
  const exportsUsed = (js) => [...js.matchAll(/Module\["asm"\]\["([\w$]+)"\]/g)].map((m) => m[1]);
  const ownLibrary = library(own), otherLibrary = library(other);
  if (ownLibrary.find((e) => e.key === markerField)?.fn !== MARKER_JS) fail(`the glue's import ${markerField} is not ${MARKER_JS}`);
  const importNames = new Map();
  for (const { key, fn } of ownLibrary) {
    if (fn === MARKER_JS) continue;
    const theirs = otherLibrary.find((e) => e.fn === fn);
    if (!theirs) fail(`the other glue has no import ${fn}`);
    importNames.set(key, theirs.key);
  }
  const ownExports = exportsUsed(own), otherExports = exportsUsed(other);
  if (ownExports.length !== otherExports.length) fail('the glues use different numbers of exports');
  const exportNames = new Map();
  ownExports.forEach((key, i) => {
    if (exportNames.has(key) && exportNames.get(key) !== otherExports[i]) fail(`export ${key} maps to two names`);
    exportNames.set(key, otherExports[i]);
  });

  // The check: the own glue, renamed and without the marker, must be the other glue character for character.
  const renamedGlue = own
    .replace(/function _attnscope_relaxed_madd\(\)\{[^}]*\}/, '')
    .replace(/var asmLibraryArg=\{([^}]*)\}/, (_, body) => `var asmLibraryArg={${body.split(',').filter((e) => !e.endsWith(`:${MARKER_JS}`))
      .map((e) => e.replace(/^"([\w$]+)"/, (__, key) => `"${importNames.get(key)}"`)).join(',')}}`)
    .replace(/Module\["asm"\]\["([\w$]+)"\]/g, (_, key) => `Module["asm"]["${exportNames.get(key)}"]`);
  if (renamedGlue !== other) {
    let at = 0;
    while (renamedGlue[at] === other[at]) ++at;
    const around = (js) => js.slice(Math.max(0, at - 60), at + 60);
    fail(`its glue, renamed, is not ${otherGlue}: they differ in more than the names, first at character ${at} of the renamed glue (…${around(renamedGlue)}… against …${around(other)}…)`);
  }

  let renamed = wat.replace(/^( *\(import "\w+" ")([\w$]+)(")/gm, (line, head, key, tail) => {
    if (!importNames.has(key)) fail(`import ${key} is not in the glue`);
    return `${head}${importNames.get(key)}${tail}`;
  });
  const exportLine = /^( *\(export ")([\w$]+)(")/gm;
  const exportsSeen = [...wat.matchAll(exportLine)].map((m) => m[2]);
  for (const key of exportsSeen) if (!exportNames.has(key)) fail(`export ${key} is not used by the glue, so it could not be renamed`);
  renamed = renamed.replace(exportLine, (line, head, key, tail) => `${head}${exportNames.get(key)}${tail}`);
  return renamed;
}
