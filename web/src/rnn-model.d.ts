// Types of the GRU encoder–decoder (rnn-model.js), re-exported by index.d.ts.
import type { Tensor } from './index.js';
import type { ModelHeader, NamedHead, Seq2SeqModelVocab } from './model-header.js';
import type { Seq2SeqModel } from './seq2seq-model.js';

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
export declare class RnnSeq2SeqModel {
  readonly kind: 'rnn_seq2seq';
  /** Null: a GRU model is not one of the transformers' plans. */
  readonly architecture: null;
  readonly header: ModelHeader;
  readonly namedHeads: NamedHead[];
  readonly training: Record<string, unknown>;
  /** Frees the model's WebAssembly memory. Idempotent. */
  dispose(): void;
  [Symbol.dispose](): void;
  readonly config: RnnSeq2SeqModelConfig;
  readonly vocab: Seq2SeqModelVocab;
  tokenizeSource(text: string): { ids: number[]; tokens: string[]; wordCount: number };
  /** Greedy decoding; `maxSteps` 1 to `config.maxTargetLen − 1` (the default). */
  translate(source: string | number[], options?: { maxSteps?: number }): RnnTranslation;
  /** Teacher-forced pass; `target` starts with `<bos>`: logits `[T, targetVocab]`, attention `[T, S]` (null without attention). */
  forward(source: string | number[], target: number[]): { logits: Tensor; attention: Tensor | null };
}
