// The demo's scheduler (web/demo/src/scheduler.js) in Node, with the browser's timing calls stubbed: views on screen
// are drawn first, views off screen one per idle period; a state that keeps changing abandons a pass at its next idle
// period, and the views off screen must still all get their turn (the one drawn longest ago goes first), not only the
// first in page order.
import { test } from 'node:test';
import assert from 'node:assert/strict';

// One idle period per call, run as a macrotask; `onIdle` runs just before each one resolves.
let onIdle = () => {};
let idles = 0;
globalThis.requestAnimationFrame = (fn) => setTimeout(() => fn(performance.now()), 0);
globalThis.requestIdleCallback = (fn) => setTimeout(() => { idles++; onIdle(idles); fn(); }, 0);
// scheduler.yield() as a macrotask (without it the module yields through a MessageChannel, whose port keeps Node alive).
globalThis.scheduler = { yield: () => new Promise((ok) => setTimeout(ok, 0)) };
// Views whose root is in `offScreenRoots` are reported not intersecting as soon as they are observed.
const offScreenRoots = new Set();
globalThis.IntersectionObserver = class {
  constructor(callback) { this.callback = callback; }
  observe(target) { this.callback([{ target, isIntersecting: !offScreenRoots.has(target) }]); }
};

const { createScheduler } = await import('../../web/demo/src/scheduler.js');

const until = async (check, what) => {
  for (let i = 0; i < 2000; i++) {
    if (check()) return;
    await new Promise((ok) => setTimeout(ok, 1));
  }
  assert.fail(`timed out waiting for ${what}`);
};

test('scheduler: a state that changes every second idle period still gets every view off screen drawn', async () => {
  const drawnBy = {};
  const view = (name, offScreen) => {
    const root = { name };
    if (offScreen) offScreenRoots.add(root);
    drawnBy[name] = [];
    return { name, root, render: () => { drawnBy[name].push(scheduler.status.version); } };
  };
  const views = [view('maps', false), view('steps', true), view('sinks', true), view('lens', true), view('export', true)];
  const scheduler = createScheduler({ getState: () => ({}), compute: () => ({}), views });
  // Churn: the state changes at every second idle period, so a pass draws one view off screen and is abandoned.
  let churning = true;
  onIdle = (n) => { if (churning && n % 2 === 0) scheduler.invalidate(); };
  scheduler.invalidate();
  await until(() => idles >= 40, '40 idle periods');
  churning = false;
  const duringChurn = Object.fromEntries(Object.entries(drawnBy).map(([k, v]) => [k, v.length]));
  // Each view off screen was drawn in turn while the state kept changing, not only the first one.
  for (const name of ['steps', 'sinks', 'lens', 'export']) assert.ok(duringChurn[name] >= 3, `${name}: drawn ${duringChurn[name]} times in ${JSON.stringify(duringChurn)}`);
  assert.ok(duringChurn.maps >= 15, `the view on screen is drawn every pass: ${duringChurn.maps}`);
  // Quiet again, every view draws the last state and the scheduler says so.
  scheduler.invalidate();
  await until(() => scheduler.status.consistentVersion === scheduler.version, 'a consistent pass');
  for (const [name, versions] of Object.entries(drawnBy)) assert.equal(versions.at(-1), scheduler.version, name);
});

test('scheduler: a view off screen abandoned in the middle of its drawing goes to the back, and the views after it are drawn', async () => {
  onIdle = () => {};
  const drawnBy = { a: 0, b: 0 };
  let churning = true, slowStarts = 0;
  const root = (name, off) => { const r = { name }; if (off) offScreenRoots.add(r); return r; };
  const views = [
    { name: 'maps', root: root('maps', false), render: () => {} },
    // Drawn in pieces; while churning, the state changes during its first piece, so it never finishes.
    { name: 'slow', root: root('slow', true), *render() { slowStarts++; if (churning) scheduler.invalidate(); yield 'paint'; yield 'paint'; } },
    { name: 'a', root: root('a', true), render: () => { drawnBy.a++; } },
    { name: 'b', root: root('b', true), render: () => { drawnBy.b++; } },
  ];
  const scheduler = createScheduler({ getState: () => ({}), compute: () => ({}), views });
  scheduler.invalidate();
  await until(() => slowStarts >= 6, 'six starts of the slow view');
  churning = false;
  assert.ok(drawnBy.a >= 2 && drawnBy.b >= 2, `while the slow view kept being abandoned: ${JSON.stringify(drawnBy)}`);
  scheduler.invalidate();
  await until(() => scheduler.status.consistentVersion === scheduler.version, 'a consistent pass');
});

test('scheduler: with nothing changing, the views off screen are drawn in page order, each once', async () => {
  onIdle = () => {};
  const order = [];
  const views = ['a', 'b', 'c'].map((name, i) => {
    const root = { name };
    if (i > 0) offScreenRoots.add(root);
    return { name, root, render: () => { order.push(name); } };
  });
  const scheduler = createScheduler({ getState: () => ({}), compute: () => ({}), views });
  scheduler.invalidate();
  await until(() => scheduler.status.consistentVersion === scheduler.version, 'a consistent pass');
  assert.deepEqual(order, ['a', 'b', 'c']);
});
