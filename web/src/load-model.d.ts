// Types of loadModel (load-model.js) and of a checkpoint's files and load options, re-exported by index.d.ts.
import type { EncoderModel, LanguageModel, TrainedLanguageModel } from './model.js';
import type { RnnSeq2SeqModel } from './rnn-model.js';
import type { Seq2SeqModel, TrainedSeq2SeqModel } from './seq2seq-model.js';

/** A file of a checkpoint: its bytes, a Blob or File (read in chunks), or where to fetch it (a URL or URL string). */
export type CheckpointFile = ArrayBuffer | Uint8Array | Blob | string | URL;

/**
 * A checkpoint's files by their Hugging Face names: `config.json`, then `model.safetensors`, or the shards and
 * `model.safetensors.index.json`, and optionally `tokenizer.json` and `tokenizer_config.json`. Other names are
 * ignored, so a whole folder can be passed. The Files of an `<input type="file" multiple>` (an array or a FileList;
 * typed as ArrayLike so that Node projects need no DOM types) are taken by their own names.
 */
export type CheckpointFiles = Record<string, CheckpointFile> | ArrayLike<File>;

/** How far a load is: bytes of the weight files read so far, of `total`, and the file being read. */
export interface LoadProgress {
  loaded: number;
  total: number;
  file: string;
}

/**
 * The memory a load will take, from config.json and the weight files' headers, before anything in proportion to
 * the model is allocated (the C++ core computes it; `loadModel` refuses with a RangeError what does not fit).
 */
export interface LoadPlan {
  /** Floats the parameters take as held (the kernels' panel padding included): about the parameter count. */
  parameters: number;
  /**
   * The parameters' bytes as held: 4 each, 2 for the matrices of a BF16 or F16 checkpoint (kept in 16 bits), every
   * matrix in 16 bits before the headers are read (`exact` false: the least the model can take): `model.parameterBytes`
   * once loaded.
   */
  parameterBytes: number;
  /** The input length the workspace is planned for (`planTokens`, by default 512 or `maxPositions` if fewer). */
  tokens: number;
  /** What one `forward` of `tokens` tokens with every attention map allocates next to the parameters, in bytes. */
  workspaceBytes: number;
  /** `parameterBytes + workspaceBytes`. */
  bytes: number;
  /** What WebAssembly memory had left when the plan was made, in bytes (`bytes` is at most this). */
  availableBytes: number;
  /** True once every header was read (always, for the plan `onPlan` receives). */
  exact: boolean;
}

/** Options of `loadModel` for a checkpoint. */
export interface LoadOptions {
  /** Called after each chunk of the weights (4 MiB or less); an error it throws stops the load. */
  onProgress?: (progress: LoadProgress) => void;
  /**
   * Called once, after every header was read and before the parameters are allocated, with the memory the model
   * will need; an error it throws (or an abort it makes) stops the load before anything is allocated.
   */
  onPlan?: (plan: LoadPlan) => void;
  /**
   * The input length the memory plan makes room for (a whole number, at most `maxPositions`; 0 or absent: 512, or
   * `maxPositions` if fewer). A model whose parameters and one forward pass of this many tokens, every attention
   * map included, do not fit in what WebAssembly memory has left is refused from config.json, before its headers
   * are read, and again, exactly, after them: a RangeError naming the parameter count and the bytes.
   */
  planTokens?: number;
  /** Cancels the load: it rejects with the signal's reason, and frees everything it had allocated. */
  signal?: AbortSignal;
  /**
   * Read tensors holding NaN or infinity instead of refusing them (the default refuses such a checkpoint, naming the
   * tensor and how many values: every map and logit would come out NaN).
   */
  allowNonFinite?: boolean;
}

/**
 * Loads one of our model files (safetensors with attnscope's `__metadata__`, tools/MODEL_FORMAT.md): a
 * {@link LanguageModel} (kind `decoder_lm`), a {@link Seq2SeqModel} (kind `seq2seq`) or a {@link RnnSeq2SeqModel}.
 * `source` is the file's bytes or where to get them (fetched in browsers, read from disk for `file:` URLs and paths in
 * Node). The file is checked completely before the model is built; a malformed file rejects with a TypeError (a field
 * of the wrong JSON type) or a RangeError (a wrong value, size or offset) naming `loadModel`, the field and the value,
 * and frees everything.
 */
export function loadModel(source: ArrayBuffer | Uint8Array, options?: LoadOptions): Promise<TrainedLanguageModel | TrainedSeq2SeqModel | RnnSeq2SeqModel>;
/**
 * Loads a Hugging Face checkpoint (docs/huggingface.md): its files by name, or the URL of its folder (a string or
 * URL ending in `/`; in Node also a folder path), from which `config.json`, `model.safetensors.index.json` (else
 * `model.safetensors`) and the tokenizer files, where they exist, are fetched. Weights stream into WebAssembly
 * memory in chunks. A causal family gives a {@link LanguageModel}, an encoder an {@link EncoderModel}, an
 * encoder–decoder a {@link Seq2SeqModel}. A malformed or unsupported file rejects with a TypeError or RangeError naming
 * `loadModel`, the file and the field; a failed or cancelled load frees everything.
 */
export function loadModel(files: CheckpointFiles | `${string}/`, options?: LoadOptions): Promise<LanguageModel | EncoderModel | Seq2SeqModel>;
/** A URL of one of our model files or of a checkpoint's folder: `kind` tells them apart. */
export function loadModel(source: string | URL, options?: LoadOptions): Promise<TrainedLanguageModel | TrainedSeq2SeqModel | RnnSeq2SeqModel | LanguageModel | EncoderModel | Seq2SeqModel>;

/** The Hugging Face families loadModel reads (the core's registry): config.json's `model_type` and its usual name. After `init()`. */
export function supportedFamilies(): { modelType: string; label: string }[];
