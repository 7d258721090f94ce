// Reader for attnscope's golden fixtures (tests/fixtures/golden/*.txt, written by
// tests/fixtures/make_fixtures.py). Same format and semantics as
// tests/cpp/fixture_reader.hpp:
//
//   # comment                      (lines starting with '#', and blank lines, are ignored)
//   case <name>
//   str <key> <value...>           (value = rest of the line)
//   int <key> <integer>
//   float <key> <float>
//   tensor <name> <f32|u8> <rank> <dim0> ... <dim{rank-1}>
//   <numel values on ONE line; f32 may be inf, -inf, nan>
//   end
//
// loadFixture(path) -> { name, ints, floats, strs, tensors }
//   ints / floats / strs: plain objects (key -> number / number / string)
//   tensors[name] = { data: Float32Array | Uint8Array, shape: number[] }
// Errors are thrown as Error("<path>:<line>: <message>").

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of tests/fixtures/golden. */
export const fixtureDir = fileURLToPath(new URL('../fixtures/golden/', import.meta.url)).replace(/[\\/]$/, '');

const INT_RE = /^[+-]?\d+$/;
const FLOAT_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function parseF32Token(tok) {
  switch (tok.toLowerCase()) {
    case 'inf': case '+inf': case 'infinity': case '+infinity': return Infinity;
    case '-inf': case '-infinity': return -Infinity;
    case 'nan': case '+nan': case '-nan': return NaN;
    default: return FLOAT_RE.test(tok) ? Number(tok) : undefined;
  }
}

function splitWs(s) {
  return s.split(/[ \t]+/).filter((t) => t.length > 0);
}

function isIgnored(line) {
  const t = line.replace(/^[ \t]+/, '');
  return t.length === 0 || t[0] === '#';
}

/** Parse fixture text; `path` is only used in error messages. */
export function parseFixture(text, path = '<string>') {
  const lines = text.split('\n');
  let i = 0;
  let lineno = 0;
  const fail = (msg) => { throw new Error(`${path}:${lineno}: ${msg}`); };
  const nextContentLine = () => {
    while (i < lines.length) {
      let l = lines[i++];
      lineno = i;
      if (l.endsWith('\r')) l = l.slice(0, -1);
      if (!isIgnored(l)) return l;
    }
    return null;
  };

  const fx = {
    name: '',
    ints: Object.create(null),
    floats: Object.create(null),
    strs: Object.create(null),
    tensors: Object.create(null),
  };
  let haveCase = false;
  let haveEnd = false;
  let line;
  while ((line = nextContentLine()) !== null) {
    if (haveEnd) fail("content after 'end'");
    const tok = splitWs(line);
    const kw = tok[0];
    if (!haveCase) {
      if (kw !== 'case' || tok.length !== 2) fail("expected 'case <name>'");
      fx.name = tok[1];
      haveCase = true;
      continue;
    }
    if (kw === 'end') {
      if (tok.length !== 1) fail("junk after 'end'");
      haveEnd = true;
    } else if (kw === 'case') {
      fail("second 'case' line (one case per file)");
    } else if (kw === 'str') {
      if (tok.length < 3) fail("expected 'str <key> <value>'");
      const m = /^[ \t]*str[ \t]+\S+[ \t]+(.*?)[ \t]*$/.exec(line);
      if (tok[1] in fx.strs) fail(`duplicate str '${tok[1]}'`);
      fx.strs[tok[1]] = m[1];
    } else if (kw === 'int') {
      if (tok.length !== 3 || !INT_RE.test(tok[2])) fail("expected 'int <key> <integer>'");
      const v = Number(tok[2]);
      if (!Number.isSafeInteger(v)) fail(`int '${tok[1]}' out of safe integer range`);
      if (tok[1] in fx.ints) fail(`duplicate int '${tok[1]}'`);
      fx.ints[tok[1]] = v;
    } else if (kw === 'float') {
      const v = tok.length === 3 ? parseF32Token(tok[2]) : undefined;
      if (v === undefined) fail("expected 'float <key> <float>'");
      if (tok[1] in fx.floats) fail(`duplicate float '${tok[1]}'`);
      fx.floats[tok[1]] = v;
    } else if (kw === 'tensor') {
      if (tok.length < 4) fail("expected 'tensor <name> <f32|u8> <rank> <dims...>'");
      const [, tname, dtype, rankTok] = tok;
      if (dtype !== 'f32' && dtype !== 'u8') fail(`unknown dtype '${dtype}'`);
      if (!/^\d+$/.test(rankTok) || Number(rankTok) === 0) fail(`bad rank '${rankTok}'`);
      const rank = Number(rankTok);
      if (tok.length !== 4 + rank) fail(`tensor '${tname}': rank ${rank} but ${tok.length - 4} dims given`);
      const shape = tok.slice(4).map((d) => {
        if (!/^\d+$/.test(d)) fail(`bad dim '${d}'`);
        return Number(d);
      });
      const n = shape.reduce((a, b) => a * b, 1);
      const dataLine = nextContentLine();
      if (dataLine === null) fail(`missing data line for tensor '${tname}'`);
      const vals = splitWs(dataLine);
      if (vals.length !== n) fail(`tensor '${tname}': expected ${n} values, got ${vals.length}`);
      let data;
      if (dtype === 'f32') {
        data = new Float32Array(n);
        for (let j = 0; j < n; ++j) {
          const v = parseF32Token(vals[j]);
          if (v === undefined) fail(`tensor '${tname}': bad f32 value '${vals[j]}'`);
          data[j] = v; // Float32Array store rounds to nearest float32
        }
      } else {
        data = new Uint8Array(n);
        for (let j = 0; j < n; ++j) {
          const t = vals[j];
          if (!/^\+?\d+$/.test(t) || Number(t) > 255) fail(`tensor '${tname}': bad u8 value '${t}'`);
          data[j] = Number(t);
        }
      }
      if (tname in fx.tensors) fail(`duplicate tensor '${tname}'`);
      fx.tensors[tname] = { data, shape };
    } else {
      fail(`unknown keyword '${kw}'`);
    }
  }
  if (!haveCase) fail("no 'case' line");
  if (!haveEnd) fail("missing 'end'");
  // plain objects for the caller (null-prototype objects print oddly in assertion diffs)
  return {
    name: fx.name,
    ints: { ...fx.ints },
    floats: { ...fx.floats },
    strs: { ...fx.strs },
    tensors: { ...fx.tensors },
  };
}

/** Load one fixture file. */
export function loadFixture(path) {
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`${path}: cannot open fixture file (${e.code ?? e.message})`);
  }
  return parseFixture(text, path);
}

/** Load every *.txt fixture in `dir` (default: fixtureDir), sorted by file name. */
export function loadFixtureDir(dir = fixtureDir) {
  const files = readdirSync(dir).filter((f) => f.endsWith('.txt') && f.length > 4);
  // A suite driven by an empty folder would pass with nothing tested.
  if (files.length === 0) throw new Error(`${dir}: no *.txt fixtures in this directory`);
  // sort by code units (byte order for ASCII names), like std::sort on std::string
  files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return files.map((f) => loadFixture(join(dir, f)));
}
