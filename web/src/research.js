// Attention sinks read off forward()'s maps: each head's sink mass, a map with one key hidden and every row
// renormalised (a view, not the model), and value-weighted attention α_ij·‖v_j‖ renormalised per row (the values'
// norms are the core's, forward's `valueNorms`). Plain arithmetic over the returned tensors, in float64.
import { describe } from './runtime.js';
import { checkOptions } from './tensor.js';

/** A shape's entry as a message quotes it: a number as written, anything else described. */
const shown = (n) => (typeof n === 'number' ? String(n) : describe(n));

/**
 * `{ data: Float32Array, shape: [layers, heads, queries, keys] }` (forward's self-attention, or a translation's
 * cross-attention, whose keys are the source's), else a TypeError or RangeError naming `name`.
 */
function maps(value, name) {
  const ok = value && typeof value === 'object' && value.data instanceof Float32Array && Array.isArray(value.shape) && value.shape.length === 4;
  if (!ok) throw new TypeError(`${name}: expected forward's attention ({ data: Float32Array, shape: [layers, heads, T, T] }), got ${describe(value)}`);
  // Each size a whole number from 1: a shape of negative sizes whose product matched the data once passed.
  if (!value.shape.every((n) => Number.isInteger(n) && n >= 1)) {
    throw new RangeError(`${name}: expected a shape of whole numbers from 1 (layers, heads, queries, keys), got [${value.shape.map(shown).join(', ')}]`);
  }
  const [layers, heads, queries, keys] = value.shape;
  if (value.data.length !== layers * heads * queries * keys) throw new RangeError(`${name}: its data (${value.data.length} floats) do not match its shape`);
  return { layers, heads, queries, keys };
}

/** Key positions: one whole number or an array of them, each below `keys`. */
function positions(value, keys, name) {
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) throw new RangeError(`${name}: expected at least one key position, got none`);
  for (const p of list) {
    if (typeof p !== 'number') throw new TypeError(`${name}: expected a key position (a whole number), got ${describe(p)}`);
    if (!Number.isInteger(p) || p < 0 || p >= keys) throw new RangeError(`${name}: expected a key position from 0 to ${keys - 1}, got ${p}`);
  }
  return [...new Set(list)];
}

/**
 * Per head, the mean over query rows `fromQuery` to the last of the weight each row puts on the key position(s)
 * `key` (default 0, the first token): `{ data: Float32Array, shape: [layers, heads] }`. With several positions (every
 * `[SEP]`, say) a row's weights on them are summed first. A causal query before `key` gives it 0: pass
 * `fromQuery: key` to average only the rows that can see it.
 */
export function sinkMass(attention, options = {}) {
  const name = 'sinkMass';
  const { layers, heads, queries, keys } = maps(attention, `${name}: attention`);
  checkOptions(options, ['key', 'fromQuery'], `${name}: options`); // a typo ("keys") is not silently the first token
  const cols = positions(options.key ?? 0, keys, `${name}: options.key`);
  const from = options.fromQuery ?? 0;
  if (!Number.isInteger(from) || from < 0 || from >= queries) throw new RangeError(`${name}: options.fromQuery: expected 0 to ${queries - 1}, got ${describe(from)}`);
  const out = new Float32Array(layers * heads);
  for (let m = 0; m < layers * heads; m++) {
    let sum = 0;
    for (let q = from; q < queries; q++) {
      const row = (m * queries + q) * keys;
      for (const c of cols) sum += attention.data[row + c];
    }
    out[m] = sum / (queries - from);
  }
  return { data: out, shape: [layers, heads] };
}

/**
 * A view of the maps with the key position(s) `key` hidden: their weights set to 0 and every row renormalised over
 * the keys left, so the rest of a map a sink blinds can be read. Not what the model computes: the result says so
 * (`view: 'hiddenKeys'`, with the positions hidden). A row that gave all its weight to the hidden keys is all 0.
 */
export function hideKeys(attention, key) {
  const name = 'hideKeys';
  const { keys } = maps(attention, `${name}: attention`);
  const cols = positions(key, keys, `${name}: key`);
  const hidden = new Uint8Array(keys);
  for (const c of cols) hidden[c] = 1;
  // Each row's sum in float64, each weight divided in float64 and written once as float32: no float64 copy of the
  // maps (GPT-2 small at 512 tokens: 300 MB), the same bits as renormalising such a copy.
  const a = attention.data, out = new Float32Array(a.length);
  for (let row = 0; row < a.length; row += keys) {
    let sum = 0;
    for (let j = 0; j < keys; j++) if (!hidden[j]) sum += a[row + j];
    if (sum > 0) for (let j = 0; j < keys; j++) if (!hidden[j]) out[row + j] = a[row + j] / sum;
  }
  return { data: out, shape: [...attention.shape], view: 'hiddenKeys', hiddenKeys: cols };
}

/**
 * Value-weighted attention (Kobayashi et al. 2020): α_ij·‖v_j‖ renormalised per row, how much of a query's output
 * comes from each key, with `valueNorms` forward's `[layers, heads, T]` (`valueNorms: true`). A view derived from the
 * model (`view: 'valueWeighted'`); a sink whose value is near 0 loses its weight here.
 */
export function valueWeighted(attention, valueNorms) {
  const name = 'valueWeighted';
  const { layers, heads, queries, keys } = maps(attention, `${name}: attention`);
  const ok = valueNorms && valueNorms.data instanceof Float32Array && Array.isArray(valueNorms.shape);
  if (!ok) throw new TypeError(`${name}: valueNorms: expected forward's valueNorms ({ data, shape: [layers, heads, T] }), got ${describe(valueNorms)}`);
  const [vl, vh, vt] = valueNorms.shape;
  if (valueNorms.shape.length !== 3 || vl !== layers || vh !== heads || vt !== keys) {
    throw new RangeError(`${name}: valueNorms: expected shape [${layers}, ${heads}, ${keys}] (the maps' layers, heads and keys), got [${valueNorms.shape.map(shown).join(', ')}]`);
  }
  if (valueNorms.data.length !== layers * heads * keys) {
    throw new RangeError(`${name}: valueNorms: its data (${valueNorms.data.length} floats) do not match its shape [${layers}, ${heads}, ${keys}]`);
  }
  // Norms: finite and not negative (a NaN or negative one once gave rows of 0 without a word).
  const bad = valueNorms.data.findIndex((x) => !(x >= 0 && x < Infinity));
  if (bad >= 0) throw new RangeError(`${name}: valueNorms.data[${bad}]: expected a norm (a finite number from 0), got ${valueNorms.data[bad]}`);
  // As hideKeys: sums and quotients in float64 (a float32 product is exact in it), written once as float32.
  const a = attention.data, norms = valueNorms.data, out = new Float32Array(a.length);
  for (let m = 0; m < layers * heads; m++) {
    const n = m * keys;
    for (let q = 0; q < queries; q++) {
      const row = (m * queries + q) * keys;
      let sum = 0;
      for (let j = 0; j < keys; j++) sum += a[row + j] * norms[n + j];
      if (sum > 0) for (let j = 0; j < keys; j++) out[row + j] = (a[row + j] * norms[n + j]) / sum;
    }
  }
  return { data: out, shape: [...attention.shape], view: 'valueWeighted' };
}
