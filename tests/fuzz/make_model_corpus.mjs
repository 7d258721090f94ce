// Writes the seeds of the model fuzzers from tests/fuzz/hostile_models.mjs: tests/fuzz/model_calls_corpus/ (4 option
// bytes, then a model file: see the layout at the top of model_calls_fuzzer.cpp) and the hostile files among
// tests/fuzz/model_reader_corpus/. Usage: node tests/fuzz/make_model_corpus.mjs
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostile } from './hostile_models.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const MAX = 255; // option byte: the model's maximum tokens, or the API's default steps

// [name, options [call, tokens, steps, flags], file]: flags bit 0 need_attention, bit 1 ablate.
const calls = [
  ['tiny-lm-forward', [0, 3, 0, 1], hostile.tinyLm()],
  ['tiny-lm-forward-max-ablate', [0, MAX, 0, 3], hostile.tinyLm()],
  ['tiny-lm-generate', [1, 2, 9, 0], hostile.tinyLm()],
  ['tiny-lm-generate-default', [1, 1, MAX, 2], hostile.tinyLm()],
  ['tiny-tied-lm-forward', [0, 3, 0, 1], hostile.tinyTiedLm()],
  ['tiny-tied-lm-generate-ablate', [1, 2, 9, 2], hostile.tinyTiedLm()],
  ['tiny-seq2seq-forward', [0, 4, 0, 1], hostile.tinySeq2seq()],
  ['tiny-seq2seq-translate', [1, 2, 5, 1], hostile.tinySeq2seq()],
  ['tiny-seq2seq-translate-default-ablate', [1, MAX, MAX, 3], hostile.tinySeq2seq()],
  // Issue #24: translate("a") with default options on the file whose L·H·steps² wraps to 0 in 32 bits.
  ['issue24-seq2seq-wrap-translate-default', [1, 0, MAX, 1], hostile.seq2seqWrap()],
  // Issue #24: max_tgt_len 20001, <eos> at step 1: a default translate stays small.
  ['issue24-seq2seq-long-target-translate-default', [1, 0, MAX, 1], hostile.seq2seqLongTarget()],
  // Issue #24: forward on max_len tokens needs max_len × d_ff floats (without attention, that is the product that wraps).
  ['issue24-wide-mlp-forward-max', [0, MAX, 0, 0], hostile.wideMlp(37838, 113512)],
];
const readerFiles = [
  ['issue24-metadata-bomb.safetensors', hostile.metadataBomb(1 << 18)],
  ['issue24-duplicate-named-heads.safetensors', hostile.duplicateNamedHeads()],
  ['issue24-mistyped-named-heads.safetensors', hostile.mistypedNamedHeads()],
  ['tiny-tied-lm.safetensors', hostile.tinyTiedLm()],  // tie_head: true, no head.weight
];

const write = (folder, name, bytes) => {
  mkdirSync(path.join(here, folder), { recursive: true });
  writeFileSync(path.join(here, folder, name), bytes);
};
for (const [name, options, file] of calls) write('model_calls_corpus', name, Uint8Array.from([...options, ...file]));
for (const [name, file] of readerFiles) write('model_reader_corpus', name, file);
console.log(`wrote ${calls.length} seeds to model_calls_corpus/ and ${readerFiles.length} to model_reader_corpus/`);
