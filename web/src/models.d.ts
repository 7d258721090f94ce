// Types of the trained model files (models.js: LanguageModel, Seq2SeqModel and what they share), re-exported by
// index.d.ts.
import type { Tensor } from './index.js';
import type { RnnSeq2SeqModel, RnnSeq2SeqModelConfig } from './rnn-model.js';

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
  /**
   * `true`: the output head's weight is the token embedding (as GPT-2's `lm_head` is `wte`), so logits =
   * ln_f(x) · tok_emb.weightᵀ + head.bias and the file has no `head.weight`. Absent in files whose head is untied.
   */
  tieHead?: boolean;
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

/** What every trained model file gives (the package does not export it: its model classes extend it). */
export declare abstract class TrainedModel {
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
  };
  /**
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
