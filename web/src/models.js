// Trained models (tools/MODEL_FORMAT.md): safetensors files read and checked by the C++ core, tokenisers, and
// the models run with every attention map returned. The transformer itself runs in the C++ core.
import { headLists } from './ablation.js';
import { modelHeader } from './model-header.js';
import { isFileObject, isFolderUrl } from './model-files.js';
import { pretrainedLoader } from './pretrained-binding.js';
import { loadPretrained } from './pretrained.js';
import { loadOptions } from './pretrained-loader.js';
import { disposeSymbol, OwnedHandle } from './owned-handle.js';
import { call, describe, isBroken, module, nodeFs, userUrlBase } from './runtime.js';
import { fileBytes, readInHeap } from './safetensors.js';
import { booleanOption, checkOptions, integerOption, numberOption } from './tensor.js';

async function readBytes(source) {
  if (typeof source === 'string' || source instanceof URL) {
    const base = userUrlBase() ?? `file://${typeof process === 'object' ? process.cwd() : ''}/`;
    let url;
    try {
      url = new URL(String(source), base);
    } catch {
      // e.g. a relative path in a worker started from a blob: URL, which nothing can be relative to
      throw new TypeError(`loadModel: source: expected an absolute URL or one relative to ${base}, got ${describe(String(source))}`);
    }
    const fs = url.protocol === 'file:' ? nodeFs() : undefined; // in Node; a browser fetches even file: URLs
    if (fs) {
      try {
        return new Uint8Array(await fs.readFile(url));
      } catch (cause) {
        // A checkpoint's folder given without its trailing slash would otherwise be a bare EISDIR.
        if (cause.code === 'EISDIR') throw new TypeError(`loadModel: source: ${url} is a folder; the folder of a Hugging Face checkpoint is given with a trailing / (${url}/)`, { cause });
        throw cause;
      }
    }
    const response = await fetch(url);
    if (!response.ok) throw new Error(`loadModel: could not load ${url}: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }
  return fileBytes(source, 'loadModel', "an ArrayBuffer, a Uint8Array, or a URL of a .safetensors model file; or a Hugging Face checkpoint: an object of its files ({ 'config.json': …, 'model.safetensors': … }) or its folder's URL ending in /");
}

/**
 * Loads a model. A Hugging Face checkpoint — an object of its files by name (`config.json`, `model.safetensors` or
 * the shards and `model.safetensors.index.json`, optionally `tokenizer.json` and `tokenizer_config.json`), or the
 * URL of its folder (ending in `/`) — gives a PretrainedLanguageModel or an EncoderModel (pretrained.js). One of
 * our own .safetensors files gives a LanguageModel or a Seq2SeqModel, per the file's `kind`. Files are read by the
 * C++ core as hostile input: a malformed file is a TypeError or RangeError naming the file, the field and the value,
 * and a failed or cancelled load frees everything it allocated before it throws.
 * @param {ArrayBuffer | Uint8Array | string | URL | Record<string, ArrayBuffer | Uint8Array | Blob | string | URL>} source
 * @param {{ onProgress?: (progress: { loaded: number, total: number, file: string }) => void, signal?: AbortSignal }} [options]
 * @returns {Promise<LanguageModel | Seq2SeqModel | import('./pretrained.js').PretrainedLanguageModel | import('./pretrained.js').EncoderModel>}
 */
export async function loadModel(source, options) {
  const caller = 'loadModel';
  module(caller);
  if (isFolderUrl(source) || isFileObject(source)) return loadPretrained(source, options, pretrainedLoader(caller), caller);
  const { signal } = loadOptions(options, caller);
  signal?.throwIfAborted();
  const bytes = await readBytes(source);
  signal?.throwIfAborted();
  const handle = call(caller, (wasm) => new wasm._Model());
  let info;
  try {
    info = readInHeap(bytes, caller, (wasm, address) => handle.load(address, bytes.length));
  } catch (error) {
    if (!isBroken()) handle.delete(); // synchronously: a failed load leaves nothing for the garbage collector
    throw error;
  }
  const header = modelHeader(info);
  if (otherKinds.has(info.kind)) return otherKinds.get(info.kind)(handle, header);
  return info.kind === 'decoder_lm' ? new LanguageModel(handle, header) : new Seq2SeqModel(handle, header);
}

// Kinds whose classes live in their own modules (rnn-model.js), which register here: no import cycle.
const otherKinds = new Map();
export const registerModelKind = (kind, make) => otherKinds.set(kind, make);

export class Model {
  #handle;

  constructor(handle, header) {
    /** The file's description: config, vocab, tensors, named heads, training record (names: model-header.js). */
    this.header = header;
    this.config = header.config;
    this.vocab = header.vocab;
    /** Heads named from their measured behaviour, e.g. `{ layer: 2, head: 3, name: 'first token', ... }`. */
    this.namedHeads = header.namedHeads;
    this.training = header.training;
    this.#handle = new OwnedHandle(this, handle, 'this model was disposed; load it again');
  }

  /** @protected */
  call(caller, method, ...args) {
    const handle = this.#handle.get(caller);
    return call(caller, () => handle[method](...args));
  }

  /** @protected */
  alive(caller) {
    this.#handle.get(caller);
  }

  /** Frees the model's WebAssembly memory. Idempotent. */
  dispose() {
    this.#handle.dispose();
  }

  [disposeSymbol]() {
    this.dispose();
  }
}

/**
 * Token ids given as an array (or Int32Array) of numbers, passed on as they are: the core checks their count and
 * range against the model and names this call's argument (state_dict_model.cpp `check_tokens`).
 */
export function tokenIds(input, name, what = 'text or an array of token ids') {
  if (!Array.isArray(input) && !(input instanceof Int32Array)) throw new TypeError(`${name}: expected ${what}, got ${describe(input)}`);
  const ids = Array.from(input);
  ids.forEach((id, i) => {
    if (typeof id !== 'number') throw new TypeError(`${name}[${i}]: expected a token id (a whole number), got ${describe(id)}`);
  });
  return ids;
}

/** A character-level decoder-only language model (kind `decoder_lm`). */
export class LanguageModel extends Model {
  #ids;

  constructor(handle, header) {
    super(handle, header);
    this.kind = 'decoder_lm';
    this.#ids = new Map(header.vocab.tokens.map((token, id) => [token, id]).slice(header.vocab.specials.length));
  }

  /**
   * Text → token ids: `<bos>` then one id per code point (unknown characters → `<unk>`); keeps the last
   * `config.maxLen` tokens. Returns the ids and the token strings.
   */
  tokenize(text) {
    if (typeof text !== 'string') throw new TypeError(`LanguageModel.tokenize: text: expected a string, got ${describe(text)}`);
    const { bosId: bos, unkId: unk, tokens } = this.vocab;
    const ids = [bos, ...Array.from(text, (ch) => this.#ids.get(ch) ?? unk)].slice(-this.config.maxLen);
    return { ids, tokens: ids.map((id) => tokens[id]) };
  }

  /** Token ids → text (specials dropped). Ids must be whole numbers in [0, config.vocabSize). */
  detokenize(ids) {
    const name = 'LanguageModel.detokenize: ids';
    if (!Array.isArray(ids) && !(ids instanceof Int32Array)) throw new TypeError(`${name}: expected an array of token ids, got ${describe(ids)}`);
    const specials = this.vocab.specials.length;
    return Array.from(ids, (id, i) => {
      if (typeof id !== 'number') throw new TypeError(`${name}[${i}]: expected a token id (a whole number), got ${describe(id)}`);
      if (!Number.isInteger(id) || id < 0 || id >= this.config.vocabSize) throw new RangeError(`${name}[${i}]: expected a token id from 0 to ${this.config.vocabSize - 1}, got ${id}`);
      return id >= specials ? this.vocab.tokens[id] : '';
    }).join('');
  }

  #input(input, caller) {
    this.alive(caller);
    return typeof input === 'string' ? this.tokenize(input).ids : tokenIds(input, `${caller}: tokens`);
  }

  #ablation(ablate, caller) {
    return headLists(ablate, `${caller}: options.ablate`, ['self']).self;
  }

  /**
   * Logits of every position and every layer's attention weights. `ablate: [{ layer, head }]` switches heads
   * off (their output is zeroed before the output projection; their weights are still returned).
   * @returns {{ ids: number[], tokens: string[], logits: Tensor, attention: Tensor | null }} logits `[T, vocab]`,
   *   attention `[layers, heads, T, T]`
   */
  forward(input, options) {
    const caller = 'LanguageModel.forward';
    const ids = this.#input(input, caller);
    const opts = checkOptions(options, ['needAttention', 'ablate'], `${caller}: options`);
    const needAttention = booleanOption(opts.needAttention, `${caller}: options.needAttention`, true);
    const ablate = this.#ablation(opts.ablate, caller);
    const result = this.call(caller, 'lmForward', ids, needAttention, ablate);
    return { ids, tokens: ids.map((id) => this.vocab.tokens[id]), logits: result.logits, attention: result.attention };
  }

  /**
   * One head at one query of one layer, recorded by the core's own forward pass (the numbers of forward() with
   * attention; its weights row bit for bit): the layer's input, its LayerNorm, q, k and v of the head, the scores,
   * the weights, the context, the head's output and the attention's output. The core checks `layer`, `head` and
   * `query` against the model.
   */
  trace(input, options) {
    const caller = 'LanguageModel.trace';
    if (options === undefined) throw new TypeError(`${caller}: options: expected { layer, head, query }, got undefined`);
    const ids = this.#input(input, caller);
    const opts = checkOptions(options, ['layer', 'head', 'query', 'ablate'], `${caller}: options`);
    const index = (key) => numberOption(opts[key], `${caller}: options.${key}`);
    const ablate = this.#ablation(opts.ablate, caller);
    const result = this.call(caller, 'trace', { tokens: ids, ablate }, index('layer'), index('head'), index('query'));
    return { ids, tokens: ids.map((id) => this.vocab.tokens[id]), ...result };
  }

  /**
   * Greedy continuation (key/value cache in the core); stops at `<bos>` (end of document) or `config.maxLen`.
   * `ablate: [{ layer, head }]` switches heads off at every step.
   */
  generate(prompt, options) {
    const caller = 'LanguageModel.generate';
    const ids = this.#input(prompt, caller);
    const opts = checkOptions(options, ['maxNewTokens', 'ablate'], `${caller}: options`);
    const maxNewTokens = opts.maxNewTokens === undefined ? 32 : integerOption(opts.maxNewTokens, `${caller}: options.maxNewTokens`, { min: 0 });
    const ablate = this.#ablation(opts.ablate, caller);
    const generated = this.call(caller, 'lmGenerate', ids, maxNewTokens, this.vocab.bosId, ablate);
    return { ids: generated, text: this.detokenize(generated) };
  }
}

/** words_ascii_lower (tools/MODEL_FORMAT.md): the source tokeniser of both encoder–decoder kinds. */
export function sourceWords(text, sourceIds, { sourcePadId: pad, sourceUnkId: unk }, maxSourceLen) {
  const allWords = text.replace(/[A-Z]/g, (c) => c.toLowerCase()).split(/[^a-z0-9]+/).filter(Boolean);
  const words = allWords.slice(0, maxSourceLen);
  const ids = words.map((w) => {
    const id = sourceIds.get(w);
    return id === undefined || id === pad || id === unk ? unk : id;
  });
  return { ids, tokens: words, wordCount: allWords.length };
}

/**
 * A model whose source is text in words (kinds `seq2seq` and `rnn_seq2seq`, the dates models): the source
 * vocabulary and its tokeniser, shared by Seq2SeqModel and RnnSeq2SeqModel.
 */
export class WordSourceModel extends Model {
  #sourceIds;
  #className;

  constructor(handle, header, className) {
    super(handle, header);
    this.#className = className;
    this.#sourceIds = new Map(header.vocab.sourceTokens.map((token, id) => [token, id]));
  }

  /**
   * Source text → word ids: ASCII lower case, split on anything but a–z and 0–9, at most `config.maxSourceLen` words.
   * `wordCount` is the number of words before that cut.
   */
  tokenizeSource(text) {
    if (typeof text !== 'string') throw new TypeError(`${this.#className}.tokenizeSource: text: expected a string, got ${describe(text)}`);
    return sourceWords(text, this.#sourceIds, this.vocab, this.config.maxSourceLen);
  }

  /** @internal The source ids of text or of ids as given, for the subclasses' calls. */
  sourceIdsOf(input, caller) {
    this.alive(caller);
    if (typeof input !== 'string') return tokenIds(input, `${caller}: source`);
    const { ids } = this.tokenizeSource(input);
    if (ids.length === 0) throw new RangeError(`${caller}: source: expected at least one word, got none`);
    return ids;
  }
}

/** An encoder–decoder model (kind `seq2seq`), e.g. dates in words → YYYY-MM-DD. */
export class Seq2SeqModel extends WordSourceModel {
  constructor(handle, header) {
    super(handle, header, 'Seq2SeqModel');
    this.kind = 'seq2seq';
  }

  // The heads per kind of attention; entries name theirs as namedHeads do (attn: 'enc_self', …).
  #ablation(ablate, caller) {
    const lists = headLists(ablate, `${caller}: options.ablate`, ['enc_self', 'dec_self', 'dec_cross']);
    return { encoderSelf: lists.enc_self, decoderSelf: lists.dec_self, decoderCross: lists.dec_cross };
  }

  /**
   * Greedy translation, step by step with key/value caches. `crossAttention` row t shows which source words
   * output token t read: `[decoderLayers, heads, outputTokens, sourceWords]`.
   * `ablate: [{ attn: 'enc_self' | 'dec_self' | 'dec_cross', layer, head }]` switches heads off at every step.
   */
  translate(source, options) {
    const caller = 'Seq2SeqModel.translate';
    const ids = this.sourceIdsOf(source, caller);
    const opts = checkOptions(options, ['maxSteps', 'ablate'], `${caller}: options`);
    // Its range and its default are the model's (the binding checks them): JS checks only that it is a number.
    const maxSteps = opts.maxSteps === undefined ? undefined : numberOption(opts.maxSteps, `${caller}: options.maxSteps`);
    const { targetBosId: bos, targetEosId: eos, targetTokens: tokens, sourceTokens } = this.vocab;
    const ablate = this.#ablation(opts.ablate, caller);
    const r = this.call(caller, 'seq2seqTranslate', ids, bos, eos, maxSteps, ablate);
    const output = r.tokens.filter((id) => id !== eos);
    return {
      sourceIds: ids,
      sourceTokens: typeof source === 'string' ? this.tokenizeSource(source).tokens : ids.map((id) => sourceTokens[id]),
      outputIds: r.tokens,
      outputTokens: r.tokens.map((id) => tokens[id]),
      text: output.map((id) => tokens[id]).join(''),
      encoderAttention: r.encoderAttention,
      decoderAttention: r.decoderAttention,
      crossAttention: r.crossAttention,
    };
  }

  /**
   * One head at one query of one layer of `attention` ('encoder', 'decoder' or 'cross'), teacher-forced on
   * `source` and `target` (ids starting with `<bos>`; the encoder reads none) as forward() is, recorded by the
   * core's own pass. `query` is a source position for the encoder, a target position for the decoder's two;
   * cross-attention's `keyInput` is the encoder's output. The core checks the kind, layer, head and query.
   */
  trace(source, options) {
    const caller = 'Seq2SeqModel.trace';
    const names = "'encoder', 'decoder' or 'cross'";
    if (options === undefined) throw new TypeError(`${caller}: options: expected { attention, layer, head, query }, got undefined`);
    const ids = this.sourceIdsOf(source, caller);
    const opts = checkOptions(options, ['target', 'attention', 'layer', 'head', 'query', 'ablate'], `${caller}: options`);
    if (typeof opts.attention !== 'string') throw new TypeError(`${caller}: options.attention: expected ${names}, got ${describe(opts.attention)}`);
    const targetIds = opts.target === undefined ? [] : tokenIds(opts.target, `${caller}: options.target`, 'an array of token ids');
    const index = (key) => numberOption(opts[key], `${caller}: options.${key}`);
    const ablate = this.#ablation(opts.ablate, caller);
    const call = { source: ids, target: targetIds, attention: opts.attention, ablate };
    const result = this.call(caller, 'trace', call, index('layer'), index('head'), index('query'));
    const { sourceTokens, targetTokens } = this.vocab;
    return {
      sourceIds: ids,
      sourceTokens: typeof source === 'string' ? this.tokenizeSource(source).tokens : ids.map((id) => sourceTokens[id]),
      targetIds,
      targetTokens: targetIds.map((id) => targetTokens[id]),
      ...result,
    };
  }

  /**
   * Teacher-forced pass: `target` ids start with `<bos>`. Logits `[T, tgtVocab]` and every attention map.
   * `ablate` as in translate().
   */
  forward(source, target, options) {
    const caller = 'Seq2SeqModel.forward';
    const ids = this.sourceIdsOf(source, caller);
    const targetIds = tokenIds(target, `${caller}: target`, 'an array of token ids');
    const opts = checkOptions(options, ['needAttention', 'ablate'], `${caller}: options`);
    const needAttention = booleanOption(opts.needAttention, `${caller}: options.needAttention`, true);
    const ablate = this.#ablation(opts.ablate, caller);
    return this.call(caller, 'seq2seqForward', ids, targetIds, needAttention, ablate);
  }
}
