// mulberry32, the seedable PRNG of the JS tests, the fuzzer's seed writers (tests/fuzz/) and the benchmarks' inputs
// (bench/common.mjs; the browser bench page serves this file and the one it re-exports): the demo's own generator,
// so the two can never drift. Tests may import production code; the demo never imports from tests/.
export { mulberry32 } from '../web/demo/src/models/random.js';
