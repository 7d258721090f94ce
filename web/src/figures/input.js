// Argument checks of the figure functions: weights, tokens and options, with errors that name the call and argument.
// Self-contained on purpose: importing attnscope/figures must not pull in the WebAssembly runtime (tensor.js
// imports runtime.js, which imports the Emscripten glue), so a figure script needs neither init() nor a .wasm.

/** A short description of a value for error messages: `Float64Array(6)`, `string "abc"`, `number 3`. */
export function describe(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return `Array(${value.length})`;
  if (ArrayBuffer.isView(value)) return `${value.constructor.name}(${value.length})`;
  if (typeof value === 'object') return value.constructor?.name ?? 'object';
  if (typeof value === 'string') return `string "${value.length > 20 ? value.slice(0, 20) + '…' : value}"`;
  return `${typeof value} ${String(value)}`;
}

export const shapeString = (shape) => `[${shape.join(', ')}]`;
const numel = (shape) => shape.reduce((n, d) => n * d, 1);

/** Rejects unknown option keys: a typo would otherwise be silently ignored. */
export function checkOptions(options, known, caller) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${caller}: options: expected an options object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new TypeError(`${caller}: unknown option '${key}' (expected one of ${known.join(', ')})`);
  }
  return options;
}

/**
 * Weights as `{ data: Float32Array | Float64Array, shape }` (what MultiHeadAttention.forward returns) or nested
 * number arrays, checked to have one of `ranks` dimensions. Returns `{ data, shape }` without copying typed data.
 */
export function weightsTensor(value, ranks, caller, name = 'weights') {
  let tensor;
  if (Array.isArray(value)) {
    const shape = [];
    for (let level = value; Array.isArray(level); level = level[0]) shape.push(level.length);
    const flat = value.flat(shape.length - 1);
    if (flat.length !== numel(shape) || flat.some(Array.isArray)) {
      throw new RangeError(`${caller}: ${name}: nested arrays must be rectangular (the first rows give shape ${shapeString(shape)})`);
    }
    const bad = flat.findIndex((x) => typeof x !== 'number');
    if (bad >= 0) throw new TypeError(`${caller}: ${name}: nested arrays must hold numbers, got ${describe(flat[bad])}`);
    tensor = { data: Float64Array.from(flat), shape };
  } else {
    if (value === null || typeof value !== 'object' || !('data' in value) || !('shape' in value)) {
      throw new TypeError(`${caller}: ${name}: expected a tensor { data: Float32Array, shape: number[] } or nested number arrays, got ${describe(value)}`);
    }
    if (!(value.data instanceof Float32Array) && !(value.data instanceof Float64Array)) {
      throw new TypeError(`${caller}: ${name}.data: expected a Float32Array or Float64Array, got ${describe(value.data)}`);
    }
    const { shape } = value;
    if (!Array.isArray(shape) || shape.some((d) => typeof d !== 'number' || !Number.isInteger(d))) {
      throw new TypeError(`${caller}: ${name}.shape: expected an array of whole numbers, got ${Array.isArray(shape) ? shapeString(shape.map(String)) : describe(shape)}`);
    }
    if (value.data.length !== numel(shape)) {
      throw new RangeError(`${caller}: ${name}: data has ${value.data.length} values but shape ${shapeString(shape)} needs ${numel(shape)}`);
    }
    tensor = { data: value.data, shape: [...shape] };
  }
  if (!ranks.includes(tensor.shape.length)) {
    throw new RangeError(`${caller}: ${name}: expected ${ranks.map((r) => RANK_NAMES[r]).join(' or ')}, got shape ${shapeString(tensor.shape)}`);
  }
  if (tensor.shape.some((d) => d < 1)) {
    throw new RangeError(`${caller}: ${name}: every dimension must be at least 1, got shape ${shapeString(tensor.shape)}`);
  }
  return tensor;
}

const RANK_NAMES = { 2: '[queries, keys]', 3: '[heads, queries, keys]', 4: '[batch, heads, queries, keys]' };

/** Token strings, one per query (or key): a string array of exactly `count` entries. */
export function tokenList(value, count, caller, name, context) {
  if (!Array.isArray(value)) throw new TypeError(`${caller}: ${name}: expected an array of strings, got ${describe(value)}`);
  const bad = value.findIndex((t) => typeof t !== 'string');
  if (bad >= 0) throw new TypeError(`${caller}: ${name}[${bad}]: expected a string, got ${describe(value[bad])}`);
  if (value.length !== count) {
    throw new RangeError(`${caller}: ${name}: expected ${count} strings (${context}), got ${value.length}`);
  }
  return value;
}

/** A whole number in [0, size). */
export function indexOption(value, size, caller, name, what) {
  if (typeof value !== 'number') throw new TypeError(`${caller}: ${name}: expected a whole number, got ${describe(value)}`);
  if (!Number.isInteger(value) || value < 0 || value >= size) {
    throw new RangeError(`${caller}: ${name}: expected a whole number from 0 to ${size - 1} (${size} ${what}), got ${value}`);
  }
  return value;
}

/** One of a few strings. */
export function choiceOption(value, choices, fallback, caller, name) {
  if (value === undefined) return fallback;
  if (!choices.includes(value)) {
    const err = typeof value === 'string' ? RangeError : TypeError;
    throw new err(`${caller}: ${name}: expected ${choices.map((c) => `'${c}'`).join(', ')}, got ${describe(value)}`);
  }
  return value;
}

/** A finite number in [min, max] (or > min when `exclusive`). */
export function numberOption(value, fallback, { min = -Infinity, max = Infinity, exclusiveMin = false }, caller, name) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`${caller}: ${name}: expected a number, got ${describe(value)}`);
  if (!Number.isFinite(value) || value > max || (exclusiveMin ? value <= min : value < min)) {
    const range = `${exclusiveMin ? 'above' : 'from'} ${min}${Number.isFinite(max) ? ` ${exclusiveMin ? 'and at most' : 'to'} ${max}` : ''}`;
    throw new RangeError(`${caller}: ${name}: expected a finite number ${range}, got ${value}`);
  }
  return value;
}

/** `true` or `false`. Not tensor.js's booleanOption(value, name, fallback), which this module cannot import (see the
 * top) and whose argument order differs: a name of its own keeps the two from being mixed up. */
export function flagOption(value, fallback, caller, name) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${caller}: ${name}: expected true or false, got ${describe(value)}`);
  return value;
}

export function stringOption(value, fallback, caller, name) {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw new TypeError(`${caller}: ${name}: expected a string, got ${describe(value)}`);
  return value;
}

/** `true`, `false` or `'auto'`. */
export function autoOption(value, caller, name) {
  if (value === undefined) return 'auto';
  if (value !== true && value !== false && value !== 'auto') {
    throw new TypeError(`${caller}: ${name}: expected true, false or 'auto', got ${describe(value)}`);
  }
  return value;
}

/**
 * One `[queries, keys]` map out of `[q, k]`, `[heads, q, k]` or `[batch, heads, q, k]` weights: `head` picks a head or
 * averages them (`'mean'`, the default); `batch` picks the batch entry (needed only when there are several).
 * Returns `{ data, offset, L, S, head, heads }` where `head` is the index shown or 'mean'.
 */
export function selectMap(tensor, options, caller) {
  const { shape } = tensor;
  const [L, S] = shape.slice(-2);
  const heads = shape.length >= 3 ? shape[shape.length - 3] : 1;
  let base = 0;
  if (shape.length === 4) base = pickBatch(shape[0], options.batch, caller) * heads * L * S;
  else if (options.batch !== undefined) throw new RangeError(`${caller}: options.batch: weights of shape ${shapeString(shape)} have no batch dimension`);
  if (shape.length === 2) {
    if (options.head !== undefined && options.head !== 0 && options.head !== 'mean') {
      throw new RangeError(`${caller}: options.head: weights of shape ${shapeString(shape)} have no head dimension, got ${describe(options.head)}`);
    }
    return { data: tensor.data, offset: 0, L, S, head: null, heads: 1 };
  }
  const head = options.head ?? 'mean';
  if (head === 'mean') {
    const mean = new Float64Array(L * S);
    for (let h = 0; h < heads; h++) for (let k = 0; k < L * S; k++) mean[k] += tensor.data[base + h * L * S + k];
    for (let k = 0; k < L * S; k++) mean[k] /= heads;
    return { data: mean, offset: 0, L, S, head: 'mean', heads };
  }
  if (typeof head === 'string') throw new RangeError(`${caller}: options.head: expected a head index or 'mean', got ${describe(head)}`);
  indexOption(head, heads, caller, 'options.head', 'heads');
  return { data: tensor.data, offset: base + head * L * S, L, S, head, heads };
}

/** The batch entry to show: required when there are several, 0 when there is one. */
export function pickBatch(size, batch, caller) {
  if (batch === undefined) {
    if (size === 1) return 0;
    throw new RangeError(`${caller}: options.batch: the weights hold ${size} batch entries; choose one with { batch: 0 … ${size - 1} }`);
  }
  return indexOption(batch, size, caller, 'options.batch', 'batch entries');
}

/** An id prefix given by the caller must be a valid XML name, as it becomes part of id attributes. */
export function idOption(value, caller) {
  if (typeof value !== 'string') throw new TypeError(`${caller}: options.id: expected a string, got ${describe(value)}`);
  if (!/^[A-Za-z_][\w.-]*$/.test(value)) throw new RangeError(`${caller}: options.id: expected letters, digits, '_', '-' or '.' starting with a letter, got "${value}"`);
  return value;
}
