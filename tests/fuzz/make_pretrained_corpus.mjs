// Writes the seed corpus of tests/fuzz/pretrained_fuzzer.cpp into tests/fuzz/pretrained_corpus/: a few Hugging Face
// fixtures (config.json NUL index NUL safetensors file) and configs with fields the loader must refuse.
// Usage: node tests/fuzz/make_pretrained_corpus.mjs
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.join(here, '..', 'fixtures', 'hf');
const out = path.join(here, 'pretrained_corpus');
mkdirSync(out, { recursive: true });

const seed = (name, config, index, file) =>
  writeFileSync(path.join(out, name), Buffer.concat([Buffer.from(config), Buffer.from([0]), Buffer.from(index), Buffer.from([0]), file]));
const read = (c, f) => readFileSync(path.join(fixtures, c, f));

for (const c of ['gpt2-lm', 'bert-mlm', 'llama-gqa', 'llama-bf16', 'qwen3-qknorm']) seed(c, read(c, 'config.json'), '', read(c, 'model.safetensors'));
seed('llama-sharded', read('llama-sharded', 'config.json'), read('llama-sharded', 'model.safetensors.index.json'),
  read('llama-sharded', 'model-00001-of-00002.safetensors'));
const llama = JSON.parse(read('llama-gqa', 'config.json'));
const tiny = read('llama-gqa', 'model.safetensors');
seed('rope-yarn', JSON.stringify({ ...llama, rope_scaling: { rope_type: 'yarn', factor: 4 } }), '', tiny);
seed('llama3', JSON.stringify({ ...llama, rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 16 } }), '', tiny);
seed('qwen2-window', JSON.stringify({ ...llama, model_type: 'qwen2', use_sliding_window: true, sliding_window: 2, max_window_layers: 1 }), '', tiny);
