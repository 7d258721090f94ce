// Types of our model files' headers (model-header.js: the file's metadata under the API's names), re-exported by
// index.d.ts.
import type { RnnSeq2SeqModelConfig } from './rnn-model.js';

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
  /** The file's `kind`: `'decoder_lm'` for a {@link LanguageModel}, `'seq2seq'` for a {@link Seq2SeqModel}, `'rnn_seq2seq'` for a `RnnSeq2SeqModel`. */
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

/** A model file's header from the binding's checked metadata texts. */
export declare function modelHeader(info: { kind: string; config: string; vocab: string; namedHeads: string; training: string; tensors: { name: string; shape: number[] }[] }): ModelHeader;
