// The demo's heat maps at screen resolution (web/demo/src/open/paint.js): the one-pass reduction gives the pixels of
// the two-pass one, each pixel the largest weight of its block, and a sharp line survives the reduction.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { paintMap, paintMapScaled, mapTop, lut, headImage, placeImage } from '../../web/demo/src/open/paint.js';

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

// Node has no ImageData: the browser's shape of it (width, height, RGBA bytes) is all paint.js uses.
globalThis.ImageData ??= class { constructor(w, h) { this.width = w; this.height = h; this.data = new Uint8ClampedArray(w * h * 4); } };

test('headImage: each head painted as paintMapScaled paints it, once per run, colours and size; placeImage puts it in place', () => {
  const L = 2, H = 3, T = 40, size = 16;
  const data = new Float32Array(L * H * T * T);
  const one = randomMap(T, 3);
  for (let m = 0; m < L * H; m++) data.set(one.map((x) => x * (m + 1) / 6), m * T * T);
  const run = { attention: { data, shape: [L, H, T, T] } };
  const opts = { cmap: 'viridis', scale: 'max' };
  const img = headImage(run, 1, 2, size, opts);
  const want = new Uint32Array(size * size);
  paintMapScaled(want, size, 0, 0, size, data, (1 * H + 2) * T * T, T, opts);
  assert.deepEqual(new Uint32Array(img.data.buffer), want);
  assert.equal(headImage(run, 1, 2, size, opts), img, 'kept for the same run, colours and size');
  assert.notEqual(headImage(run, 1, 2, size, { ...opts, cmap: 'cividis' }), img);
  assert.notEqual(headImage({ attention: run.attention }, 1, 2, size, opts), img, 'a new run paints again');
  // Into a 40-pixel-wide image at (5, 3): row y of the head is pixels [5, 21) of row 3 + y; nothing else is written.
  const px = new Uint32Array(40 * 30);
  placeImage(px, 40, 5, 3, img);
  for (let y = 0; y < size; y++) assert.deepEqual(px.subarray((3 + y) * 40 + 5, (3 + y) * 40 + 5 + size), want.subarray(y * size, (y + 1) * size));
  assert.equal(px.reduce((n, v) => n + (v !== 0), 0), size * size);
});
