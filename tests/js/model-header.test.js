// A loaded model's config, vocab and header under the API's camelCase names, checked against the file's own
// snake_case metadata (read here by hand, tools/MODEL_FORMAT.md); and the old snake_case names, deprecated aliases
// until the next major version, reading and writing the same values without showing up in keys or JSON.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadModel } from 'attnscope';
import { hostile } from '../fuzz/hostile_models.mjs';

const modelPath = (name) => new URL(`../../models/${name}`, import.meta.url);

/** The file's `__metadata__`, decoded by hand: uint64 length, JSON header. */
function metadataOf(bytes) {
  const length = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const meta = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length))).__metadata__;
  return { bytes, length, config: JSON.parse(meta.config), vocab: JSON.parse(meta.vocab), namedHeads: JSON.parse(meta.named_heads) };
}

/** The same file with `edit` applied to its config JSON (the data section is unchanged). */
function withConfig(file, edit) {
  const header = JSON.parse(new TextDecoder().decode(file.bytes.subarray(8, 8 + file.length)));
  const config = JSON.parse(header.__metadata__.config);
  edit(config);
  header.__metadata__.config = JSON.stringify(config);
  let text = new TextEncoder().encode(JSON.stringify(header));
  const padded = new Uint8Array(Math.ceil(text.length / 8) * 8).fill(0x20);
  padded.set(text);
  text = padded;
  const data = file.bytes.subarray(8 + file.length);
  const out = new Uint8Array(8 + text.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  out.set(data, 8 + text.length);
  return out;
}

const lmFile = metadataOf(new Uint8Array(readFileSync(modelPath('char-lm.safetensors'))));
const s2sFile = metadataOf(new Uint8Array(readFileSync(modelPath('dates-seq2seq.safetensors'))));

// Written out here, not imported: the names are the public API, and a change to them must fail this test.
const lmConfigNames = {
  vocab_size: 'vocabSize', d_model: 'dModel', n_heads: 'numHeads', n_layers: 'numLayers', d_ff: 'dimFeedforward',
  max_len: 'maxLen', head_dim: 'headDim', ln_eps: 'layerNormEps', activation: 'activation', norm: 'norm',
  pos_emb: 'posEmb', causal: 'causal', tie_head: 'tieHead',
};
const s2sConfigNames = {
  src_vocab_size: 'sourceVocabSize', tgt_vocab_size: 'targetVocabSize', d_model: 'dModel', n_heads: 'numHeads',
  n_enc_layers: 'numEncoderLayers', n_dec_layers: 'numDecoderLayers', d_ff: 'dimFeedforward', max_src_len: 'maxSourceLen',
  max_tgt_len: 'maxTargetLen', head_dim: 'headDim', ln_eps: 'layerNormEps', activation: 'activation', norm: 'norm',
  pos_emb: 'posEmb', decoding: 'decoding',
};
const lmVocabNames = { tokenizer: 'tokenizer', tokens: 'tokens', specials: 'specials', unk_id: 'unkId', bos_id: 'bosId' };
const s2sVocabNames = {
  src_tokenizer: 'sourceTokenizer', src_tokens: 'sourceTokens', src_pad_id: 'sourcePadId', src_unk_id: 'sourceUnkId',
  tgt_tokenizer: 'targetTokenizer', tgt_tokens: 'targetTokens', tgt_pad_id: 'targetPadId', tgt_bos_id: 'targetBosId',
  tgt_eos_id: 'targetEosId',
};

/** Every file key is there under its new name with the file's value; the old name reads the same value, hidden. */
function checkRenamed(object, fileObject, names, what) {
  assert.deepEqual(Object.keys(fileObject).sort(), Object.keys(names).sort(), `${what}: the shipped file has exactly these keys`);
  assert.deepEqual(Object.keys(object).sort(), Object.values(names).sort(), `${what}: only the new names are enumerable`);
  assert.deepEqual(JSON.parse(JSON.stringify(object)), Object.fromEntries(Object.entries(fileObject).map(([k, v]) => [names[k], v])), `${what}: JSON shows the new names`);
  for (const [old, name] of Object.entries(names)) {
    assert.deepEqual(object[name], fileObject[old], `${what}.${name}`);
    if (old === name) continue;
    assert.equal(object[old], object[name], `${what}.${old} (deprecated) reads ${what}.${name}`);
    assert.equal(Object.getOwnPropertyDescriptor(object, old).enumerable, false, `${what}.${old} is not enumerated`);
  }
}

before(() => init());

test('LanguageModel: config and vocab under camelCase names, the snake_case names as hidden aliases', async () => {
  const lm = await loadModel(lmFile.bytes);
  try {
    checkRenamed(lm.config, lmFile.config, lmConfigNames, 'config');
    checkRenamed(lm.vocab, lmFile.vocab, lmVocabNames, 'vocab');
    assert.equal(lm.header.config, lm.config);
    assert.equal(lm.header.vocab, lm.vocab);
    assert.deepEqual(lm.namedHeads, lmFile.namedHeads);
    assert.equal(lm.header.namedHeads, lm.namedHeads);
    assert.equal(lm.header.named_heads, lm.namedHeads, 'header.named_heads (deprecated)');
    assert.deepEqual(Object.keys(lm.header), ['format', 'kind', 'config', 'vocab', 'tensors', 'namedHeads', 'training']);
    assert.equal(lm.kind, 'decoder_lm', "kind is the file's own");
    // The names the model itself uses: the context length cuts tokenize, the vocabulary bounds detokenize.
    assert.equal(lm.tokenize('x'.repeat(lm.config.maxLen + 5)).ids.length, lm.config.maxLen);
    assert.deepEqual(lm.tokenize('').ids, [lm.vocab.bosId]);
    assert.throws(() => lm.detokenize([lm.config.vocabSize]), { name: 'RangeError', message: new RegExp(`from 0 to ${lm.config.vocab_size - 1}, got ${lm.config.vocabSize}`) });
  } finally {
    lm.dispose();
  }
});

test('Seq2SeqModel: config and vocab under camelCase names (src/tgt spelled out), the snake_case names as hidden aliases', async () => {
  const s2s = await loadModel(s2sFile.bytes);
  try {
    checkRenamed(s2s.config, s2sFile.config, s2sConfigNames, 'config');
    checkRenamed(s2s.vocab, s2sFile.vocab, s2sVocabNames, 'vocab');
    assert.deepEqual(s2s.namedHeads, s2sFile.namedHeads);
    assert.equal(s2s.header.named_heads, s2s.namedHeads);
    const out = s2s.translate('may the first two thousand');
    assert.equal(out.outputIds[0] !== s2s.vocab.targetBosId, true, 'the output starts after <bos>');
    assert.equal(out.outputIds.at(-1), s2s.vocab.tgt_eos_id, 'and ends with <eos> (deprecated name, same id)');
    assert.deepEqual(out.outputTokens, out.outputIds.map((id) => s2s.vocab.targetTokens[id]));
    assert.equal(out.crossAttention.shape[0], s2s.config.numDecoderLayers);
    assert.equal(out.encoderAttention.shape[0], s2s.config.n_enc_layers);
  } finally {
    s2s.dispose();
  }
});

test('a deprecated name writes the new one; keys the core ignores are camelCased and never hide one it reads', async () => {
  const bytes = withConfig(lmFile, (config) => {
    config.extra_note = 'kept';
    config.numHeads = 99; // ignored by the core: must not replace n_heads's checked value
    Object.defineProperty(config, '__proto__', { value: 'plain', enumerable: true }); // a JSON key, not a prototype
  });
  const lm = await loadModel(bytes);
  try {
    assert.equal(lm.config.extraNote, 'kept');
    assert.equal(lm.config.extra_note, 'kept');
    assert.equal(lm.config.numHeads, lmFile.config.n_heads);
    assert.equal(Object.getPrototypeOf(lm.config), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(lm.config, '__proto__').value, 'plain');
    lm.config.max_len = 7;
    assert.equal(lm.config.maxLen, 7, 'writing the old name writes the new one');
  } finally {
    lm.dispose();
  }
});

test('config.tie_head: the core decides; a flag that contradicts the tensors, or is not a boolean, is refused by name', async () => {
  // The shipped LM is tied (checked above: tieHead true); tests/fuzz/hostile_models.mjs's tiny LM is not.
  const untied = metadataOf(hostile.tinyLm());
  await assert.rejects(loadModel(withConfig(untied, (config) => { config.tie_head = true; })), {
    name: 'RangeError',
    message: /'head\.weight' is in the state dict, but tie_head is true: the head's weight is the token embedding, and a tied model has only 'head\.bias'/,
  });
  await assert.rejects(loadModel(withConfig(lmFile, (config) => { config.tie_head = false; })), {
    name: 'RangeError',
    message: /the config implies a tensor 'head\.weight' of shape \[\d+, \d+\], which is missing/,
  });
  await assert.rejects(loadModel(withConfig(lmFile, (config) => { config.tie_head = 'yes'; })), {
    name: 'TypeError',
    message: /^loadModel: __metadata__\.config\.tie_head: expected a boolean, got a string "yes"$/,
  });
  const lm = await loadModel(withConfig(untied, (config) => { config.tie_head = false; }));
  try {
    assert.equal(lm.config.tieHead, false, 'tie_head reads as tieHead');
    assert.equal(Object.getOwnPropertyDescriptor(lm.config, 'tie_head').enumerable, false);
  } finally {
    lm.dispose();
  }
  // A tied file made here (no head.weight) loads and runs.
  const tied = await loadModel(hostile.tinyTiedLm());
  try {
    assert.equal(tied.config.tieHead, true);
    const { logits } = tied.forward('bcd');
    assert.deepEqual(logits.shape, [4, 6]);
    assert.ok(logits.data.every(Number.isFinite));
  } finally {
    tied.dispose();
  }
});
