// loadModel: one of our .safetensors files, or a Hugging Face checkpoint's files, into the model class its plan calls
// for (a causal LM, an encoder, an encoder–decoder; our GRU models register theirs). Files are read by the C++ core as
// hostile input: a malformed file is a TypeError or RangeError naming the file, the field and the value, and a failed
// or cancelled load frees everything it allocated before it throws.
import { checkpointFiles, isFileObject, isFolderUrl } from './model-files.js';
import { checkpointLoader, modelHandle, rawModel } from './model-binding.js';
import { loadOptions, streamCheckpoint } from './checkpoint-stream.js';
import { modelHeader } from './model-header.js';
import { EncoderModel, LanguageModel } from './model.js';
import { CodepointTokenizer } from './our-tokenizers.js';
import { describe, isBroken, module, nodeFs, userUrlBase } from './runtime.js';
import { fileBytes, readInHeap } from './safetensors.js';
import { Seq2SeqModel } from './seq2seq-model.js';

// The tokenizer reader and its checks (hf-tokenizer.js and the three modules it imports, 50 KB of the 270 KB that
// `import 'attnscope'` read before) load with the first checkpoint that has a tokenizer.json: a cold start does not
// wait for them.
async function loadTokenizer(files, caller) {
  let reader;
  try {
    reader = await import('./hf-tokenizer.js');
  } catch (cause) {
    throw new Error(`${caller}: the tokenizer reader (hf-tokenizer.js, beside attnscope's index.js) could not be loaded: ${cause?.message ?? cause}`, { cause });
  }
  return reader.loadTokenizer(files, caller);
}

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

// Kinds whose classes live in their own modules (rnn-model.js), which register here: no import cycle.
const otherKinds = new Map();
export const registerModelKind = (kind, make) => otherKinds.set(kind, make);

/** The class of a model by what its architecture is: a causal LM, an encoder, an encoder–decoder. */
function classOf(architecture) {
  return architecture.kind === 'seq2seq' ? Seq2SeqModel : architecture.kind === 'encoder' ? EncoderModel : LanguageModel;
}

async function loadFile(source, options, caller) {
  const { signal } = loadOptions(options, caller);
  signal?.throwIfAborted();
  const bytes = await readBytes(source);
  signal?.throwIfAborted();
  const raw = rawModel(caller);
  let info;
  try {
    info = readInHeap(bytes, caller, (wasm, address) => raw.loadFile(address, bytes.length));
  } catch (error) {
    if (!isBroken()) raw.delete(); // synchronously: a failed load leaves nothing for the garbage collector
    throw error;
  }
  const header = modelHeader(info);
  const handle = modelHandle(raw);
  if (otherKinds.has(info.kind)) return otherKinds.get(info.kind)(handle, header);
  const architecture = handle.config(caller);
  const tokenizer = info.kind === 'decoder_lm' ? new CodepointTokenizer(header.vocab, header.config.maxLen) : null;
  return new (classOf(architecture))(handle, { header, tokenizer });
}

async function loadCheckpoint(files, options, caller) {
  const opts = loadOptions(options, caller);
  const checkpoint = checkpointFiles(files, caller, opts.signal);
  const { handle, tokenizer } = await streamCheckpoint(checkpoint, checkpointLoader(caller, opts), (texts) => loadTokenizer(texts, caller), opts, caller);
  try {
    const architecture = handle.config(caller);
    // Text that cannot fit the model's positions (an encoder–decoder's source: its encoder's) is refused before it is tokenized.
    tokenizer?.limitPositions(architecture.encoder?.maxPositions ?? architecture.maxPositions);
    return new (classOf(architecture))(handle, { tokenizer });
  } catch (error) {
    handle.delete();
    throw error;
  }
}

/**
 * Loads a model. A Hugging Face checkpoint — an object of its files by name (`config.json`, `model.safetensors` or
 * the shards and `model.safetensors.index.json`, optionally `tokenizer.json` and `tokenizer_config.json`), or the
 * URL of its folder (ending in `/`) — or one of our own .safetensors files gives a LanguageModel, an EncoderModel or
 * a Seq2SeqModel, as the model's architecture is (our GRU files give a RnnSeq2SeqModel).
 * @param {ArrayBuffer | Uint8Array | string | URL | Record<string, ArrayBuffer | Uint8Array | Blob | string | URL>} source
 * @param {import('./index.js').LoadOptions} [options]
 */
export async function loadModel(source, options) {
  const caller = 'loadModel';
  module(caller);
  if (isFolderUrl(source) || isFileObject(source)) return loadCheckpoint(source, options, caller);
  return loadFile(source, options, caller);
}

/**
 * The Hugging Face families loadModel reads, from the core's registry (cpp/src/families/registry.cpp): config.json's
 * `model_type` and the name people know each by. After `init()`.
 * @returns {{ modelType: string, label: string }[]}
 */
export function supportedFamilies() {
  return module('supportedFamilies')._families();
}

/** @internal For the tests' stand-ins: a checkpoint through a raw loader of their own. */
export async function loadCheckpointWith(files, options, createLoader, caller = 'loadModel') {
  const opts = loadOptions(options, caller);
  module(caller);
  const checkpoint = checkpointFiles(files, caller, opts.signal);
  const { handle, tokenizer } = await streamCheckpoint(checkpoint, createLoader, (texts) => loadTokenizer(texts, caller), opts, caller);
  try {
    return new (classOf(handle.config(caller)))(handle, { tokenizer });
  } catch (error) {
    handle.delete();
    throw error;
  }
}

