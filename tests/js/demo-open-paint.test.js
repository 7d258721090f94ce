// The demo's heat maps at screen resolution (web/demo/src/open/paint.js): the one-pass reduction gives the pixels of
// the two-pass one, each pixel the largest weight of its block, and a sharp line survives the reduction.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { paintMap, paintMapScaled, mapTop, lut } from '../../web/demo/src/open/paint.js';

function randomMap(T, seed = 7) {
  let x = seed;
  const data = new Float32Array(T * T);
  for (let k = 0; k < data.length; k++) { x = (Math.imul(x, 1103515245) + 12345) >>> 0; data[k] = (x >>> 8) / 2 ** 24; }
  return data;
}

for (const scale of ['rest', 'max', 'one']) {
  test(`one pass equals mapTop + paintMap where blocks are whole (${scale})`, () => {
    const T = 256, size = 64, data = randomMap(T);
    const a = new Uint32Array(size * size), b = new Uint32Array(size * size);
    paintMap(a, size, 0, 0, size, data, 0, T, { cmap: 'viridis', scale, top: mapTop(scale, data, 0, T) });
    paintMapScaled(b, size, 0, 0, size, data, 0, T, { cmap: 'viridis', scale });
    assert.deepEqual(b, a);
  });
}

test('a single strong weight in a 512-token map keeps the top colour in a 40-pixel map', () => {
  const T = 512, size = 40, data = new Float32Array(T * T);
  data[300 * T + 17] = 0.9;
  data[5 * T + 1] = 0.1;
  const px = new Uint32Array(size * size);
  paintMapScaled(px, size, 0, 0, size, data, 0, T, { cmap: 'viridis', scale: 'max' });
  const top = lut('viridis')[255];
  assert.equal(px.filter((c) => c === top).length, 1);
  assert.equal(px[Math.floor((300 * size) / T) * size + Math.floor((17 * size) / T)], top);
});
