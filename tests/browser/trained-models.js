// The demo's trained model files as the built page fetches them (build/site/assets), read by hand and loaded by the
// package in Node: the browser tests of the trained models compare the page with these.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { init, loadModel } from '../../dist/index.js';
import { SITE } from './helpers.js';

/** The model file the built page fetches (Vite copies models/<name>.safetensors to assets/<name>-<hash>.safetensors). */
export function builtModel(name) {
  const dir = join(SITE, 'assets');
  const file = readdirSync(dir).find((f) => f.startsWith(`${name}-`) && f.endsWith('.safetensors'));
  assert.ok(file, `no ${name}-*.safetensors in ${dir}`);
  return join(dir, file);
}

/** A model file's config, named heads and training record, read by hand (tools/MODEL_FORMAT.md): uint64 length, JSON,
 * __metadata__. */
export function readHeader(path) {
  const bytes = readFileSync(path);
  const meta = JSON.parse(bytes.subarray(8, 8 + Number(bytes.readBigUInt64LE(0))).toString('utf8')).__metadata__;
  assert.equal(meta.format, 'attnscope-model/1');
  return { config: JSON.parse(meta.config), named_heads: JSON.parse(meta.named_heads), training: JSON.parse(meta.training ?? '{}') };
}

let nodeModels = null;
/** The same model files, loaded by the package in Node. */
export async function nodeModel(name) {
  if (!nodeModels) { await init(); nodeModels = {}; }
  return (nodeModels[name] ??= await loadModel(builtModel(name)));
}
