// The binding's raw Hugging Face loader and model (cpp/bindings/pretrained_bindings.cpp), wrapped so that each call
// returns plain values and throws the TypeError / RangeError the core chose, with the JS call's name in front.
import { module } from './runtime.js';

/** A loader result: the value, or the core's `{ error, message }` thrown as its class. */
function value(result, caller) {
  if (result && typeof result === 'object' && typeof result.error === 'string' && typeof result.message === 'string') {
    const ErrorClass = { TypeError, RangeError }[result.error] ?? Error;
    // The loader names the JS call itself (its messages are about the user's files); others get it in front.
    throw new ErrorClass(result.message.startsWith(`${caller}: `) ? result.message : `${caller}: ${result.message}`);
  }
  return result;
}

/**
 * A run's result: the value, or null with the binding's status thrown as its class. The core's messages start with
 * its own call's name (`PretrainedModel.forward: `), which the JS call's name replaces.
 */
function ran(wasm, result, caller) {
  if (result !== null) return result;
  const status = wasm._lastStatus();
  const message = `${caller}: ${wasm._lastError().replace(/^PretrainedModel\.\w+: /, '')}`;
  if (status === wasm._Status.rangeError) throw new RangeError(message);
  throw new Error(message);
}

/** The raw model handle the model classes hold (pretrained.js): calls take the caller's name for their errors. */
function modelHandle(wasm, raw) {
  return {
    config: () => raw.config(),
    parameterBytes: () => raw.parameterBytes(),
    forward: (request, caller) => ran(wasm, raw.forward(request), caller),
    generate: (ids, maxNew, stop, ablate, caller) => ran(wasm, raw.generate(ids, maxNew, stop, ablate), caller),
    trace: (request, layer, head, query, caller) => ran(wasm, raw.trace(request, layer, head, query), caller),
    delete: () => raw.delete(),
    isDeleted: () => raw.isDeleted(),
  };
}

/** `createLoader(configText)` for pretrained-loader.js, backed by the core's PretrainedLoader. */
export function pretrainedLoader(caller) {
  return (configText) => {
    const wasm = module(caller);
    const raw = new wasm._PretrainedLoader();
    try {
      value(raw.open(configText), caller);
    } catch (error) {
      raw.delete();
      throw error;
    }
    return {
      setIndex: (text) => value(raw.setIndex(text), caller),
      files: () => value(raw.files(), caller),
      neededHeaderBytes: (address, fileSize) => value(raw.neededHeaderBytes(address, fileSize), caller),
      addHeader: (name, address, size, fileSize) => value(raw.addHeader(name, address, size, fileSize), caller),
      allocate: () => value(raw.allocate(), caller),
      write: (name, offset, address, size) => value(raw.write(name, offset, address, size), caller),
      finish() {
        const model = new wasm._PretrainedModel();
        try {
          value(raw.finish(model), caller);
        } catch (error) {
          model.delete();
          throw error;
        }
        return modelHandle(wasm, model);
      },
      delete: () => raw.delete(),
    };
  };
}
