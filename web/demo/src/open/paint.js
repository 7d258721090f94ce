// Heat maps at the screen's resolution: a map of T×T weights is reduced to the device pixels it covers (each pixel
// the largest weight of its block, so a sharp line of attention survives the reduction) and written as ImageData.
// Colours come from attnscope/figures, the same colour maps the exported figures use. The layer strip's pictures
// of each head are kept per run, colours and size, so a click paints no head again.
import { colormapHex } from 'attnscope/figures';

/** The model view's layout in CSS pixels: the row labels' margin, the top margin, the gaps between heads and groups. */
export const GRID = { LEFT: 34, TOP: 18, GAP: 2, GROUP_GAP: 8 };

/**
 * The side of one head's map in the model view, in CSS pixels, for `avail` pixels of width. The layer's strip uses
 * it too, so a head looks the same in both.
 */
export function cellSize(avail, heads, kvHeads) {
  const groupsExtra = (kvHeads - 1) * (GRID.GROUP_GAP - GRID.GAP);
  return Math.max(6, Math.min(72, Math.floor((avail - GRID.LEFT - groupsExtra) / heads - GRID.GAP)));
}

const luts = new Map();
/** 256 packed RGBA colours (little-endian Uint32) of a colour map. */
export function lut(name) {
  if (!luts.has(name)) {
    const out = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      const n = parseInt(colormapHex(name, i / 255).slice(1), 16);
      out[i] = (255 << 24) | ((n & 255) << 16) | (((n >> 8) & 255) << 8) | ((n >> 16) & 255);
    }
    luts.set(name, out);
  }
  return luts.get(name);
}

/**
 * The top of one map's colour scale: 'rest' leaves the first key out (an attention sink would blind the rest),
 * 'one' is 1, 'max' and 'row' (rows are scaled in paintMap) the largest weight.
 */
export function mapTop(scale, data, offset, T) {
  if (scale === 'one') return 1;
  let m = 0;
  for (let i = 0; i < T; i++) {
    const row = offset + i * T;
    for (let j = scale === 'rest' && T > 1 ? 1 : 0; j < T; j++) if (data[row + j] > m) m = data[row + j];
  }
  return m || 1;
}

/**
 * Paint the T×T map at `offset` of `data` into `px` (Uint32 pixels of an image `stride` wide) at (x0, y0), `size`
 * device pixels square. Each pixel takes its block's largest weight; 'row' divides by each row's own largest.
 */
export function paintMap(px, stride, x0, y0, size, data, offset, T, { cmap, scale, top }) {
  const colors = lut(cmap);
  const rowTop = new Float32Array(T).fill(top);
  if (scale === 'row') {
    for (let i = 0; i < T; i++) {
      let m = 0;
      for (let j = 0; j < T; j++) m = Math.max(m, data[offset + i * T + j]);
      rowTop[i] = m || 1;
    }
  }
  for (let a = 0; a < size; a++) {
    const i0 = Math.floor((a * T) / size), i1 = Math.max(i0 + 1, Math.floor(((a + 1) * T) / size));
    for (let b = 0; b < size; b++) {
      const j0 = Math.floor((b * T) / size), j1 = Math.max(j0 + 1, Math.floor(((b + 1) * T) / size));
      let v = 0;
      for (let i = i0; i < i1; i++) {
        const row = offset + i * T, k = 1 / rowTop[i];
        for (let j = j0; j < j1; j++) { const x = data[row + j] * k; if (x > v) v = x; }
      }
      px[(y0 + a) * stride + x0 + b] = colors[Math.min(255, Math.round(v * 255))];
    }
  }
}

/**
 * As paintMap with the map's own top (mapTop), in one pass over the weights where the map is larger than its pixels:
 * each weight goes to its pixel's maximum while the top is found, so a 512-token map is read once, not twice.
 */
export function paintMapScaled(px, stride, x0, y0, size, data, offset, T, { cmap, scale }) {
  if (scale === 'row' || T <= size) {
    paintMap(px, stride, x0, y0, size, data, offset, T, { cmap, scale, top: mapTop(scale, data, offset, T) });
    return;
  }
  const colors = lut(cmap);
  const blocks = new Float32Array(size * size);
  const colBlock = new Int32Array(T);
  for (let j = 0; j < T; j++) colBlock[j] = Math.floor((j * size) / T);
  const skipFirst = scale === 'rest' && T > 1;
  let top = 0;
  for (let i = 0; i < T; i++) {
    const row = offset + i * T, at = Math.floor((i * size) / T) * size;
    const v0 = data[row];
    if (!skipFirst && v0 > top) top = v0;
    if (v0 > blocks[at]) blocks[at] = v0;
    for (let j = 1; j < T; j++) {
      const v = data[row + j];
      if (v > top) top = v;
      const k = at + colBlock[j];
      if (v > blocks[k]) blocks[k] = v;
    }
  }
  const k = 255 / (scale === 'one' ? 1 : top || 1);
  for (let a = 0; a < size; a++) {
    const out = (y0 + a) * stride + x0;
    for (let b = 0; b < size; b++) px[out + b] = colors[Math.min(255, Math.round(blocks[a * size + b] * k))];
  }
}

// Per run: for each colours-and-size key, each head's ImageData (index layer · H + head). Two keys at most are
// kept (a resize or another colour map makes a new one); a third drops the oldest.
let kept = { run: null, sizes: new Map() };

/**
 * The picture of head `head` of layer `layer` of `run` (attention [L, H, T, T]) at `size` device pixels square, as
 * paintMapScaled draws it, painted once per run, colours and size.
 */
export function headImage(run, layer, head, size, { cmap, scale }) {
  if (kept.run !== run) kept = { run, sizes: new Map() };
  const key = `${cmap}|${scale}|${size}`;
  let images = kept.sizes.get(key);
  if (!images) {
    if (kept.sizes.size >= 2) kept.sizes.delete(kept.sizes.keys().next().value);
    kept.sizes.set(key, (images = new Map()));
  }
  const [, H, T] = run.attention.shape;
  const index = layer * H + head;
  let img = images.get(index);
  if (!img) {
    img = new ImageData(size, size);
    paintMapScaled(new Uint32Array(img.data.buffer), size, 0, 0, size, run.attention.data, index * T * T, T, { cmap, scale });
    images.set(index, img);
  }
  return img;
}

/** Copies the picture `img` (a headImage) into the pixels `px` of an image `stride` wide at (x0, y0), row by row. */
export function placeImage(px, stride, x0, y0, img) {
  const src = new Uint32Array(img.data.buffer), w = img.width;
  for (let y = 0; y < img.height; y++) px.set(src.subarray(y * w, (y + 1) * w), (y0 + y) * stride + x0);
}
