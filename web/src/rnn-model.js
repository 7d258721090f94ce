// RnnSeq2SeqModel: the GRU encoder–decoders of the "why attention" comparison (kind `rnn_seq2seq`), run by the C++
// core; translate() returns the fixed context vector and, with attention, the weights over the encoder's states.
import { registerModelKind } from './load-model.js';
import { Model, tokenIds } from './model.js';
import { WordSource } from './seq2seq-model.js';
import { checkOptions, numberOption } from './tensor.js';

/**
 * A GRU encoder–decoder (kind `rnn_seq2seq`): `config.attention` is `'none'` (the decoder starts from the encoder's
 * final state, the fixed context vector, and sees nothing else of the source) or `'dot'` (Luong's dot-product
 * attention: at each step the decoder's state is the query, the encoder's states are the keys and the values).
 */
export class RnnSeq2SeqModel extends Model {
  #source;

  constructor(handle, header) {
    super(handle, { className: 'RnnSeq2SeqModel', tokenizer: null, header });
    this.kind = 'rnn_seq2seq';
    this.#source = new WordSource(header.vocab, header.config.maxSourceLen);
  }

  /**
   * Source text → word ids: ASCII lower case, split on anything but a–z and 0–9, at most `config.maxSourceLen` words.
   * `wordCount` is the number of words before that cut.
   */
  tokenizeSource(text) {
    return this.#source.words(text, 'RnnSeq2SeqModel.tokenizeSource');
  }

  /**
   * Greedy translation. `context` is the encoder's final state (Float32Array [hidden]); `attention` [N, S] is row t's
   * weights over the source words when output token t was chosen (null without attention); `decoderStates` [N, hidden]
   * the queries; `encoderStates` [S, hidden] the keys and values.
   */
  translate(source, options) {
    const caller = 'RnnSeq2SeqModel.translate';
    const handle = this.handle(caller);
    const ids = this.#source.ids(source, caller);
    const opts = checkOptions(options, ['maxSteps'], `${caller}: options`);
    // Its range and its default are the model's (the binding checks them): JS checks only that it is a number.
    const maxSteps = opts.maxSteps === undefined ? undefined : numberOption(opts.maxSteps, `${caller}: options.maxSteps`);
    const { targetBosId: bos, targetEosId: eos, targetTokens: tokens } = this.vocab;
    const r = handle.rnnTranslate(caller, ids, bos, eos, maxSteps);
    return {
      sourceIds: ids,
      sourceTokens: this.#source.tokens(source, ids, caller),
      outputIds: r.tokens,
      outputTokens: r.tokens.map((id) => tokens[id]),
      text: r.tokens.filter((id) => id !== eos).map((id) => tokens[id]).join(''),
      context: r.context,
      attention: r.attention,
      decoderStates: r.decoderStates,
      encoderStates: r.encoderStates,
    };
  }

  /** Teacher-forced pass; `target` starts with `<bos>`: logits [T, targetVocab] and attention [T, S] (null without). */
  forward(source, target) {
    const caller = 'RnnSeq2SeqModel.forward';
    const handle = this.handle(caller);
    const ids = this.#source.ids(source, caller);
    const targetIds = tokenIds(target, `${caller}: target`, 'an array of token ids');
    return handle.rnnForward(caller, ids, targetIds);
  }
}

registerModelKind('rnn_seq2seq', (handle, header) => new RnnSeq2SeqModel(handle, header));
