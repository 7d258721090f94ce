// readSafetensors: the tensors of a safetensors file (the format of `safetensors.torch.save_file`), read by the
// C++ core's hostile-input reader; also the one place that lends a file's bytes to the core for reading.
import { call, describe, isBroken, module, reserve } from './runtime.js';

/** The bytes of an ArrayBuffer or typed array, without copying. Throws a TypeError naming `caller` for the rest. */
export function fileBytes(source, caller, expected = 'an ArrayBuffer or a Uint8Array') {
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  throw new TypeError(`${caller}: expected ${expected}, got ${describe(source)}`);
}

/**
 * Copies `bytes` into the WASM heap for the duration of `read(wasm, address)`, a raw entry point, then frees the
 * copy. Its failure (a malformed file: TypeError or RangeError) is thrown naming `caller`.
 */
export function readInHeap(bytes, caller, read) {
  const arena = call(caller, (wasm) => new wasm._Arena());
  try {
    const [address] = reserve(arena, [Math.max(bytes.length, 1)], caller); // an empty file still gets an address
    module(caller).HEAPU8.set(bytes, address); // HEAPU8 is read after reserve(): memory may have grown
    return call(caller, (wasm) => read(wasm, address));
  } finally {
    if (!isBroken()) arena.delete();
  }
}

/**
 * Reads a safetensors file: every tensor as `{ data: Float32Array, shape }` keyed by name, in the file's data
 * order; the result goes straight into `MultiHeadAttention.loadStateDict`. Only F32 tensors are read. The file is
 * checked completely (header length, JSON, dtypes, shapes, offsets tiling the data) before anything is copied;
 * errors are TypeError or RangeError naming the field and the value.
 * @param {ArrayBuffer | Uint8Array} bytes
 * @returns {Map<string, { data: Float32Array, shape: number[] }>}
 */
export function readSafetensors(bytes) {
  const caller = 'readSafetensors';
  const file = fileBytes(bytes, caller);
  const { tensors } = readInHeap(file, caller, (wasm, address) => wasm._readSafetensors(address, file.length));
  const result = new Map();
  for (const { name, shape, begin, end } of tensors) {
    // A fresh, aligned copy: the file may place a tensor at any byte offset. Little-endian, as every WASM host.
    const data = new Float32Array((end - begin) / 4);
    new Uint8Array(data.buffer).set(file.subarray(begin, end));
    result.set(name, { data, shape });
  }
  return result;
}
