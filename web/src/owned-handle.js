// The one Embind handle a public object owns (a layer's _Attention, a model's _Model, a checkpoint's model): freed
// once by dispose(), or by the garbage collector if the object is dropped undisposed, and refused to every call after
// dispose().
import { isBroken, leakGuard } from './runtime.js';

/** `using x = …` (TC39 explicit resource management) calls this; Node before 24 knows it as nodejs.dispose. */
export const disposeSymbol = Symbol.dispose ?? Symbol.for('nodejs.dispose');

export class OwnedHandle {
  #handle;
  #disposed = false;
  #gone;

  /**
   * @param {object} owner the public object; when it is collected undisposed, leakGuard frees the handle
   * @param {{ delete(): void }} handle
   * @param {string} gone what a call after dispose() is told, after its caller's name
   */
  constructor(owner, handle, gone) {
    this.#handle = handle;
    this.#gone = gone;
    leakGuard.register(owner, [handle], this);
  }

  /** The handle, for `caller`; an Error once disposed. */
  get(caller) {
    if (this.#disposed) throw new Error(`${caller}: ${this.#gone}`);
    return this.#handle;
  }

  /** Frees the handle's WebAssembly memory (not once the module is broken: its memory is not trusted). Idempotent. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    leakGuard.unregister(this);
    if (!isBroken()) this.#handle.delete();
  }
}
