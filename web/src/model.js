// Every transformer, ours and Hugging Face's alike: LanguageModel (causal), EncoderModel (bidirectional, with a
// masked-LM head) and, in seq2seq-model.js, Seq2SeqModel, over one raw model of the binding. Inputs are converted to
// the types the core takes; the core checks every value and size, and its messages name the call and the option.
import { headLists } from './ablation.js';
import { circuitNorms, headCircuits } from './circuits.js';
import { ForwardCache, forwardThrough } from './forward-cache.js';
import { disposeSymbol, OwnedHandle } from './owned-handle.js';
import { describe, module } from './runtime.js';
import { booleanOption, checkOptions, integerOption, outBuffers, wholeIds } from './tensor.js';

/** logitLens's `layers`: [start, end], two numbers (the core checks that they are whole and within the lens's rows). */
function lensRows(value, name) {
  if (!Array.isArray(value) || value.length !== 2) throw new TypeError(`${name}: expected [start, end], two whole numbers, got ${describe(value)}`);
  for (let i = 0; i < 2; i++) {  // a hole is undefined here (forEach would skip it)
    if (typeof value[i] !== 'number') throw new TypeError(`${name}[${i}]: expected a whole number, got ${describe(value[i])}`);
  }
  return [value[0], value[1]];
}

/** An array (or typed array) of numbers as a plain array; anything else is a TypeError naming `name`. */
export function numbers(value, name, what, entry = 'a token id (a whole number)') {
  const ok = Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView));
  if (!ok) throw new TypeError(`${name}: expected ${what}, got ${describe(value)}`);
  // A typed array whose buffer was transferred (postMessage, structuredClone) cannot be read; Array.from would throw
  // the engine's message, without the call.
  if (ArrayBuffer.isView(value) && value.buffer.byteLength === 0 && value.byteOffset === 0 && isDetached(value)) {
    throw new TypeError(`${name}: expected ${what}, got a typed array (${value.constructor.name}) whose buffer was transferred (detached)`);
  }
  const array = Array.from(value);
  array.forEach((x, i) => {
    if (typeof x !== 'number') throw new TypeError(`${name}[${i}]: expected ${entry}, got ${describe(x)}`);
  });
  return array;
}

/** Whether typed array `view`'s buffer is detached: reading it throws (an empty one reads as []). */
function isDetached(view) {
  try {
    view.values();
    return false;
  } catch {
    return true;
  }
}

/**
 * Patched positions: an array of numbers, not empty (leaving the option out patches every position, and an empty
 * list must not silently mean the same); the core checks their range.
 */
function positions(value, name) {
  const list = numbers(value, name, 'an array of positions (0 to the input length − 1)', 'a position (a whole number)');
  if (list.length === 0) throw new RangeError(`${name}: expected at least one position (leave it out to patch every position), got none`);
  return list;
}

/** Token ids given as an array (or Int32Array) of numbers, passed on as they are: the core checks their count and range. */
export const tokenIds = (input, name, what = 'text or an array of token ids') => numbers(input, name, what);

/** options.ablation: a string (the core says which ones it knows). */
function ablationKind(value, name) {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new TypeError(`${name}: expected 'zero' or 'mean', got ${describe(value)}`);
  return value;
}

/** options.patchFrom: a kept run's `heads` ({ data: Float32Array, shape }), passed as it is; the core checks its shape. */
function keptHeads(value, name) {
  if (value === undefined || value === null) return null;
  const what = "a kept run's heads (forward's result.heads with keepHeads: true)";
  if (typeof value !== 'object' || !(value.data instanceof Float32Array) || !Array.isArray(value.shape)) {
    throw new TypeError(`${name}: expected ${what}, got ${describe(value)}`);
  }
  return { data: value.data, shape: numbers(value.shape, `${name}.shape`, 'an array of sizes') };
}

/**
 * A request as the binding takes it: `base` (call, tokens, source, needAttention), and `options` only when one of
 * them is given (false, null and empty head lists are the defaults). Most calls give none, and the binding then reads
 * one field for them all instead of one per option.
 */
export function requestOf(base, options) {
  const given = Object.entries(options).filter(([, v]) => v !== undefined && v !== null && v !== false && !(Array.isArray(v) && v.length === 0));
  return given.length === 0 ? base : { ...base, options: Object.fromEntries(given) };
}

/** The options every model's forward() and trace() take about its input and its heads. */
const INPUT_OPTIONS = ['needAttention', 'keepHeads', 'attentionMask', 'ablate', 'ablation', 'patch', 'patchFrom', 'patchPositions'];

/** What forward() may keep besides the maps, for the research tools (research.js, cache-export.js). */
const KEEP_OPTIONS = ['keepResidual', 'keepQkv', 'valueNorms'];

/** forward()'s options about the logits it returns. */
const LOGIT_OPTIONS = ['logitsToKeep'];

export class Model {
  #handle;
  #tokenizer;

  /**
   * @param {ReturnType<import('./model-binding.js').modelHandle>} handle the loaded model's raw handle
   * @param {{ tokenizer: object | null, className: string, header?: object | null }} parts the tokenizer of its text
   *   (ours, or the checkpoint's tokenizer.json), the name errors start with (not constructor.name, which minifiers
   *   rename), and one of our files' header (config, vocab, named heads, training record)
   */
  constructor(handle, { tokenizer, className, header = null }) {
    this.className = className;
    this.#handle = new OwnedHandle(this, handle, 'this model was disposed; load it again');
    this.#tokenizer = tokenizer;
    /** The same description for every model, as the core read it: family, sizes and parts (model.d.ts ModelArchitecture). */
    this.architecture = Object.freeze(handle.config('loadModel') ?? null);
    /** Bytes the parameters take in WebAssembly memory. */
    this.parameterBytes = handle.parameterBytes();
    if (header) {
      /** Our file's description: config, vocab, tensors, named heads, training record (names: model-header.js). */
      this.header = header;
      this.config = header.config;
      this.vocab = header.vocab;
      /** Heads named from their measured behaviour, e.g. `{ layer: 2, head: 3, name: 'first token', ... }`. */
      this.namedHeads = header.namedHeads;
      this.training = header.training;
    } else {
      /** A checkpoint's config is its architecture (the file's own config.json is read only by the core). */
      this.config = this.architecture;
    }
  }

  /** True when the model can read text (our files always; a checkpoint with its tokenizer.json). */
  get hasTokenizer() {
    return this.#tokenizer !== null;
  }

  /** @protected The raw handle, for `caller`; an Error once disposed. */
  handle(caller) {
    const handle = this.#handle.get(caller);
    module(caller);
    return handle;
  }

  /** @protected The tokenizer, or a TypeError saying why there is none. */
  tokenizer(caller) {
    this.handle(caller);
    if (!this.#tokenizer) throw new TypeError(`${caller}: this checkpoint came without tokenizer.json, so it takes token ids, not text (or load it with its tokenizer.json)`);
    return this.#tokenizer;
  }

  /** Readable token strings of `ids` (as tokenize() shows them), or null without a tokenizer. */
  tokenStrings(ids) {
    const caller = `${this.className}.tokenStrings`;
    this.handle(caller);
    // An array or typed array, as every call takes (NumberList): an array-like could claim any length.
    // An id past the tokenizer's vocabulary reads <id N> (models pad their tables, and a tokenizer may have tokens
    // past the model's); one that is no whole number is no id at all.
    const list = wholeIds(numbers(ids, `${caller}: ids`, 'an array of token ids'), caller);
    return this.#tokenizer ? list.map((id) => this.#tokenizer.readable(id)) : null;
  }

  /**
   * Text → `{ ids, tokens }`: ids with the special tokens the tokenizer adds (our `<bos>`; a post-processor's), and
   * each token as people read it (spaces shown as ␣, newlines as ↵, a part of a UTF-8 character as its bytes `<0xE4>`).
   */
  tokenize(text) {
    const caller = `${this.className}.tokenize`;
    const tokenizer = this.tokenizer(caller);
    const { ids } = tokenizer.encode(text, undefined, caller);
    return { ids, tokens: ids.map((id) => tokenizer.readable(id)) };
  }

  /** Ids → text, special tokens left out. */
  detokenize(ids) {
    const caller = `${this.className}.detokenize`;
    const tokenizer = this.tokenizer(caller);
    return tokenizer.decode(numbers(ids, `${caller}: ids`, 'an array of token ids'), caller);
  }

  /** @protected Text, tokenized, or ids as given. */
  ids(input, caller) {
    return typeof input === 'string' ? this.tokenizer(caller).encode(input, undefined, caller).ids
      : numbers(input, `${caller}: input`, 'text or an array of token ids');
  }

  /** @protected `ablate: [{ layer, head }]` → the heads as the binding takes them (it checks their range). */
  ablation(ablate, caller, name = 'ablate') {
    return headLists(ablate, `${caller}: options.${name}`, ['self']).self;
  }

  /** @protected A request of forward() and trace(): ids and options converted, nothing judged but types. */
  request(input, options, caller, known) {
    const handle = this.handle(caller);
    const opts = checkOptions(options, known, `${caller}: options`);
    const ids = this.ids(input, caller);
    const mask = (key, what) => (opts[key] === undefined ? undefined : numbers(opts[key], `${caller}: options.${key}`, what));
    const needAttention = booleanOption(opts.needAttention, `${caller}: options.needAttention`, true);
    return {
      handle,
      ids,
      opts,
      request: requestOf({ call: caller, tokens: ids, needAttention }, {
        attentionMask: mask('attentionMask', 'an array of 1 (a real token) and 0 (padding), one per token'),
        tokenTypeIds: mask('tokenTypeIds', 'an array of token type ids (0 = sentence A, 1 = sentence B), one per token'),
        ablate: this.ablation(opts.ablate, caller),
        ablation: ablationKind(opts.ablation, `${caller}: options.ablation`),
        keepHeads: booleanOption(opts.keepHeads, `${caller}: options.keepHeads`, false),
        ...Object.fromEntries(KEEP_OPTIONS.map((key) => [key, booleanOption(opts[key], `${caller}: options.${key}`, false)])),
        patch: this.ablation(opts.patch, caller, 'patch'),
        patchFrom: keptHeads(opts.patchFrom, `${caller}: options.patchFrom`),
        patchPositions: opts.patchPositions === undefined ? undefined : positions(opts.patchPositions, `${caller}: options.patchPositions`),
        logitsToKeep: opts.logitsToKeep === undefined ? undefined : integerOption(opts.logitsToKeep, `${caller}: options.logitsToKeep`, { min: 1 }),
      }),
    };
  }

  /** @protected The options forward() and trace() take besides the base ones (an encoder's tokenTypeIds). */
  get inputOptions() {
    return INPUT_OPTIONS;
  }

  /**
   * Logits, the last hidden state and every layer's attention of `input` (text, tokenized; or ids, used as given).
   * `ablate: [{ layer, head }]` switches heads off (their context is replaced, zeros or `ablation: 'mean'`, before the
   * output projection; their weights are still returned); `keepHeads` keeps every head's context for `patch`ing.
   */
  forward(input, options) {
    const caller = `${this.className}.forward`;
    const { handle, ids, opts, request: converted } = this.request(input, options, caller, [...this.inputOptions, ...KEEP_OPTIONS, ...LOGIT_OPTIONS, 'out']);
    // `out.attention`: the maps are copied into the caller's array (the core checks its length against the call).
    const { attention: outAttention } = outBuffers(opts.out, `${caller}: options.out`, ['attention']);
    const request = outAttention ? { ...converted, options: { ...converted.options, outAttention } } : converted;
    const { logits, hidden, attention, heads, residual, residualMid, qkv, valueNorms, cache } = this.pass(handle, request, opts, caller);
    return { ids, tokens: this.tokenStrings(ids), logits, hidden, attention, heads, residual, residualMid, qkv, valueNorms, ...(cache ? { cache } : {}) };
  }

  /** @protected One forward pass of a converted request (LanguageModel's may go through a cache). */
  pass(handle, request) {
    return handle.forward(request);
  }

  /**
   * The logit lens: the residual stream entering every layer and leaving the last, through the final norm and the
   * head, softmaxed; the `k` (default 10) most probable tokens of each layer and position. Row `layers` is the
   * model's own prediction. A LanguageModel also takes `cache`, a ForwardCache: when it holds this input's pass, the
   * stream is read from it and only the head runs (the core decides; another input's cache gives a fresh lens).
   * `layers: [start, end]` computes rows start..end − 1 alone, each with the bits it has in the whole lens.
   */
  logitLens(input, options) {
    const caller = `${this.className}.logitLens`;
    const known = ['k', 'layers', ...this.inputOptions.filter((o) => o !== 'needAttention' && o !== 'keepHeads')];
    const { handle, ids, opts, request } = this.request(input, options, caller, known);
    const k = opts.k === undefined ? 10 : integerOption(opts.k, `${caller}: options.k`, { min: 0 });
    const layers = opts.layers === undefined ? undefined : lensRows(opts.layers, `${caller}: options.layers`);
    const { probabilities, ids: top, fromCache, firstLayer } = handle.logitLens(request, k, this.readCache(opts.cache, handle, caller), layers);
    const [rows, positions] = probabilities.shape;
    const cell = (value, name, from, count) => {
      if (typeof value !== 'number') throw new TypeError(`${caller}: at: ${name}: expected a whole number, got ${describe(value)}`);
      if (!Number.isInteger(value) || value < from || value >= from + count) {
        throw new RangeError(`${caller}: at: ${name}: expected ${from} to ${from + count - 1}, got ${value}`);
      }
    };
    const at = (layer, position) => {
      cell(layer, 'layer', firstLayer, rows);
      cell(position, 'position', 0, positions); // past the row's end, (0, T) once read row 1's first cell
      return Array.from({ length: k }, (_, i) => {
        const index = ((layer - firstLayer) * positions + position) * k + i;
        const id = top[index];
        return { id, token: this.tokenStrings([id])?.[0] ?? null, probability: probabilities.data[index] };
      });
    };
    return { ids, tokens: this.tokenStrings(ids), k, layers: rows, firstLayer, probabilities, topIds: { data: top, shape: probabilities.shape }, fromCache, at };
  }

  /**
   * One head's weight circuits: `qk` = W_Q·W_Kᵀ and `ov` = W_V·W_O, `[hiddenSize, hiddenSize]` (biases and norms
   * left out), their largest singular values, and `kvHead`, the key/value head whose W_K and W_V it reads.
   */
  circuits(layer, head) {
    const caller = `${this.className}.circuits`;
    const handle = this.handle(caller);
    return headCircuits(handle.headWeights(caller, integerOption(layer, `${caller}: layer`, { min: 0 }), integerOption(head, `${caller}: head`, { min: 0 })));
  }

  /** Frobenius norms of every head's QK and OV circuits: `{ qk, ov }`, each `[layers, heads]` (the main stack's). */
  circuitNorms() {
    const caller = `${this.className}.circuitNorms`;
    const handle = this.handle(caller);
    const { layers, heads } = this.architecture;
    return circuitNorms(layers, heads, (l, h) => handle.headWeights(caller, l, h));
  }

  /**
   * What one head did for one query in one layer, recorded by the forward pass itself: the layer's input, q, k, v
   * before and after RoPE/QK-norm, the scores, the visible keys, the weights, the context and the head's output.
   * The core checks `layer`, `head` and `query` against the model.
   */
  trace(input, options) {
    const caller = `${this.className}.trace`;
    if (options === undefined) throw new TypeError(`${caller}: options: expected { layer, head, query }, got undefined`);
    const known = ['layer', 'head', 'query', ...this.inputOptions.filter((o) => !['needAttention', 'keepHeads'].includes(o))];
    const { handle, ids, opts, request } = this.request(input, options, caller, known);
    const index = (key) => integerOption(opts[key], `${caller}: options.${key}`, { min: 0 });
    const cache = this.readCache(opts.cache, handle, caller);
    return { ids, tokens: this.tokenStrings(ids), ...handle.trace(request, 'self', index('layer'), index('head'), index('query'), cache) };
  }

  /** @protected trace()'s and logitLens()'s `cache` as the binding's id (0: none); only a LanguageModel takes one. */
  readCache() {
    return 0;
  }

  /** Frees the model's WebAssembly memory. Idempotent. */
  dispose() {
    this.#handle.dispose();
  }

  [disposeSymbol]() {
    this.dispose();
  }
}

/** A causal language model: ours (`decoder_lm`) or a checkpoint's (every causal family). */
export class LanguageModel extends Model {
  #stop;

  constructor(handle, parts) {
    super(handle, { className: 'LanguageModel', ...parts });
    this.kind = parts.header ? 'decoder_lm' : 'causal_lm';
    this.#stop = parts.tokenizer?.eosTokenId ?? null;
  }

  get inputOptions() {
    return [...super.inputOptions, 'cache'];
  }

  /**
   * trace()'s and logitLens()'s `cache`: a ForwardCache holding this input's pass (from `forward(input, { cache })`)
   * lets the trace start at its layer from the input that pass kept, and the lens read every layer's input from it,
   * the same numbers; the cache is read, not changed.
   */
  readCache(cache, handle, caller) {
    if (cache === undefined) return 0;
    if (!ForwardCache.is(cache)) throw new TypeError(`${caller}: options.cache: expected a result.cache of this model's forward, got ${describe(cache)}`);
    return cache.idFor(caller, handle);
  }

  /** `cache: true` starts a ForwardCache, `cache: result.cache` extends one (forward-cache.js). */
  pass(handle, request, opts, caller) {
    return opts.cache === undefined || opts.cache === false ? handle.forward(request) : forwardThrough(handle, request, opts.cache, caller);
  }

  /**
   * Each head of `patches` patched in turn into `input` from `patchFrom` (at its `positions`, or every position): the
   * last position's logits of every run, `[patches.length, vocab]`, row i bit for bit what `forward(input, { patch:
   * [patches[i]], patchFrom, patchPositions: patches[i].positions, logitsToKeep: 1 })` returns; with `logitIds`, only
   * those tokens' columns, `[patches.length, logitIds.length]`. Through `cache` (a ForwardCache, which then holds
   * input's unpatched pass; else one for this call), each run starts at its layer and position, and the head runs
   * once over every run's last row.
   */
  patchEach(input, options) {
    const caller = `${this.className}.patchEach`;
    const known = ['patches', 'logitIds', ...this.inputOptions.filter((o) => !['needAttention', 'keepHeads', 'patch', 'patchPositions'].includes(o))];
    const { handle, request, opts } = this.request(input, options, caller, known);
    const patches = opts.patches;
    if (!Array.isArray(patches)) throw new TypeError(`${caller}: options.patches: expected an array of { layer, head, positions? }, got ${describe(patches)}`);
    const runs = Array.from(patches, (p, i) => { // every entry: map() would skip a hole, which the binding then read
      const name = `${caller}: options.patches[${i}]`;
      if (typeof p !== 'object' || p === null) throw new TypeError(`${name}: expected { layer, head, positions? }, got ${describe(p)}`);
      checkOptions(p, ['layer', 'head', 'positions'], name);
      return {
        layer: integerOption(p.layer, `${name}.layer`, { min: 0 }),
        head: integerOption(p.head, `${name}.head`, { min: 0 }),
        ...(p.positions === undefined ? {} : { positions: positions(p.positions, `${name}.positions`) }),
      };
    });
    const cache = opts.cache;
    if (cache !== undefined && !ForwardCache.is(cache)) {
      throw new TypeError(`${caller}: options.cache: expected a result.cache of this model's forward, got ${describe(cache)}`);
    }
    const logitIds = opts.logitIds === undefined ? undefined : numbers(opts.logitIds, `${caller}: options.logitIds`, 'an array of token ids');
    const out = handle.patchEach(request, runs, cache === undefined ? 0 : cache.idFor(caller, handle), logitIds);
    if (cache !== undefined) cache.update(out.cache);
    return { logits: out.logits };
  }

  /** The token generate() stops after by default: our `<bos>` (which starts every document), a checkpoint's `eos_token`, or null. */
  get eosTokenId() {
    return this.#stop;
  }

  /**
   * Greedy continuation with the core's key/value cache. Stops after `stopToken` (default: {@link eosTokenId};
   * null: never), after `maxNewTokens` (default 32) or at the model's positions. Returns only the new tokens.
   */
  generate(prompt, options) {
    const caller = `${this.className}.generate`;
    const handle = this.handle(caller);
    const ids = typeof prompt === 'string' ? this.tokenize(prompt).ids : numbers(prompt, `${caller}: prompt`, 'text or an array of token ids');
    const opts = checkOptions(options, ['maxNewTokens', 'stopToken', 'ablate'], `${caller}: options`);
    const maxNewTokens = opts.maxNewTokens === undefined ? 32 : integerOption(opts.maxNewTokens, `${caller}: options.maxNewTokens`, { min: 0 });
    const stop = opts.stopToken === undefined ? this.#stop : opts.stopToken;
    if (stop !== null && typeof stop !== 'number') throw new TypeError(`${caller}: options.stopToken: expected a token id or null, got ${describe(stop)}`);
    const generated = handle.generate(caller, ids, maxNewTokens, stop ?? -1, this.ablation(opts.ablate, caller));
    return { ids: generated, tokens: this.tokenStrings(generated), text: this.hasTokenizer ? this.detokenize(generated) : null };
  }
}

/** A bidirectional encoder: every token sees every other, padding aside; a masked-LM head when it has one. */
export class EncoderModel extends Model {
  constructor(handle, parts) {
    super(handle, { className: 'EncoderModel', ...parts });
    this.kind = 'encoder';
  }

  get inputOptions() {
    return [...super.inputOptions, 'tokenTypeIds'];
  }

  /**
   * Text (and `pair`, the second sentence) → `{ ids, tokens, tokenTypeIds }`, `[CLS] a [SEP] b [SEP]` as the
   * tokenizer's post-processor writes it.
   */
  tokenize(text, options) {
    const caller = 'EncoderModel.tokenize';
    const tokenizer = this.tokenizer(caller);
    const { pair } = checkOptions(options, ['pair'], `${caller}: options`);
    const { ids, tokenTypeIds } = tokenizer.encode(text, pair, caller);
    return { ids, tokens: ids.map((id) => tokenizer.readable(id)), tokenTypeIds };
  }
}
