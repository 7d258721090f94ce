// mulberry32: a tiny seedable PRNG (32 bits of state) that gives the same numbers in every process, shared by the
// JS tests, the fuzzer's seed writers (tests/fuzz/) and the benchmarks' inputs (bench/common.mjs; the browser bench
// page serves this file too). One copy stays on purpose: the demo's (web/demo/src/random.js), as production code
// never imports from tests/.

/** A generator of uniform floats in [0, 1) (multiples of 2⁻³²) from `seed`. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
