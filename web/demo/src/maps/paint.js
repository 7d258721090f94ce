// The demo's one heat-map painter at the pixel level: a map of L×S weights is written into device pixels (ImageData),
// each pixel the largest weight of the block it covers, so a sharp line of attention survives a map smaller than its
// weights, and each weight the colour attnscope/figures gives it (the exported figures' colour maps). Every map on the
// page goes through paintMap: maps/heatmap.js's labelled maps, the opened model's grid and layer strip. The strip's
// pictures of each head are kept per run, colours and size, so a click paints no head again.
import { colormapHex } from 'attnscope/figures';

const luts = new Map();
/** 256 packed RGBA colours (little-endian Uint32) of `rgb(t)` ([r, g, b], 0–255) for t = i / 255. */
export function lutOf(rgb) {
  const out = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    const [r, g, b] = rgb(i / 255);
    out[i] = (255 << 24) | ((b & 255) << 16) | ((g & 255) << 8) | (r & 255);
  }
  return out;
}

/** The packed colours of a colour map of attnscope/figures (its colormapHex at i / 255). */
export function lut(name) {
  if (!luts.has(name)) {
    luts.set(name, lutOf((t) => {
      const n = parseInt(colormapHex(name, t).slice(1), 16);
      return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
    }));
  }
  return luts.get(name);
}

/**
 * The top of one L×S map's colour scale: 'rest' leaves the first key out (an attention sink would blind the rest),
 * 'one' is 1, 'max' and 'row' (rows are scaled in paintMap) the largest weight.
 */
export function mapTop(scale, data, offset, L, S = L) {
  if (scale === 'one') return 1;
  let m = 0;
  for (let i = 0; i < L; i++) {
    const row = offset + i * S;
    for (let j = scale === 'rest' && S > 1 ? 1 : 0; j < S; j++) if (data[row + j] > m) m = data[row + j];
  }
  return m || 1;
}

/**
 * Paint the L×S map at `offset` of `data` into `px` (Uint32 pixels of an image `stride` wide) at (x0, y0), `w` × `h`
 * device pixels. A weight's colour is `colors` (or the colour map `cmap`) at weight / top, clamped to [0, 1]; 'row'
 * divides by each row's own largest weight instead. Each pixel takes its block's largest weight.
 */
export function paintMap(px, stride, x0, y0, w, h, data, offset, L, S, { cmap, colors = lut(cmap), scale, top }) {
  if (!(w > 0 && h > 0 && L > 0 && S > 0)) return;
  const rowK = new Float32Array(L).fill(1 / top);
  if (scale === 'row') {
    for (let i = 0; i < L; i++) {
      let m = 0;
      for (let j = 0; j < S; j++) m = Math.max(m, data[offset + i * S + j]);
      rowK[i] = 1 / (m || 1);
    }
  }
  const at = (x) => colors[x > 0 ? Math.min(255, Math.round(x * 255)) : 0];
  if (S <= w && L <= h) {
    // Enlarged (the layer's enlarged map: 128 tokens over 600 pixels): each pixel covers one weight, so a row of
    // pixels is coloured once per query and copied to the rows below it that show the same query. Per pixel, block
    // by block, this took 35 ms of a frame at 128 tokens on the loaded 2-core machine (bench:demo --typing).
    const col = new Int32Array(w);
    for (let b = 0; b < w; b++) col[b] = Math.floor((b * S) / w);
    let last = -1;
    for (let a = 0; a < h; a++) {
      const i = Math.floor((a * L) / h), out = (y0 + a) * stride + x0;
      if (i === last) { px.copyWithin(out, out - stride, out - stride + w); continue; }
      last = i;
      const row = offset + i * S, k = rowK[i];
      for (let b = 0; b < w; b++) px[out + b] = at(data[row + col[b]] * k);
    }
    return;
  }
  for (let a = 0; a < h; a++) {
    const i0 = Math.floor((a * L) / h), i1 = Math.max(i0 + 1, Math.floor(((a + 1) * L) / h));
    for (let b = 0; b < w; b++) {
      const j0 = Math.floor((b * S) / w), j1 = Math.max(j0 + 1, Math.floor(((b + 1) * S) / w));
      let v = 0;
      for (let i = i0; i < i1; i++) {
        const row = offset + i * S, k = rowK[i];
        for (let j = j0; j < j1; j++) { const x = data[row + j] * k; if (x > v) v = x; }
      }
      px[(y0 + a) * stride + x0 + b] = at(v);
    }
  }
}

/**
 * Whether paintMapScaled folds a T-token map into `size` pixels (and so can keep its pixels' maxima in `folded`);
 * otherwise it paints the map weight by weight (paintMap).
 */
export const foldsMap = (T, size, scale) => scale !== 'row' && T > size;

/**
 * As paintMap with the map's own top (mapTop), in one pass over the weights where the map is larger than its pixels:
 * each weight goes to its pixel's maximum while the top is found, so a 512-token map is read once, not twice.
 * `causal`: the weights of keys after their query are 0 or less (a causal model's map), so they are not read; the
 * pixels are the same.
 * `folded` ({ blocks: size × size floats, rowTops: size floats }, where foldsMap holds): the pixels' maxima and each
 * pixel row's largest weight for the top, written for the next call; with `fromRow` > 0, they are the same T, size
 * and scale's of an earlier map whose rows before `fromRow` were these ones, and only the pixel rows from the one
 * holding `fromRow` are read again. The pixels are a whole paint's.
 */
export function paintMapScaled(px, stride, x0, y0, size, data, offset, T, { cmap, scale, causal = false, folded = null, fromRow = 0 }) {
  if (!foldsMap(T, size, scale)) {
    paintMap(px, stride, x0, y0, size, size, data, offset, T, T, { cmap, scale, top: mapTop(scale, data, offset, T) });
    return;
  }
  const colors = lut(cmap);
  const blocks = folded?.blocks ?? new Float32Array(size * size);
  const rowTops = folded?.rowTops ?? new Float32Array(size);
  // The first pixel row to read again, and its first row of weights (the first i with floor(i · size / T) = a0).
  const a0 = folded && fromRow > 0 ? Math.floor((Math.min(fromRow, T) * size) / T) : 0;
  blocks.fill(0, a0 * size); // maxima from here on; each of these pixel rows gets its rowTops entry below
  const colBlock = new Int32Array(T);
  for (let j = 0; j < T; j++) colBlock[j] = Math.floor((j * size) / T);
  // The rows of one pixel row are folded into one row of maxima first, a plain pass along each row, and that row into
  // the pixels: per weight one read and one comparison, without the lookup of its pixel (1.2–1.4× faster at 500
  // tokens in 37–60 pixels; with `causal`, half the weights are read).
  const fold = new Float32Array(T);
  const skipFirst = scale === 'rest' && T > 1;
  for (let i0 = Math.floor((a0 * T + size - 1) / size); i0 < T;) {
    const a = Math.floor((i0 * size) / T);
    let i1 = i0 + 1;
    while (i1 < T && Math.floor((i1 * size) / T) === a) i1++;
    const keys = causal ? i1 : T;
    fold.fill(0, 0, keys);
    for (let i = i0; i < i1; i++) {
      const row = offset + i * T;
      for (let j = 0, end = causal ? i + 1 : T; j < end; j++) {
        const v = data[row + j];
        if (v > fold[j]) fold[j] = v;
      }
    }
    const at = a * size;
    let rowTop = 0;
    for (let j = 0; j < keys; j++) {
      const v = fold[j], k = at + colBlock[j];
      if (v > blocks[k]) blocks[k] = v;
      // 'rest' leaves the first key out of the top, not out of its pixel.
      if (v > rowTop && (j > 0 || !skipFirst)) rowTop = v;
    }
    rowTops[a] = rowTop;
    i0 = i1;
  }
  let top = 0;
  for (let a = 0; a < size; a++) if (rowTops[a] > top) top = rowTops[a];
  const k = 255 / (scale === 'one' ? 1 : top || 1);
  for (let a = 0; a < size; a++) {
    const out = (y0 + a) * stride + x0;
    for (let b = 0; b < size; b++) px[out + b] = colors[Math.min(255, Math.round(blocks[a * size + b] * k))];
  }
}

/** Whether an opened model's maps (config: its architecture) are causal: paintMapScaled's `causal` then holds. */
export const causalMaps = (config) => config.kind === 'causal_lm' && config.causal;

// Per run: for each colours-and-size key, each head's ImageData (index layer · H + head). Two keys at most are
// kept (a resize or another colour map makes a new one); a third drops the oldest.
let kept = { run: null, sizes: new Map() };

/**
 * The picture of head `head` of layer `layer` of `run` (attention [L, H, T, T]) at `size` device pixels square, as
 * paintMapScaled draws it, painted once per run, colours and size (`causal` only spares reads).
 */
export function headImage(run, layer, head, size, { cmap, scale, causal = false }) {
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
    paintMapScaled(new Uint32Array(img.data.buffer), size, 0, 0, size, run.attention.data, index * T * T, T, { cmap, scale, causal });
    images.set(index, img);
  }
  return img;
}

/** Copies the picture `img` (a headImage) into the pixels `px` of an image `stride` wide at (x0, y0), row by row. */
export function placeImage(px, stride, x0, y0, img) {
  const src = new Uint32Array(img.data.buffer), w = img.width;
  for (let y = 0; y < img.height; y++) px.set(src.subarray(y * w, (y + 1) * w), (y0 + y) * stride + x0);
}
