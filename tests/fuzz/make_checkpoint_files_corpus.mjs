// Writes the seed corpus of tests/fuzz/checkpoint_files_fuzzer.cpp into tests/fuzz/checkpoint_files_corpus/: the
// fixtures' config.json, index and tokenizer.json (config NUL index NUL tokenizer.json), and issue 32's hostile ones:
// a tiny config naming 10^7 layers, GPT-2 with 10^6, degenerate rotary settings, shard names that are paths, an
// index of many shards.
// Usage: node tests/fuzz/make_checkpoint_files_corpus.mjs
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.join(here, '..', 'fixtures', 'hf');
const out = path.join(here, 'checkpoint_files_corpus');
mkdirSync(out, { recursive: true });

const text = (value) => (typeof value === 'string' || Buffer.isBuffer(value) ? value : JSON.stringify(value));
const seed = (name, config, index = '', tokenizer = '') => writeFileSync(path.join(out, name),
  Buffer.concat([Buffer.from(text(config)), Buffer.from([0]), Buffer.from(text(index)), Buffer.from([0]), Buffer.from(text(tokenizer))]));
const read = (c, f) => readFileSync(path.join(fixtures, c, f));
const json = (c, f) => JSON.parse(read(c, f));

// The tokenizer.json of gpt2-lm is 10 KB: a seed the mutations can cut and grow.
seed('gpt2-lm', read('gpt2-lm', 'config.json'), '', read('gpt2-lm', 'tokenizer.json'));
seed('bert-mlm', read('bert-mlm', 'config.json'));
seed('llama-sharded', read('llama-sharded', 'config.json'), read('llama-sharded', 'model.safetensors.index.json'));
seed('llama-1e7-layers', { model_type: 'llama', hidden_size: 2, intermediate_size: 1, num_attention_heads: 1, num_key_value_heads: 1,
  vocab_size: 2, max_position_embeddings: 2, num_hidden_layers: 1e7 });
seed('gpt2-1e6-layers', { ...json('gpt2-lm', 'config.json'), n_layer: 1e6 });
const llama = json('llama-sharded', 'config.json');
seed('rope-theta-tiny', { ...llama, rope_theta: 1e-300 });
seed('rope-factor-tiny', { ...llama, rope_scaling: { rope_type: 'linear', factor: 1e-300 } });
const index = json('llama-sharded', 'model.safetensors.index.json');
for (const [name, shard] of [['shard-dotdot', '..'], ['shard-dot', '.'], ['shard-path', '../x.safetensors']]) {
  seed(name, llama, { ...index, weight_map: { ...index.weight_map, 'model.norm.weight': shard } });
}
// 2,000 shards (issue 32: 20,000 took 1.2 s when each new name was looked for in a list).
const many = { metadata: {}, weight_map: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`t.${i}`, `model-${i}.safetensors`])) };
seed('index-2000-shards', llama, many);
