// Scores that find heads on any model, from one forward pass over a repeated random token sequence (as
// tools/measure/measure_heads.py measures our language model): previous-token, induction, and first-token mass (a sink,
// the package's sinkMass).
import { sinkMass } from 'attnscope';

/** `n` random token ids below `vocab`, the same for every run (a fixed linear congruential generator). */
export function randomIds(n, vocab, seed = 12345) {
  let x = seed >>> 0;
  return Array.from({ length: n }, () => { x = (Math.imul(x, 1103515245) + 12345) >>> 0; return (x >>> 8) % vocab; });
}

/**
 * Per head ([layers × heads], row-major) from attention [L, H, T, T] over `half` random ids written twice:
 * - previous: the mean weight of a query on the key just before it (queries 1 … T−1);
 * - induction: in the second copy, the mean weight of a query on the key after the first copy's same token (the
 *   token that came next last time: what an induction head copies);
 * - first: the mean weight on key 0 (queries 1 … T−1, query 0 having no other key), the attention sink.
 */
export function headScores(attention, half) {
  const [L, H, T] = attention.shape;
  const a = attention.data;
  const previous = new Float32Array(L * H), induction = new Float32Array(L * H);
  for (let m = 0; m < L * H; m++) {
    const base = m * T * T;
    let p = 0, ind = 0;
    for (let i = 1; i < T; i++) p += a[base + i * T + i - 1];
    for (let i = half; i < T; i++) ind += a[base + i * T + i - half + 1];
    previous[m] = p / (T - 1);
    induction[m] = ind / Math.max(1, T - half);
  }
  return { previous, induction, first: sinkMass(attention, { key: 0, fromQuery: 1 }).data };
}
