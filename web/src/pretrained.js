// Hugging Face checkpoints as models: PretrainedLanguageModel (gpt2, llama, mistral, qwen2, qwen3) and EncoderModel
// (bert). Inputs are converted to the types the core takes; the core checks every value and size.
import { headLists } from './ablation.js';
import { loadTokenizer } from './hf-tokenizer.js';
import { checkpointFiles } from './model-files.js';
import { loadOptions, streamCheckpoint } from './pretrained-loader.js';
import { disposeSymbol, OwnedHandle } from './owned-handle.js';
import { describe, module } from './runtime.js';
import { booleanOption, checkOptions, integerOption } from './tensor.js';


/** An array (or typed array) of numbers as a plain array; anything else is a TypeError naming `name`. */
function numbers(value, name, what) {
  const ok = Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView));
  if (!ok) throw new TypeError(`${name}: expected ${what}, got ${describe(value)}`);
  const array = Array.from(value);
  array.forEach((x, i) => {
    if (typeof x !== 'number') throw new TypeError(`${name}[${i}]: expected a number, got ${describe(x)}`);
  });
  return array;
}

/** options.ablation: a string (the core says which ones it knows); 'zero' by default. */
function ablationKind(value, name) {
  if (value === undefined) return 'zero';
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

class PretrainedModel {
  #handle;
  #tokenizer;
  #className;
  #inputOptions;

  /**
   * @param {any} handle the loaded model's raw handle
   * @param {import('./hf-tokenizer.js').CheckpointTokenizer | null} tokenizer
   * @param {string} className the name errors start with (not constructor.name, which minifiers rename)
   * @param {string[]} inputOptions the options of forward() and trace() about the input (tokenTypeIds: BERT only)
   */
  constructor(handle, tokenizer, className, inputOptions) {
    this.#className = className;
    this.#inputOptions = inputOptions;
    this.#handle = new OwnedHandle(this, handle, 'this model was disposed; load it again');
    this.#tokenizer = tokenizer;
    /** The architecture as the core read it from config.json (camelCase; see index.d.ts PretrainedConfig). */
    this.config = Object.freeze(handle.config());
    tokenizer?.limitPositions(this.config.maxPositions); // text that cannot fit these positions is refused before it is tokenized
    /** Bytes the parameters take in WebAssembly memory (F32, as the kernels hold them). */
    this.parameterBytes = handle.parameterBytes();
  }

  /** True when the checkpoint came with tokenizer.json, so that text can be passed where ids are taken. */
  get hasTokenizer() {
    return this.#tokenizer !== null;
  }

  /** @protected */
  handle(caller) {
    const handle = this.#handle.get(caller);
    module(caller);
    return handle;
  }

  /** @protected */
  tokenizer(caller) {
    this.handle(caller);
    if (!this.#tokenizer) throw new TypeError(`${caller}: this checkpoint came without tokenizer.json, so it takes token ids, not text (or load it with its tokenizer.json)`);
    return this.#tokenizer;
  }

  /**
   * Text → `{ ids, tokens }`: ids with the special tokens the tokenizer's post-processor adds, and each token as
   * people read it (spaces shown as ␣, newlines as ↵, tabs as ⇥, a part of a UTF-8 character as its bytes `<0xE4>`).
   */
  tokenize(text) {
    const caller = `${this.#className}.tokenize`;
    const tokenizer = this.tokenizer(caller);
    const { ids } = tokenizer.encode(text, undefined, caller);
    return { ids, tokens: ids.map((id) => tokenizer.readable(id)) };
  }

  /** Ids → text, special tokens left out. */
  detokenize(ids) {
    const caller = `${this.#className}.detokenize`;
    return this.tokenizer(caller).decode(numbers(ids, `${caller}: ids`, 'an array of token ids'));
  }

  /** Readable token strings of `ids` (as tokenize() shows them), or null without a tokenizer. */
  tokenStrings(ids) {
    this.handle(`${this.#className}.tokenStrings`);
    return this.#tokenizer ? Array.from(ids, (id) => this.#tokenizer.readable(id)) : null;
  }

  /** @protected The request of forward() and trace(): ids and options converted, nothing judged but types. */
  request(input, options, caller, known) {
    const handle = this.handle(caller);
    const opts = checkOptions(options, known, `${caller}: options`);
    const ids = typeof input === 'string'
      ? this.tokenizer(caller).encode(input, undefined, caller).ids
      : numbers(input, `${caller}: input`, 'text or an array of token ids');
    const mask = (key, what) => (opts[key] === undefined ? [] : numbers(opts[key], `${caller}: options.${key}`, what));
    return {
      handle,
      ids,
      opts,
      request: {
        tokens: ids,
        attentionMask: mask('attentionMask', 'an array of 1 (a real token) and 0 (padding), one per token'),
        tokenTypeIds: mask('tokenTypeIds', 'an array of token type ids (0 = sentence A, 1 = sentence B), one per token'),
        needAttention: booleanOption(opts.needAttention, `${caller}: options.needAttention`, true),
        ablate: this.ablation(opts.ablate, caller),
        ablation: ablationKind(opts.ablation, `${caller}: options.ablation`),
        keepHeads: booleanOption(opts.keepHeads, `${caller}: options.keepHeads`, false),
        patch: headLists(opts.patch, `${caller}: options.patch`, ['self']).self,
        patchFrom: keptHeads(opts.patchFrom, `${caller}: options.patchFrom`),
      },
    };
  }

  /** @protected `ablate: [{ layer, head }]` → the heads as the binding takes them (it checks their range). */
  ablation(ablate, caller) {
    return headLists(ablate, `${caller}: options.ablate`, ['self']).self;
  }

  /**
   * Logits, the last hidden state and every layer's attention of `input` (text, tokenized; or ids, used as given).
   * The classes' declarations (pretrained.d.ts) say which options each takes.
   */
  forward(input, options) {
    const caller = `${this.#className}.forward`;
    const { handle, ids, request } = this.request(input, options, caller, ['needAttention', 'keepHeads', ...this.#inputOptions]);
    const { logits, hidden, attention, heads } = handle.forward(request, caller);
    return { ids, tokens: this.tokenStrings(ids), logits, hidden, attention, heads };
  }

  /**
   * What one head did for one query in one layer, recorded by the forward pass itself: the layer's input, q, k, v
   * before and after RoPE/QK-norm, the scores, the visible keys, the weights, the context and the head's output.
   */
  trace(input, options) {
    const caller = `${this.#className}.trace`;
    const known = ['layer', 'head', 'query', ...this.#inputOptions];
    if (options === undefined) throw new TypeError(`${caller}: options: expected { layer, head, query }, got undefined`);
    const { handle, ids, opts, request } = this.request(input, options, caller, known);
    // Whole numbers from 0 up; the core knows the model's ranges and says which one a value is outside.
    const index = (key) => integerOption(opts[key], `${caller}: options.${key}`, { min: 0 });
    return { ids, tokens: this.tokenStrings(ids), ...handle.trace(request, index('layer'), index('head'), index('query'), caller) };
  }

  /** Frees the model's WebAssembly memory. Idempotent. */
  dispose() {
    this.#handle.dispose();
  }

  [disposeSymbol]() {
    this.dispose();
  }
}

/** A causal language model read from a Hugging Face checkpoint (gpt2, llama, mistral, qwen2, qwen3). */
export class PretrainedLanguageModel extends PretrainedModel {
  #stop;

  constructor(handle, tokenizer) {
    super(handle, tokenizer, 'PretrainedLanguageModel', ['attentionMask', 'ablate', 'ablation', 'patch', 'patchFrom']);
    this.kind = 'causal_lm';
    this.#stop = tokenizer?.eosTokenId ?? null;
  }

  /** The token generate() stops after by default: tokenizer_config.json's `eos_token`, or null. */
  get eosTokenId() {
    return this.#stop;
  }


  /**
   * Greedy continuation with the core's key/value cache. Stops after `stopToken` (default: {@link eosTokenId};
   * null: never), after `maxNewTokens` (default 32) or at `config.maxPositions`. Returns only the new tokens.
   */
  generate(prompt, options) {
    const caller = 'PretrainedLanguageModel.generate';
    const handle = this.handle(caller);
    const ids = typeof prompt === 'string' ? this.tokenize(prompt).ids : numbers(prompt, `${caller}: prompt`, 'text or an array of token ids');
    const opts = checkOptions(options, ['maxNewTokens', 'stopToken', 'ablate'], `${caller}: options`);
    const maxNewTokens = opts.maxNewTokens === undefined ? 32 : integerOption(opts.maxNewTokens, `${caller}: options.maxNewTokens`, { min: 0 });
    const stop = opts.stopToken === undefined ? this.#stop : opts.stopToken;
    if (stop !== null && typeof stop !== 'number') throw new TypeError(`${caller}: options.stopToken: expected a token id or null, got ${describe(stop)}`);
    const generated = handle.generate(ids, maxNewTokens, stop ?? -1, this.ablation(opts.ablate, caller), caller);
    const tokenizer = this.hasTokenizer ? this.tokenizer(caller) : null;
    return { ids: generated, tokens: this.tokenStrings(generated), text: tokenizer ? tokenizer.decode(generated) : null };
  }
}

/** A BERT encoder read from a Hugging Face checkpoint: every token sees every other, padding aside. */
export class EncoderModel extends PretrainedModel {
  constructor(handle, tokenizer) {
    super(handle, tokenizer, 'EncoderModel', ['attentionMask', 'tokenTypeIds', 'ablate', 'ablation', 'patch', 'patchFrom']);
    this.kind = 'encoder';
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

/**
 * Loads a checkpoint from `files` (an object of named files or a folder URL) with the raw loader `createLoader`
 * makes from config.json's text; the model class follows the config's family.
 */
export async function loadPretrained(files, options, createLoader, caller = 'loadModel') {
  const opts = loadOptions(options, caller);
  module(caller);
  const checkpoint = checkpointFiles(files, caller, opts.signal);
  const { handle, tokenizer } = await streamCheckpoint(checkpoint, createLoader, (texts) => loadTokenizer(texts, caller), opts, caller);
  try {
    return handle.config().family === 'bert' ? new EncoderModel(handle, tokenizer) : new PretrainedLanguageModel(handle, tokenizer);
  } catch (error) {
    handle.delete();
    throw error;
  }
}
