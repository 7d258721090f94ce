// The binding's raw Hugging Face loader and model, wrapped so that each call returns plain values and throws the
// TypeError / RangeError the core chose, naming the JS call.
import { module } from './runtime.js';

/** `createLoader(configText)` for pretrained-loader.js, backed by the core's PretrainedLoader. */
export function pretrainedLoader(caller) {
  return () => {
    const wasm = module(caller);
    if (typeof wasm._PretrainedLoader !== 'function') throw new Error(`${caller}: this build of attnscope cannot read Hugging Face checkpoints yet`);
    throw new Error(`${caller}: not wired yet`);
  };
}
