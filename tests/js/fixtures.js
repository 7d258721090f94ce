// Reader for attnscope's golden fixtures (tests/fixtures/golden/*.json, tests/fixtures/models/*.json; the format is
// described in tests/fixtures/fixture_json.py), the JS twin of tests/cpp/fixture_reader.hpp.
//
// loadFixture(path) -> { name, ints, floats, strs, tensors }
//   ints / floats / strs: plain objects (key -> number / number / string)
//   tensors[name] = { data: Float32Array | Uint8Array, shape: number[] }
// Errors are thrown as Error("<path>: <message>").

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of tests/fixtures/golden. */
export const fixtureDir = fileURLToPath(new URL('../fixtures/golden/', import.meta.url)).replace(/[\\/]$/, '');

// JSON cannot spell these, so the writer uses strings.
const SPECIAL = { inf: Infinity, '-inf': -Infinity, nan: NaN };

function number(v, what) {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v in SPECIAL) return SPECIAL[v];
  throw new Error(`${what}: ${JSON.stringify(v)} is not a number`);
}

function tensor({ dtype, shape, data }, what) {
  if (!Array.isArray(shape) || shape.length === 0 || !shape.every(Number.isSafeInteger)) throw new Error(`${what}: bad shape`);
  const n = shape.reduce((a, b) => a * b, 1);
  if (!Array.isArray(data) || data.length !== n) throw new Error(`${what}: expected ${n} values, got ${data?.length}`);
  if (dtype === 'f32') return { data: Float32Array.from(data, (v) => number(v, what)), shape }; // rounds to float32
  if (dtype !== 'u8') throw new Error(`${what}: unknown dtype '${dtype}'`);
  if (!data.every((v) => Number.isInteger(v) && v >= 0 && v <= 255)) throw new Error(`${what}: bad u8 value`);
  return { data: Uint8Array.from(data), shape };
}

/** Parse fixture text; `path` is only used in error messages. */
export function parseFixture(text, path = '<string>') {
  try {
    const j = JSON.parse(text);
    if (typeof j.case !== 'string') throw new Error("no 'case' name");
    const map = (section, f) => Object.fromEntries(Object.entries(j[section] ?? {}).map(([k, v]) => [k, f(v, `'${k}'`)]));
    return {
      name: j.case,
      ints: map('int', (v, what) => {
        if (!Number.isSafeInteger(v)) throw new Error(`${what}: not a safe integer`);
        return v;
      }),
      floats: map('float', number),
      strs: map('str', (v, what) => {
        if (typeof v !== 'string') throw new Error(`${what}: not a string`);
        return v;
      }),
      tensors: map('tensor', tensor),
    };
  } catch (e) {
    throw new Error(`${path}: ${e.message}`);
  }
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

/** Load every *.json fixture in `dir` (default: fixtureDir), sorted by file name. */
export function loadFixtureDir(dir = fixtureDir) {
  const files = readdirSync(dir).filter((f) => f.endsWith('.json') && f.length > 5);
  // A suite driven by an empty folder would pass with nothing tested.
  if (files.length === 0) throw new Error(`${dir}: no *.json fixtures in this directory`);
  // sort by code units (byte order for ASCII names), like std::sort on std::string
  files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return files.map((f) => loadFixture(join(dir, f)));
}
