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

/** Where the `.wasm` comes from. By default it sits beside this module (`new URL('./attnscope.wasm', import.meta.url)`). */
export interface InitOptions {
  /** URL (or, in Node, a `file:` URL) of `attnscope.wasm`. */
  wasmUrl?: string | URL;
  /** The bytes of `attnscope.wasm`, when the caller already has them. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /**
   * Threads of the forward passes, the calling thread included (default 1). More than 1, or `'auto'` (every
   * hardware thread), loads the threaded build `attnscope-mt.{mjs,wasm}` + `attnscope-mt.worker.js` where threads
   * can run: Node, and browser pages that are `crossOriginIsolated` (served with
   * `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy: require-corp`). Elsewhere the
   * single-threaded build loads and {@link runtimeInfo} says why. Results are bit-identical for every count.
   *
   * The default is 1 because threads cost something that only the caller can weigh: a second download, a
   * SharedArrayBuffer memory, one Worker per extra thread, and in Node the CommonJS globals `require`,
   * `__dirname` and `Worker` that Emscripten's glue needs. A small layer gains nothing from them.
   * Fixed by the first call: a later call asking a different count throws.
   * @throws RangeError unless `'auto'` or an integer from 1 to 64.
   */
  threads?: number | 'auto';
  /** URL of `attnscope-mt.wasm` (by default beside the threaded loader: see `threadsUrl`). */
  threadedWasmUrl?: string | URL;
  /**
   * URL of the folder that serves the threaded build's files, `runtime-threads.js` and `attnscope-mt.*` from
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
  /** Both builds use WebAssembly SIMD128. */
  simd: true;
  /** Why threads were asked for but the single-threaded build runs (e.g. a page that is not cross-origin isolated). */
  fallbackReason?: string;
}

/** Which build runs and with how many threads. Throws before `init()`. */
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

/**
 * A language model's sizes and fixed choices: the file's `__metadata__.config` (tools/MODEL_FORMAT.md) under the
 * API's camelCase names. The file's snake_case names still read (and write) the same values until the next major
 * version; they are not enumerated. Keys that the core does not read are kept, camelCased.
 */
export interface LanguageModelConfig {
  /** Tokens in the vocabulary. */
  vocabSize: number;
  /** Model width `d_model`: each attention layer is `MultiHeadAttention({ embedDim: dModel, numHeads })`. */
  dModel: number;
  numHeads: number;
  /** Transformer blocks. */
  numLayers: number;
  /** Hidden width of each block's feed-forward network (PyTorch's `dim_feedforward`). */
  dimFeedforward: number;
  /** Longest input in tokens, `<bos>` included (rows of `pos_emb.weight`). */
  maxLen: number;
  /** `dModel / numHeads`, when the file states it. */
  headDim?: number;
  layerNormEps?: number;
  activation?: 'gelu_erf';
  norm?: 'pre';
  posEmb?: 'learned';
  causal?: true;
  /** @deprecated Use `vocabSize`; removed in the next major version. */
  vocab_size: number;
  /** @deprecated Use `dModel`; removed in the next major version. */
  d_model: number;
  /** @deprecated Use `numHeads`; removed in the next major version. */
  n_heads: number;
  /** @deprecated Use `numLayers`; removed in the next major version. */
  n_layers: number;
  /** @deprecated Use `dimFeedforward`; removed in the next major version. */
  d_ff: number;
  /** @deprecated Use `maxLen`; removed in the next major version. */
  max_len: number;
  /** @deprecated Use `headDim`; removed in the next major version. */
  head_dim?: number;
  /** @deprecated Use `layerNormEps`; removed in the next major version. */
  ln_eps?: number;
  /** @deprecated Use `posEmb`; removed in the next major version. */
  pos_emb?: string;
  [key: string]: unknown;
}

/** An encoder–decoder model's sizes and fixed choices, named as in {@link LanguageModelConfig}. */
export interface Seq2SeqModelConfig {
  /** Words in the source vocabulary. */
  sourceVocabSize: number;
  /** Tokens in the target vocabulary. */
  targetVocabSize: number;
  dModel: number;
  numHeads: number;
  numEncoderLayers: number;
  numDecoderLayers: number;
  dimFeedforward: number;
  /** Most source words read. */
  maxSourceLen: number;
  /** Longest decoder input, `<bos>` included. */
  maxTargetLen: number;
  headDim?: number;
  layerNormEps?: number;
  activation?: 'gelu_erf';
  norm?: 'pre';
  posEmb?: 'learned';
  decoding?: 'greedy';
  /** @deprecated Use `sourceVocabSize`; removed in the next major version. */
  src_vocab_size: number;
  /** @deprecated Use `targetVocabSize`; removed in the next major version. */
  tgt_vocab_size: number;
  /** @deprecated Use `dModel`; removed in the next major version. */
  d_model: number;
  /** @deprecated Use `numHeads`; removed in the next major version. */
  n_heads: number;
  /** @deprecated Use `numEncoderLayers`; removed in the next major version. */
  n_enc_layers: number;
  /** @deprecated Use `numDecoderLayers`; removed in the next major version. */
  n_dec_layers: number;
  /** @deprecated Use `dimFeedforward`; removed in the next major version. */
  d_ff: number;
  /** @deprecated Use `maxSourceLen`; removed in the next major version. */
  max_src_len: number;
  /** @deprecated Use `maxTargetLen`; removed in the next major version. */
  max_tgt_len: number;
  /** @deprecated Use `headDim`; removed in the next major version. */
  head_dim?: number;
  /** @deprecated Use `layerNormEps`; removed in the next major version. */
  ln_eps?: number;
  /** @deprecated Use `posEmb`; removed in the next major version. */
  pos_emb?: string;
  [key: string]: unknown;
}

/** A language model's vocabulary (`__metadata__.vocab`), under camelCase names as in {@link LanguageModelConfig}. */
export interface LanguageModelVocab {
  /** `'codepoint'`: one token per Unicode code point. */
  tokenizer: 'codepoint';
  /** Token strings by id; the first `specials.length` are the special tokens. */
  tokens: string[];
  /** `['<unk>', '<bos>']`: never matched by text. */
  specials: string[];
  unkId: number;
  /** Starts every input; as a prediction it means "end of document". */
  bosId: number;
  /** @deprecated Use `unkId`; removed in the next major version. */
  unk_id: number;
  /** @deprecated Use `bosId`; removed in the next major version. */
  bos_id: number;
  [key: string]: unknown;
}

/** An encoder–decoder model's two vocabularies (`__metadata__.vocab`), under camelCase names. */
export interface Seq2SeqModelVocab {
  /** `'words_ascii_lower'`: see {@link Seq2SeqModel.tokenizeSource}. */
  sourceTokenizer: 'words_ascii_lower';
  /** Source words by id. */
  sourceTokens: string[];
  sourcePadId: number;
  sourceUnkId: number;
  /** `'chars'`: one target token per output character. */
  targetTokenizer: 'chars';
  /** Target tokens by id. */
  targetTokens: string[];
  targetPadId: number;
  targetBosId: number;
  targetEosId: number;
  /** @deprecated Use `sourceTokenizer`; removed in the next major version. */
  src_tokenizer: string;
  /** @deprecated Use `sourceTokens`; removed in the next major version. */
  src_tokens: string[];
  /** @deprecated Use `sourcePadId`; removed in the next major version. */
  src_pad_id: number;
  /** @deprecated Use `sourceUnkId`; removed in the next major version. */
  src_unk_id: number;
  /** @deprecated Use `targetTokenizer`; removed in the next major version. */
  tgt_tokenizer: string;
  /** @deprecated Use `targetTokens`; removed in the next major version. */
  tgt_tokens: string[];
  /** @deprecated Use `targetPadId`; removed in the next major version. */
  tgt_pad_id: number;
  /** @deprecated Use `targetBosId`; removed in the next major version. */
  tgt_bos_id: number;
  /** @deprecated Use `targetEosId`; removed in the next major version. */
  tgt_eos_id: number;
  [key: string]: unknown;
}

/**
 * A model file's description (tools/MODEL_FORMAT.md): its safetensors `__metadata__`, decoded and checked by the
 * core, under the API's camelCase names (the file's own keys stay snake_case).
 */
export interface ModelHeader {
  format: 'attnscope-model/1';
  /** The file's `kind`: `'decoder_lm'` for a {@link LanguageModel}, `'seq2seq'` for a {@link Seq2SeqModel}, `'rnn_seq2seq'` for a {@link RnnSeq2SeqModel}. */
  kind: 'decoder_lm' | 'seq2seq' | 'rnn_seq2seq';
  config: LanguageModelConfig | Seq2SeqModelConfig | RnnSeq2SeqModelConfig;
  vocab: LanguageModelVocab | Seq2SeqModelVocab;
  /** Every parameter's state-dict name and shape, as the core built the model. */
  tensors: { name: string; shape: number[] }[];
  namedHeads: NamedHead[];
  /** @deprecated Use `namedHeads`; removed in the next major version. */
  named_heads: NamedHead[];
  /** The training record, free-form data as the training script wrote it (its keys are not renamed). */
  training: Record<string, unknown>;
}

/** A head named from its measured behaviour on held-out data. */
export interface NamedHead {
  /** Layer index within its stack. */
  layer: number;
  /** Head index, 0-based. */
  head: number;
  /** State-dict prefix of the attention layer, e.g. `blocks.1.attn` or `dec_blocks.0.cross_attn`. */
  module?: string;
  /** Seq2seq only: which attention of the layer. */
  attn?: 'enc_self' | 'dec_self' | 'dec_cross';
  /** Human-readable name, e.g. "previous token". */
  name: string;
  /** The measurement behind the name and its value. */
  metric: string;
  score: number;
  threshold?: number;
}

import type { CheckpointFiles, EncoderModel, LoadOptions, PretrainedLanguageModel } from './pretrained.js';
export type { CheckpointFile, CheckpointFiles, LoadOptions, LoadProgress, PretrainedConfig, PretrainedForwardOptions, PretrainedForwardResult, PretrainedModel, PretrainedTrace, RopePositions } from './pretrained.js';
export { EncoderModel, PretrainedLanguageModel } from './pretrained.js';

/**
 * Loads a trained model file (safetensors with attnscope's `__metadata__`, tools/MODEL_FORMAT.md): a
 * {@link LanguageModel} (kind `decoder_lm`) or a {@link Seq2SeqModel} (kind `seq2seq`). `source` is the file's bytes
 * or where to get them (fetched in browsers, read from disk for `file:` URLs and paths in Node). The file is checked
 * completely before the model is built; a malformed file rejects with a TypeError (a field of the wrong JSON type) or
 * a RangeError (a wrong value, size or offset) naming `loadModel`, the field and the value, and frees everything.
 */
export function loadModel(source: ArrayBuffer | Uint8Array, options?: LoadOptions): Promise<LanguageModel | Seq2SeqModel | RnnSeq2SeqModel>;
/**
 * Loads a Hugging Face checkpoint (docs/huggingface.md): its files by name, or the URL of its folder (a string or
 * URL ending in `/`; in Node also a folder path), from which `config.json`, `model.safetensors.index.json` (else
 * `model.safetensors`) and the tokenizer files, where they exist, are fetched. Weights stream into WebAssembly
 * memory in chunks, widened to F32. The `bert` family gives an {@link EncoderModel}, the others a
 * {@link PretrainedLanguageModel}. A malformed or unsupported file rejects with a TypeError or RangeError naming
 * `loadModel`, the file and the field; a failed or cancelled load frees everything.
 */
export function loadModel(files: CheckpointFiles | `${string}/`, options?: LoadOptions): Promise<PretrainedLanguageModel | EncoderModel>;
/** A URL of one of our model files or of a checkpoint's folder: `kind` tells the four apart. */
export function loadModel(source: string | URL, options?: LoadOptions): Promise<LanguageModel | Seq2SeqModel | RnnSeq2SeqModel | PretrainedLanguageModel | EncoderModel>;

/**
 * The tensors of a safetensors file (what `safetensors.torch.save_file` writes), keyed by name in data order, ready for
 * {@link MultiHeadAttention.loadStateDict}. Only `F32` tensors are read. Throws TypeError / RangeError naming
 * `readSafetensors`, the header field and the value for a malformed file.
 */
export function readSafetensors(bytes: ArrayBuffer | Uint8Array): Map<string, { data: Float32Array; shape: number[] }>;

declare abstract class TrainedModel {
  readonly header: ModelHeader;
  /** Heads named from their measured behaviour. */
  readonly namedHeads: NamedHead[];
  /** The training record: data, sizes, steps, losses, head scores. */
  readonly training: Record<string, unknown>;
  /** Frees the model's WebAssembly memory. Idempotent. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/**
 * A head to switch off (ablate): its per-head context is zeroed before its layer's output projection, so the head
 * contributes nothing to the output; its attention weights are still computed and returned. `layer` and `head` are
 * whole numbers below the model's layer and head counts (else RangeError). Other properties are ignored, so the
 * entries of `namedHeads` can be passed as they are.
 */
export interface AblatedHead {
  layer: number;
  head: number;
}

/** A head of an encoder–decoder model to switch off, with the kind of attention it belongs to (as in `namedHeads`). */
export interface AblatedSeq2SeqHead extends AblatedHead {
  attn: 'enc_self' | 'dec_self' | 'dec_cross';
}

/**
 * The numbers one head computed for one query in one layer, recorded by the model's own forward pass in the core (the
 * same for every model: {@link LanguageModel.trace}, {@link Seq2SeqModel.trace}, {@link PretrainedModel.trace}).
 * T is the number of query rows, S of keys (S = T in self-attention; the source length in cross-attention), d the
 * model's width.
 */
export interface AttentionTrace {
  layer: number;
  head: number;
  query: number;
  /** The key/value head this query head reads (`head` without grouped-query attention). */
  kvHead: number;
  /** `[T, d]` the residual stream entering the attention. */
  layerInput: Tensor;
  /** `[T, d]` what q (and, in self-attention, k and v) is projected from: after the norm, for pre-norm models. */
  attentionInput: Tensor;
  /** `[S, d]` what k and v are projected from when it is not `attentionInput` (cross-attention: the encoder's output); else null. */
  keyInput: Tensor | null;
  /** `[headDim]` the query after its projection. */
  queryRaw: Tensor;
  /** `[headDim]` the query the scores use (after QK-norm and RoPE, where the family has them). */
  queryVector: Tensor;
  /** `[S, headDim]` the keys after their projection. */
  keysRaw: Tensor;
  /** `[S, headDim]` the keys the scores use. */
  keys: Tensor;
  /** `[S, headDim]` */
  values: Tensor;
  /** `[S]` query · key, before scaling. */
  scores: Tensor;
  scale: number;
  /** `[S]` 1 where the key is visible to this query (causal order, window, padding). */
  visible: Uint8Array;
  /** `[S]` softmax of the scaled scores over the visible keys, 0 elsewhere: the forward pass's own row. */
  weights: Tensor;
  /** `[headDim]` weights · values (zeros when the head is ablated). */
  context: Tensor;
  /** `[d]` the context through this head's part of the output projection (no bias). */
  headOutput: Tensor;
  /** `[d]` the attention's output at this query, as the layer adds it: every head's `headOutput` plus the output projection's bias. */
  attentionOutput: Tensor;
}

/** A decoder-only character language model: pre-LN transformer blocks with causal multi-head self-attention. */
export class LanguageModel extends TrainedModel {
  readonly kind: 'decoder_lm';
  /** Sizes and fixed choices (the same object as `header.config`). */
  readonly config: LanguageModelConfig;
  /** Tokens and special ids (the same object as `header.vocab`). */
  readonly vocab: LanguageModelVocab;
  /** `<bos>` then one token per Unicode code point (unknown ones → `<unk>`), the last `config.maxLen` kept. */
  tokenize(text: string): { ids: number[]; tokens: string[] };
  /** Ids (whole numbers in `[0, config.vocabSize)`, else RangeError) → text, special tokens dropped. */
  detokenize(ids: number[]): string;
  /** Logits `[T, vocab]` and every layer's attention `[layers, heads, T, T]` (null with `needAttention: false`). */
  forward(input: string | number[], options?: { needAttention?: boolean; ablate?: AblatedHead[] }): { ids: number[]; tokens: string[]; logits: Tensor; attention: Tensor | null };
  /** Greedy continuation with a key/value cache; stops at end of document or `config.maxLen`. `maxNewTokens`: a whole number ≥ 0 (default 32). */
  generate(prompt: string | number[], options?: { maxNewTokens?: number; /** switched off at every step */ ablate?: AblatedHead[] }): { ids: number[]; text: string };
  /**
   * Head `head` of layer `layer` at token `query` (from 0; `<bos>` is token 0), as {@link forward} computes it (its
   * weights row bit for bit); RangeError for a layer, head or query the model does not have.
   */
  trace(input: string | number[], options: { layer: number; head: number; query: number; ablate?: AblatedHead[] }): AttentionTrace & { ids: number[]; tokens: string[] };
}

/**
 * Sizes of an {@link RnnSeq2SeqModel} (kind `rnn_seq2seq`): one GRU layer each side (PyTorch's nn.GRU), embeddings of
 * `emb`, states of `hidden`.
 */
export interface RnnSeq2SeqModelConfig {
  /** `'none'`: the decoder sees only the fixed context vector; `'dot'`: Luong's dot-product attention over the encoder's states. */
  attention: 'none' | 'dot';
  cell: 'gru';
  emb: number;
  hidden: number;
  sourceVocabSize: number;
  targetVocabSize: number;
  /** The longest source accepted (a GRU has no positions; this bounds the input). */
  maxSourceLen: number;
  /** `<bos>` + output: at most `maxTargetLen − 1` tokens are generated. */
  maxTargetLen: number;
  decoding: 'greedy';
  [key: string]: unknown;
}

/** What {@link RnnSeq2SeqModel.translate} returns. */
export interface RnnTranslation {
  sourceIds: number[];
  sourceTokens: string[];
  /** Generated ids, ending with `<eos>` if it was produced. */
  outputIds: number[];
  outputTokens: string[];
  /** The output without `<eos>`, e.g. `'1990-03-05'`. */
  text: string;
  /** The fixed context vector: the encoder's final state `[hidden]`, the decoder's first state (and, for `'none'`, all it sees of the source). */
  context: Float32Array;
  /** `[N, S]` (N = outputIds.length, S = sourceIds.length): row t is the weights over the source words when output token t was chosen; null without attention. */
  attention: Tensor | null;
  /** `[N, hidden]`: the decoder's state at each step (the query of that step's attention). */
  decoderStates: Tensor | null;
  /** `[S, hidden]`: the encoder's state after each source word (the keys and values). */
  encoderStates: Tensor;
}

/**
 * A GRU encoder–decoder, the model attention was invented for (e.g. `models/dates-gru.safetensors`, the bottleneck,
 * and `models/dates-gru-attention.safetensors`, the same network with dot-product attention). Same vocabularies and
 * tokeniser as the dates {@link Seq2SeqModel}.
 */
export class RnnSeq2SeqModel extends TrainedModel {
  readonly kind: 'rnn_seq2seq';
  readonly config: RnnSeq2SeqModelConfig;
  readonly vocab: Seq2SeqModelVocab;
  tokenizeSource(text: string): { ids: number[]; tokens: string[]; wordCount: number };
  /** Greedy decoding; `maxSteps` 1 to `config.maxTargetLen − 1` (the default). */
  translate(source: string | number[], options?: { maxSteps?: number }): RnnTranslation;
  /** Teacher-forced pass; `target` starts with `<bos>`: logits `[T, targetVocab]`, attention `[T, S]` (null without attention). */
  forward(source: string | number[], target: number[]): { logits: Tensor; attention: Tensor | null };
}

/** An encoder–decoder transformer, e.g. dates written in words → `YYYY-MM-DD`. */
export class Seq2SeqModel extends TrainedModel {
  readonly kind: 'seq2seq';
  /** Sizes and fixed choices (the same object as `header.config`). */
  readonly config: Seq2SeqModelConfig;
  /** Both vocabularies and their special ids (the same object as `header.vocab`). */
  readonly vocab: Seq2SeqModelVocab;
  /** ASCII lower case, split on anything but a–z and 0–9, at most `config.maxSourceLen` words; `wordCount` counts them before that cut. */
  tokenizeSource(text: string): { ids: number[]; tokens: string[]; wordCount: number };
  /**
   * Greedy decoding with key/value caches. `crossAttention` `[decoderLayers, heads, outputTokens, sourceWords]`: row t is
   * what output token t read; `decoderAttention` `[decoderLayers, heads, N, N]`; `encoderAttention` `[encoderLayers, heads, S, S]`.
   */
  translate(source: string | number[], options?: { /** 1 to `config.maxTargetLen` (default `config.maxTargetLen − 1`). */ maxSteps?: number; ablate?: AblatedSeq2SeqHead[] }): {
    sourceIds: number[]; sourceTokens: string[]; outputIds: number[]; outputTokens: string[]; text: string;
    encoderAttention: Tensor; decoderAttention: Tensor; crossAttention: Tensor;
  };
  /** Teacher-forced pass; `target` starts with `<bos>`. */
  forward(source: string | number[], target: number[], options?: { needAttention?: boolean; ablate?: AblatedSeq2SeqHead[] }): {
    logits: Tensor; encoderAttention: Tensor | null; decoderAttention: Tensor | null; crossAttention: Tensor | null;
  };  /**
   * Head `head` of layer `layer` of one kind of attention at row `query`, teacher-forced as {@link forward} (its
   * weights row bit for bit): `query` is a source word for `'encoder'`, a position of `target` for `'decoder'` and
   * `'cross'` (whose `keyInput` is the encoder's output `[sourceWords, d]`). `target` starts with `<bos>`; the
   * encoder's trace needs none. RangeError for an attention, layer, head or query the model does not have.
   */
  trace(source: string | number[], options: Seq2SeqTraceOptions): AttentionTrace & {
    sourceIds: number[]; sourceTokens: string[]; targetIds: number[]; targetTokens: string[];
  };
}

/** What {@link Seq2SeqModel.trace} traces. */
export interface Seq2SeqTraceOptions {
  /** The encoder's self-attention, the decoder's causal self-attention, or the decoder's attention over the source. */
  attention: 'encoder' | 'decoder' | 'cross';
  /** The decoder's input ids, `<bos>` first (required but for `'encoder'`). */
  target?: number[];
  layer: number;
  head: number;
  query: number;
  ablate?: AblatedSeq2SeqHead[];
}
