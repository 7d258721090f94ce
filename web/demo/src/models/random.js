// mulberry32, the demo's one seeded generator (the seeded layer's embeddings, the GRU stand-in's weights): the
// same numbers on every load. The tests and the benchmarks use it too, through tests/random.js.

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
