/**
 * attnscope — multi-head attention compiled to WebAssembly SIMD, with every head's weights.
 *
 * Shapes are row-major and batch first: inputs `[batch, seq, features]` (or unbatched `[seq, features]`),
 * weights `[batch, heads, queryLen, keyLen]`. Semantics are PyTorch's `torch.nn.MultiheadAttention`
 * with `batch_first=True`, except that a query whose keys are all masked gets all-zero weights and a zero
 * per-head context (its output row is then `out_proj.bias`), never NaN.
 *
 * @packageDocumentation
 * @module attnscope
 */

// `Symbol.dispose` for `using`, declared here rather than through `/// <reference lib="esnext.disposable" />`, which
// TypeScript before 5.2 rejects (TS2726) unless `skipLibCheck` is set. Identical to the lib's own declaration, so the
// two merge under TypeScript 5.2 and later.
declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol;
  }
}

/** A row-major tensor. Results are fresh arrays that the caller owns, unless `out` names arrays to write into. */
export interface Tensor {
  data: Float32Array;
  shape: number[];
}

/**
 * A mask. `Uint8Array` data is boolean: nonzero means **blocked** (PyTorch `nn.MultiheadAttention`'s polarity,
 * the opposite of `F.scaled_dot_product_attention`'s). `Float32Array` data is added to the scaled scores;
 * `-Infinity` blocks. Nested arrays of booleans (true = blocked) or of numbers (added) are accepted too.
 */
export interface Mask {
  data: Uint8Array | Float32Array;
  shape: number[];
}

/** Nested number arrays, e.g. `[[1, 2], [3, 4]]` for shape `[2, 2]`. */
export type NestedNumbers = number[] | NestedNumbers[];
/** Nested boolean arrays (true = blocked). */
export type NestedBooleans = boolean[] | NestedBooleans[];

export type TensorLike = Tensor | NestedNumbers;
export type MaskLike = Mask | NestedBooleans | NestedNumbers;

/**
 * Where the `.wasm` comes from. By default it sits beside this module: `attnscope.wasm` (SIMD128) or
 * `attnscope-relaxed.wasm` (relaxed SIMD), as `simd` picks.
 */
export interface InitOptions {
  /**
   * URL (or, in Node, a `file:` URL) of the `.wasm`, either build: it is used as it is, and
   * {@link RuntimeInfo.simd} says which build it is.
   */
  wasmUrl?: string | URL;
  /** The bytes of the `.wasm` (either build), when the caller already has them. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /**
   * Which build of the module to load (default `'auto'`). Both give the same results to within 1e-5 of the largest
   * value (the PyTorch golden tests hold both); the relaxed one is faster where the engine has it.
   * - `'auto'`: the relaxed-SIMD build (the matrix products' multiply-adds fused by `f32x4.relaxed_madd`) where the
   *   engine validates relaxed SIMD (Chromium-based browsers, Firefox, Node 22 and later; Node 20 only with
   *   `--experimental-wasm-relaxed-simd`), else the SIMD128 build (Safari, Node 20). Probed with
   *   `WebAssembly.validate` of a 61-byte module, once.
   * - `'baseline'`: the SIMD128 build everywhere.
   * - `'relaxed'`: the relaxed-SIMD build; the promise rejects with an Error where the engine cannot run it.
   *
   * With `wasmUrl`, `wasmBinary` or `threadedWasmUrl` the given module is used; a `simd` of `'baseline'` or
   * `'relaxed'` that it is not rejects with an Error.
   * @throws TypeError unless a string; RangeError for another string.
   */
  simd?: 'auto' | 'baseline' | 'relaxed';
  /**
   * Threads of the forward passes, the calling thread included (default 1). More than 1, or `'auto'` (every
   * hardware thread), loads the threaded build `attnscope-mt.{mjs,wasm}` + `attnscope-mt.worker.js` (relaxed SIMD:
   * `attnscope-mt-relaxed.*`, as `simd` picks) where threads
   * can run: Node, and browser pages that are `crossOriginIsolated` (served with
   * `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy: require-corp`). Elsewhere the
   * single-threaded build loads and {@link runtimeInfo} says why. Results are bit-identical for every count.
   *
   * The default is 1 because threads cost something that only the caller can weigh: a second download, a
   * SharedArrayBuffer memory and one Worker per extra thread. A small layer gains nothing from them.
   * Fixed by the first call: a later call asking a different count throws.
   * @throws RangeError unless `'auto'` or an integer from 1 to 64.
   */
  threads?: number | 'auto';
  /** URL of `attnscope-mt.wasm` or `attnscope-mt-relaxed.wasm` (by default beside the threaded loader: see `threadsUrl`). */
  threadedWasmUrl?: string | URL;
  /**
   * URL of the folder that serves the threaded build's files, `runtime-threads.js` and `attnscope-mt*` from
   * `node_modules/attnscope/dist/` (by default beside this module). Bundlers do not include these files (their
   * glue refers to Node built-ins), so a bundled app that wants threads copies them to its public folder and passes
   * that folder here; without them it runs one thread and {@link runtimeInfo} says so.
   */
  threadsUrl?: string | URL;
}

/**
 * Loads and instantiates the WebAssembly module. Call once before anything else; later calls return the same
 * promise. Nothing is fetched from the network unless `wasmUrl` points there.
 * @throws TypeError for unknown options or wrong types; Error when a second call asks for other options than the
 *   first (it could not be honoured: `init()` without options waits for the first). The promise rejects with an
 *   Error naming the cause when the bytes are not a WebAssembly module (e.g. a dev server's `index.html`), when the
 *   engine lacks WebAssembly SIMD or exception handling, or when the module is not this version's `attnscope.wasm`.
 */
export function init(options?: InitOptions): Promise<void>;

/** Which build {@link init} loaded. */
export interface RuntimeInfo {
  /** `'threads'`: the pthreads build; `'single'`: the single-threaded one. */
  build: 'single' | 'threads';
  /** Threads the forward passes use, the calling thread included. */
  threads: number;
  /**
   * `'relaxed'`: the relaxed-SIMD build (the matrix products' multiply-adds fused); `'baseline'`: the SIMD128 one.
   * See {@link InitOptions.simd}.
   */
  simd: 'baseline' | 'relaxed';
  /** Why threads were asked for but the single-threaded build runs (e.g. a page that is not cross-origin isolated). */
  fallbackReason?: string;
}

/** Which build runs (threads, SIMD) and with how many threads. Throws before `init()`. */
export function runtimeInfo(): RuntimeInfo;

/** Memory of the WebAssembly module. */
export interface MemoryUsage {
  /** Current size of the WebAssembly memory in bytes (it grows, never shrinks). */
  wasmBytes: number;
  /** Bytes currently allocated inside it (exact up to the 4 GiB limit); flat over a long loop means nothing leaks. */
  heapBytesInUse: number;
}

/** How much WebAssembly memory the module holds and uses. Throws before `init()`. */
export function memoryUsage(): MemoryUsage;

/** Options of {@link MultiHeadAttention}'s constructor. */
export interface MultiHeadAttentionOptions {
  /** Model width `E`; must be divisible by `numHeads`. */
  embedDim: number;
  /** Number of heads `H`; each has `headDim = embedDim / numHeads` features. */
  numHeads: number;
  /** Key features (default `embedDim`). With `kdim`/`vdim` ≠ `embedDim` the state dict has separate q/k/v weights. */
  kdim?: number;
  /** Value features (default `embedDim`). */
  vdim?: number;
  /** Whether the projections have biases (default true). */
  bias?: boolean;
  /** Seed of the deterministic initialisation: Xavier-uniform projections, zero biases, as PyTorch (default 0). */
  seed?: number;
}

/** Options of {@link MultiHeadAttention.forward}. */
export interface ForwardOptions {
  /** `[batch, keyLen]` (`[keyLen]` unbatched). Boolean: nonzero = ignore that key. Float: added to its scores. */
  keyPaddingMask?: MaskLike | null;
  /** `[queryLen, keyLen]` or `[batch * numHeads, queryLen, keyLen]`. Boolean: nonzero = blocked. Float: added. */
  attnMask?: MaskLike | null;
  /** Blocks key j for query i when j > i (default false). Combines with the masks. */
  causal?: boolean;
  /** Return the attention weights (default true). With false, `weights` is null and none are stored. */
  needWeights?: boolean;
  /** Average the weights over heads: `[batch, queryLen, keyLen]` instead of `[batch, numHeads, queryLen, keyLen]` (default false). */
  averageWeights?: boolean;
  /**
   * Caller-owned arrays the results are copied into (one copy, no allocation) instead of fresh ones; the result's
   * `data` is then this very array. Each must be a `Float32Array` of exactly the result's length (`RangeError`
   * otherwise); `weights` only when `needWeights` is true. Reusing them across calls avoids allocating (and
   * page-faulting) large weights every call.
   */
  out?: { output?: Float32Array; weights?: Float32Array };
}

/** The result of {@link MultiHeadAttention.forward}. */
export interface ForwardResult {
  /** Same shape as the query. */
  output: Tensor;
  /** `[batch, numHeads, queryLen, keyLen]` or averaged `[batch, queryLen, keyLen]`; no batch dimension for unbatched input; null when `needWeights` is false. */
  weights: Tensor | null;
}

/** {@link ForwardResult} when `needWeights` is true or left out: the weights are there. */
export interface ForwardResultWithWeights extends ForwardResult {
  weights: Tensor;
}

/** {@link ForwardResult} when `needWeights` is false. */
export interface ForwardResultWithoutWeights extends ForwardResult {
  weights: null;
}

/** PyTorch's state-dict names of a `nn.MultiheadAttention`. */
export type StateDictKey =
  | 'in_proj_weight'
  | 'q_proj_weight'
  | 'k_proj_weight'
  | 'v_proj_weight'
  | 'in_proj_bias'
  | 'out_proj.weight'
  | 'out_proj.bias';

/**
 * Multi-head attention with learned projections:
 * `Q = Xq·Wqᵀ + bq`, `K = Xk·Wkᵀ + bk`, `V = Xv·Wvᵀ + bv`, split into heads, per head
 * `softmax(Q_h·K_hᵀ/√headDim + mask)·V_h`, heads concatenated, `output = concat·Woᵀ + bo`.
 *
 * Holds WebAssembly memory: call {@link MultiHeadAttention.dispose} (or use `using`) when done.
 *
 * @example
 * ```js
 * await init();
 * const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
 * const x = { data: new Float32Array(3 * 8).fill(0.5), shape: [3, 8] };
 * const { output, weights } = mha.forward(x);   // weights.shape = [2, 3, 3]
 * mha.dispose();
 * ```
 */
export class MultiHeadAttention {
  /** @throws TypeError/RangeError for missing, non-integer or inconsistent sizes; Error before `init()`. */
  constructor(options: MultiHeadAttentionOptions);
  readonly embedDim: number;
  readonly numHeads: number;
  readonly headDim: number;
  readonly kdim: number;
  readonly vdim: number;
  readonly bias: boolean;
  /**
   * Replaces every parameter, strictly like PyTorch's `load_state_dict`: every key of this configuration
   * (`in_proj_weight` `[3E, E]` or `q_proj_weight` `[E, E]`, `k_proj_weight` `[E, kdim]`, `v_proj_weight` `[E, vdim]`;
   * with bias `in_proj_bias` `[3E]` and `out_proj.bias` `[E]`; always `out_proj.weight` `[E, E]`) and no other.
   * Values may be tensors, flat `Float32Array`s of the right length, or nested arrays. A failed load changes nothing.
   */
  loadStateDict(state: Partial<Record<StateDictKey, Tensor | Float32Array | NestedNumbers>> | Map<string, Tensor | Float32Array | NestedNumbers>): void;
  /** Fresh copies of every parameter under PyTorch's names. */
  stateDict(): Record<string, Tensor>;
  /**
   * Attention of `query` `[batch, queryLen, embedDim]` (or `[queryLen, embedDim]`) over `key` `[batch, keyLen, kdim]`
   * and `value` `[batch, keyLen, vdim]`. `key` defaults to `query` (self-attention) and `value` to `key`.
   * @throws TypeError for wrong types or unknown options, RangeError for wrong shapes or sizes beyond WebAssembly's memory,
   *   Error after {@link MultiHeadAttention.dispose}.
   */
  forward(query: TensorLike, key?: TensorLike | null, value?: TensorLike | null, options?: ForwardOptions & { needWeights?: true }): ForwardResultWithWeights;
  /** With `needWeights: false`: `weights` is null and none are stored. */
  forward(query: TensorLike, key: TensorLike | null | undefined, value: TensorLike | null | undefined, options: ForwardOptions & { needWeights: false }): ForwardResultWithoutWeights;
  /** With `needWeights` known only at run time. */
  forward(query: TensorLike, key?: TensorLike | null, value?: TensorLike | null, options?: ForwardOptions): ForwardResult;
  /**
   * Gives back the WebAssembly heap this layer keeps between calls (its copy of the arguments and results, and
   * the C++ workspace); the next call allocates again. Both also shrink by themselves when a call needs under a
   * quarter of what they hold. The WebAssembly memory itself never shrinks; freed heap is reused.
   */
  trim(): void;
  /** Frees this layer's WebAssembly memory. Idempotent; any other call afterwards throws. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/** Options of {@link scaledDotProductAttention}. */
export interface SdpaOptions {
  /** `[queryLen, keyLen]` or `[..., queryLen, keyLen]`. Boolean: nonzero = **blocked** (unlike torch's SDPA). Float: added. */
  attnMask?: MaskLike | null;
  /** Blocks key j for query i when j > i (default false). */
  causal?: boolean;
  /** Multiplies q·k (default `1/√D`). */
  scale?: number;
  /** Caller-owned arrays to copy the results into, as in {@link ForwardOptions.out}. */
  out?: { output?: Float32Array; weights?: Float32Array };
}

/**
 * The tutorial's three steps: scores `q·kᵀ·scale`, softmax into weights, weighted sum of `v`.
 * `q` `[..., Lq, D]`, `k` `[..., Lk, D]`, `v` `[..., Lk, Dv]` with equal leading dimensions.
 * @returns output `[..., Lq, Dv]` and weights `[..., Lq, Lk]`.
 */
export function scaledDotProductAttention(q: TensorLike, k: TensorLike, v: TensorLike, options?: SdpaOptions): { output: Tensor; weights: Tensor };

// The models' types live beside their classes (model.d.ts, seq2seq-model.d.ts, rnn-model.d.ts, load-model.d.ts).
export type {
  AblatedHead, AblatedSeq2SeqHead, AttentionTrace, LanguageModelForwardOptions, LanguageModelForwardResult, ModelArchitecture,
  ModelForwardOptions, ModelForwardResult, PretrainedConfig,
  PretrainedForwardOptions, PretrainedForwardResult, PretrainedModel, PretrainedTrace, RopePositions, StackArchitecture, Trace, TraceOptions,
  TrainedLanguageModel, LensToken, LogitLens, HeadCircuits, NumberList,
} from './model.js';
export type { AttentionView, SinkMassOptions } from './research.js';
export { hideKeys, sinkMass, valueWeighted } from './research.js';
export type { CacheHook, CachePlan, CacheOptions, ExportedCache } from './cache-export.js';
export { cachePlan, exportCache } from './cache-export.js';
export type { LanguageModelConfig, LanguageModelVocab, ModelHeader, NamedHead, Seq2SeqModelConfig, Seq2SeqModelVocab } from './model-header.js';
export { EncoderModel, ForwardCache, LanguageModel, Model, PretrainedLanguageModel } from './model.js';
export type { Seq2SeqTraceOptions, TrainedSeq2SeqModel } from './seq2seq-model.js';
export { Seq2SeqModel } from './seq2seq-model.js';
export type { RnnSeq2SeqModelConfig, RnnTranslation } from './rnn-model.js';
export { RnnSeq2SeqModel } from './rnn-model.js';
export type { CheckpointFile, CheckpointFiles, LoadOptions, LoadPlan, LoadProgress } from './load-model.js';
export { loadModel, supportedFamilies } from './load-model.js';

/**
 * The tensors of a safetensors file (what `safetensors.torch.save_file` writes), keyed by name in data order, ready for
 * {@link MultiHeadAttention.loadStateDict}. Only `F32` tensors are read. Throws TypeError / RangeError naming
 * `readSafetensors`, the header field and the value for a malformed file.
 */
export function readSafetensors(bytes: ArrayBuffer | Uint8Array): Map<string, { data: Float32Array; shape: number[] }>;
