// MultiHeadAttention: the public class over the binding's _Attention handle.
import { check, copyIn, copyInto, copyOut, describe, formatBytes, leakGuard, memoryLimit, module, reserve } from './runtime.js';
import { booleanOption, checkOptions, expectLength, expectShape, floatTensor, integerOption, maskKind, maskTensor, numel, outBuffers, shapeString } from './tensor.js';

const CONFIG_KEYS = ['embedDim', 'numHeads', 'kdim', 'vdim', 'bias', 'seed'];
const FORWARD_KEYS = ['keyPaddingMask', 'attnMask', 'causal', 'needWeights', 'averageWeights', 'out'];
const disposeSymbol = Symbol.dispose ?? Symbol.for('nodejs.dispose');

function bytesOf(tensor) {
  return tensor ? tensor.data.byteLength : 0;
}

export class MultiHeadAttention {
  #attention;
  #arena;
  #disposed = false;
  #config;
  /** PyTorch's state-dict keys → shapes for this configuration, as the C++ layer reports them. */
  #shapes;

  /**
   * @param {{ embedDim: number, numHeads: number, kdim?: number, vdim?: number, bias?: boolean, seed?: number }} options
   */
  constructor(options) {
    const caller = 'new MultiHeadAttention';
    const wasm = module(caller);
    if (options === undefined) throw new TypeError(`${caller}: expected options { embedDim, numHeads, kdim?, vdim?, bias?, seed? }, got undefined`);
    checkOptions(options, CONFIG_KEYS, `${caller}: options`);
    const embedDim = integerOption(options.embedDim, `${caller}: embedDim`);
    const numHeads = integerOption(options.numHeads, `${caller}: numHeads`);
    const kdim = options.kdim === undefined ? embedDim : integerOption(options.kdim, `${caller}: kdim`);
    const vdim = options.vdim === undefined ? embedDim : integerOption(options.vdim, `${caller}: vdim`);
    const bias = booleanOption(options.bias, `${caller}: bias`, true);
    const seed = options.seed === undefined ? 0 : integerOption(options.seed, `${caller}: seed`, { min: 0, max: Number.MAX_SAFE_INTEGER });
    if (embedDim % numHeads !== 0) {
      throw new RangeError(`${caller}: embedDim (${embedDim}) must be divisible by numHeads (${numHeads})`);
    }
    // The C++ side refuses, before allocating, parameters that WebAssembly memory cannot hold.
    const attention = wasm._createAttention({ embedDim, numHeads, kdim, vdim, bias, seed });
    if (!attention) check(wasm._lastStatus(), caller);
    this.#attention = attention;
    this.#arena = new wasm._Arena();
    this.#config = Object.freeze({ embedDim, numHeads, headDim: embedDim / numHeads, kdim, vdim, bias, seed });
    this.#shapes = new Map(attention.stateDictShapes());
    leakGuard.register(this, [this.#attention, this.#arena], this);
  }

  /** @returns {number} */ get embedDim() { return this.#config.embedDim; }
  /** @returns {number} */ get numHeads() { return this.#config.numHeads; }
  /** @returns {number} */ get headDim() { return this.#config.headDim; }
  /** @returns {number} */ get kdim() { return this.#config.kdim; }
  /** @returns {number} */ get vdim() { return this.#config.vdim; }
  /** @returns {boolean} */ get bias() { return this.#config.bias; }

  #alive(caller) {
    if (this.#disposed) throw new Error(`${caller}: this MultiHeadAttention was disposed; create a new one`);
    module(caller);
  }

  /**
   * Replaces every parameter. Strict like PyTorch: all keys of this configuration, no others. A failed load
   * changes nothing.
   * @param {Record<string, any> | Map<string, any>} state
   */
  loadStateDict(state) {
    const caller = 'MultiHeadAttention.loadStateDict';
    this.#alive(caller);
    if (state === null || typeof state !== 'object' || ArrayBuffer.isView(state) || Array.isArray(state)) {
      throw new TypeError(`${caller}: expected an object (or Map) of tensors keyed by PyTorch names, got ${describe(state)}`);
    }
    const shapes = this.#shapes;
    const expectedKeys = [...shapes.keys()].map((k) => `'${k}'`).join(', ');
    const entries = state instanceof Map ? [...state] : Object.entries(state);
    const tensors = [];
    for (const [key, value] of entries) {
      const shape = shapes.get(key);
      if (!shape) throw new TypeError(`${caller}: unexpected key '${key}' (this layer has ${expectedKeys})`);
      const name = `${caller}: '${key}'`;
      let tensor;
      if (value instanceof Float32Array) {
        if (value.length !== numel(shape)) {
          throw new RangeError(`${name}: expected ${numel(shape)} values (shape ${shapeString(shape)}), got Float32Array(${value.length})`);
        }
        tensor = { data: value, shape };
      } else {
        tensor = floatTensor(value, name);
        expectShape(tensor.shape, [shape], name);
      }
      tensors.push([key, tensor]);
    }
    for (const [key, shape] of shapes) {
      if (!tensors.some(([k]) => k === key)) throw new TypeError(`${caller}: missing key '${key}' of shape ${shapeString(shape)}`);
    }
    const addresses = reserve(this.#arena, tensors.map(([, t]) => t.data.byteLength), caller);
    tensors.forEach(([, t], i) => copyIn(addresses[i], t.data));
    check(this.#attention.loadStateDict(tensors.map(([key, t], i) => [key, addresses[i], t.shape])), caller);
  }

  /**
   * Copies of every parameter under PyTorch's names.
   * @returns {Record<string, { data: Float32Array, shape: number[] }>}
   */
  stateDict() {
    this.#alive('MultiHeadAttention.stateDict');
    return this.#attention.stateDict();
  }

  /**
   * Multi-head attention of `query` over `key`/`value` (both default to `query`: self-attention).
   * See index.d.ts for shapes and options.
   */
  forward(query, key, value, options) {
    const caller = 'MultiHeadAttention.forward';
    this.#alive(caller);
    const opts = checkOptions(options, FORWARD_KEYS, `${caller}: options`);
    const { embedDim: E, numHeads: H, kdim, vdim } = this.#config;

    const q = floatTensor(query, `${caller}: query`);
    const rank = q.shape.length;
    if ((rank !== 2 && rank !== 3) || q.shape[rank - 1] !== E) {
      throw new RangeError(`${caller}: query: expected shape [batch, queryLen, ${E}] or [queryLen, ${E}], got ${shapeString(q.shape)}`);
    }
    const batched = rank === 3;
    const B = batched ? q.shape[0] : 1;
    const Lq = q.shape[rank - 2];

    const self = (key == null || key === query) && (value == null || value === query);
    const k = self ? q : key == null ? q : floatTensor(key, `${caller}: key`);
    const v = self ? q : value == null || value === key ? k : floatTensor(value, `${caller}: value`);
    const Lk = k.shape.length === rank ? k.shape[rank - 2] : 0;
    const inputShape = (features) => (batched ? `[${B}, keyLen, ${features}]` : `[keyLen, ${features}]`);
    const context = ` to match query ${shapeString(q.shape)}`;
    if (k.shape.length !== rank || k.shape[rank - 1] !== kdim || (batched && k.shape[0] !== B)) {
      throw new RangeError(`${caller}: key: expected shape ${inputShape(kdim)}${context}${key == null ? ' (key defaults to query)' : ''}, got ${shapeString(k.shape)}`);
    }
    expectShape(v.shape, [batched ? [B, Lk, vdim] : [Lk, vdim]], `${caller}: value`, ` to match key ${shapeString(k.shape)}${value == null ? ' (value defaults to key)' : ''}`);

    const kpm = opts.keyPaddingMask == null ? null : maskTensor(opts.keyPaddingMask, `${caller}: keyPaddingMask`);
    if (kpm) expectShape(kpm.shape, [batched ? [B, Lk] : [Lk]], `${caller}: keyPaddingMask`);
    const am = opts.attnMask == null ? null : maskTensor(opts.attnMask, `${caller}: attnMask`);
    if (am) expectShape(am.shape, [[Lq, Lk], [B * H, Lq, Lk]], `${caller}: attnMask`);
    const causal = booleanOption(opts.causal, `${caller}: causal`, false);
    const needWeights = booleanOption(opts.needWeights, `${caller}: needWeights`, true);
    const averageWeights = booleanOption(opts.averageWeights, `${caller}: averageWeights`, false);

    const out = outBuffers(opts.out, `${caller}: options.out`);

    const wasm = module(caller);
    const call = {
      batch: B, queryLen: Lq, keyLen: Lk,
      keyPaddingMask: maskKind(wasm, kpm), attnMask: maskKind(wasm, am), attnMaskPerHead: am?.shape.length === 3,
      causal, needWeights, averageWeights,
    };
    // Shapes and workspace come from the C++ layer; nothing about its internals is re-derived here.
    const plan = this.#attention.plan(call);
    if (plan === null) check(wasm._lastStatus(), caller);
    const outputShape = [...q.shape];
    const weightsShape = needWeights ? (batched ? plan.weightsShape : plan.weightsShape.slice(1)) : null;
    const outputLength = numel(outputShape);
    const weightsLength = needWeights ? numel(weightsShape) : 0;
    if (out.output) expectLength(out.output, outputLength, outputShape, `${caller}: options.out.output`);
    if (out.weights) {
      if (!needWeights) throw new TypeError(`${caller}: options.out.weights: needWeights is false, so there are no weights to write`);
      expectLength(out.weights, weightsLength, weightsShape, `${caller}: options.out.weights`);
    }
    const sizes = [bytesOf(q), self ? 0 : bytesOf(k), self || v === k ? 0 : bytesOf(v), bytesOf(kpm), bytesOf(am), 4 * outputLength, 4 * weightsLength];
    const total = sizes.reduce((a, b) => a + b, 0) + plan.workspaceBytes;
    if (total > memoryLimit()) {
      throw new RangeError(`${caller}: batch ${B}, queryLen ${Lq}, keyLen ${Lk}${needWeights ? ' with weights' : ''} need ${formatBytes(total)} of WebAssembly memory, more than its ${formatBytes(memoryLimit())} limit${needWeights ? ' (needWeights: false needs far less)' : ''}`);
    }

    const [qAt, kAt, vAt, kpmAt, amAt, outAt, weightsAt] = reserve(this.#arena, sizes, caller);
    copyIn(qAt, q.data);
    if (!self) copyIn(kAt, k.data);
    if (!self && v !== k) copyIn(vAt, v.data);
    if (kpm) copyIn(kpmAt, kpm.data);
    if (am) copyIn(amAt, am.data);
    const buffers = {
      query: qAt, key: self ? qAt : kAt, value: self ? qAt : v === k ? kAt : vAt,
      keyPaddingMask: kpmAt, attnMask: amAt, output: outAt, weights: needWeights ? weightsAt : 0,
    };
    check(this.#attention.forward(call, buffers), caller);

    // Copy out only now: forward() may have grown memory, which replaces the heap views. Into the caller's
    // buffers when given (one memcpy), else into fresh arrays.
    const output = { data: out.output ? copyInto(outAt, out.output) : copyOut(outAt, outputLength), shape: outputShape };
    const weights = needWeights
      ? { data: out.weights ? copyInto(weightsAt, out.weights) : copyOut(weightsAt, weightsLength), shape: weightsShape }
      : null;
    return { output, weights };
  }

  /**
   * Gives back the memory this layer keeps between calls (its argument arena and the C++ workspace); the next
   * call allocates again. Both also shrink by themselves when a call needs under a quarter of what they hold.
   */
  trim() {
    this.#alive('MultiHeadAttention.trim');
    this.#arena.trim();
    this.#attention.trim();
  }

  /** Frees the WebAssembly memory of this layer. Idempotent; any other call afterwards throws. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    leakGuard.unregister(this);
    this.#attention.delete();
    this.#arena.delete();
  }

  [disposeSymbol]() {
    this.dispose();
  }
}
