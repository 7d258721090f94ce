// The binding's raw model and checkpoint loader (cpp/bindings/model_bindings.hpp), each call through the binding's one
// error protocol (runtime.js call): plain values back, or the TypeError / RangeError the core chose. Every request
// carries its JS call's name down to the core, which starts its messages with it.
import { call, isBroken } from './runtime.js';

/** The methods a model class calls on its raw `_Model`; each names `caller` in its errors. */
export function modelHandle(model) {
  return {
    config: (caller) => call(caller, () => model.config()),
    parameterBytes: () => model.parameterBytes(),
    forward: (request) => call(request.call, () => model.forward(request, -1)),
    forwardCached: (request, id) => call(request.call, () => model.forward(request, id)),
    // A cache outlives its model's handle: it is freed by its own call, not through the model.
    releaseCache: (id) => isBroken() || call('ForwardCache.dispose', (wasm) => wasm._releaseForwardCache(id)),
    generate: (caller, ids, maxNew, stop, ablate) => call(caller, () => model.generate(caller, ids, maxNew, stop, ablate)),
    translate: (request, start, eos, maxSteps) => call(request.call, () => model.translate(request, start, eos, maxSteps)),
    logitLens: (request, k, cache = 0, layers = undefined) => call(request.call, () => model.logitLens(request, k, cache, layers)),
    patchEach: (request, patches, cache, logitIds) => call(request.call, () => model.patchEach(request, patches, cache, logitIds)),
    headWeights: (caller, layer, head) => call(caller, () => model.headWeights(caller, layer, head)),
    trace: (request, attention, layer, head, query, cache = 0) => call(request.call, () => model.trace(request, attention, layer, head, query, cache)),
    rnnForward: (caller, source, target) => call(caller, () => model.rnnForward(source, target)),
    rnnTranslate: (caller, source, bos, eos, maxSteps) => call(caller, () => model.rnnTranslate(source, bos, eos, maxSteps)),
    delete: () => isBroken() || model.delete(), // a trapped module's memory is not touched again
    isDeleted: () => model.isDeleted(),
  };
}

/** A fresh raw `_Model`, for `loadFile` or a loader's `finish`. */
export const rawModel = (caller) => call(caller, (wasm) => new wasm._Model());

/**
 * `createLoader(configText)` for checkpoint-stream.js, backed by the core's CheckpointLoader; `allowNonFinite` reads
 * tensors holding NaN or infinity instead of refusing them.
 */
export function checkpointLoader(caller, { allowNonFinite = false } = {}) {
  return (configText) => {
    const loader = call(caller, (wasm) => new wasm._Loader());
    const free = () => isBroken() || loader.delete();
    let config;
    try {
      config = call(caller, () => loader.open(configText, caller, allowNonFinite));
    } catch (error) {
      free();
      throw error;
    }
    return {
      config,
      setIndex: (text) => call(caller, () => loader.setIndex(text)),
      files: () => call(caller, () => loader.files()),
      neededHeaderBytes: (name, address, fileSize) => call(caller, () => loader.neededHeaderBytes(name, address, fileSize)),
      addHeader: (name, address, size, fileSize) => call(caller, () => loader.addHeader(name, address, size, fileSize)),
      plan: (tokens) => call(caller, () => loader.plan(tokens)),
      allocate: () => call(caller, () => loader.allocate()),
      write: (name, offset, address, size) => call(caller, () => loader.write(name, offset, address, size)),
      finish() {
        const model = rawModel(caller);
        try {
          call(caller, () => loader.finish(model));
        } catch (error) {
          if (!isBroken()) model.delete();
          throw error;
        }
        return modelHandle(model);
      },
      delete: free,
    };
  };
}
