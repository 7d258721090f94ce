// Types of the encoder–decoders (seq2seq-model.js), re-exported by index.d.ts.
import type { Tensor } from './index.js';
import type { AblatedSeq2SeqHead, AttentionTrace, Model } from './model.js';
import type { ModelHeader, NamedHead, Seq2SeqModelConfig, Seq2SeqModelVocab } from './model-header.js';

/** An encoder–decoder transformer, e.g. dates written in words → `YYYY-MM-DD`. */
export declare class Seq2SeqModel extends Model {
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

/** One of our encoder–decoder files (kind `seq2seq`): its config, vocab and header typed as the file's. */
export interface TrainedSeq2SeqModel extends Seq2SeqModel {
  readonly config: Seq2SeqModelConfig;
  readonly vocab: Seq2SeqModelVocab;
  readonly header: ModelHeader;
  readonly namedHeads: NamedHead[];
  readonly training: Record<string, unknown>;
}
