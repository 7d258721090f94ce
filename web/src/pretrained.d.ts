// Types of the Hugging Face checkpoint models (pretrained.js), re-exported by index.d.ts.
import type { AblatedHead, AttentionTrace, Tensor } from './index.js';

/** A file of a checkpoint: its bytes, a Blob or File (read in chunks), or where to fetch it (a URL or URL string). */
export type CheckpointFile = ArrayBuffer | Uint8Array | Blob | string | URL;

/**
 * A checkpoint's files by their Hugging Face names: `config.json`, then `model.safetensors`, or the shards and
 * `model.safetensors.index.json`, and optionally `tokenizer.json` and `tokenizer_config.json`. Other names are
 * ignored, so a whole folder can be passed. The Files of an `<input type="file" multiple>` (an array or a FileList;
 * typed as ArrayLike so that Node projects need no DOM types) are taken by their own names.
 */
export type CheckpointFiles = Record<string, CheckpointFile> | ArrayLike<File>;

/** How far a load is: bytes of the weight files read so far, of `total`, and the file being read. */
export interface LoadProgress {
  loaded: number;
  total: number;
  file: string;
}

/**
 * The memory a load will take, from config.json and the weight files' headers, before anything in proportion to
 * the model is allocated (the C++ core computes it; `loadModel` refuses with a RangeError what does not fit).
 */
export interface LoadPlan {
  /** Floats the parameters take as held (the kernels' panel padding included): about the parameter count. */
  parameters: number;
  /** The parameters as F32, in bytes: `model.parameterBytes` once loaded. */
  parameterBytes: number;
  /** The input length the workspace is planned for (`planTokens`, by default 512 or `maxPositions` if fewer). */
  tokens: number;
  /** What one `forward` of `tokens` tokens with every attention map allocates next to the parameters, in bytes. */
  workspaceBytes: number;
  /** `parameterBytes + workspaceBytes`. */
  bytes: number;
  /** What WebAssembly memory had left when the plan was made, in bytes (`bytes` is at most this). */
  availableBytes: number;
  /** True once every header was read (always, for the plan `onPlan` receives). */
  exact: boolean;
}

/** Options of `loadModel` for a checkpoint. */
export interface LoadOptions {
  /** Called after each chunk of the weights (4 MiB or less); an error it throws stops the load. */
  onProgress?: (progress: LoadProgress) => void;
  /**
   * Called once, after every header was read and before the parameters are allocated, with the memory the model
   * will need; an error it throws (or an abort it makes) stops the load before anything is allocated.
   */
  onPlan?: (plan: LoadPlan) => void;
  /**
   * The input length the memory plan makes room for (a whole number, at most `maxPositions`; 0 or absent: 512, or
   * `maxPositions` if fewer). A model whose parameters and one forward pass of this many tokens, every attention
   * map included, do not fit in what WebAssembly memory has left is refused from config.json, before its headers
   * are read, and again, exactly, after them: a RangeError naming the parameter count and the bytes.
   */
  planTokens?: number;
  /** Cancels the load: it rejects with the signal's reason, and frees everything it had allocated. */
  signal?: AbortSignal;
}

/** Rotary position embeddings' settings (config.json's `rope_theta`, `rope_scaling`). */
export interface RopePositions {
  kind: 'rope';
  theta: number;
  /** null (no scaling), or `rope_scaling`'s type and factors. */
  scaling: null | { type: 'linear'; factor: number } | {
    type: 'llama3'; factor: number; lowFreqFactor: number; highFreqFactor: number; originalMaxPositions: number;
  };
}

/** A checkpoint's architecture, as the C++ core read and checked it from config.json. */
export interface PretrainedConfig {
  /** config.json's `model_type`. */
  family: 'gpt2' | 'bert' | 'llama' | 'mistral' | 'qwen2' | 'qwen3';
  layers: number;
  /** Query heads. */
  heads: number;
  /** Key/value heads: `heads` (multi-head), 1 (multi-query) or a divisor of `heads` (grouped-query). */
  kvHeads: number;
  headDim: number;
  hiddenSize: number;
  intermediateSize: number;
  vocabSize: number;
  /** The longest input the model takes (generate() may add one token beyond it: see there). */
  maxPositions: number;
  norm: 'layerNorm' | 'rmsNorm';
  /** The norms' epsilon, as the core holds it (a float32: `1e-5` reads 0.0000099999997…). */
  normEps: number;
  positions: { kind: 'learned' } | RopePositions;
  mlp: 'geluTanh' | 'geluErf' | 'swiglu';
  /** Per layer: how many keys a query sees, itself included (sliding-window attention), or null for all. */
  window: (number | null)[];
  /** False for BERT: every token sees every other. */
  causal: boolean;
  /** Logits are produced (BERT: only when the checkpoint has its masked-LM head). */
  hasLmHead: boolean;
  /** The LM head is the token embedding, held once. */
  tiedEmbeddings: boolean;
  /** BERT: the norm comes after each residual sum (and after the embeddings). */
  postNorm: boolean;
  /** Qwen3: an RMSNorm over every query and key head before RoPE. */
  qkNorm: boolean;
  /** BERT's token types (`type_vocab_size`); 0 for the other families. */
  typeVocabSize: number;
}

/** Options of a forward pass. */
export interface PretrainedForwardOptions {
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
   * The kept run `patch` reads: a `result.heads` of this model (from `keepHeads: true`) over the same number of
   * tokens; read during the call only. @throws RangeError for a run of another length or another model's shape
   * (naming both), TypeError for something that is not a `{ data: Float32Array, shape }`.
   */
  patchFrom?: Tensor | null;
  /**
   * Hugging Face's attention mask, one per token: **1 = a real token, 0 = padding** (a key no query sees). This is
   * the opposite polarity of MultiHeadAttention's `keyPaddingMask`, where nonzero means blocked.
   */
  attentionMask?: ArrayLike<number>;
}

/** What a forward pass returns. `tokens` are readable strings (see {@link PretrainedModel.tokenize}), null without a tokenizer. */
export interface PretrainedForwardResult {
  ids: number[];
  tokens: string[] | null;
  /** `[T, vocabSize]`, or null when the checkpoint has no head. */
  logits: Tensor | null;
  /** `[T, hiddenSize]`: the last hidden state as Hugging Face returns it (after the final norm, where there is one). */
  hidden: Tensor;
  /** `[layers, heads, T, T]`, one map per query head (under grouped-query attention too); null with `needAttention: false`. */
  attention: Tensor | null;
  /** `[layers, T, heads, headDim]` every head's context (see `keepHeads`); null without `keepHeads: true`. */
  heads: Tensor | null;
}

/** The numbers one head computed for one query in one layer, recorded by the forward pass itself (T = S: self-attention). */
export interface PretrainedTrace extends AttentionTrace {
  ids: number[];
  tokens: string[] | null;
}

/** What both kinds of checkpoint model share. */
declare abstract class PretrainedModel {
  readonly config: PretrainedConfig;
  /** Bytes the parameters take in WebAssembly memory (F32). */
  readonly parameterBytes: number;
  /** True when the checkpoint came with tokenizer.json, so that text can be passed where ids are taken. */
  readonly hasTokenizer: boolean;
  /**
   * Text → ids, with the special tokens the tokenizer adds, and readable tokens: a space is shown as `␣` (U+2423),
   * a newline as `↵`, a tab as `⇥`, and each byte of a token that holds only part of a UTF-8 character as `<0xE4>`.
   * @throws TypeError when the checkpoint has no tokenizer.json.
   */
  tokenize(text: string): { ids: number[]; tokens: string[] };
  /** Ids → text, special tokens left out. */
  detokenize(ids: ArrayLike<number>): string;
  /** The readable strings of `ids` (as tokenize() shows them), or null without a tokenizer. */
  tokenStrings(ids: ArrayLike<number>): string[] | null;
  /** One head's numbers at one query of one layer; `layer`, `head`, `query` are checked against the model's sizes. */
  trace(input: string | ArrayLike<number>, options: { layer: number; head: number; query: number; attentionMask?: ArrayLike<number>; ablate?: AblatedHead[]; ablation?: 'zero' | 'mean'; patch?: AblatedHead[]; patchFrom?: Tensor | null }): PretrainedTrace;
  /** Frees the model's WebAssembly memory. Idempotent; any later call throws. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/** A causal language model from a checkpoint of the gpt2, llama, mistral, qwen2 or qwen3 family. */
export class PretrainedLanguageModel extends PretrainedModel {
  readonly kind: 'causal_lm';
  /** The token generate() stops after by default (tokenizer_config.json's `eos_token`), or null. */
  readonly eosTokenId: number | null;
  /** Text (tokenized) or token ids (used as given) → logits, hidden state and attention. */
  forward(input: string | ArrayLike<number>, options?: PretrainedForwardOptions): PretrainedForwardResult;
  /**
   * Greedy continuation with a key/value cache: only the new tokens. Stops after `stopToken` (default
   * {@link eosTokenId}; null never stops early), after `maxNewTokens` (default 32) or once the sequence fills
   * `config.maxPositions`: the last token is predicted from that full context and never fed back, so prompt plus
   * new tokens can be `maxPositions + 1` (our own LanguageModel.generate does the same).
   */
  generate(prompt: string | ArrayLike<number>, options?: { maxNewTokens?: number; stopToken?: number | null; ablate?: AblatedHead[] }): {
    ids: number[]; tokens: string[] | null; text: string | null;
  };
}

/** A BERT encoder from a checkpoint: every token sees every other, padding aside. */
export class EncoderModel extends PretrainedModel {
  readonly kind: 'encoder';
  /** As {@link PretrainedModel.tokenize}, with a second sentence `pair`: `[CLS] a [SEP] b [SEP]` and its token types. */
  tokenize(text: string, options?: { pair?: string }): { ids: number[]; tokens: string[]; tokenTypeIds: number[] };
  /** As {@link PretrainedModel.trace}, with the token types of a sentence pair. */
  trace(input: string | ArrayLike<number>, options: { layer: number; head: number; query: number; attentionMask?: ArrayLike<number>; tokenTypeIds?: ArrayLike<number>; ablate?: AblatedHead[]; ablation?: 'zero' | 'mean'; patch?: AblatedHead[]; patchFrom?: Tensor | null }): PretrainedTrace;
  /** The last hidden state, the masked-LM logits when the checkpoint has that head, and the attention. */
  forward(input: string | ArrayLike<number>, options?: PretrainedForwardOptions & {
    /** One per token: 0 = sentence A, 1 = sentence B (default all 0). */
    tokenTypeIds?: ArrayLike<number>;
  }): PretrainedForwardResult;
}

export type { PretrainedModel };
