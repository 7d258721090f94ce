// The demo's opened-model session (web/demo/src/open/session.js) with a stand-in for the model Worker's client: the
// replies of Find heads and Patching land with the model that asked for them, never on another one opened meanwhile.
import test from 'node:test';
import assert from 'node:assert/strict';

import { createOpenSession } from '../../web/demo/src/open/session.js';

/** A promise and the functions that settle it. */
function deferred() {
  let resolve, reject;
  const promise = new Promise((ok, fail) => { resolve = ok; reject = fail; });
  return { promise, resolve, reject };
}

/** A client whose every request waits until the test settles it: `calls[type]` lists their deferreds in order. */
function fakeClient() {
  const calls = { load: [], findHeads: [], patching: [] };
  const request = (type) => () => {
    const d = deferred();
    calls[type].push(d);
    return d.promise;
  };
  const client = { load: request('load'), findHeads: request('findHeads'), patching: request('patching'), cancel() {}, cancelPatching() {} };
  return { calls, createClient: () => client };
}

const info = (name) => ({ kind: 'causal_lm', name, hasTokenizer: true, config: { layers: 2, heads: 2, hasLmHead: true } });
// An empty text box: the session shows the model and its heads and patching, and asks for no pass.
const state = { open: { text: '', pair: '', ablate: [], layer: 0, head: 0, query: -1 } };
// Lets the session's awaits after a settled request run.
const settled = () => new Promise((ok) => setTimeout(ok, 0));

async function openedSession() {
  const fake = fakeClient();
  const session = createOpenSession({ invalidate() {}, createClient: fake.createClient });
  const opened = session.open({ url: 'https://example.org/a/' });
  fake.calls.load[0].resolve(info('a'));
  assert.equal(await opened, true);
  return { session, calls: fake.calls };
}

test('a Find heads reply that comes after another model opened is not shown with that model', async () => {
  const { session, calls } = await openedSession();
  const finding = session.findHeads();
  assert.equal(session.compute(state).heads.status, 'running');
  const opened = session.open({ url: 'https://example.org/b/' });
  calls.findHeads[0].resolve({ previous: [1], induction: [2], first: [3], tokens: 4 }); // model a's scores
  await finding;
  calls.load[1].resolve(info('b'));
  assert.equal(await opened, true);
  const shown = session.compute(state);
  assert.equal(shown.info.name, 'b');
  assert.equal(shown.heads, null, 'model b shows no heads found');
});

test('a Patching reply that comes after another model opened is not shown with that model, nor its error', async () => {
  const { session, calls } = await openedSession();
  for (const settle of [(d) => d.resolve({ recovered: new Float32Array(4) }), (d) => d.reject(new Error('the model was disposed'))]) {
    const patching = session.patching({ clean: 'x', corrupted: 'y', answers: ['p', 'q'] });
    assert.equal(session.compute(state).patch.status, 'running');
    const opened = session.open({ url: 'https://example.org/next/' });
    settle(calls.patching.at(-1));
    await patching;
    calls.load.at(-1).resolve(info('next'));
    await opened;
    assert.equal(session.compute(state).patch, null);
  }
});

test('a load that fails and leaves the model open shows that model\'s replies, whether they came before or after', async () => {
  for (const replyFirst of [true, false]) {
    const { session, calls } = await openedSession();
    const finding = session.findHeads();
    const patching = session.patching({ clean: 'x', corrupted: 'y', answers: ['p', 'q'] });
    const opened = session.open({ url: 'https://example.org/broken/' });
    const failure = Object.assign(new Error('config.json: not JSON'), { kept: true });
    const reply = async () => {
      calls.findHeads[0].resolve({ previous: [1], induction: [2], first: [3], tokens: 4 });
      calls.patching[0].resolve({ recovered: new Float32Array(4) });
      await Promise.all([finding, patching]);
    };
    if (replyFirst) await reply();
    calls.load[1].reject(failure);
    assert.equal(await opened, true);
    if (!replyFirst) await reply();
    await settled();
    const shown = session.compute(state);
    assert.equal(shown.info.name, 'a', `model a is still open (${replyFirst ? 'replies first' : 'failure first'})`);
    assert.equal(shown.load.failed, failure);
    assert.equal(shown.heads?.status, 'done', `its heads are shown (${replyFirst ? 'replies first' : 'failure first'})`);
    assert.deepEqual(shown.heads.value.previous, [1]);
    assert.equal(shown.patch?.status, 'done', `its patching is shown (${replyFirst ? 'replies first' : 'failure first'})`);
  }
});

test('progress keeps a running sweep its own: the reply still lands, and an older sweep\'s does not', async () => {
  const fake = fakeClient();
  let callbacks = null;
  const session = createOpenSession({ invalidate() {}, createClient: (c) => { callbacks = c; return fake.createClient(); } });
  const opened = session.open({ url: 'https://example.org/a/' });
  fake.calls.load[0].resolve(info('a'));
  await opened;
  const first = session.patching({ clean: 'x', corrupted: 'y', answers: ['p', 'q'] });
  const second = session.patching({ clean: 'x', corrupted: 'z', answers: ['p', 'q'] });
  callbacks.onPatchProgress({ done: 3, total: 8 });
  assert.deepEqual([session.compute(state).patch.done, session.compute(state).patch.total], [3, 8]);
  fake.calls.patching[1].resolve({ recovered: new Float32Array([0.5]) });
  await second;
  assert.equal(session.compute(state).patch.status, 'done');
  fake.calls.patching[0].resolve({ cancelled: true }); // the first sweep, replaced by the second
  await first;
  assert.equal(session.compute(state).patch.status, 'done', 'the older sweep\'s reply does not replace the newer one\'s');
  assert.equal(session.compute(state).patch.value.recovered[0], 0.5);
});

test('a replaced forward run\'s maps go back to the Worker only once every view drew the newer run', async () => {
  const fake = fakeClient();
  const recycled = [];
  const forwards = [];
  const client = {
    ...fake.createClient(),
    forward: () => { const d = deferred(); forwards.push(d); return d.promise; },
    trace: () => new Promise(() => {}),
    predict: () => new Promise(() => {}),
    recycle: (buffer) => recycled.push(buffer),
  };
  const session = createOpenSession({ invalidate() {}, createClient: () => client });
  const opened = session.open({ url: 'https://example.org/a/' });
  fake.calls.load[0].resolve(info('a'));
  await opened;
  // A run of T tokens: maps of 2 layers × 2 heads × T × T floats.
  const run = (T) => ({ ids: Array.from({ length: T }, (_, i) => i), tokens: null, attention: { data: new Float32Array(4 * T * T), shape: [2, 2, T, T] } });
  const typed = (text) => ({ open: { ...state.open, text, shows: 'weights' } });
  session.compute(typed('a'));
  const first = run(800);
  forwards[0].resolve(first);
  await settled();
  const r1 = session.compute(typed('a'));
  assert.equal(r1.modelRun, first);
  session.drawn(r1);
  assert.deepEqual(recycled, [], 'nothing replaced yet');
  session.compute(typed('ab'));
  const second = run(801);
  forwards[1].resolve(second);
  await settled();
  session.drawn(r1); // a drawing of the older run finished: its maps are still shown
  assert.deepEqual(recycled, []);
  const r2 = session.compute(typed('ab'));
  assert.equal(r2.modelRun, second);
  session.drawn(r2);
  assert.deepEqual(recycled, [first.attention.data.buffer], 'the first run\'s array, once the second is drawn');
  session.drawn(r2);
  assert.equal(recycled.length, 1, 'handed back once');
  // Two runs replaced before a drawing finished (keys faster than the page draws): only the last one replaced goes
  // back; the page holds no list of them.
  session.compute(typed('abc'));
  forwards[2].resolve(run(32));
  await settled();
  session.compute(typed('abcd'));
  const fourth = run(33);
  forwards[3].resolve(fourth);
  await settled();
  session.compute(typed('abcde'));
  forwards[4].resolve(run(34));
  await settled();
  session.drawn(session.compute(typed('abcde')));
  assert.deepEqual(recycled, [first.attention.data.buffer, fourth.attention.data.buffer]);
  // Another tab drawn meanwhile: the replaced array is let go, not sent.
  session.compute(typed('abcdef'));
  forwards[5].resolve(run(35));
  await settled();
  session.drawn({ kind: 'lm' });
  session.drawn(session.compute(typed('abcdef')));
  assert.equal(recycled.length, 2);
  // A newly opened model's runs start afresh: the last run of the one before is not handed back.
  const reopened = session.open({ url: 'https://example.org/b/' });
  fake.calls.load[1].resolve(info('b'));
  await reopened;
  session.compute(typed('x'));
  forwards[6].resolve(run(8));
  await settled();
  session.drawn(session.compute(typed('x')));
  assert.equal(recycled.length, 2);
});
