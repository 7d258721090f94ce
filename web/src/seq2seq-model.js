// Encoder–decoders: Seq2SeqModel (ours, a `seq2seq` file, and the translation checkpoints alike: the encoder's
// self-attention, the decoder's, and its cross-attention over the source), and the word source every one of our
// encoder–decoders reads (WordSource, shared with the GRU models of rnn-model.js).
import { headLists } from './ablation.js';
import { Model, numbers, requestOf, tokenIds } from './model.js';
import { sourceWords } from './our-tokenizers.js';
import { describe } from './runtime.js';
import { booleanOption, checkOptions, numberOption } from './tensor.js';

/** Our encoder–decoders' source: text in words (words_ascii_lower), at most `config.maxSourceLen` of them. */
export class WordSource {
  #ids;
  #vocab;
  #max;

  constructor(vocab, maxSourceLen) {
    this.#vocab = vocab;
    this.#max = maxSourceLen;
    this.#ids = new Map(vocab.sourceTokens.map((token, id) => [token, id]));
  }

  /** Source text → word ids: ASCII lower case, split on anything but a–z and 0–9; `wordCount` before the cut. */
  words(text, caller) {
    if (typeof text !== 'string') throw new TypeError(`${caller}: text: expected a string, got ${describe(text)}`);
    return sourceWords(text, this.#ids, this.#vocab, this.#max);
  }

  /** The ids of text, or of ids as given, for a call's `source`. */
  ids(input, caller) {
    if (typeof input !== 'string') return tokenIds(input, `${caller}: source`);
    const { ids } = this.words(input, caller);
    if (ids.length === 0) throw new RangeError(`${caller}: source: expected at least one word, got none`);
    return ids;
  }

  tokens(input, ids, caller) {
    return typeof input === 'string' ? this.words(input, caller).tokens : ids.map((id) => this.#vocab.sourceTokens[id]);
  }
}

/** The attentions of an encoder–decoder by the names ablation entries give them (as `namedHeads` do). */
const KINDS = ['enc_self', 'dec_self', 'dec_cross'];

/**
 * An encoder–decoder: ours (kind `seq2seq`, e.g. dates in words → YYYY-MM-DD) or a translation checkpoint. `source`
 * is text (our words, or the checkpoint's tokenizer) or ids; the decoder's input starts with its start token.
 */
export class Seq2SeqModel extends Model {
  #source;
  #target;

  constructor(handle, parts) {
    super(handle, { className: 'Seq2SeqModel', ...parts });
    this.kind = 'seq2seq';
    const { header } = parts;
    if (header) {
      this.#source = new WordSource(header.vocab, header.config.maxSourceLen);
      const { targetTokens, targetBosId, targetEosId } = header.vocab;
      this.#target = { readable: (id) => targetTokens[id], start: targetBosId, eos: targetEosId };
    } else {
      const tokenizer = parts.tokenizer;
      this.#target = { readable: (id) => tokenizer?.readable(id) ?? null, start: this.architecture.decoderStartTokenId, eos: this.architecture.eosTokenId };
    }
  }

  /**
   * Not for a translation model: the lens reads one stack's stream through its head (causal models, an encoder's
   * masked-LM head), and a translation's decoder reads the source besides. Refused by name (the binding once met the request
   * with an engine error).
   */
  logitLens() {
    this.handle('Seq2SeqModel.logitLens');
    throw new TypeError('Seq2SeqModel.logitLens: a translation model has no logit lens here (it is defined for causal models and an encoder\'s '
      + 'masked-LM head; a decoder reads the source through cross-attention too)');
  }

  /** Source text → word ids (our models): `{ ids, tokens, wordCount }`. */
  tokenizeSource(text) {
    const caller = 'Seq2SeqModel.tokenizeSource';
    if (this.#source) return this.#source.words(text, caller);
    const { ids } = this.tokenizer(caller).encode(text, undefined, caller);
    return { ids, tokens: this.tokenStrings(ids), wordCount: ids.length };
  }

  #sourceIds(input, caller) {
    this.handle(caller);
    return this.#source ? this.#source.ids(input, caller) : this.ids(input, caller);
  }

  #sourceTokens(input, ids, caller) {
    return this.#source ? this.#source.tokens(input, ids, caller) : this.tokenStrings(ids);
  }

  // The heads per kind of attention; entries name theirs as namedHeads do (attn: 'enc_self', …).
  #ablation(ablate, caller) {
    const lists = headLists(ablate, `${caller}: options.ablate`, KINDS);
    return { ablate: lists.dec_self, ablateCross: lists.dec_cross, ablateEncoder: lists.enc_self };
  }

  /**
   * Greedy translation, step by step with key/value caches (cross-attention's keys and values computed once).
   * `crossAttention` row t shows which source tokens output token t read: `[decoderLayers, heads, outputTokens, sourceTokens]`.
   * `ablate: [{ attn: 'enc_self' | 'dec_self' | 'dec_cross', layer, head }]` switches heads off at every step.
   */
  translate(source, options) {
    const caller = 'Seq2SeqModel.translate';
    const ids = this.#sourceIds(source, caller);
    const opts = checkOptions(options, ['maxSteps', 'ablate'], `${caller}: options`);
    // Its range and its default are the model's (the binding checks them): JS checks only that it is a number.
    const maxSteps = opts.maxSteps === undefined ? undefined : numberOption(opts.maxSteps, `${caller}: options.maxSteps`);
    const { start, eos, readable } = this.#target;
    const request = requestOf({ call: caller, tokens: [start], source: ids }, this.#ablation(opts.ablate, caller));
    const r = this.handle(caller).translate(request, start, eos, maxSteps);
    return {
      sourceIds: ids,
      sourceTokens: this.#sourceTokens(source, ids, caller),
      outputIds: r.tokens,
      outputTokens: r.tokens.map(readable),
      text: this.#source ? r.tokens.filter((id) => id !== eos).map(readable).join('')
        : this.hasTokenizer ? this.detokenize(r.tokens) : null,
      encoderAttention: r.encoderAttention,
      decoderAttention: r.decoderAttention,
      crossAttention: r.crossAttention,
    };
  }

  /**
   * One head at one query of one layer of `attention` ('encoder', 'decoder' or 'cross'), teacher-forced on `source`
   * and `target` (ids from the start token; the encoder reads none) as forward() is, recorded by the core's own pass.
   * `query` is a source position for the encoder, a target position for the decoder's two; cross-attention's
   * `keyInput` is the encoder's output. The core checks the kind, layer, head and query.
   */
  trace(source, options) {
    const caller = 'Seq2SeqModel.trace';
    const names = "'encoder', 'decoder' or 'cross'";
    if (options === undefined) throw new TypeError(`${caller}: options: expected { attention, layer, head, query }, got undefined`);
    const ids = this.#sourceIds(source, caller);
    const opts = checkOptions(options, ['target', 'attention', 'layer', 'head', 'query', 'ablate'], `${caller}: options`);
    if (typeof opts.attention !== 'string') throw new TypeError(`${caller}: options.attention: expected ${names}, got ${describe(opts.attention)}`);
    const targetIds = opts.target === undefined ? [] : tokenIds(opts.target, `${caller}: options.target`, 'an array of token ids');
    const index = (key) => numberOption(opts[key], `${caller}: options.${key}`);
    const request = requestOf({ call: caller, tokens: targetIds, source: ids }, this.#ablation(opts.ablate, caller));
    const result = this.handle(caller).trace(request, opts.attention, index('layer'), index('head'), index('query'));
    return {
      sourceIds: ids,
      sourceTokens: this.#sourceTokens(source, ids, caller),
      targetIds,
      targetTokens: targetIds.map(this.#target.readable),
      ...result,
    };
  }

  /**
   * Teacher-forced pass: `target` ids start with the start token. Logits `[T, targetVocab]` and every attention map.
   * `ablate` as in translate().
   */
  forward(source, target, options) {
    const caller = 'Seq2SeqModel.forward';
    const ids = this.#sourceIds(source, caller);
    const targetIds = numbers(target, `${caller}: target`, 'an array of token ids');
    const opts = checkOptions(options, ['needAttention', 'ablate'], `${caller}: options`);
    const needAttention = booleanOption(opts.needAttention, `${caller}: options.needAttention`, true);
    const request = requestOf({ call: caller, tokens: targetIds, source: ids, needAttention }, this.#ablation(opts.ablate, caller));
    const { logits, hidden, attention, encoderAttention, crossAttention } = this.handle(caller).forward(request);
    return { logits, hidden, encoderAttention, decoderAttention: attention, crossAttention };
  }
}
