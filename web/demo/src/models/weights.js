// The tensors of a trained model file, by name, read on the demo's side for the step-by-step panel's float64
// walkthrough of a layer's heads (the package loads them into WebAssembly and keeps no JS copy). The file is
// safetensors (tools/MODEL_FORMAT.md), read by the package's own readSafetensors, so the page has no second parser
// of the format.
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

const files = new WeakMap();
const ATTENTION_KEYS = ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias'];

/**
 * The weights of attention `prefix` (e.g. `blocks.2.attn`) in the model file `bytes`, under MultiHeadAttention's
 * state-dict names: what the walkthrough (steps/float64.js) projects the trace's input with. The file is read once.
 */
export function attentionWeights(bytes, prefix) {
  let tensor = files.get(bytes);
  if (!tensor) files.set(bytes, (tensor = modelTensors(bytes)));
  return Object.fromEntries(ATTENTION_KEYS.map((key) => [key, tensor(`${prefix}.${key}`)]));
}
