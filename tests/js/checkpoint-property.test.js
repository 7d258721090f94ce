// A property test over hostile checkpoints (issue 32): config.json, the shard index and tokenizer.json of the fixtures,
// mutated from a fixed seed (a field set to a huge, negative, fractional, mistyped or enormous value, a field
// removed or added, the text cut, a key written twice, a byte changed), each loaded through loadModel and, when it
// loads, run (tokenize, forward, generate). Every call must end within a few seconds, and every failure must be a
// TypeError or RangeError that names its call and quotes at most a few hundred characters. WebAssembly memory stays
// within 64 MiB of where it started, and the fixture loads and runs at the end.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadModel, memoryUsage } from 'attnscope';
import { mulberry32 } from '../random.js';
import { withinTime } from './helpers.js';

const LIMIT_MS = 3000;
const MiB = 1024 ** 2;
const CASES = 120;
const fixture = (name, file) => readFileSync(new URL(`../fixtures/hf/${name}/${file}`, import.meta.url));

before(() => init());

const HOSTILE = [1e7, 2 ** 32, 2 ** 53 + 2, -1, 0, 0.5, 1e-300, 1e300, 'x'.repeat(5000), '', null, true, [], {}, [1, 2, 3],
  Array(20000).fill(0), { type: 'Evil' }, { Regex: '(a|aa)*b' }, '..', '../x.safetensors'];

/** Every [holder, key] of `value`'s objects and arrays (at most a few thousand: a vocabulary is sampled). */
function places(value, out = [], depth = 0) {
  if (value === null || typeof value !== 'object' || depth > 6) return out;
  const keys = Object.keys(value);
  const step = Math.max(1, Math.floor(keys.length / 40));
  for (let i = 0; i < keys.length; i += step) {
    out.push([value, keys[i]]);
    places(value[keys[i]], out, depth + 1);
  }
  return out;
}

/** `text` (JSON) mutated once by `random`. */
function mutate(text, random) {
  const pick = (list) => list[Math.floor(random() * list.length)];
  const kind = Math.floor(random() * 6);
  if (kind === 0) return text.slice(0, Math.floor(random() * text.length)); // cut
  if (kind === 1) { // a byte changed
    const at = Math.floor(random() * text.length);
    return text.slice(0, at) + pick(['{', '}', '"', ',', '9', '\\', '\u0000', 'é']) + text.slice(at + 1);
  }
  if (kind === 2) return text.replace('{', `{"${pick(['model_type', 'num_hidden_layers', 'n_layer', 'weight_map', 'model'])}": 1, `); // a key twice, perhaps
  const json = JSON.parse(text);
  const [holder, key] = pick(places(json));
  if (kind === 3) delete holder[key];
  else if (kind === 4) holder[`${key}_extra`] = pick(HOSTILE);
  else holder[key] = pick(HOSTILE);
  return JSON.stringify(json);
}

const timed = (label, fn) => withinTime(label, LIMIT_MS, fn);

function assertClear(error, label, call) {
  assert.ok(error instanceof TypeError || error instanceof RangeError, `${label}: ${error?.name}: ${error?.message}`);
  assert.ok(error.message.startsWith(`${call}: `) || error.message.startsWith('loadModel: '), `${label}: ${error.message.slice(0, 300)}`);
  assert.ok(error.message.length < 1000, `${label}: a message of ${error.message.length} characters`);
}

const CHECKPOINTS = {
  'gpt2-lm': ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'],
  'llama-sharded': ['config.json', 'model.safetensors.index.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'],
};
const MUTABLE = ['config.json', 'model.safetensors.index.json', 'tokenizer.json'];

test(`${CASES} mutated checkpoints: every call ends within ${LIMIT_MS / 1000} s, refused clearly or run`, async () => {
  const random = mulberry32(32);
  const start = memoryUsage().wasmBytes;
  let loaded = 0;
  for (let i = 0; i < CASES; ++i) {
    const name = i % 2 ? 'llama-sharded' : 'gpt2-lm';
    const files = Object.fromEntries(CHECKPOINTS[name].map((f) => [f, fixture(name, f)]));
    const targets = MUTABLE.filter((f) => files[f]);
    const mutated = [];
    // One to three mutations, in one file or several: config.json, the index and tokenizer.json together.
    for (let m = 1 + Math.floor(random() * 3); m > 0; --m) {
      const file = targets[Math.floor(random() * targets.length)];
      let text = files[file].toString('utf8');
      try {
        text = mutate(text, random);
      } catch {
        text = text.slice(1); // a file already cut: cut it more
      }
      files[file] = Buffer.from(text);
      mutated.push(file);
    }
    const label = `case ${i} (${name}: ${mutated.join(', ')})`;
    const model = await timed(`${label}: loadModel`, () => loadModel(files));
    if (model instanceof Error) {
      assertClear(model, label, 'loadModel');
      continue;
    }
    loaded += 1;
    const ids = model.tokenizer ? await timed(`${label}: tokenize`, () => model.tokenize('The cat sat on the mat and then it went to sleep')) : [1, 2, 3];
    if (ids instanceof Error) assertClear(ids, `${label}: tokenize`, 'LanguageModel.tokenize');
    const input = Array.isArray(ids) && ids.length ? ids.slice(0, 8) : [1, 2];
    const out = await timed(`${label}: forward`, () => model.forward(input));
    if (out instanceof Error) assertClear(out, `${label}: forward`, 'LanguageModel.forward');
    const more = await timed(`${label}: generate`, () => model.generate(input, { maxNewTokens: 2 }));
    if (more instanceof Error) assertClear(more, `${label}: generate`, 'LanguageModel.generate');
    model.dispose();
  }
  assert.ok(loaded > 0 && loaded < CASES, `${loaded} of ${CASES} loaded: the mutations reach both outcomes`);
  const grown = memoryUsage().wasmBytes - start;
  assert.ok(grown <= 64 * MiB, `WebAssembly memory grew by ${(grown / MiB).toFixed(1)} MiB`);
  const good = await loadModel(Object.fromEntries(CHECKPOINTS['gpt2-lm'].map((f) => [f, fixture('gpt2-lm', f)])));
  assert.equal(good.forward([1, 2, 3]).logits.shape[0], 3);
  good.dispose();
});
