// Trained models (tools/MODEL_FORMAT.md): loading *.attnscope files, tokenising, and running them with every
// attention map returned. The transformer itself runs in the C++ core (DecoderLM, Seq2Seq).
import { check, describe, leakGuard, module, nodeFs, reserve } from './runtime.js';

const disposeSymbol = Symbol.dispose ?? Symbol.for('nodejs.dispose');
const MAGIC = 'ATTNSCP1';

async function readBytes(source) {
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  if (typeof source === 'string' || source instanceof URL) {
    const base = typeof document === 'object' ? document.baseURI : undefined;
    const url = new URL(String(source), base ?? `file://${typeof process === 'object' ? process.cwd() : ''}/`);
    const fs = url.protocol === 'file:' ? nodeFs() : undefined; // in Node; a browser fetches even file: URLs
    if (fs) return new Uint8Array(await fs.readFile(url));
    const response = await fetch(url);
    if (!response.ok) throw new Error(`loadModel: could not load ${url}: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }
  throw new TypeError(`loadModel: expected an ArrayBuffer, a Uint8Array, or a URL of an .attnscope file, got ${describe(source)}`);
}

/** Splits a model file into its JSON header and its float32 data section (tools/MODEL_FORMAT.md). */
export function parseModelFile(bytes) {
  const caller = 'loadModel';
  const magic = String.fromCharCode(...bytes.subarray(0, 8));
  if (bytes.length < 12 || magic !== MAGIC) {
    throw new RangeError(`${caller}: not an attnscope model file (expected the magic ${MAGIC}, got ${JSON.stringify(magic)})`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(8, true);
  if (12 + headerLength > bytes.length) throw new RangeError(`${caller}: the header (${headerLength} bytes) runs past the end of the file (${bytes.length} bytes)`);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + headerLength)));
  if (header.format !== 1) throw new RangeError(`${caller}: format ${header.format} is not supported (expected 1)`);
  const dataStart = Math.ceil((12 + headerLength) / 4) * 4;
  const floats = Math.floor((bytes.length - dataStart) / 4);
  for (const t of header.tensors) {
    const size = t.shape.reduce((a, b) => a * b, 1);
    if (t.offset + size > floats) throw new RangeError(`${caller}: tensor '${t.name}' lies outside the data section`);
  }
  // Copy into a fresh, 4-byte aligned buffer: the caller's bytes may start at any offset.
  const data = new Float32Array(floats);
  new Uint8Array(data.buffer).set(bytes.subarray(dataStart, dataStart + floats * 4));
  return { header, data };
}

/**
 * Loads a trained model: a decoder-only language model or an encoder–decoder model, per the file's `kind`.
 * @param {ArrayBuffer | Uint8Array | string | URL} source the file's bytes, or where to fetch (read, in Node) them
 * @returns {Promise<LanguageModel | Seq2SeqModel>}
 */
export async function loadModel(source) {
  module('loadModel');
  const { header, data } = parseModelFile(await readBytes(source));
  if (header.kind === 'decoder_lm') return new LanguageModel(header, data);
  if (header.kind === 'seq2seq') return new Seq2SeqModel(header, data);
  throw new RangeError(`loadModel: unknown model kind '${header.kind}' (expected decoder_lm or seq2seq)`);
}

class Model {
  #handle;
  #disposed = false;

  constructor(header, data, create, kind) {
    const wasm = module(`new ${kind}`);
    /** The file's JSON header: config, vocab, tensors, named heads, training record. */
    this.header = header;
    this.config = header.config;
    this.vocab = header.vocab;
    /** Heads named from their measured behaviour, e.g. `{ layer: 2, head: 3, name: 'first token', ... }`. */
    this.namedHeads = header.named_heads ?? [];
    this.training = header.training ?? {};
    const handle = create(wasm);
    if (!handle) check(wasm._lastStatus(), `new ${kind}`);
    this.#handle = handle;
    leakGuard.register(this, [handle], this);
    // The data section holds the tensors back to back: one copy into the heap, then one view per tensor.
    const arena = new wasm._Arena();
    try {
      const [base] = reserve(arena, [data.byteLength], 'loadModel');
      wasm.HEAPF32.set(data, base >>> 2);
      check(handle.loadStateDict(header.tensors.map((t) => [t.name, base + 4 * t.offset, t.shape])), 'loadModel');
    } finally {
      arena.delete();
    }
  }

  /** @protected */
  call(caller, method, ...args) {
    if (this.#disposed) throw new Error(`${caller}: this model was disposed; load it again`);
    const wasm = module(caller);
    const result = this.#handle[method](...args);
    if (result === null) check(wasm._lastStatus(), caller);
    return result;
  }

  /** Frees the model's WebAssembly memory. Idempotent. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    leakGuard.unregister(this);
    this.#handle.delete();
  }

  [disposeSymbol]() {
    this.dispose();
  }
}

function tokenIds(input, name, vocabSize) {
  if (!Array.isArray(input) && !(input instanceof Int32Array)) throw new TypeError(`${name}: expected text or an array of token ids, got ${describe(input)}`);
  const ids = Array.from(input);
  ids.forEach((id, i) => {
    if (!Number.isInteger(id) || id < 0 || id >= vocabSize) throw new RangeError(`${name}[${i}]: expected a token id from 0 to ${vocabSize - 1}, got ${id}`);
  });
  return ids;
}

/** A character-level decoder-only language model (kind `decoder_lm`). */
export class LanguageModel extends Model {
  #ids;

  constructor(header, data) {
    const c = header.config;
    super(header, data, (wasm) => wasm._createDecoderLM(c.vocab_size, c.max_len, c.d_model, c.n_heads, c.d_ff, c.n_layers), 'LanguageModel');
    this.kind = 'decoder_lm';
    this.#ids = new Map(header.vocab.tokens.map((token, id) => [token, id]).slice(header.vocab.specials.length));
  }

  /**
   * Text → token ids: `<bos>` then one id per code point (unknown characters → `<unk>`); keeps the last
   * `max_len` tokens. Returns the ids and the token strings.
   */
  tokenize(text) {
    if (typeof text !== 'string') throw new TypeError(`LanguageModel.tokenize: text: expected a string, got ${describe(text)}`);
    const { bos_id: bos, unk_id: unk, tokens } = this.vocab;
    const ids = [bos, ...Array.from(text, (ch) => this.#ids.get(ch) ?? unk)].slice(-this.config.max_len);
    return { ids, tokens: ids.map((id) => tokens[id]) };
  }

  /** Token ids → text (specials dropped). */
  detokenize(ids) {
    const specials = this.vocab.specials.length;
    return ids.filter((id) => id >= specials).map((id) => this.vocab.tokens[id]).join('');
  }

  #input(input, caller) {
    return typeof input === 'string' ? this.tokenize(input).ids : tokenIds(input, `${caller}: tokens`, this.config.vocab_size);
  }

  /**
   * Logits of every position and every layer's attention weights.
   * @returns {{ ids: number[], tokens: string[], logits: Tensor, attention: Tensor | null }} logits `[T, vocab]`,
   *   attention `[layers, heads, T, T]`
   */
  forward(input, { needAttention = true } = {}) {
    const caller = 'LanguageModel.forward';
    const ids = this.#input(input, caller);
    const result = this.call(caller, 'forward', ids, needAttention);
    return { ids, tokens: ids.map((id) => this.vocab.tokens[id]), logits: result.logits, attention: result.attention };
  }

  /** Greedy continuation (key/value cache in the core); stops at `<bos>` (end of document) or max_len. */
  generate(prompt, { maxNewTokens = 32 } = {}) {
    const caller = 'LanguageModel.generate';
    const ids = this.#input(prompt, caller);
    const generated = this.call(caller, 'generate', ids, maxNewTokens, this.vocab.bos_id);
    return { ids: generated, text: this.detokenize(generated) };
  }
}

/** An encoder–decoder model (kind `seq2seq`), e.g. dates in words → YYYY-MM-DD. */
export class Seq2SeqModel extends Model {
  #sourceIds;

  constructor(header, data) {
    const c = header.config;
    super(header, data, (wasm) => wasm._createSeq2Seq({
      srcVocabSize: c.src_vocab_size, tgtVocabSize: c.tgt_vocab_size, maxSrcLen: c.max_src_len, maxTgtLen: c.max_tgt_len,
      dModel: c.d_model, numHeads: c.n_heads, dFF: c.d_ff, encoderLayers: c.n_enc_layers, decoderLayers: c.n_dec_layers,
    }), 'Seq2SeqModel');
    this.kind = 'seq2seq';
    this.#sourceIds = new Map(header.vocab.src_tokens.map((token, id) => [token, id]));
  }

  /**
   * Source text → word ids: ASCII lower case, split on anything but a–z and 0–9, at most max_src_len words.
   * `wordCount` is the number of words before that cut.
   */
  tokenizeSource(text) {
    if (typeof text !== 'string') throw new TypeError(`Seq2SeqModel.tokenizeSource: text: expected a string, got ${describe(text)}`);
    const { src_pad_id: pad, src_unk_id: unk } = this.vocab;
    const allWords = text.replace(/[A-Z]/g, (c) => c.toLowerCase()).split(/[^a-z0-9]+/).filter(Boolean);
    const words = allWords.slice(0, this.config.max_src_len);
    const ids = words.map((w) => {
      const id = this.#sourceIds.get(w);
      return id === undefined || id === pad || id === unk ? unk : id;
    });
    return { ids, tokens: words, wordCount: allWords.length };
  }

  #source(input, caller) {
    const ids = typeof input === 'string' ? this.tokenizeSource(input).ids : tokenIds(input, `${caller}: source`, this.config.src_vocab_size);
    if (ids.length === 0) throw new RangeError(`${caller}: source: expected at least one word, got none`);
    return ids;
  }

  /**
   * Greedy translation, step by step with key/value caches. `crossAttention` row t shows which source words
   * output token t read: `[decoderLayers, heads, outputTokens, sourceWords]`.
   */
  translate(source, { maxSteps = this.config.max_tgt_len - 1 } = {}) {
    const caller = 'Seq2SeqModel.translate';
    const ids = this.#source(source, caller);
    const { tgt_bos_id: bos, tgt_eos_id: eos, tgt_tokens: tokens, src_tokens: sourceTokens } = this.vocab;
    const r = this.call(caller, 'decode', ids, bos, eos, maxSteps);
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

  /** Teacher-forced pass: `target` ids start with `<bos>`. Logits `[T, tgtVocab]` and every attention map. */
  forward(source, target, { needAttention = true } = {}) {
    const caller = 'Seq2SeqModel.forward';
    const ids = this.#source(source, caller);
    const targetIds = tokenIds(target, `${caller}: target`, this.config.tgt_vocab_size);
    return this.call(caller, 'forward', ids, targetIds, needAttention);
  }
}
