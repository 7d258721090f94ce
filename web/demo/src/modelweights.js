// The tensors of a trained model file, by name, read on the demo's side for the step-by-step panel (the package
// loads them into WebAssembly and keeps no JS copy). Reads tools/MODEL_FORMAT.md format 1: "ATTNSCP1", a uint32
// header length, the JSON header, then float32 data aligned to 4 bytes. The package validates the file first
// (loadModel), so this only slices.

/** @returns {(name: string) => { data: Float32Array, shape: number[] }} */
export function modelTensors(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(8, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + headerLength)));
  const dataStart = Math.ceil((12 + headerLength) / 4) * 4;
  // One aligned copy of the data section; each tensor is a view into it.
  const floats = new Float32Array(Math.floor((bytes.length - dataStart) / 4));
  new Uint8Array(floats.buffer).set(bytes.subarray(dataStart, dataStart + floats.length * 4));
  const byName = new Map(header.tensors.map((t) => [t.name, t]));
  return (name) => {
    const t = byName.get(name);
    if (!t) throw new RangeError(`model file: no tensor '${name}'`);
    const n = t.shape.reduce((a, b) => a * b, 1);
    return { data: floats.subarray(t.offset, t.offset + n), shape: t.shape };
  };
}
