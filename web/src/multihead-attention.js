// MultiHeadAttention: the public class over the binding's _Attention handle. It converts JS values into typed arrays
// and shapes; the C++ side checks sizes, shapes and options, and its errors arrive as the class the README promises.
import { disposeSymbol, OwnedHandle } from './owned-handle.js';
import { call, describe, module } from './runtime.js';
import { booleanOption, checkOptions, floatTensor, maskArg, noMask, numberOption, outBuffers } from './tensor.js';

const CONFIG_KEYS = ['embedDim', 'numHeads', 'kdim', 'vdim', 'bias', 'seed'];
const FORWARD_KEYS = ['keyPaddingMask', 'attnMask', 'causal', 'needWeights', 'averageWeights', 'out'];
/** An argument not given (key, value): the binding applies the default. */
const NOT_GIVEN = Object.freeze({ data: null, shape: Object.freeze([]) });

export class MultiHeadAttention {
  #attention;
  #config;

  /**
   * @param {{ embedDim: number, numHeads: number, kdim?: number, vdim?: number, bias?: boolean, seed?: number }} options
   */
  constructor(options) {
    const caller = 'new MultiHeadAttention';
    module(caller);
    if (options === undefined) throw new TypeError(`${caller}: expected options { embedDim, numHeads, kdim?, vdim?, bias?, seed? }, got undefined`);
    checkOptions(options, CONFIG_KEYS, `${caller}: options`);
    const embedDim = numberOption(options.embedDim, `${caller}: embedDim`);
    const numHeads = numberOption(options.numHeads, `${caller}: numHeads`);
    const kdim = options.kdim === undefined ? embedDim : numberOption(options.kdim, `${caller}: kdim`);
    const vdim = options.vdim === undefined ? embedDim : numberOption(options.vdim, `${caller}: vdim`);
    const bias = booleanOption(options.bias, `${caller}: bias`, true);
    const seed = options.seed === undefined ? 0 : numberOption(options.seed, `${caller}: seed`);
    // The C++ side checks the sizes and the seed, that numHeads divides embedDim, and refuses, before allocating,
    // parameters that WebAssembly memory cannot hold.
    const attention = call(caller, (wasm) => wasm._createAttention({ embedDim, numHeads, kdim, vdim, bias, seed }));
    this.#attention = new OwnedHandle(this, attention, 'this MultiHeadAttention was disposed; create a new one');
    // The numbers C++ accepted, as given (headDim is embedDim / numHeads by definition).
    this.#config = Object.freeze({ embedDim, numHeads, headDim: embedDim / numHeads, kdim, vdim, bias });
  }

  /** @returns {number} */ get embedDim() { return this.#config.embedDim; }
  /** @returns {number} */ get numHeads() { return this.#config.numHeads; }
  /** @returns {number} */ get headDim() { return this.#config.headDim; }
  /** @returns {number} */ get kdim() { return this.#config.kdim; }
  /** @returns {number} */ get vdim() { return this.#config.vdim; }
  /** @returns {boolean} */ get bias() { return this.#config.bias; }

  /** The _Attention handle, for `caller`: an Error once disposed, or before the module is loaded. */
  #alive(caller) {
    const attention = this.#attention.get(caller);
    module(caller);
    return attention;
  }

  /**
   * Replaces every parameter. Strict like PyTorch: all keys of this configuration, no others. A failed load
   * changes nothing.
   * @param {Record<string, any> | Map<string, any>} state
   */
  loadStateDict(state) {
    const caller = 'MultiHeadAttention.loadStateDict';
    const attention = this.#alive(caller);
    if (state === null || typeof state !== 'object' || ArrayBuffer.isView(state) || Array.isArray(state)) {
      throw new TypeError(`${caller}: expected an object (or Map) of tensors keyed by PyTorch names, got ${describe(state)}`);
    }
    const entries = state instanceof Map ? [...state] : Object.entries(state);
    // A bare Float32Array takes the layer's shape for its key (shape null); the keys and shapes are checked in C++.
    const tensors = entries.map(([key, value]) => {
      if (value instanceof Float32Array) return [String(key), value, null];
      const tensor = floatTensor(value, `${caller}: '${String(key)}'`);
      return [String(key), tensor.data, tensor.shape];
    });
    call(caller, () => attention.loadStateDict(tensors));
  }

  /**
   * Copies of every parameter under PyTorch's names.
   * @returns {Record<string, { data: Float32Array, shape: number[] }>}
   */
  stateDict() {
    const caller = 'MultiHeadAttention.stateDict';
    const attention = this.#alive(caller);
    return call(caller, () => attention.stateDict());
  }

  /**
   * Multi-head attention of `query` over `key`/`value` (both default to `query`: self-attention).
   * See index.d.ts for shapes and options.
   */
  forward(query, key, value, options) {
    const caller = 'MultiHeadAttention.forward';
    const attention = this.#alive(caller);
    const opts = checkOptions(options, FORWARD_KEYS, `${caller}: options`);
    const q = floatTensor(query, `${caller}: query`);
    // Not given (null or undefined): the binding defaults key to query and value to key. One object passed twice
    // is converted once, so the binding copies it into the heap once.
    const k = key == null ? NOT_GIVEN : key === query ? q : floatTensor(key, `${caller}: key`);
    const v = value == null ? NOT_GIVEN : value === key ? k : value === query ? q : floatTensor(value, `${caller}: value`);
    const wasm = module(caller);
    const keyPaddingMask = opts.keyPaddingMask == null ? noMask(wasm) : maskArg(wasm, opts.keyPaddingMask, `${caller}: keyPaddingMask`);
    const attnMask = opts.attnMask == null ? noMask(wasm) : maskArg(wasm, opts.attnMask, `${caller}: attnMask`);
    const causal = booleanOption(opts.causal, `${caller}: causal`, false);
    const needWeights = booleanOption(opts.needWeights, `${caller}: needWeights`, true);
    const averageWeights = booleanOption(opts.averageWeights, `${caller}: averageWeights`, false);
    const out = outBuffers(opts.out, `${caller}: options.out`);
    // One call: C++ checks the shapes and the `out` arrays against the call, sizes it against the memory limit,
    // copies the inputs in, runs, and copies the results out (into `out` when given).
    return call(caller, () => attention.forward({
      query: q, key: k, value: v, keyPaddingMask, attnMask, causal, needWeights, averageWeights,
      outOutput: out.output, outWeights: out.weights,
    }));
  }

  /**
   * Gives back the memory this layer keeps between calls (its argument arena and the C++ workspace); the next
   * call allocates again. Both also shrink by themselves when a call needs under a quarter of what they hold.
   */
  trim() {
    const caller = 'MultiHeadAttention.trim';
    const attention = this.#alive(caller);
    call(caller, () => attention.trim());
  }

  /** Frees the WebAssembly memory of this layer. Idempotent; any other call afterwards throws. */
  dispose() {
    this.#attention.dispose();
  }

  [disposeSymbol]() {
    this.dispose();
  }
}
