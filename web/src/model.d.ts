// Types of every transformer model (model.js: Model, LanguageModel, EncoderModel) and of what their calls take and
// return; re-exported by index.d.ts.
import type { Tensor } from './index.js';
import type { LanguageModelConfig, LanguageModelVocab, ModelHeader, NamedHead, Seq2SeqModelConfig, Seq2SeqModelVocab } from './model-header.js';
import type { RnnSeq2SeqModelConfig } from './rnn-model.js';
import type { Seq2SeqModel } from './seq2seq-model.js';

/**
 * An array or typed array of numbers: what the token ids, positions, masks and type ids of every call take. An
 * array-like object (`{ length, 0: … }`) is refused with a TypeError: it could claim any length.
 */
export type NumberList = readonly number[] | Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array
  | Uint32Array | Float32Array | Float64Array;

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
 * same for every model: {@link LanguageModel.trace}, {@link Seq2SeqModel.trace}, and the checkpoints' trace).
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
  /** Above 0: each scaled score s became `softcap · tanh(s / softcap)` before the softmax (config.json's `attn_logit_softcapping`); 0: no cap. */
  softcap: number;
  /** `[S]` 1 where the key is visible to this query (causal order, window, padding). */
  visible: Uint8Array;
  /** `[S]` softmax of the scaled (and capped) scores over the visible keys, 0 elsewhere: the forward pass's own row. */
  weights: Tensor;
  /** `[headDim]` weights · values (zeros when the head is ablated). */
  context: Tensor;
  /** `[d]` the context through this head's part of the output projection (no bias). */
  headOutput: Tensor;
  /** `[d]` the attention's output at this query, as the layer adds it: every head's `headOutput` plus the output projection's bias. */
  attentionOutput: Tensor;
}

/** Rotary position embeddings' settings (config.json's `rope_theta`, `rope_scaling`, the rotated share of a head). */
export interface RopePositions {
  kind: 'rope';
  theta: number;
  /** Features of each head that rotate (`headDim`, or fewer: `rotary_pct`, `partial_rotary_factor`). */
  rotaryDim: number;
  /** null (no scaling), or `rope_scaling`'s type and factors. */
  scaling: null | { type: 'linear'; factor: number } | {
    type: 'llama3'; factor: number; lowFreqFactor: number; highFreqFactor: number; originalMaxPositions: number;
  } | { type: 'longrope'; factor: number; originalMaxPositions: number };
}

/** One stack's sizes and parts (the model itself, or an encoder–decoder's decoder; its encoder in `encoder`). */
export interface StackArchitecture {
  layers: number;
  /** Query heads. */
  heads: number;
  /** Key/value heads: `heads` (multi-head), 1 (multi-query) or a divisor of `heads` (grouped-query). */
  kvHeads: number;
  headDim: number;
  hiddenSize: number;
  intermediateSize: number;
  vocabSize: number;
  /** The longest input the stack takes (generate() may add one token beyond it: see there). */
  maxPositions: number;
  /** The kind of the stack's norms. */
  norm: 'layerNorm' | 'rmsNorm';
  /** The norms' epsilon, as the core holds it (a float32: `1e-5` reads 0.0000099999997…). */
  normEps: number;
  /** The norm comes after each residual sum (and after the embeddings). */
  postNorm: boolean;
  /** The stack ends with a norm of its own (TransformerLens's `ln_final`); BERT's does not. */
  finalNorm: boolean;
  /** Attention and MLP read the same layer input and add to the stream together (no point between them). */
  parallel: boolean;
  positions: { kind: 'learned' | 'sinusoidal' | 'relative' | 'none' } | RopePositions;
  /** The MLP: its activation, and `swiglu` / `geglu` / `gegluErf` / `reglu` when a gate multiplies it. */
  mlp: 'geluTanh' | 'geluErf' | 'relu' | 'silu' | 'swiglu' | 'geglu' | 'gegluErf' | 'reglu';
  /** Per layer: how many keys a query sees, itself included (sliding-window attention), or null for all. */
  window: (number | null)[];
  /** False for an encoder: every token sees every other. */
  causal: boolean;
  /** An RMSNorm over the queries and keys before the scores (per head or over the whole projection). */
  qkNorm: boolean;
  /** Token types (sentence A and B); 0 when the model has none. */
  typeVocabSize: number;
}

/**
 * What a model is, as the C++ core read it from its config: the same description for every model, ours and Hugging
 * Face's (`model.architecture`; a checkpoint's `model.config` too). A view asks it what a model has, never which family
 * it is.
 */
export interface ModelArchitecture extends StackArchitecture {
  /** config.json's `model_type`, or our file's kind (`decoder_lm`, `seq2seq`). */
  family: string;
  kind: 'causal_lm' | 'encoder' | 'seq2seq';
  /** Logits are produced (an encoder: only when the checkpoint has its masked-LM head). */
  hasLmHead: boolean;
  /** The LM head is the token embedding, held once. */
  tiedEmbeddings: boolean;
  /** An encoder–decoder: its decoder cross-attends to the encoder's output. */
  hasCrossAttention: boolean;
  /** An encoder–decoder's encoder; null for a single stack. */
  encoder: StackArchitecture | null;
  /** An encoder–decoder: the decoder's first input, and where translate() stops (config.json's ids; -1 when unsaid). */
  decoderStartTokenId?: number;
  eosTokenId?: number;
}

/** @deprecated The name of {@link ModelArchitecture} before 0.2. */
export type PretrainedConfig = ModelArchitecture;

/** Options of a forward pass. */
export interface ModelForwardOptions {
  /** Return the attention maps (default true). */
  needAttention?: boolean;
  /** Heads to switch off: their context is replaced (see `ablation`) before the output projection; their weights are still returned. */
  ablate?: AblatedHead[];
  /**
   * What an ablated head's context becomes: `'zero'` (default), or `'mean'`, its mean over this run's real positions
   * (attentionMask 1). To ablate towards another input's mean (TransformerLens's reference distribution), keep that
   * run's heads and patch them in with `patch` / `patchFrom`. @throws RangeError for another string.
   */
  ablation?: 'zero' | 'mean';
  /**
   * Return each head's context in `result.heads`, `[layers, T, heads, headDim]`: softmax(q·kᵀ)·v per query head,
   * before the output projection (TransformerLens's `hook_z`), after ablation and patching. The context rather than
   * its `[T, hiddenSize]` contribution through the projection: it is what patching replaces, headDim/hiddenSize of
   * the size, and the projection is linear. A fresh Float32Array the caller owns; default false.
   */
  keepHeads?: boolean;
  /** Activation patching: these heads' contexts, at every position, are taken from `patchFrom` instead of computed. */
  patch?: AblatedHead[];
  /**
   * The positions (0 to T − 1) at which `patch`'s heads are patched; elsewhere they compute their own context
   * (TransformerLens's per-position patching). Default (left out): every position. Through a {@link ForwardCache} of
   * the same input, the pass starts at the block of 32 positions holding the first of them (at 0 beside mean
   * ablation). @throws RangeError for a position outside the input, an empty list, or without `patch`.
   */
  patchPositions?: NumberList;
  /**
   * The kept run `patch` reads: a `result.heads` of this model (from `keepHeads: true`) over the same number of
   * tokens; read during the call only. @throws RangeError for a run of another length or another model's shape
   * (naming both), TypeError for something that is not a `{ data: Float32Array, shape }`.
   */
  patchFrom?: Tensor | null;
  /**
   * Hugging Face's attention mask, one per token: **1 = a real token, 0 = padding** (a key no query sees). This is
   * the opposite polarity of MultiHeadAttention's `keyPaddingMask`, where nonzero means blocked.
   */
  attentionMask?: NumberList;
  /**
   * Return the residual stream: `result.residual` `[layers + 1, T, hiddenSize]`, entering each layer (after the
   * embeddings and their norm) and leaving the last one, before the final norm (TransformerLens's `hook_resid_pre`
   * of each layer, `hook_resid_post` of the last); `result.residualMid` `[layers, T, hiddenSize]` between each
   * layer's attention and its MLP (null for parallel layers). After a post-norm (BERT), the stream after that norm.
   */
  keepResidual?: boolean;
  /**
   * Return `result.qkv` `[layers, T, heads·headDim + 2·kvHeads·headDim]`: each row q | k | v after the projection and
   * its bias, before QK-norm and RoPE; k and v per key/value head.
   */
  keepQkv?: boolean;
  /** Return `result.valueNorms` `[layers, heads, T]`: ‖v_j‖ of the values each query head reads (for {@link valueWeighted}). */
  valueNorms?: boolean;
  /**
   * Return the logits of the last `logitsToKeep` positions only, `[logitsToKeep, vocabSize]` (Hugging Face's
   * `logits_to_keep`): the head costs a vocabulary-wide row per position, so a caller that reads the last row (next
   * token, patching's logit difference) skips the rest. Default: every position. @throws RangeError above T.
   */
  logitsToKeep?: number;
  /**
   * Caller-owned arrays the results are copied into instead of fresh ones: `attention`, a Float32Array of exactly
   * `layers · heads · T · T` values (`result.attention.data` is then this array). A caller that runs forward() again
   * and again (a typist's text at 500 tokens: 144 MB of maps for GPT-2 small) reuses one array instead of a fresh
   * allocation each time. Checked before the pass: @throws RangeError for another length (or with `needAttention:
   * false`), TypeError for another type.
   */
  out?: { attention?: Float32Array };
}

/** What a forward pass returns. `tokens` are readable strings (see {@link Model.tokenize}), null without a tokenizer. */
export interface ModelForwardResult {
  ids: number[];
  tokens: string[] | null;
  /** `[T, vocabSize]` (`[logitsToKeep, vocabSize]`: the last positions), or null when the checkpoint has no head. */
  logits: Tensor | null;
  /** `[T, hiddenSize]`: the last hidden state as Hugging Face returns it (after the final norm, where there is one). */
  hidden: Tensor;
  /** `[layers, heads, T, T]`, one map per query head (under grouped-query attention too); null with `needAttention: false`. */
  attention: Tensor | null;
  /** `[layers, T, heads, headDim]` every head's context (see `keepHeads`); null without `keepHeads: true`. */
  heads: Tensor | null;
  /** See `keepResidual`; null without it. */
  residual: Tensor | null;
  residualMid: Tensor | null;
  /** See `keepQkv`; null without it. */
  qkv: Tensor | null;
  /** See `valueNorms`; null without it. */
  valueNorms: Tensor | null;
}

/** One of the logit lens's tokens at a layer and position. */
export interface LensToken {
  id: number;
  /** Readable, as {@link Model.tokenize} shows it; null without a tokenizer. */
  token: string | null;
  probability: number;
}

/** What {@link Model.logitLens} returns. */
export interface LogitLens {
  ids: number[];
  tokens: string[] | null;
  k: number;
  /**
   * The rows returned: the model's layers + 1 (row l is the stream entering layer l, row 0 the embeddings, the last
   * the model's prediction), or `end − start` with `options.layers`.
   */
  layers: number;
  /** The lens row the first returned row is: 0, or `options.layers`' start. */
  firstLayer: number;
  /** `[layers, T, k]`, each row's most probable tokens' probabilities, largest first. */
  probabilities: Tensor;
  /** `[layers, T, k]` their ids. */
  topIds: { data: Int32Array; shape: number[] };
  /** True when the stream was read from `options.cache` (it held this input's pass, so only the head ran); false for a
   * lens that ran its own pass. The numbers are the same either way. */
  fromCache: boolean;
  /** The `k` tokens of lens row `layer` (from `firstLayer` to `firstLayer + layers − 1`) at `position`, most probable first. */
  at(layer: number, position: number): LensToken[];
}

/** One head's weight circuits, from {@link Model.circuits}. */
export interface HeadCircuits {
  /** The key/value head whose W_K and W_V this query head reads (grouped-query attention: head / (heads / kvHeads)). */
  kvHead: number;
  /** `[hiddenSize, hiddenSize]` W_Q·W_Kᵀ: a query's stream (rows) against a key's (columns). */
  qk: Tensor;
  /** `[hiddenSize, hiddenSize]` W_V·W_O: a key's stream (rows) to what the head writes (columns). */
  ov: Tensor;
  /** `[headDim]` their singular values, largest first (the product's rank is at most headDim). */
  qkSingularValues: Tensor;
  ovSingularValues: Tensor;
}

/**
 * A causal model's kept forward pass (`LanguageModel.forward(input, { cache: true })` makes one, `{ cache:
 * result.cache }` extends it): every layer's keys and values, the input and options it ran with, and its output. When
 * the next input starts with the same tokens (same `attentionMask` and `ablate` over them), their keys, values and
 * rows of logits, hidden states and attention are taken from it and only the positions after them are computed, in
 * whole blocks of 32 positions (a prefix of 506 tokens reuses 480); any other input is one fresh pass. Either way the
 * result is a fresh pass's, bit for bit, and the cache then holds it. A patched call of the kept input (`patch`)
 * starts at the lowest patched layer and at the first of `patchPositions` (in whole blocks), and leaves the cache
 * holding the unpatched pass. A call with `keepHeads` (which needs every row's heads) or mean ablation (whose rows
 * depend on the whole input) runs fresh; the pass a `keepHeads` call leaves in the cache is reused by the next call
 * like any other (patching's corrupted run after its clean one, for instance). Freed
 * by `dispose()`, by the garbage collector if dropped, or with its model; its memory is not counted in the model's
 * memory plan.
 */
export declare class ForwardCache {
  /** Tokens of the pass it holds. */
  readonly positions: number;
  /** Positions the last forward() through it reused instead of computing (0: a fresh pass). */
  readonly reused: number;
  /**
   * The layer and the position the last patched forward() or patchEach() run through it started at (0 and 0: a fresh
   * pass); for patchEach, the first position its last run names, though it skips those where patching changes
   * nothing (with `ablation: 'mean'` 0, and where each run is its own pass, the start of that position's block of 32).
   */
  readonly resumedLayer: number;
  readonly resumedPosition: number;
  /** Bytes of WebAssembly memory it holds: keys and values (with room for a few more positions) and the last output. */
  readonly bytes: number;
  /** Frees its memory. Idempotent; passing it again is a TypeError. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/** A causal model's forward options: the input's, and a {@link ForwardCache} to extend. */
export interface LanguageModelForwardOptions extends ModelForwardOptions {
  /**
   * `true`: keep this pass in a new {@link ForwardCache} (`result.cache`); a ForwardCache of this model: reuse what
   * it holds, then hold this pass. @throws TypeError for anything else, a disposed cache or another model's.
   */
  cache?: true | ForwardCache;
}

/** A causal model's forward result: with the {@link ForwardCache} the call went through, when it was given one. */
export interface LanguageModelForwardResult extends ModelForwardResult {
  cache?: ForwardCache;
}

/** @deprecated The names of {@link ModelForwardOptions} and {@link ModelForwardResult} before 0.2. */
export type PretrainedForwardOptions = ModelForwardOptions;
export type PretrainedForwardResult = ModelForwardResult;

/** The numbers one head computed for one query in one layer, with the input's ids and readable tokens. */
export interface Trace extends AttentionTrace {
  ids: number[];
  tokens: string[] | null;
}
/** @deprecated The name of {@link Trace} before 0.2. */
export type PretrainedTrace = Trace;

/** Options of a trace: which head, at which query, of which layer; and the input's options. */
export interface TraceOptions {
  layer: number;
  head: number;
  query: number;
  attentionMask?: NumberList;
  ablate?: AblatedHead[];
  ablation?: 'zero' | 'mean';
  patch?: AblatedHead[];
  patchFrom?: Tensor | null;
  patchPositions?: NumberList;
}

/**
 * What every transformer shares, ours and a checkpoint's: one class per kind of model (causal, encoder,
 * encoder–decoder) over the one forward pass of the core.
 */
export declare abstract class Model {
  /** The same description for every model: family, sizes and parts, as the core read them. */
  readonly architecture: ModelArchitecture;
  /** Our file's config (its sizes under camelCase names), or a checkpoint's architecture. */
  readonly config: ModelArchitecture | LanguageModelConfig | Seq2SeqModelConfig | RnnSeq2SeqModelConfig;
  /** Our files: their description (config, vocab, tensors, named heads, training record); undefined for a checkpoint. */
  readonly header?: ModelHeader;
  readonly vocab?: LanguageModelVocab | Seq2SeqModelVocab;
  /** Heads named from their measured behaviour (our files). */
  readonly namedHeads?: NamedHead[];
  /** The training record (our files): data, sizes, steps, losses, head scores. */
  readonly training?: Record<string, unknown>;
  /** Bytes the parameters take in WebAssembly memory: F32, and a BF16 or F16 checkpoint's matrices in 16 bits. */
  readonly parameterBytes: number;
  /** True when the model reads text: ours always, a checkpoint when it came with tokenizer.json. */
  readonly hasTokenizer: boolean;
  /**
   * Text → ids, with the special tokens the tokenizer adds (our `<bos>`, a post-processor's), and readable tokens: a
   * space is shown as `␣` (U+2423), a newline as `↵`, a tab as `⇥`, and each byte of a token that holds only part of
   * a UTF-8 character as `<0xE4>`. @throws TypeError when a checkpoint has no tokenizer.json.
   */
  tokenize(text: string): { ids: number[]; tokens: string[] };
  /** Ids → text, special tokens left out. */
  detokenize(ids: NumberList): string;
  /**
   * The readable strings of `ids` (as tokenize() shows them), or null without a tokenizer. An id past the tokenizer's
   * vocabulary reads `<id N>`. @throws RangeError naming `ids[i]` for an id that is not a whole number from 0.
   */
  tokenStrings(ids: NumberList): string[] | null;
  /**
   * The logit lens: the residual stream entering every layer and leaving the last, through the final norm and the
   * head (an MLM head's transform included), softmaxed; the `k` (default 10, at most 100) most probable tokens of
   * each. Takes forward()'s input options. `layers: [start, end]` computes only rows start..end − 1 (0 to layers + 1;
   * each row the same bits as in the whole lens): a large vocabulary's head is most of the lens, so a few rows are
   * that much quicker. @throws TypeError for a model without a head or a `layers` that is not two numbers,
   * RangeError for such a `k` or rows outside the lens.
   */
  logitLens(input: string | NumberList, options?: { k?: number; layers?: [start: number, end: number]; attentionMask?: NumberList; tokenTypeIds?: NumberList;
    ablate?: AblatedHead[]; ablation?: 'zero' | 'mean'; patch?: AblatedHead[]; patchFrom?: Tensor | null }): LogitLens;
  /**
   * Head `head` of layer `layer`'s QK and OV circuits (W_Q·W_Kᵀ and W_V·W_O, raw weights: no bias, no norm folded
   * in). @throws RangeError for a layer or head the model does not have.
   */
  circuits(layer: number, head: number): HeadCircuits;
  /** Frobenius norms of every head's circuits, each `[layers, heads]`. */
  circuitNorms(): { qk: Tensor; ov: Tensor };
  /** Frees the model's WebAssembly memory. Idempotent; any later call throws. */
  dispose(): void;
  [Symbol.dispose](): void;
}
/** @deprecated The name of {@link Model} before 0.2. */
export type PretrainedModel = Model;

/** A causal language model: ours (kind `decoder_lm`) or a checkpoint's (kind `causal_lm`: every causal family, `supportedFamilies()`). */
export declare class LanguageModel extends Model {
  readonly kind: 'decoder_lm' | 'causal_lm';
  /** The token generate() stops after by default: our `<bos>` (end of document), a checkpoint's `eos_token`, or null. */
  readonly eosTokenId: number | null;
  /**
   * Text (tokenized; ours keeps the last `config.maxLen` tokens, `<bos>` first) or token ids (used as given) → logits,
   * the last hidden state and every layer's attention `[layers, heads, T, T]`. With `cache`, the positions a kept
   * pass shares with this input are reused ({@link ForwardCache}).
   */
  forward(input: string | NumberList, options?: LanguageModelForwardOptions): LanguageModelForwardResult;
  /**
   * Head `head` of layer `layer` at token `query` (from 0), as {@link forward} computes it (its weights row bit for
   * bit); RangeError for a layer, head or query the model does not have. With `cache`, a {@link ForwardCache} holding
   * this input's pass (`forward(input, { cache })`, the same options), the trace starts at its layer from the input that
   * pass kept instead of running the layers below again: the same numbers. A cache holding another input gives a fresh
   * trace; the cache is not changed.
   */
  trace(input: string | NumberList, options: TraceOptions & { cache?: ForwardCache }): Trace;
  /**
   * {@link Model.logitLens}; with `cache`, a {@link ForwardCache} holding this input's pass (`forward(input, { cache })`,
   * the same options), the stream entering every layer and the last hidden state are read from it, so only the head
   * runs: the same numbers, bit for bit. A cache holding another input gives a fresh lens; the cache is not changed.
   * @throws TypeError for a cache of another model or a disposed one.
   */
  logitLens(input: string | NumberList, options?: Parameters<Model['logitLens']>[1] & { cache?: ForwardCache }): LogitLens;
  /**
   * Greedy continuation with a key/value cache: only the new tokens. Stops after `stopToken` (default
   * {@link eosTokenId}; null never stops early), after `maxNewTokens` (default 32) or once the sequence fills the
   * model's positions: the last token is predicted from that full context and never fed back, so prompt plus new
   * tokens can be one more than the positions.
   */
  generate(prompt: string | NumberList, options?: { maxNewTokens?: number; stopToken?: number | null; /** switched off at every step */ ablate?: AblatedHead[] }): {
    ids: number[]; tokens: string[] | null; text: string | null;
  };
  /**
   * Each head of `patches` patched in turn into `input` from `patchFrom` (at its `positions`, or every position):
   * `logits` `[patches.length, vocabSize]`, the last position's logits of each run, row i bit for bit what
   * `forward(input, { patch: [patches[i]], patchFrom, patchPositions: patches[i].positions, logitsToKeep: 1 })`
   * returns. Through `cache` (which then holds input's unpatched pass; without one, a cache for this call) each run
   * starts at its head's layer and position, and the head runs once over every run's last row, so a sweep over
   * every head or every position costs much less than as many forward() calls. A position where `patchFrom` holds
   * the head's own context in `input` (bit for bit: every position before the first token a clean and a corrupted
   * prompt differ in) changes nothing and is skipped; a run of such positions alone returns `input`'s own logits.
   * (Under `ablation: 'mean'`, or widths the SIMD vectors do not divide, each run is a patched pass of its own, and
   * such positions run: the same bits either way.)
   * @throws RangeError for a layer, head or position the model or input does not have, TypeError for bad types.
   */
  patchEach(input: string | NumberList, options: {
    patches: Array<{ layer: number; head: number; positions?: NumberList }>;
    patchFrom: Tensor;
    cache?: ForwardCache;
    /**
     * Only these tokens' logits (ids from 0 to vocabSize − 1, any order): `logits` is `[patches.length,
     * logitIds.length]`, column j token logitIds[j]'s, the same bits as in the whole row. The head then computes
     * only the packed panels holding them instead of the vocabulary: a logit difference of two tokens needs at most
     * two. @throws RangeError for an empty list or an id the vocabulary does not have.
     */
    logitIds?: NumberList;
    attentionMask?: NumberList;
    ablate?: AblatedHead[];
    ablation?: 'zero' | 'mean';
  }): { logits: Tensor };
}
/** @deprecated The name of {@link LanguageModel} for checkpoints before 0.2: one class serves ours and theirs. */
export declare const PretrainedLanguageModel: typeof LanguageModel;
export type PretrainedLanguageModel = LanguageModel;

/** A bidirectional encoder: every token sees every other, padding aside; a masked-LM head when the checkpoint has one. */
export declare class EncoderModel extends Model {
  readonly kind: 'encoder';
  /** As {@link Model.tokenize}, with a second sentence `pair`: `[CLS] a [SEP] b [SEP]` and its token types. */
  tokenize(text: string, options?: { pair?: string }): { ids: number[]; tokens: string[]; tokenTypeIds: number[] };
  /** As {@link LanguageModel.trace}, with the token types of a sentence pair. */
  trace(input: string | NumberList, options: TraceOptions & { tokenTypeIds?: NumberList }): Trace;
  /** The last hidden state, the masked-LM logits when the checkpoint has that head, and the attention. */
  forward(input: string | NumberList, options?: ModelForwardOptions & {
    /** One per token: 0 = sentence A, 1 = sentence B (default all 0). */
    tokenTypeIds?: NumberList;
  }): ModelForwardResult;
}

/** One of our language model files (kind `decoder_lm`): its config, vocab and header typed as the file's. */
export interface TrainedLanguageModel extends LanguageModel {
  readonly kind: 'decoder_lm';
  /** Sizes and fixed choices (the same object as `header.config`). */
  readonly config: LanguageModelConfig;
  /** Tokens and special ids (the same object as `header.vocab`). */
  readonly vocab: LanguageModelVocab;
  readonly header: ModelHeader;
  readonly namedHeads: NamedHead[];
  readonly training: Record<string, unknown>;
}
