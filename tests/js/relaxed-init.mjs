// Preloaded by `node scripts/test.mjs js-relaxed` (node --experimental-wasm-relaxed-simd --import): the JS suite runs
// against the relaxed-SIMD build, because every later init() returns this first call's promise; the golden tests then
// hold it to the same 1e-5 of PyTorch as the SIMD128 build. Only on the main thread, as tests/js/threaded-init.mjs.
import { isMainThread } from 'node:worker_threads';
import { init, runtimeInfo } from 'attnscope';

if (isMainThread) {
  await init({ simd: 'relaxed' });
  if (runtimeInfo().simd !== 'relaxed') throw new Error(`expected the relaxed-SIMD build, got ${JSON.stringify(runtimeInfo())}`);
}
