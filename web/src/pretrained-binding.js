// The binding's raw Hugging Face loader and model (cpp/bindings/pretrained_bindings.cpp) through the binding's one
// error protocol (runtime.js call): plain values back, or the TypeError / RangeError the core chose.
import { call, isBroken } from './runtime.js';

// The core's messages may start with a name of its own (`loadModel: ` for file errors, `PretrainedModel.forward: `);
// the JS call's name, which call() puts in front, replaces it instead of preceding it.
const CORE_NAME = /^(loadModel|Pretrained(Model|Loader)\.\w+): /;

/** `invoke(wasm)` of one raw entry point, its failure thrown naming `caller` once. */
function raw(caller, invoke) {
  try {
    return call(caller, invoke);
  } catch (error) {
    const rest = error.message.slice(caller.length + 2);
    if (!error.message.startsWith(`${caller}: `) || !CORE_NAME.test(rest)) throw error;
    throw new error.constructor(`${caller}: ${rest.replace(CORE_NAME, '')}`, { cause: error.cause });
  }
}

/** The raw model handle the model classes hold (pretrained.js): calls take the caller's name for their errors. */
function modelHandle(model) {
  return {
    config: () => raw('loadModel', () => model.config()),
    parameterBytes: () => raw('loadModel', () => model.parameterBytes()),
    forward: (request, caller) => raw(caller, () => model.forward(request)),
    generate: (ids, maxNew, stop, ablate, caller) => raw(caller, () => model.generate(ids, maxNew, stop, ablate)),
    trace: (request, layer, head, query, caller) => raw(caller, () => model.trace(request, layer, head, query)),
    delete: () => isBroken() || model.delete(), // a trapped module's memory is not touched again
    isDeleted: () => model.isDeleted(),
  };
}

/** `createLoader(configText)` for pretrained-loader.js, backed by the core's PretrainedLoader. */
export function pretrainedLoader(caller) {
  return (configText) => {
    const loader = raw(caller, (wasm) => new wasm._PretrainedLoader());
    const free = () => isBroken() || loader.delete();
    try {
      raw(caller, () => loader.open(configText));
    } catch (error) {
      free();
      throw error;
    }
    return {
      setIndex: (text) => raw(caller, () => loader.setIndex(text)),
      files: () => raw(caller, () => loader.files()),
      neededHeaderBytes: (name, address, fileSize) => raw(caller, () => loader.neededHeaderBytes(name, address, fileSize)),
      addHeader: (name, address, size, fileSize) => raw(caller, () => loader.addHeader(name, address, size, fileSize)),
      plan: (tokens) => raw(caller, () => loader.plan(tokens)),
      allocate: () => raw(caller, () => loader.allocate()),
      write: (name, offset, address, size) => raw(caller, () => loader.write(name, offset, address, size)),
      finish() {
        const model = raw(caller, (wasm) => new wasm._PretrainedModel());
        try {
          raw(caller, () => loader.finish(model));
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
