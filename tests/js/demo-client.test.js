// The demo's model-Worker client (web/demo/src/open/client.js) over a stand-in Worker: a research request's progress
// reaches the page only while that request is the newest of its kind still awaited.
import test from 'node:test';
import assert from 'node:assert/strict';

test("a superseded lens's progress is dropped; the newest one's, and a message without an id, go through", async () => {
  class StandInWorker {
    constructor() { StandInWorker.last = this; this.sent = []; }
    postMessage(message) { this.sent.push(message); }
    terminate() {}
  }
  const saved = { Worker: globalThis.Worker, document: globalThis.document, setInterval: globalThis.setInterval };
  globalThis.Worker = StandInWorker;
  globalThis.document = { baseURI: 'http://localhost/' };
  globalThis.setInterval = () => 0; // the watchdog's timer would keep the test's process alive
  try {
    const { createModelClient } = await import('../../web/demo/src/open/client.js');
    const heard = [];
    const client = createModelClient({ onProgress() {}, onResearchProgress: (p) => heard.push(p) });
    const first = client.research('lens', { text: 'a' });
    client.research('lens', { text: 'b' });
    const positions = client.research('patchPositions', { clean: 'x', corrupted: 'y' });
    const w = StandInWorker.last;
    const [a, b] = w.sent.filter((m) => m.type === 'lens').map((m) => m.id);
    const p = w.sent.find((m) => m.type === 'patchPositions').id;
    const progress = (id, kind, done) => w.onmessage({ data: { type: 'researchProgress', kind, id, done, total: 13 } });
    progress(a, 'lens', 4); // the first lens, superseded: its count is not the second one's
    progress(b, 'lens', 1);
    progress(p, 'patchPositions', 2); // another kind's newest
    w.onmessage({ data: { type: 'researchProgress', done: 3, total: 8 } }); // no id: as before ids were sent
    assert.deepEqual(heard.map((m) => m.done), [1, 2, 3]);
    // Answered requests report nothing more.
    w.onmessage({ data: { type: 'reply', id: b, value: null } });
    w.onmessage({ data: { type: 'reply', id: a, value: null } });
    w.onmessage({ data: { type: 'reply', id: p, value: { cancelled: true } } });
    progress(b, 'lens', 2);
    assert.deepEqual(heard.map((m) => m.done), [1, 2, 3]);
    assert.equal(await first, null);
    assert.deepEqual(await positions, { cancelled: true });
  } finally {
    Object.assign(globalThis, saved);
  }
});
