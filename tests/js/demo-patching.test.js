// The demo's patching sweep (web/demo/src/open/worker/patching.js) on gpt2-lm in Node: its map against the PyTorch
// fixture, the problems it reports (lengths, answers of more than one token, a model that is not causal) and cancel;
// per-position patching (open/worker/research.js): its calls over the positions, and its numbers against forward().
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadModel } from 'attnscope';
import { patchingSweep, patchingRuns, forgetPatchingRuns, promptIds } from '../../web/demo/src/open/worker/patching.js';
import { compareOf, patchPositions, positionGroups } from '../../web/demo/src/open/worker/research.js';

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

test('per-position patching: positions in consecutive calls of about the row budget, each once', () => {
  for (const [T, rows] of [[128, 1024], [8, 1024], [512, 1024], [1500, 1024], [1, 1], [40, 50]]) {
    const groups = positionGroups(T, rows);
    let next = 0;
    for (const { first, n } of groups) {
      assert.equal(first, next, `T ${T}: consecutive`);
      assert.ok(n >= 1);
      const sum = Array.from({ length: n }, (_, i) => T - first - i).reduce((a, b) => a + b, 0);
      assert.ok(n === 1 || sum <= rows, `T ${T}: ${sum} rows in the call from ${first}`);
      // Full: the next position would have gone over.
      if (first + n < T) assert.ok(sum + T - first - n > rows, `T ${T}: the call from ${first} could take one more`);
      next = first + n;
    }
    assert.equal(next, T);
  }
  assert.deepEqual(positionGroups(128, 1024).slice(0, 2), [{ first: 0, n: 8 }, { first: 8, n: 8 }]);
});

test('per-position patching recovers what forward() patched at each position gives, through the two answers\' logits', async () => {
  // Prompts that differ at two positions (2 and 6), so that several positions' patches matter; a head of the first
  // layer (a head of the last changes the last row only where it is patched).
  const corrupted = 'the cat on on the hat';
  const input = { clean: P.clean_text, corrupted, answers: P.answers.text, layer: 0, head: 1 };
  const progress = [];
  const { value } = await patchPositions(gpt2, input, hooks({ onProgress: (d, n) => progress.push([d, n]) }));
  const T = value.recovered.length;
  assert.deepEqual(progress.at(-1), [T, T]);
  assert.ok(new Set(value.recovered.filter((v) => v !== 0)).size >= 3, `recovered: ${value.recovered}`);
  const clean = gpt2.forward(P.clean_text, { keepHeads: true, needAttention: false });
  const last = (logits) => logits.data.subarray((logits.shape[0] - 1) * logits.shape[1]);
  const [a, b] = ['on', 'b'].map((text) => gpt2.tokenize(text).ids.at(-1));
  const d = (logits) => last(logits)[a] - last(logits)[b];
  const dClean = d(clean.logits), dCorrupted = d(gpt2.forward(corrupted, { needAttention: false }).logits);
  for (let p = 0; p < T; p++) {
    const patched = gpt2.forward(corrupted, { needAttention: false, patch: [{ layer: 0, head: 1 }], patchFrom: clean.heads, patchPositions: [p] });
    assert.equal(value.recovered[p], Math.fround((d(patched.logits) - dCorrupted) / (dClean - dCorrupted)), `position ${p}`);
  }
});

test('the last prompts\' runs serve the next request on them: the numbers of fresh runs; other prompts free them', async () => {
  const input = { clean: P.clean_text, corrupted: 'the cat on on the hat', answers: P.answers.text };
  const { cleanIds, corruptedIds, answerIds } = promptIds(gpt2, input, hooks().encode);
  const other = promptIds(gpt2, { ...input, corrupted: P.corrupted_text }, hooks().encode);
  // Whether runs' cache is freed: a pass of the input it holds through it (which leaves it as it was) or the TypeError.
  const disposed = (runs, ids = corruptedIds) => {
    try {
      gpt2.forward(ids, { needAttention: false, logitsToKeep: 1, cache: runs.base.cache });
      return false;
    } catch (e) {
      if (/options\.cache: this cache was disposed/.test(e.message)) return true;
      throw e;
    }
  };
  forgetPatchingRuns();
  const first = patchingRuns(gpt2, cleanIds, corruptedIds, answerIds);
  first.release();
  const again = patchingRuns(gpt2, [...cleanIds], [...corruptedIds], answerIds);
  again.release();
  assert.equal(again.kept, first.kept);
  assert.equal(again.base, first.base);
  assert.equal(disposed(first), false, 'kept after its request');
  // A reader's order: every head, then two heads position by position, through the same runs; then from fresh runs.
  const sweep = await patchingSweep(gpt2, input, hooks());
  const byPosition = async (head) => (await patchPositions(gpt2, { ...input, layer: 0, head }, hooks())).value.recovered;
  const reused = [await byPosition(1), await byPosition(0)];
  const still = patchingRuns(gpt2, cleanIds, corruptedIds, answerIds);
  still.release();
  assert.equal(still.base, first.base);
  forgetPatchingRuns();
  assert.equal(disposed(first), true);
  assert.deepEqual((await patchingSweep(gpt2, input, hooks())).recovered, sweep.recovered);
  forgetPatchingRuns();
  assert.deepEqual(await byPosition(1), reused[0]);
  forgetPatchingRuns();
  assert.deepEqual(await byPosition(0), reused[1]);
  // Requests interleave in the Worker: runs replaced while a request holds them are freed when it releases them.
  const held = patchingRuns(gpt2, cleanIds, corruptedIds, answerIds);
  const replaced = patchingRuns(gpt2, other.cleanIds, other.corruptedIds, other.answerIds);
  assert.notEqual(replaced.base, held.base);
  assert.equal(disposed(held), false, 'a request still holds them');
  held.release();
  assert.equal(disposed(held), true);
  // A request's second release counts once: two holders, one released twice, keep them until the other releases.
  const again2 = patchingRuns(gpt2, other.cleanIds, other.corruptedIds, other.answerIds);
  assert.equal(again2.base, replaced.base);
  forgetPatchingRuns();
  replaced.release();
  replaced.release();
  assert.equal(disposed(replaced, other.corruptedIds), false, 'the other holder still uses them');
  again2.release();
  assert.equal(disposed(replaced, other.corruptedIds), true);
  // The last prompts' runs stay kept once released, until forgotten.
  patchingRuns(gpt2, other.cleanIds, other.corruptedIds, other.answerIds).release();
  const kept = patchingRuns(gpt2, other.cleanIds, other.corruptedIds, other.answerIds);
  kept.release();
  assert.equal(disposed(kept, other.corruptedIds), false, 'the last prompts\' runs stay kept');
  forgetPatchingRuns();
  assert.equal(disposed(kept, other.corruptedIds), true);
  // Runs over the size limit serve their request only, and its release frees them.
  const big = patchingRuns(gpt2, cleanIds, corruptedIds, answerIds, { keepBytes: 0 });
  const big2 = patchingRuns(gpt2, cleanIds, corruptedIds, answerIds, { keepBytes: 0 });
  assert.notEqual(big2.base, big.base);
  big2.release();
  assert.equal(disposed(big2), true);
  assert.equal(disposed(big), false);
  big.release();
  assert.equal(disposed(big), true);
});

test('the two prompts\' view runs patching\'s passes: the maps of plain passes, bit for bit; patching next runs no pass', async () => {
  // A model of 64 positions without a tokenizer: prompts of 48 ids that differ at 40, so that the corrupted pass
  // takes its first block of 32 positions from the clean one's cache. The model counted: passes per request.
  const llama = await loadModel(new URL('llama-gqa/', fixtures));
  try {
    let passes = 0;
    const counted = new Proxy(llama, {
      get(target, key) {
        if (key === 'forward') return (...args) => { passes++; return target.forward(...args); };
        const v = target[key];
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const encode = ({ text }) => { const ids = text.split(' ').map(Number); return { ids, tokens: ids.map(String), total: ids.length }; };
    const V = llama.config.vocabSize;
    const clean = Array.from({ length: 48 }, (_, i) => (i * 37 + 11) % V), corrupted = clean.slice();
    corrupted[40] = (corrupted[40] + 1) % V;
    const input = { clean: clean.join(' '), corrupted: corrupted.join(' '), answers: [String(clean[1]), String(clean[2])] };
    const plain = [clean, corrupted].map((ids) => llama.forward(ids).attention);
    const hooksHere = { ...hooks(), encode };
    forgetPatchingRuns();
    const { value } = compareOf(counted, input, encode);
    assert.equal(passes, 2);
    value.runs.forEach((run, i) => {
      assert.deepEqual(run.attention.shape, plain[i].shape);
      assert.deepEqual(run.attention.data, plain[i].data, `prompt ${i}: the maps of a plain pass`);
    });
    passes = 0;
    const runs = patchingRuns(counted, clean, corrupted, [clean[1], clean[2]]);
    runs.release();
    assert.equal(passes, 0, 'the view\'s passes are patching\'s');
    assert.equal(runs.base.cache.reused, 32, 'the corrupted pass took its first block from the clean one');
    const reused = (await patchPositions(counted, { ...input, layer: 1, head: 2 }, hooksHere)).value.recovered;
    assert.equal(passes, 0, 'per-position patching after the view runs no pass of its own');
    assert.equal(reused.length, 48);
    assert.ok(reused.slice(41).some((v) => v !== 0) && reused.slice(0, 40).every((v) => v === 0), `recovered: ${reused}`);
    forgetPatchingRuns();
    assert.deepEqual((await patchPositions(counted, { ...input, layer: 1, head: 2 }, hooksHere)).value.recovered, reused);
    assert.equal(passes, 2);
    // Over the size limit: the same maps, nothing kept (patching then runs its own passes).
    forgetPatchingRuns();
    passes = 0;
    const over = compareOf(counted, input, encode, { keepBytes: 0 }).value;
    over.runs.forEach((run, i) => assert.deepEqual(run.attention.data, plain[i].data, `prompt ${i} over the limit`));
    assert.equal(passes, 2);
    await patchPositions(counted, { ...input, layer: 1, head: 2 }, hooksHere);
    assert.equal(passes, 4, 'nothing was kept');
    // Prompts of two lengths compare by plain passes and leave patching's runs as they were.
    passes = 0;
    const two = compareOf(counted, { clean: clean.slice(0, 20).join(' '), corrupted: input.corrupted }, encode).value;
    assert.deepEqual(two.runs[0].attention.data, llama.forward(clean.slice(0, 20)).attention.data);
    assert.equal(passes, 2);
    await patchPositions(counted, { ...input, layer: 0, head: 0 }, hooksHere);
    assert.equal(passes, 2);
  } finally {
    forgetPatchingRuns();
    llama.dispose();
  }
  // An encoder compares by plain passes.
  const bertEncode = ({ text }) => { const t = bert.tokenize(text); return { ids: t.ids, tokens: t.tokens, tokenTypeIds: t.tokenTypeIds ?? null }; };
  const enc = compareOf(bert, { clean: 'the cat sat', corrupted: 'the dog sat' }, bertEncode).value;
  assert.deepEqual(enc.runs[1].attention.data, bert.forward('the dog sat').attention.data);
});

const { createResearchRuns: createRuns } = await import('../../web/demo/src/research/runs.js');
const createResearchRunsFor = (worker, shown) => createRuns({ worker, invalidate: () => {}, showProgress: (kind, p) => shown.push([kind, p]) });

test("a sweep's progress goes to showProgress, not to a new drawing of the page; the reply still invalidates", async () => {
  const { createResearchRuns } = await import('../../web/demo/src/research/runs.js');
  const replies = [];
  const worker = () => ({ research: (kind, body) => {
    assert.equal(kind, 'patchPositions');
    assert.deepEqual(body.answers, ['a', 'b']);
    return new Promise((ok) => { replies.push({ body, ok }); });
  } });
  const state = { open: { positions: { layer: 1, head: 0 }, clean: 'x y', corrupted: 'x z', a: 'a', b: 'b' } };
  const info = { kind: 'causal_lm', config: { hasLmHead: true } };
  const at = { info, pair: null, ablate: [] };
  const calls = { invalidate: 0, shown: [] };
  const runs = createResearchRuns({ worker, invalidate: () => calls.invalidate++, showProgress: (kind, p) => calls.shown.push([kind, p]) });
  assert.equal(runs.compute(state, at).positions.running, true);
  assert.equal(replies.length, 1);
  runs.onProgress({ kind: 'patchPositions', done: 3, total: 8 });
  runs.onProgress({ kind: 'patchPositions', done: 8, total: 8 });
  // A lens's progress while none is asked for (another tool's, a model's before) changes nothing.
  runs.onProgress({ kind: 'lens', done: 1, total: 3 });
  assert.deepEqual(calls, { invalidate: 0, shown: [['positions', { done: 3, total: 8 }], ['positions', { done: 8, total: 8 }]] });
  // The next drawing reads the last progress; the reply is a new state of the page, and its value is shown.
  assert.deepEqual(runs.compute(state, at).progress, { done: 8, total: 8 });
  const head0 = { layer: 1, head: 0, recovered: new Float32Array([0.25, 0.5]) };
  replies[0].ok(head0);
  await new Promise((ok) => setTimeout(ok, 0));
  assert.equal(calls.invalidate, 1);
  const done = runs.compute(state, at).positions;
  assert.equal(done.running, false);
  assert.equal(done.value, head0);
  // A late message of the finished sweep changes nothing.
  runs.onProgress({ done: 8, total: 8 });
  assert.deepEqual(calls, { invalidate: 1, shown: [['positions', { done: 3, total: 8 }], ['positions', { done: 8, total: 8 }]] });
  // The next head: running while the value shown is still the last head's (the page showed that result, no progress).
  state.open.positions = { layer: 1, head: 1 };
  const nextOut = runs.compute(state, at), next = nextOut.positions;
  assert.equal(replies.length, 2);
  assert.equal(replies[1].body.head, 1);
  assert.deepEqual([next.running, next.stale, next.value], [true, true, head0]);
  assert.deepEqual(nextOut.progress, { done: 0, total: 0 }, "the new sweep's, not the last one's 8 of 8");
  runs.onProgress({ done: 4, total: 8 });  // a message without a kind is a per-position sweep's
  assert.deepEqual(calls.shown.at(-1), ['positions', { done: 4, total: 8 }]);
  // Without showProgress (the page before it had one), progress draws the page again.
  const plain = createResearchRuns({ worker, invalidate: () => calls.invalidate++ });
  plain.compute(state, at);
  plain.onProgress({ done: 1, total: 2 });
  assert.equal(calls.invalidate, 2);
});

test("a lens's progress goes to showProgress('lens'), and the next drawing reads it", () => {
  const asked = [];
  const worker = () => ({ research: (kind, body) => { asked.push([kind, body]); return new Promise(() => {}); } });
  const shown = [];
  const runs = createResearchRunsFor(worker, shown);
  const state = { open: { lens: true, text: 'the cat' } };
  const at = { info: { kind: 'causal_lm', config: { hasLmHead: true } }, pair: null, ablate: [] };
  const out = runs.compute(state, at);
  assert.deepEqual(asked, [['lens', { text: 'the cat', pair: null, ablate: [] }]]);
  assert.deepEqual([out.lens.running, out.lensProgress], [true, { done: 0, total: 0 }]);
  runs.onProgress({ kind: 'lens', done: 2, total: 13 });
  runs.onProgress({ kind: 'patchPositions', done: 1, total: 8 }); // no sweep asked for: nothing
  assert.deepEqual(shown, [['lens', { done: 2, total: 13 }]]);
  assert.deepEqual(runs.compute(state, at).lensProgress, { done: 2, total: 13 });
});
