// Streams a Hugging Face checkpoint into the C++ loader: config.json, the shard index, every weight file's header,
// one allocation, then every file's data in chunks through one reused buffer in WebAssembly memory. Progress and
// cancellation are checked between chunks; a load that fails or is cancelled frees everything it made.
import { CHUNK_BYTES } from './model-files.js';
import { call, describe, isBroken, module, reserve } from './runtime.js';

const INDEX = 'model.safetensors.index.json';

const LOAD_OPTIONS = ['onProgress', 'onPlan', 'planTokens', 'signal', 'allowNonFinite'];

/** `{ onProgress, onPlan, planTokens, signal, allowNonFinite }` of loadModel, type-checked (the core judges planTokens' value). */
export function loadOptions(options, caller) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${caller}: options: expected an options object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!LOAD_OPTIONS.includes(key)) throw new TypeError(`${caller}: options: unknown option '${key}' (expected one of ${LOAD_OPTIONS.join(', ')})`);
  }
  const { onProgress, onPlan, planTokens, signal, allowNonFinite } = options;
  if (allowNonFinite !== undefined && typeof allowNonFinite !== 'boolean') {
    throw new TypeError(`${caller}: options.allowNonFinite: expected true or false, got ${describe(allowNonFinite)}`);
  }
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new TypeError(`${caller}: options.onProgress: expected a function ({ loaded, total, file }) => void, got ${describe(onProgress)}`);
  }
  if (onPlan !== undefined && typeof onPlan !== 'function') {
    throw new TypeError(`${caller}: options.onPlan: expected a function ({ parameters, parameterBytes, workspaceBytes, bytes, … }) => void, got ${describe(onPlan)}`);
  }
  if (planTokens !== undefined && typeof planTokens !== 'number') {
    throw new TypeError(`${caller}: options.planTokens: expected a number of tokens, got ${describe(planTokens)}`);
  }
  const isSignal = typeof AbortSignal === 'function' && signal instanceof AbortSignal;
  if (signal !== undefined && !isSignal) throw new TypeError(`${caller}: options.signal: expected an AbortSignal, got ${describe(signal)}`);
  return { onProgress, onPlan, planTokens, signal, allowNonFinite };
}

/**
 * Bytes copied into WebAssembly memory for the duration of `use(address, size)`; the copy is freed after.
 * HEAPU8 is read after the reservation: memory may have grown.
 */
function inHeap(wasm, bytes, caller, use) {
  const arena = call(caller, (m) => new m._Arena());
  try {
    const [address] = reserve(arena, [Math.max(bytes.length, 1)], caller);
    wasm.HEAPU8.set(bytes, address);
    return use(address, bytes.length);
  } finally {
    if (!isBroken()) arena.delete();
  }
}

/**
 * A chunk buffer in WebAssembly memory: `add(bytes)` copies into it and `flush()` hands the full part to `write`.
 * Reads of a fetch arrive in pieces of any size; gathering them keeps the calls into the core few.
 */
function chunkWriter(wasm, caller, write) {
  const arena = call(caller, (m) => new m._Arena());
  const free = () => isBroken() || arena.delete();
  let address;
  try {
    [address] = reserve(arena, [CHUNK_BYTES], caller);
  } catch (error) {
    free();
    throw error;
  }
  let used = 0;
  return {
    add(bytes) {
      for (let at = 0; at < bytes.length;) {
        const n = Math.min(CHUNK_BYTES - used, bytes.length - at);
        wasm.HEAPU8.set(bytes.subarray(at, at + n), address + used); // HEAPU8 anew each time: write() may grow memory
        used += n;
        at += n;
        if (used === CHUNK_BYTES) this.flush();
      }
    },
    flush() {
      if (used) write(address, used);
      used = 0;
    },
    free,
  };
}

/**
 * Runs the loader protocol over `files` (model-files.js checkpointFiles) and returns `{ handle, tokenizer }`:
 * the loaded model's raw handle and `readTokenizer({ json, config })` of the tokenizer files' texts (null when the
 * checkpoint has none). `createLoader(configText)` gives the raw loader (the binding's, or a test's stand-in); its
 * methods throw the errors the user sees.
 */
export async function streamCheckpoint(files, createLoader, readTokenizer, { onProgress, onPlan, planTokens = 0, signal }, caller) {
  const wasm = module(caller);
  const aborted = () => signal?.throwIfAborted();
  aborted();
  const sources = [];
  let loader = null;
  // Each JSON file's size against the core's limit for it, before its text is copied whole (or into WebAssembly).
  const check = (name) => (bytes, complete) => call(caller, (m) => m._checkFileSize(caller, name, bytes, complete));
  const text = (name, optional = false) => files.text(name, { optional, check: check(name) });
  try {
    loader = createLoader(await text('config.json'));
    // The memory plan from config.json alone (the least it can mean): a model too large is refused here, before
    // its index, tokenizer or headers are read. 0 planTokens: the core's default.
    loader.plan(planTokens);
    aborted();
    const index = await text(INDEX, true);
    aborted();
    if (index !== null) loader.setIndex(index);
    const tokenizerJson = await text('tokenizer.json', true);
    const tokenizerConfig = tokenizerJson === null ? null : await text('tokenizer_config.json', true);
    aborted();
    // Read before any weights: a broken tokenizer.json fails the load before gigabytes are fetched for nothing.
    // The model's vocabulary bounds the tokenizer's entries (an encoder–decoder's larger side; a stand-in may have none).
    const { config } = loader;
    const vocabSize = config?.vocabSize === undefined ? undefined : Math.max(config.vocabSize, config.encoder?.vocabSize ?? 0);
    const tokenizer = tokenizerJson === null ? null : await readTokenizer({ json: tokenizerJson, config: tokenizerConfig, vocabSize });
    aborted();

    // Every header before any data: the core checks all of them against the config before it allocates.
    const names = loader.files();
    for (const name of names) {
      const source = await files.open(name);
      sources.push(source);
      aborted();
      const first = await source.prefix(8);
      const padded = new Uint8Array(8);
      padded.set(first);
      const needed = inHeap(wasm, padded, caller, (address) => loader.neededHeaderBytes(name, address, source.size));
      const header = await source.prefix(needed);
      aborted();
      source.dataStart = inHeap(wasm, header, caller, (address, size) => loader.addHeader(name, address, size, source.size));
      if (names.length > 1) source.release?.();
    }
    const total = sources.reduce((n, s) => n + s.size, 0);
    let loaded = sources.reduce((n, s) => n + s.dataStart, 0);
    // The exact plan, now that the headers say which heads the files hold; refused by the core when it cannot fit.
    const plan = loader.plan(planTokens);
    onPlan?.(plan);
    aborted(); // a handler that aborted on seeing the plan allocates nothing
    loader.allocate(); // the core refuses here, before allocating, what cannot fit

    for (const [i, name] of names.entries()) {
      const source = sources[i];
      let offset = source.dataStart;
      // Progress once per chunk written (4 MiB, and the rest at the end of each file), however the reads arrive.
      const report = () => {
        aborted(); // before each call too: a handler that aborted sees no further call
        onProgress?.({ loaded, total, file: name });
      };
      const writer = chunkWriter(wasm, caller, (address, size) => {
        loader.write(name, offset, address, size);
        offset += size;
        loaded += size;
        report();
      });
      try {
        report();
        for await (const chunk of source.chunks(source.dataStart)) {
          aborted();
          writer.add(chunk);
        }
        writer.flush();
      } finally {
        writer.free();
        source.close();
      }
    }
    aborted();
    const handle = loader.finish();
    return { handle, tokenizer };
  } finally {
    for (const source of sources) source.close();
    loader?.delete();
  }
}
