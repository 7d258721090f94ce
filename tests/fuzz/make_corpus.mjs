// Writes the seed corpus of tests/fuzz/attention_fuzzer.cpp into tests/fuzz/corpus/: one seed per entry point and
// mode and, for invalid mode, per kind of invalid argument, each followed by deterministic pseudo-random bytes.
// Usage: node tests/fuzz/make_corpus.mjs   (`node scripts/fuzz.mjs --merge` adds what fuzzing found, by SHA-1 name)
//
// Only the first bytes are chosen (entry point, mode, invalid kind: see the layout at the top of the harness);
// the harness decodes any bytes into a complete case, so the random rest gives sizes, options and values.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../random.js';

const out = path.join(path.dirname(fileURLToPath(import.meta.url)), 'corpus');

const entries = ['mha_raw', 'mha_views', 'mha_self_view', 'sdpa', 'state_dict', 'mha_cache'];
const modes = { valid: 0, invalid: 11, nonfinite: 14 };
// Invalid kinds per entry point, in the harness's enum order.
const mhaMutations = ['embed_zero', 'heads_zero', 'not_divisible', 'huge_config', 'zero_size', 'kpm_shape', 'am_shape', 'huge_dims', 'null_pointer', 'tensor_shape'];
const mutations = {
  mha_raw: mhaMutations,
  mha_views: mhaMutations,
  mha_self_view: mhaMutations,
  mha_cache: mhaMutations,
  sdpa: ['rank', 'zero_size', 'leading_dims', 'depth', 'value_len', 'mask_shape', 'huge', 'null_pointer'],
  state_dict: ['missing_key', 'extra_key', 'wrong_shape', 'null_data', 'unknown_key_shape'],
};

// mulberry32: the same bytes on every run (the top 8 of each 32 random bits: exact, as the floats are k·2⁻³²).
function bytes(seed, n) {
  const rng = mulberry32(seed);
  return Uint8Array.from({ length: n }, () => Math.floor(rng() * 256));
}

const seeds = new Map();
let seed = 1;
const add = (name, head, tailLength) => {
  const tail = bytes(seed++, tailLength);
  seeds.set(name, Uint8Array.from([...head, ...tail]));
};

entries.forEach((entry, e) => {
  for (let variant = 0; variant < 3; variant++) add(`${entry}-valid-${variant}`, [e, modes.valid + variant], 48 + 48 * variant);
  add(`${entry}-nonfinite`, [e, modes.nonfinite], 96);
  mutations[entry].forEach((mutation, m) => add(`${entry}-invalid-${mutation}`, [e, modes.invalid, m], 32));
});

// Only the named seeds are (re)written: the files `fuzz.mjs --merge` added (named by their SHA-1) stay.
mkdirSync(out, { recursive: true });
for (const [name, data] of seeds) writeFileSync(path.join(out, name), data);
console.log(`wrote ${seeds.size} seeds to ${path.relative(process.cwd(), out) || '.'}`);
