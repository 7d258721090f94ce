// Conversions shared by the wrappers: JS values into typed arrays, shapes and numbers the binding takes. A value that
// cannot be converted is an error naming the argument, what was expected and what was given; whether a converted
// value fits the call (shapes, sizes, ranges) is checked once, in C++.
import { describe } from './runtime.js';

/** "[2, 3, 4]" */
export function shapeString(shape) {
  return `[${shape.join(', ')}]`;
}

export function numel(shape) {
  return shape.reduce((n, d) => n * d, 1);
}

function checkShape(shape, name) {
  if (!Array.isArray(shape)) throw new TypeError(`${name}.shape: expected an array of dimensions, got ${describe(shape)}`);
  for (const d of shape) {
    if (typeof d !== 'number') {
      throw new TypeError(`${name}.shape: expected numbers, got ${shapeString(shape.map((x) => (typeof x === 'number' ? x : describe(x))))}`);
    }
    if (!Number.isInteger(d) || d < 1 || d > 2 ** 32) {
      throw new RangeError(`${name}.shape: every dimension must be a whole number from 1 to 2^32, got ${shapeString(shape)}`);
    }
  }
}

/** Nested arrays deeper than this are refused before they are walked. */
const NESTING = 8;

// Nested arrays → { data, shape }. Every array at one depth must have the same length and no holes: a ragged
// or sparse array is refused, never reshaped (flat() would skip holes and make [[1,,3,4],[5,6,7,8,9]] a [2, 4]).
function fromNested(value, name, toTyped) {
  const shape = [];
  for (let level = value; Array.isArray(level) && shape.length <= NESTING; level = level[0]) shape.push(level.length);
  // The walk below recurses a level a depth: 20,000 levels overflowed the stack with the engine's RangeError.
  if (shape.length > NESTING) throw new RangeError(`${name}: nested arrays more than ${NESTING} deep (a tensor here has at most 4 dimensions)`);
  const flat = [];
  const walk = (array, depth, path) => {
    if (!Array.isArray(array) || array.length !== shape[depth]) {
      const got = Array.isArray(array) ? `length ${array.length}` : describe(array);
      throw new RangeError(`${name}: nested arrays must be rectangular: ${path} has ${got}, expected length ${shape[depth]} (the first row gives shape ${shapeString(shape)})`);
    }
    for (let i = 0; i < array.length; ++i) {
      if (!(i in array)) throw new RangeError(`${name}: nested arrays must not have holes: ${path}[${i}] is empty`);
      if (depth + 1 < shape.length) walk(array[i], depth + 1, `${path}[${i}]`);
      else if (Array.isArray(array[i])) throw new RangeError(`${name}: nested arrays must be rectangular: ${path}[${i}] is an array, expected a value (the first row gives shape ${shapeString(shape)})`);
      else flat.push(array[i]);
    }
  };
  walk(value, 0, name.replace(/^.*: /, ''));
  checkShape(shape, name);
  return { data: toTyped(flat), shape };
}

/**
 * A float tensor argument: { data: Float32Array, shape } or nested number arrays.
 * @returns {{ data: Float32Array, shape: number[] }}
 */
export function floatTensor(value, name) {
  if (Array.isArray(value)) {
    return fromNested(value, name, (flat) => {
      if (flat.some((x) => typeof x !== 'number')) throw new TypeError(`${name}: nested arrays must hold numbers`);
      return Float32Array.from(flat);
    });
  }
  if (value === null || typeof value !== 'object' || !('data' in value) || !('shape' in value)) {
    throw new TypeError(`${name}: expected a tensor { data: Float32Array, shape: number[] } or nested arrays, got ${describe(value)}`);
  }
  if (!(value.data instanceof Float32Array)) {
    throw new TypeError(`${name}.data: expected a Float32Array, got ${describe(value.data)}`);
  }
  return checked(value, name);
}

/**
 * A mask argument: Uint8Array data (nonzero = blocked), Float32Array data (added to the scores),
 * or nested arrays of booleans (true = blocked) or numbers (added).
 * @returns {{ data: Uint8Array | Float32Array, shape: number[] }}
 */
export function maskTensor(value, name) {
  if (Array.isArray(value)) {
    return fromNested(value, name, (flat) => {
      if (flat.every((x) => typeof x === 'boolean')) return Uint8Array.from(flat, Number);
      if (flat.every((x) => typeof x === 'number')) return Float32Array.from(flat);
      throw new TypeError(`${name}: nested arrays must hold only booleans (true = blocked) or only numbers (added to the scores)`);
    });
  }
  if (value === null || typeof value !== 'object' || !('data' in value) || !('shape' in value)) {
    throw new TypeError(`${name}: expected a mask { data: Uint8Array | Float32Array, shape: number[] } or nested arrays, got ${describe(value)}`);
  }
  if (!(value.data instanceof Uint8Array) && !(value.data instanceof Float32Array)) {
    throw new TypeError(`${name}.data: expected a Uint8Array (nonzero = blocked) or a Float32Array (added to the scores), got ${describe(value.data)}`);
  }
  return checked(value, name);
}

function checked(value, name) {
  checkShape(value.shape, name);
  const shape = [...value.shape];
  if (value.data.length !== numel(shape)) {
    throw new RangeError(`${name}: data has ${value.data.length} values but shape ${shapeString(shape)} needs ${numel(shape)}`);
  }
  return { data: value.data, shape };
}

/** Rejects option keys the function does not know (a typo would otherwise be silently ignored). */
export function checkOptions(options, known, name) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${name}: expected an options object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new TypeError(`${name}: unknown option '${key}' (expected one of ${known.join(', ')})`);
  }
  return options;
}

export function booleanOption(value, name, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${name}: expected true or false, got ${describe(value)}`);
  return value;
}

/** A whole number ≥ min (TypeError for non-numbers, RangeError for the rest). */
export function integerOption(value, name, { min = 1, max = 2 ** 31 - 1 } = {}) {
  if (typeof value !== 'number') throw new TypeError(`${name}: expected a whole number, got ${describe(value)}`);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name}: expected a whole number from ${min} to ${max}, got ${value}`);
  }
  return value;
}

/** A whole number, as far as JS can tell: a TypeError for anything that is not a number (C++ checks its range). */
export function numberOption(value, name) {
  if (typeof value !== 'number') throw new TypeError(`${name}: expected a whole number, got ${describe(value)}`);
  return value;
}

/** A mask argument as the binding takes it: its kind named by its typed array, its data and shape. */
export function maskArg(wasm, value, name) {
  const mask = maskTensor(value, name);
  return { kind: mask.data instanceof Uint8Array ? wasm._MaskKind.boolean : wasm._MaskKind.additive, data: mask.data, shape: mask.shape };
}

/** No mask. */
export function noMask(wasm) {
  return { kind: wasm._MaskKind.none, data: null, shape: [] };
}

/**
 * The `out` option: caller-owned Float32Arrays the results are copied into instead of fresh arrays, one per name of
 * `keys` (a layer's output and weights; a model's attention).
 * @returns {{ [key: string]: Float32Array | undefined }}
 */
export function outBuffers(value, name, keys = ['output', 'weights']) {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value) || ArrayBuffer.isView(value)) {
    throw new TypeError(`${name}: expected { ${keys.map((k) => `${k}?: Float32Array`).join(', ')} }, got ${describe(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (!keys.includes(key)) throw new TypeError(`${name}: unknown key '${key}' (expected ${keys.join(', ')})`);
  }
  for (const key of keys) {
    if (value[key] !== undefined && !(value[key] instanceof Float32Array)) {
      throw new TypeError(`${name}.${key}: expected a Float32Array, got ${describe(value[key])}`);
    }
  }
  return Object.fromEntries(keys.map((k) => [k, value[k]]));
}

/**
 * `ids`, each a whole number from 0 (else a RangeError naming `caller` and the entry): what tokenStrings and a
 * checkpoint tokenizer's decode take (our tokenizers check their own range).
 */
export function wholeIds(ids, caller) {
  ids.forEach((id, i) => {
    if (!Number.isInteger(id) || id < 0) throw new RangeError(`${caller}: ids[${i}]: expected a token id (a whole number from 0), got ${id}`);
  });
  return ids;
}
