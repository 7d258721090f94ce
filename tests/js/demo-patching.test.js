// The demo's patching sweep (web/demo/src/open/worker/patching.js) on gpt2-lm in Node: its map against the PyTorch
// fixture, the problems it reports (lengths, answers of more than one token, a model that is not causal) and cancel.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadModel } from 'attnscope';
import { patchingSweep } from '../../web/demo/src/open/worker/patching.js';

const fixtures = new URL('../fixtures/hf/', import.meta.url);
const P = JSON.parse(readFileSync(new URL('gpt2-lm/patching.json', fixtures), 'utf8'));
const hooks = (over = {}) => ({ onProgress() {}, cancelled: () => false, encode: () => { throw new Error('gpt2-lm has a tokenizer'); }, ...over });
let gpt2, bert;

before(async () => {
  await init();
  gpt2 = await loadModel(new URL('gpt2-lm/', fixtures));
  bert = await loadModel(new URL('bert-mlm/', fixtures));
});
after(() => { gpt2.dispose(); bert.dispose(); });

test('the recovered fraction of every head matches PyTorch, with progress layer by layer to the last head', async () => {
  const seen = [];
  const r = await patchingSweep(gpt2, { clean: P.clean_text, corrupted: P.corrupted_text, answers: P.answers.text }, hooks({ onProgress: (d, n) => seen.push([d, n]) }));
  assert.deepEqual(seen, [[2, 4], [4, 4]]); // one patchEach call per layer
  assert.deepEqual(r.answers, ['on', 'b']);
  r.recovered.forEach((v, i) => assert.ok(Math.abs(v - P.answers.recovered[Math.floor(i / 2)][i % 2]) < 1e-3, `head ${i}: ${v}`));
});

test('problems: prompts of two lengths, an answer of two tokens, an encoder; cancel stops between layers', async () => {
  const input = { clean: P.clean_text, corrupted: P.corrupted_text, answers: P.answers.text };
  assert.deepEqual((await patchingSweep(gpt2, { ...input, corrupted: 'the cat' }, hooks())).problem, { key: 'open.patchLengths', vars: { a: 8, b: 2 } });
  assert.equal((await patchingSweep(gpt2, { ...input, answers: ['on', ' mat'] }, hooks())).problem.key, 'open.patchAnswer');
  assert.equal((await patchingSweep(bert, input, hooks())).problem.key, 'open.patchCausal');
  let done = 0;
  const r = await patchingSweep(gpt2, input, hooks({ onProgress: () => { done++; }, cancelled: () => done >= 1 }));
  assert.deepEqual([r, done], [{ cancelled: true }, 1]);
});
