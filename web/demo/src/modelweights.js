// The tensors of a trained model file, by name, read on the demo's side for the step-by-step panel (the package
// loads them into WebAssembly and keeps no JS copy). The file is safetensors (tools/MODEL_FORMAT.md), read by the
// package's own readSafetensors, so the page has no second parser of the format.
import { readSafetensors } from 'attnscope';

/** @returns {(name: string) => { data: Float32Array, shape: number[] }} */
export function modelTensors(bytes) {
  const tensors = readSafetensors(bytes);
  return (name) => {
    const t = tensors.get(name);
    if (!t) throw new RangeError(`model file: no tensor '${name}'`);
    return t;
  };
}
