// Model files crafted as an attacker would (issue #24), shared by the fuzz corpus (make_model_corpus.mjs) and the
// JS tests: config sizes whose products wrap around 32 bits while the tensors stay as small as the config allows,
// a metadata bomb, named heads with duplicate keys. The tensor table is written from tools/MODEL_FORMAT.md here,
// independently of the C++ registry it must match.
import { mulberry32 } from '../random.js';

const layerNorm = (p, d) => [[`${p}.weight`, [d]], [`${p}.bias`, [d]]];
const attention = (p, d) => [[`${p}.in_proj_weight`, [3 * d, d]], [`${p}.in_proj_bias`, [3 * d]],
  [`${p}.out_proj.weight`, [d, d]], [`${p}.out_proj.bias`, [d]]];
const mlp = (p, d, ff) => [[`${p}.mlp.fc1.weight`, [ff, d]], [`${p}.mlp.fc1.bias`, [ff]], [`${p}.mlp.fc2.weight`, [d, ff]], [`${p}.mlp.fc2.bias`, [d]]];
const range = (n) => Array.from({ length: n }, (_, i) => i);

/** [name, shape] of every tensor a config implies, for `kind` 'decoder_lm' or 'seq2seq'. */
export function tensorTable(kind, c) {
  const d = c.d_model;
  if (kind === 'decoder_lm') {
    return [['tok_emb.weight', [c.vocab_size, d]], ['pos_emb.weight', [c.max_len, d]],
      ...range(c.n_layers).flatMap((i) => [...layerNorm(`blocks.${i}.ln1`, d), ...attention(`blocks.${i}.attn`, d),
        ...layerNorm(`blocks.${i}.ln2`, d), ...mlp(`blocks.${i}`, d, c.d_ff)]),
      // tie_head: the head's weight is tok_emb.weight, so the file has no head.weight
      ...layerNorm('ln_f', d), ...(c.tie_head ? [] : [['head.weight', [c.vocab_size, d]]]), ['head.bias', [c.vocab_size]]];
  }
  return [['src_tok_emb.weight', [c.src_vocab_size, d]], ['src_pos_emb.weight', [c.max_src_len, d]],
    ...range(c.n_enc_layers).flatMap((i) => [...layerNorm(`enc_blocks.${i}.ln1`, d), ...attention(`enc_blocks.${i}.attn`, d),
      ...layerNorm(`enc_blocks.${i}.ln2`, d), ...mlp(`enc_blocks.${i}`, d, c.d_ff)]),
    ...layerNorm('enc_ln_f', d), ['tgt_tok_emb.weight', [c.tgt_vocab_size, d]], ['tgt_pos_emb.weight', [c.max_tgt_len, d]],
    ...range(c.n_dec_layers).flatMap((i) => [...layerNorm(`dec_blocks.${i}.ln1`, d), ...attention(`dec_blocks.${i}.self_attn`, d),
      ...layerNorm(`dec_blocks.${i}.ln2`, d), ...attention(`dec_blocks.${i}.cross_attn`, d), ...layerNorm(`dec_blocks.${i}.ln3`, d),
      ...mlp(`dec_blocks.${i}`, d, c.d_ff)]),
    ...layerNorm('dec_ln_f', d), ['head.weight', [c.tgt_vocab_size, d]], ['head.bias', [c.tgt_vocab_size]]];
}

/** A safetensors file: `header` (an object) padded with spaces to 8 bytes, then `data`. */
export function safetensors(header, data = new Uint8Array(0)) {
  const text = new TextEncoder().encode(JSON.stringify(header));
  const length = Math.ceil(text.length / 8) * 8;
  const out = new Uint8Array(8 + length + data.length).fill(0x20, 8, 8 + length);
  new DataView(out.buffer).setBigUint64(0, BigInt(length), true);
  out.set(text, 8);
  out.set(data, 8 + length);
  return out;
}

/**
 * A model file of `kind` for `config` (the file's keys). Tensors are zero, or uniform in ±0.5 from `seed` when it is
 * given, except those in `values` (name → array). `namedHeads` is the metadata's text as written (so it may hold
 * what JSON.stringify cannot, such as a key twice).
 */
export function modelFile(kind, config, { values = {}, seed, namedHeads = '[]' } = {}) {
  const table = tensorTable(kind, config);
  const numel = (shape) => shape.reduce((a, b) => a * b, 1);
  const total = table.reduce((sum, [, shape]) => sum + numel(shape), 0);
  const floats = new Float32Array(total);
  const rng = seed === undefined ? null : mulberry32(seed);
  const header = {};
  let offset = 0;
  for (const [name, shape] of table) {
    const n = numel(shape);
    if (name in values) floats.set(values[name], offset);
    else if (rng) for (let i = 0; i < n; i++) floats[offset + i] = rng() - 0.5;
    header[name] = { dtype: 'F32', shape, data_offsets: [4 * offset, 4 * (offset + n)] };
    offset += n;
  }
  const vocab = kind === 'decoder_lm'
    ? { tokenizer: 'codepoint', tokens: ['<unk>', '<bos>', ...range(config.vocab_size - 2).map((i) => String.fromCodePoint(97 + i))],
        unk_id: 0, bos_id: 1, specials: ['<unk>', '<bos>'] }
    : { src_tokenizer: 'words_ascii_lower', src_tokens: ['<pad>', '<unk>', ...range(config.src_vocab_size - 2).map((i) => `w${i}`)],
        src_pad_id: 0, src_unk_id: 1, tgt_tokenizer: 'chars',
        tgt_tokens: ['<pad>', '<bos>', '<eos>', ...range(config.tgt_vocab_size - 3).map((i) => String.fromCodePoint(97 + i))],
        tgt_pad_id: 0, tgt_bos_id: 1, tgt_eos_id: 2 };
  header.__metadata__ = { format: 'attnscope-model/1', kind, config: JSON.stringify(config), vocab: JSON.stringify(vocab),
    named_heads: namedHeads, training: '{}' };
  return safetensors(header, new Uint8Array(floats.buffer));
}

const tinySeq2seq = { src_vocab_size: 2, tgt_vocab_size: 3, max_src_len: 4, d_model: 1, n_heads: 1, d_ff: 1, n_enc_layers: 1 };

/**
 * The cases of issue #24. Each: the file, and what the report said it did before the fix.
 *   seq2seqWrap: max_tgt_len 65537, so translate's default max_steps (max_tgt_len − 1 = 2¹⁶) makes
 *     L·H·steps² = 2³² floats, 0 in 32 bits; head.bias never picks <eos>. The smallest tensors that reach it: d_model 1,
 *     one head, one layer per stack (tgt_pos_emb is the one large tensor, 65537 floats).
 *   seq2seqLongTarget: max_tgt_len 20001 and two decoder layers (3.2 GB of attention for 20000 steps, once allocated
 *     up front), with a head.bias that picks <eos> at the first step.
 *   wideMlp(dFF, maxLen): a language model whose forward on maxLen tokens needs maxLen × d_ff floats of MLP
 *     activations: the report's 2²⁰ + 1 and 4096 (12.6 MB) wrap 32 bits; so do 37838 × 113512, the smallest file
 *     (908 KB) whose count of floats wraps (max_len = 3·d_ff minimises max_len + 3·d_ff, the floats it holds).
 *   metadataBomb(n): a `config` of n bytes of "[0,0,…]", which once cost 16 bytes per JSON node.
 *   duplicateNamedHeads: a named head whose keys appear twice, so C++ (first key) and JSON.parse (last) differ.
 *   mistypedNamedHeads: a named head whose name is an object and whose score is a string.
 */
export const hostile = {
  seq2seqWrap: () => modelFile('seq2seq', { ...tinySeq2seq, max_tgt_len: 65537, n_dec_layers: 1 }, { values: { 'head.bias': [1, 0, 0] } }),
  seq2seqLongTarget: () => modelFile('seq2seq', { ...tinySeq2seq, max_tgt_len: 20001, n_dec_layers: 2 }, { values: { 'head.bias': [0, 0, 1] } }),
  wideMlp: (dFF, maxLen) => modelFile('decoder_lm', { vocab_size: 2, max_len: maxLen, d_model: 1, n_heads: 1, d_ff: dFF, n_layers: 1 }),
  metadataBomb: (n) => safetensors({ __metadata__: { format: 'attnscope-model/1', kind: 'decoder_lm',
    config: `[${'0,'.repeat(Math.max(0, Math.floor((n - 3) / 2)))}0]`, vocab: '{}' } }),
  duplicateNamedHeads: () => modelFile('decoder_lm', { vocab_size: 4, max_len: 4, d_model: 2, n_heads: 1, d_ff: 2, n_layers: 1 },
    { seed: 3, namedHeads: '[{"layer":0,"head":0,"name":"first","metric":"m","score":1,"layer":999999,"head":-7,"score":"high","name":{}}]' }),
  mistypedNamedHeads: () => modelFile('decoder_lm', { vocab_size: 4, max_len: 4, d_model: 2, n_heads: 1, d_ff: 2, n_layers: 1 },
    { seed: 3, namedHeads: '[{"layer":0,"head":0,"name":{},"metric":"m","score":"high"}]' }),
  // Small well-formed models for the fuzzer to mutate from.
  tinyLm: () => modelFile('decoder_lm', { vocab_size: 6, max_len: 8, d_model: 4, n_heads: 2, d_ff: 8, n_layers: 2 }, { seed: 1 }),
  tinyTiedLm: () => modelFile('decoder_lm', { vocab_size: 6, max_len: 8, d_model: 4, n_heads: 2, d_ff: 8, n_layers: 2, tie_head: true },
    { seed: 4 }),
  tinySeq2seq: () => modelFile('seq2seq', { src_vocab_size: 5, tgt_vocab_size: 6, max_src_len: 6, max_tgt_len: 6, d_model: 4,
    n_heads: 2, d_ff: 8, n_enc_layers: 1, n_dec_layers: 2 }, { seed: 2 }),
};
