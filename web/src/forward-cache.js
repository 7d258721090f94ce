// LanguageModel.forward's `cache` option: the core's kept pass of a causal model (ForwardCache, cpp/src/model/
// incremental.cpp), known to the binding by its address, which this object alone holds, passes only to its own model
// and frees once: by dispose() or by the garbage collector if dropped undisposed. The core decides what a next input
// can reuse; this file converts types.
import { disposeSymbol, OwnedHandle } from './owned-handle.js';
import { describe } from './runtime.js';

/**
 * A causal model's last forward pass, kept so that the next input which starts with the same tokens computes only
 * the positions after them (the result is a fresh pass's, bit for bit). Pass it as `forward(input, { cache })`.
 */
export class ForwardCache {
  #owned;
  #id;
  #handle;
  #disposed = false;

  /**
   * Whether `value` is a ForwardCache itself: `instanceof` also holds for an object made with
   * Object.create(cache), whose private fields are missing (reading one is the engine's TypeError, without the call).
   */
  static is(value) {
    return typeof value === 'object' && value !== null && #disposed in value;
  }

  /** @param {ReturnType<import('./model-binding.js').modelHandle>} handle its model's raw handle; @param {number} id */
  constructor(handle, id) {
    this.#id = id;
    this.#handle = handle;
    let freed = false;
    const held = { isDeleted: () => freed, delete: () => { freed = true; handle.releaseCache(id); } };
    this.#owned = new OwnedHandle(this, held, 'this cache was disposed');
    /** Tokens of the pass it holds. */
    this.positions = 0;
    /** Positions the last forward() took from it instead of computing them (0: a fresh pass). */
    this.reused = 0;
    /** The layer and position the last patched forward() through it started at (0 and 0: from the embeddings). */
    this.resumedLayer = 0;
    this.resumedPosition = 0;
    /** Bytes of WebAssembly memory it holds: every layer's keys and values, and the last pass's output. */
    this.bytes = 0;
  }

  /** @internal The binding's id, for `caller` on `handle`; a TypeError once disposed or on another model. */
  idFor(caller, handle) {
    if (this.#disposed) throw new TypeError(`${caller}: options.cache: this cache was disposed; pass true for a new one`);
    if (handle !== this.#handle) throw new TypeError(`${caller}: options.cache: expected a cache of this model, got another model's`);
    return this.#id;
  }

  /** @internal The core's account after a call. */
  update({ positions, reused, resumedLayer, resumedPosition, bytes }) {
    Object.assign(this, { positions, reused, resumedLayer, resumedPosition, bytes });
  }

  /** Frees its WebAssembly memory. Idempotent. */
  dispose() {
    this.#disposed = true;
    this.#owned.dispose();
  }

  [disposeSymbol]() {
    this.dispose();
  }
}

/** handle.forward through `cache` (true: a new one; else one of this model's): the raw result, its `cache` the object. */
export function forwardThrough(handle, request, cache, caller) {
  if (cache !== true && !ForwardCache.is(cache)) {
    throw new TypeError(`${caller}: options.cache: expected true (a new cache) or a result.cache of this model's forward, got ${describe(cache)}`);
  }
  const out = handle.forwardCached(request, cache === true ? 0 : cache.idFor(caller, handle));
  const kept = cache === true ? new ForwardCache(handle, out.cache.id) : cache;
  kept.update(out.cache);
  return { ...out, cache: kept };
}
