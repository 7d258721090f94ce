// The demo's heat maps at screen resolution (web/demo/src/maps/paint.js, the painter every map goes through): the
// one-pass reduction gives the pixels of the two-pass one, each pixel the largest weight of its block, a sharp line
// survives the reduction, and maps of any shape (cross-attention, rows × columns) land in their rectangle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { colormapHex } from 'attnscope/figures';
import { paintMap, paintMapScaled, mapTop, lut, headImage, placeImage, foldsMap } from '../../web/demo/src/maps/paint.js';
import { unchangedRows } from '../../web/demo/src/open/grid.js';

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
    paintMap(a, size, 0, 0, size, size, data, 0, T, T, { cmap: 'viridis', scale, top: mapTop(scale, data, 0, T) });
    paintMapScaled(b, size, 0, 0, size, data, 0, T, { cmap: 'viridis', scale });
    assert.deepEqual(b, a);
  });
}

/** The definition, pixel by pixel: the largest weight of the pixel's block (key j, query i in ⌊j · size / T⌋, ⌊i · size / T⌋). */
function referencePixels(data, T, size, scale) {
  const blocks = new Float64Array(size * size);
  let top = 0;
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < T; j++) {
      const v = data[i * T + j], k = Math.floor((i * size) / T) * size + Math.floor((j * size) / T);
      blocks[k] = Math.max(blocks[k], v);
      if (!(scale === 'rest' && j === 0)) top = Math.max(top, v);
    }
  }
  const colors = lut('viridis'), f = 255 / (scale === 'one' ? 1 : top || 1);
  return Uint32Array.from(blocks, (v) => colors[Math.min(255, Math.round(Math.fround(v) * f))]);
}

/** A causal map: each query's row a softmax over itself and the keys before it, the keys after it exactly 0. */
function causalMap(T, seed = 11) {
  let x = seed;
  const data = new Float32Array(T * T);
  for (let i = 0; i < T; i++) {
    let z = 0;
    for (let j = 0; j <= i; j++) { x = (Math.imul(x, 1103515245) + 12345) >>> 0; z += data[i * T + j] = Math.exp(6 * ((x >>> 8) / 2 ** 24) ** 3); }
    for (let j = 0; j <= i; j++) data[i * T + j] = Math.fround(data[i * T + j] / z);
  }
  return data;
}

// Sizes that do not divide T (blocks of two widths) and both sides of a block's edge; `causal` reads only the keys up
// to each query and gives the same pixels.
for (const [T, size] of [[500, 37], [500, 61], [97, 13], [130, 64]]) {
  test(`every pixel is its block's largest weight at ${T} tokens in ${size} pixels; causal: true reads half and paints the same`, () => {
    for (const scale of ['rest', 'max', 'one']) {
      for (const data of [randomMap(T, T + size), causalMap(T, size)]) {
        const want = referencePixels(data, T, size, scale);
        const got = new Uint32Array(size * size);
        paintMapScaled(got, size, 0, 0, size, data, 0, T, { cmap: 'viridis', scale });
        assert.deepEqual(got, want, scale);
      }
      const data = causalMap(T, size), a = new Uint32Array(size * size), b = new Uint32Array(size * size);
      paintMapScaled(a, size, 0, 0, size, data, 0, T, { cmap: 'viridis', scale });
      paintMapScaled(b, size, 0, 0, size, data, 0, T, { cmap: 'viridis', scale, causal: true });
      assert.deepEqual(b, a, `${scale}, causal`);
    }
  });
}

// The grid's repaint of a map whose first rows are those of the map it painted before (a causal model's text edited
// near its end): only the pixel rows from the one holding `fromRow` are folded again, and the pixels are a whole
// paint's of the new map. The new rows change the top too, up and down.
for (const [T, size] of [[500, 37], [500, 61], [97, 13], [130, 64]]) {
  test(`kept maxima: a map whose rows from p on changed repaints as a whole paint would, at ${T} tokens in ${size} pixels`, () => {
    for (const scale of ['rest', 'max', 'one']) {
      // Below, at and past a pixel row's first row of weights, the second row, the middle and the last.
      for (const p of [Math.ceil((7 * T) / size) - 1, Math.ceil((7 * T) / size), Math.ceil((7 * T) / size) + 1, 1, Math.floor(T / 2), T - 1]) {
        const before = causalMap(T, size), after = causalMap(T, size + 1000 + p);
        after.set(before.subarray(0, p * T)); // the first p rows kept
        // The new rows' largest weight far above the old top, then far below it: the top moves both ways.
        for (const lift of [4, 0.01]) {
          const changed = Float32Array.from(after, (v, k) => (k >= p * T ? v * lift : v));
          const kept = { blocks: new Float32Array(size * size), rowTops: new Float32Array(size) };
          const first = new Uint32Array(size * size), again = new Uint32Array(size * size), whole = new Uint32Array(size * size);
          paintMapScaled(first, size, 0, 0, size, before, 0, T, { cmap: 'viridis', scale, causal: true, folded: kept });
          assert.deepEqual(first, referencePixels(before, T, size, scale), `${scale}: the first paint`);
          paintMapScaled(again, size, 0, 0, size, changed, 0, T, { cmap: 'viridis', scale, causal: true, folded: kept, fromRow: p });
          paintMapScaled(whole, size, 0, 0, size, changed, 0, T, { cmap: 'viridis', scale, causal: true });
          assert.deepEqual(again, whole, `${scale}, rows from ${p} changed, ×${lift}`);
          assert.deepEqual(again, referencePixels(changed, T, size, scale), `${scale}, rows from ${p}: the definition`);
        }
      }
    }
  });
}

test('kept maxima: a fromRow past the rows that changed gives other pixels (the count matters), and every row kept repaints nothing', () => {
  const T = 500, size = 37, scale = 'max';
  const before = causalMap(T, 5), after = Float32Array.from(before);
  for (let k = 200 * T; k < 201 * T; k++) after[k] *= 3; // row 200 changed
  const kept = { blocks: new Float32Array(size * size), rowTops: new Float32Array(size) };
  const px = () => new Uint32Array(size * size);
  paintMapScaled(px(), size, 0, 0, size, before, 0, T, { cmap: 'viridis', scale, causal: true, folded: kept });
  const wrong = px();
  paintMapScaled(wrong, size, 0, 0, size, after, 0, T, { cmap: 'viridis', scale, causal: true, folded: { blocks: kept.blocks.slice(), rowTops: kept.rowTops.slice() }, fromRow: 400 });
  assert.notDeepEqual(wrong, referencePixels(after, T, size, scale));
  // fromRow T: nothing read, the kept maxima recoloured (another colour map).
  const same = px(), want = px();
  paintMapScaled(same, size, 0, 0, size, new Float32Array(T * T), 0, T, { cmap: 'cividis', scale, causal: true, folded: kept, fromRow: T });
  paintMapScaled(want, size, 0, 0, size, before, 0, T, { cmap: 'cividis', scale, causal: true });
  assert.deepEqual(same, want);
  assert.equal(foldsMap(T, size, scale), true);
  assert.equal(foldsMap(T, size, 'row'), false, 'row scaling paints weight by weight');
  assert.equal(foldsMap(30, 37, scale), false, 'an enlarged map paints weight by weight');
});

test('unchangedRows: the whole map for the same run, the Worker\'s count for a run it lists, else none', () => {
  const run = { seq: 'w:9', unchanged: [['w:8', 480], ['w:7', 32]] };
  assert.equal(unchangedRows(run, 'w:9', 500), 500);
  assert.equal(unchangedRows(run, 'w:8', 500), 480);
  assert.equal(unchangedRows(run, 'w:7', 500), 32);
  assert.equal(unchangedRows(run, 'w:6', 500), 0);
  assert.equal(unchangedRows(run, 'x:8', 500), 0, 'another Worker\'s run of the same number');
  assert.equal(unchangedRows(run, null, 500), 0);
  assert.equal(unchangedRows({ seq: 'w:1' }, 'w:0', 500), 0);
});

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

test('an enlarged map (fewer weights than pixels): each pixel the colour of the one weight it covers, at its place', () => {
  const colors = lut('viridis');
  for (const [T, size] of [[7, 23], [128, 600], [5, 5]]) {
    for (const scale of ['rest', 'max', 'row', 'one']) {
      const data = randomMap(T, T + size);
      // Into a wider, taller image at (3, 2): the map's pixels there, nothing written elsewhere.
      const stride = size + 9, px = new Uint32Array(stride * (size + 4));
      const top = mapTop(scale, data, 0, T);
      paintMap(px, stride, 3, 2, size, size, data, 0, T, T, { cmap: 'viridis', scale, top });
      for (let a = 0; a < size; a++) {
        const i = Math.floor((a * T) / size);
        const rowMax = Math.max(...data.subarray(i * T, (i + 1) * T));
        for (let b = 0; b < size; b++) {
          const w = data[i * T + Math.floor((b * T) / size)] / (scale === 'row' ? rowMax : top);
          const want = colors[Math.min(255, Math.round(w * 255))];
          if (px[(2 + a) * stride + 3 + b] !== want) assert.fail(`T ${T}, ${size} px, ${scale}: pixel (${a}, ${b}) is ${px[(2 + a) * stride + 3 + b]}, not ${want}`);
        }
      }
      assert.equal(px.reduce((n, v) => n + (v !== 0), 0), size * size, `T ${T}, ${size} px, ${scale}: only the map's pixels`);
    }
  }
});

test('lut: each entry is the colour attnscope/figures gives t = i / 255, packed as the canvas stores RGBA', () => {
  for (const name of ['viridis', 'cividis']) {
    const bytes = new Uint8Array(lut(name).buffer);
    for (const i of [0, 1, 77, 128, 254, 255]) {
      const hex = colormapHex(name, i / 255);
      const want = [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));
      assert.deepEqual([...bytes.subarray(i * 4, i * 4 + 4)], [...want, 255], `${name} ${i}: ${hex}`);
    }
  }
});

test('a rows × columns map (cross-attention) in a rectangle: each pixel the largest weight of the cells it covers', () => {
  const colors = lut('cividis');
  // Enlarged along one axis and reduced along the other, and both ways: 5 × 300 into 40 × 30, 300 × 5 into 30 × 40.
  for (const [L, S, w, h] of [[5, 300, 40, 30], [300, 5, 30, 40], [6, 9, 27, 12], [64, 48, 16, 16]]) {
    for (const scale of ['max', 'row', 'rest']) {
      let x = L * S;
      const data = Float32Array.from({ length: L * S }, () => { x = (Math.imul(x, 1103515245) + 12345) >>> 0; return (x >>> 8) / 2 ** 24; });
      const top = mapTop(scale, data, 0, L, S);
      const stride = w + 3, px = new Uint32Array(stride * (h + 2));
      paintMap(px, stride, 2, 1, w, h, data, 0, L, S, { cmap: 'cividis', scale, top });
      for (let a = 0; a < h; a++) for (let b = 0; b < w; b++) {
        // The cells under pixel (a, b): rows [a·L/h, (a+1)·L/h), at least one; the same for columns.
        const i0 = Math.floor((a * L) / h), i1 = Math.max(i0 + 1, Math.floor(((a + 1) * L) / h));
        const j0 = Math.floor((b * S) / w), j1 = Math.max(j0 + 1, Math.floor(((b + 1) * S) / w));
        let v = 0;
        for (let i = i0; i < i1; i++) {
          const div = scale === 'row' ? Math.max(...data.subarray(i * S, (i + 1) * S)) : top;
          for (let j = j0; j < j1; j++) v = Math.max(v, data[i * S + j] / div);
        }
        const want = colors[Math.min(255, Math.round(v * 255))];
        if (px[(1 + a) * stride + 2 + b] !== want) assert.fail(`${L}×${S} in ${w}×${h}, ${scale}: pixel (${a}, ${b})`);
      }
      assert.equal(px.reduce((n, c) => n + (c !== 0), 0), w * h, `${L}×${S}: only the rectangle's pixels`);
    }
  }
});

test('rest leaves the first key out of the top; weights above the top, negative or NaN are clamped', () => {
  const data = Float32Array.from([0.9, 0.2, 0.1, 0.8, 0.4, 0.3]);
  assert.equal(mapTop('rest', data, 0, 2, 3), Math.fround(0.4));
  assert.equal(mapTop('max', data, 0, 2, 3), Math.fround(0.9));
  assert.equal(mapTop('one', data, 0, 2, 3), 1);
  const colors = lut('viridis'), px = new Uint32Array(4);
  paintMap(px, 4, 0, 0, 4, 1, Float32Array.from([0.9, -0.2, NaN, 0.2]), 0, 1, 4, { cmap: 'viridis', scale: 'rest', top: 0.4 });
  assert.deepEqual([...px], [colors[255], colors[0], colors[0], colors[128]]);
});
