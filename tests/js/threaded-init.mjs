// Preloaded by `node scripts/test.mjs js-threads` (node --import): the JS suite runs against the threaded build,
// because every later init() returns this first call's promise. Only on the main thread: Node hands --import to
// every worker too, the pthread workers included, and they must not start pools of their own.
import { isMainThread } from 'node:worker_threads';
import { init, runtimeInfo } from 'attnscope';

if (isMainThread) {
  await init({ threads: 2 });
  if (runtimeInfo().build !== 'threads') throw new Error(`expected the threaded build, got ${JSON.stringify(runtimeInfo())}`);
}
