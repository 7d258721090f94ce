// A model file's description as the JS API shows it: the one place where the file format's snake_case metadata keys
// (tools/MODEL_FORMAT.md, which stays as it is) become the API's camelCase names, and where the old snake_case names
// stay readable as deprecated aliases until the next major version.

/**
 * Every `config` key the core reads (tools/MODEL_FORMAT.md) → its API name. Counts are `num…` as in
 * `MultiHeadAttention`'s `numHeads` (and the C++ core's `num_heads`); `src`/`tgt` are spelled out as in `sourceIds`
 * and `forward(source, target)`; the feed-forward width and the LayerNorm epsilon take PyTorch `nn.Transformer`'s
 * names; the rest is plain camelCase. Other keys (the core ignores them) are camelCased and never hide one of these.
 */
const CONFIG_NAMES = {
  vocab_size: 'vocabSize',
  d_model: 'dModel',
  n_heads: 'numHeads',
  n_layers: 'numLayers',
  d_ff: 'dimFeedforward',
  max_len: 'maxLen',
  head_dim: 'headDim',
  ln_eps: 'layerNormEps',
  activation: 'activation',
  norm: 'norm',
  pos_emb: 'posEmb',
  causal: 'causal',
  tie_head: 'tieHead',
  src_vocab_size: 'sourceVocabSize',
  tgt_vocab_size: 'targetVocabSize',
  n_enc_layers: 'numEncoderLayers',
  n_dec_layers: 'numDecoderLayers',
  max_src_len: 'maxSourceLen',
  max_tgt_len: 'maxTargetLen',
  decoding: 'decoding',
};

/** Every `vocab` key the core reads → its API name: camelCase, with `src`/`tgt` spelled out as for `config`. */
const VOCAB_NAMES = {
  tokenizer: 'tokenizer',
  tokens: 'tokens',
  specials: 'specials',
  unk_id: 'unkId',
  bos_id: 'bosId',
  src_tokenizer: 'sourceTokenizer',
  src_tokens: 'sourceTokens',
  src_pad_id: 'sourcePadId',
  src_unk_id: 'sourceUnkId',
  tgt_tokenizer: 'targetTokenizer',
  tgt_tokens: 'targetTokens',
  tgt_pad_id: 'targetPadId',
  tgt_bos_id: 'targetBosId',
  tgt_eos_id: 'targetEosId',
};

const HEADER_NAMES = { named_heads: 'namedHeads' };

/** `max_len` → `maxLen`; leading, trailing and doubled underscores stay (`__proto__` is not renamed). */
const camelCase = (key) => key.replace(/(?<=[A-Za-z0-9])_([a-z0-9])/g, (_, c) => c.toUpperCase());

function define(object, key, descriptor) {
  // defineProperty, not assignment: a JSON key such as `__proto__` becomes a plain property, never the prototype.
  Object.defineProperty(object, key, { configurable: true, ...descriptor });
}

/**
 * A copy of `object` under API names (`names`, else camelCase), each old name that differs kept as a non-enumerable
 * getter/setter of the new one: `Object.keys` and `JSON.stringify` show only the new names. A key the core ignores
 * never hides one it reads: `config.numHeads` is always the checked `n_heads`.
 */
function renamed(object, names) {
  const result = {};
  const known = new Set(Object.keys(object).filter((key) => Object.hasOwn(names, key)).map((key) => names[key]));
  for (const [key, value] of Object.entries(object)) {
    const isKnown = Object.hasOwn(names, key);
    const name = isKnown ? names[key] : camelCase(key);
    if (!isKnown && known.has(name)) continue;
    if (Object.hasOwn(result, name)) continue; // two unknown keys with one camelCase name: the first is kept
    define(result, name, { value, writable: true, enumerable: true });
    if (name !== key) {
      define(result, key, { enumerable: false, get() { return this[name]; }, set(v) { this[name] = v; } });
    }
  }
  return result;
}

/**
 * The header of a loaded model from the binding's checked metadata texts (`info.config`, `info.vocab`,
 * `info.namedHeads`, `info.training`: JSON of the right types, ids and sizes in range).
 */
export function modelHeader(info) {
  const header = {
    format: 'attnscope-model/1',
    kind: info.kind,
    config: renamed(JSON.parse(info.config), CONFIG_NAMES),
    vocab: renamed(JSON.parse(info.vocab), VOCAB_NAMES),
    tensors: info.tensors,
    namedHeads: JSON.parse(info.namedHeads),
    // A free-form record written by the training scripts (data, hyper-parameters, losses): data, kept as written.
    training: JSON.parse(info.training),
  };
  for (const [old, name] of Object.entries(HEADER_NAMES)) {
    define(header, old, { enumerable: false, get() { return this[name]; }, set(v) { this[name] = v; } });
  }
  return header;
}
