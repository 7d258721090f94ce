// exportCache: one forward pass's activations as a safetensors file under TransformerLens's hook names and shapes
// (batch dimension 1), with a JSON config, so that a cache computed in the page loads in Python where
// `run_with_cache` users keep theirs. Only the hooks asked for are computed and written; cachePlan() gives every
// hook's shape and the file's exact byte size before anything runs. The numbers are forward()'s, only rearranged.
import { describe } from './runtime.js';
import { checkOptions } from './tensor.js';

/** Every hook kind, in the order TransformerLens runs them within a block. */
const BLOCK_HOOKS = ['hook_resid_pre', 'attn.hook_q', 'attn.hook_k', 'attn.hook_v', 'attn.hook_pattern', 'attn.hook_z',
  'hook_resid_mid', 'hook_resid_post'];
const FINAL_HOOK = 'ln_final.hook_normalized';

/** The sizes a cache's shapes come from: the core's description of the model. */
function sizesOf(model, caller) {
  const a = model?.architecture;
  if (!a || typeof a.layers !== 'number') throw new TypeError(`${caller}: model: expected a loaded transformer (loadModel), got ${describe(model)}`);
  if (a.kind === 'seq2seq') throw new TypeError(`${caller}: model: an encoder–decoder's cache is not implemented; causal and encoder models only`);
  return a;
}

/** Every hook this model has, with its shape for T tokens. */
function allHooks(a, T) {
  const shapes = {
    hook_resid_pre: [1, T, a.hiddenSize], 'attn.hook_q': [1, T, a.heads, a.headDim], 'attn.hook_k': [1, T, a.kvHeads, a.headDim],
    'attn.hook_v': [1, T, a.kvHeads, a.headDim], 'attn.hook_pattern': [1, a.heads, T, T], 'attn.hook_z': [1, T, a.heads, a.headDim],
    hook_resid_mid: [1, T, a.hiddenSize], hook_resid_post: [1, T, a.hiddenSize],
  };
  const kinds = BLOCK_HOOKS.filter((k) => k !== 'hook_resid_mid' || !a.parallel); // a parallel block has no mid point
  const hooks = [];
  for (let layer = 0; layer < a.layers; layer++) for (const kind of kinds) hooks.push({ name: `blocks.${layer}.${kind}`, kind, layer, shape: shapes[kind] });
  if (a.finalNorm) hooks.push({ name: FINAL_HOOK, kind: FINAL_HOOK, layer: null, shape: [1, T, a.hiddenSize] });
  return hooks;
}

/** The hooks `wanted` names (full names, or a kind such as 'hook_pattern' for every layer's), in the model's order. */
function chosen(hooks, wanted, caller) {
  if (wanted === undefined) return hooks;
  if (!Array.isArray(wanted)) throw new TypeError(`${caller}: options.hooks: expected an array of hook names, got ${describe(wanted)}`);
  const picked = new Set();
  for (const w of wanted) {
    if (typeof w !== 'string') throw new TypeError(`${caller}: options.hooks: expected hook names (strings), got ${describe(w)}`);
    const match = hooks.filter((h) => h.name === w || h.kind === w || h.kind.endsWith(`.${w}`));
    if (match.length === 0) {
      const kinds = [...new Set(hooks.map((h) => h.kind))].join(', ');
      throw new RangeError(`${caller}: options.hooks: this model has no hook '${w}' (its hooks: ${kinds}, per layer as blocks.{l}.…)`);
    }
    match.forEach((h) => picked.add(h));
  }
  return hooks.filter((h) => picked.has(h));
}

/** The file's header bytes for these hooks and metadata, and each hook's byte offsets. */
function header(hooks, metadata) {
  const json = { __metadata__: metadata };
  let offset = 0;
  for (const h of hooks) {
    const bytes = 4 * h.shape.reduce((n, s) => n * s, 1);
    json[h.name] = { dtype: 'F32', shape: h.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let text = JSON.stringify(json);
  text += ' '.repeat((8 - ((8 + new TextEncoder().encode(text).length) % 8)) % 8); // every tensor 8-byte aligned
  const encoded = new TextEncoder().encode(text);
  return { encoded, data: offset, total: 8 + encoded.length + offset };
}

/** The config written beside the tensors (TransformerLens's names for its sizes). */
function configOf(a, ids, tokens, hooks) {
  return {
    format: 'attnscope cache 1', model_type: a.family, kind: a.kind, n_layers: a.layers, n_heads: a.heads,
    n_key_value_heads: a.kvHeads, d_head: a.headDim, d_model: a.hiddenSize, d_vocab: a.vocabSize, n_ctx: ids.length,
    tokens: ids, token_strings: tokens, hooks: hooks.map((h) => h.name),
    notes: 'hook_q, hook_k, hook_v: after the projection and its bias, before QK-norm and RoPE; hook_k and hook_v per key/value head.',
  };
}

/**
 * Text (tokenized) or token ids, as forward() takes them, within the model's positions and vocabulary (the core's
 * sizes, `architecture`): a plan of an input forward would refuse is no plan (100,000 ids once planned 160 GB).
 */
function idsOf(model, input, caller, a) {
  let ids;
  if (typeof input === 'string') ids = model.tokenize(input).ids;
  else if (Array.isArray(input) || ArrayBuffer.isView(input)) ids = Array.from(input);
  else throw new TypeError(`${caller}: input: expected text or token ids, got ${describe(input)}`);
  if (ids.length < 1 || ids.length > a.maxPositions) {
    throw new RangeError(`${caller}: input: expected from 1 to ${a.maxPositions} token ids (the model's limit), got ${ids.length}`);
  }
  ids.forEach((id, i) => {
    if (!Number.isInteger(id) || id < 0 || id >= a.vocabSize) {
      throw new RangeError(`${caller}: input[${i}]: expected a token id from 0 to ${a.vocabSize - 1}, got ${typeof id === 'number' ? id : describe(id)}`);
    }
  });
  return ids;
}

/**
 * The hooks a cache of `input` (text or ids) would hold, each `{ name, shape, bytes }`, and the file's exact size in
 * bytes (its header, the tokens in its metadata included), before anything is computed.
 */
export function cachePlan(model, input, options) {
  const caller = 'cachePlan';
  const { hooks: wanted } = checkOptions(options, ['hooks'], `${caller}: options`);
  const a = sizesOf(model, caller);
  const ids = idsOf(model, input, caller, a);
  const hooks = chosen(allHooks(a, ids.length), wanted, caller);
  const meta = { attnscope: JSON.stringify(configOf(a, ids, model.tokenStrings(ids), hooks)) };
  return { hooks: hooks.map((h) => ({ name: h.name, shape: h.shape, bytes: 4 * h.shape.reduce((n, s) => n * s, 1) })), bytes: header(hooks, meta).total };
}

/** One hook's values from forward's result, row-major in its shape. */
function values(h, out, a) {
  const T = out.ids.length, d = a.hiddenSize, hd = a.headDim;
  const block = (t, layer, size) => t.data.subarray(layer * size, (layer + 1) * size);
  switch (h.kind) {
    case 'hook_resid_pre': return block(out.residual, h.layer, T * d);
    case 'hook_resid_post': return block(out.residual, h.layer + 1, T * d);
    case 'hook_resid_mid': return block(out.residualMid, h.layer, T * d);
    case 'attn.hook_pattern': return block(out.attention, h.layer, a.heads * T * T);
    case 'attn.hook_z': return block(out.heads, h.layer, T * a.heads * hd);
    case FINAL_HOOK: return out.hidden.data;
    default: { // q | k | v columns of each row (forward's qkv)
      const qCols = a.heads * hd, kvCols = a.kvHeads * hd, cols = qCols + 2 * kvCols;
      const [first, width] = { 'attn.hook_q': [0, qCols], 'attn.hook_k': [qCols, kvCols], 'attn.hook_v': [qCols + kvCols, kvCols] }[h.kind];
      const rows = block(out.qkv, h.layer, T * cols), picked = new Float32Array(T * width);
      for (let t = 0; t < T; t++) picked.set(rows.subarray(t * cols + first, t * cols + first + width), t * width);
      return picked;
    }
  }
}

/**
 * One forward pass of `input` as a safetensors file under TransformerLens's hook names: `{ file: Uint8Array, config,
 * hooks }`, `config` (model type, sizes, tokens, hook names) also in the file's metadata under `attnscope`. `hooks`
 * (default all) lists full names (`blocks.3.attn.hook_pattern`) or kinds for every layer (`hook_pattern`); the other
 * options are forward()'s input options (attentionMask, tokenTypeIds, ablate, …).
 */
export function exportCache(model, input, options = {}) {
  const caller = 'exportCache';
  const a = sizesOf(model, caller);
  // Its own options (exportCache.d.ts): the hooks, and the input options forward takes with them.
  const { hooks: wanted, ...forwardOptions } = checkOptions(options, ['hooks', 'attentionMask', 'tokenTypeIds', 'ablate', 'ablation'], `${caller}: options`);
  const ids = idsOf(model, input, caller, a);
  const hooks = chosen(allHooks(a, ids.length), wanted, caller);
  const need = (kinds) => hooks.some((h) => kinds.includes(h.kind));
  let out;
  try {
    out = model.forward(ids, {
      ...forwardOptions,
      needAttention: need(['attn.hook_pattern']),
      keepHeads: need(['attn.hook_z']),
      keepResidual: need(['hook_resid_pre', 'hook_resid_mid', 'hook_resid_post']),
      keepQkv: need(['attn.hook_q', 'attn.hook_k', 'attn.hook_v']),
    });
  } catch (error) {
    // The options exportCache passes on are forward's: its refusal, said as the call the caller made.
    if (error instanceof TypeError || error instanceof RangeError) throw new error.constructor(`${caller}: ${error.message}`, { cause: error });
    throw error;
  }
  const config = configOf(a, out.ids, out.tokens, hooks);
  const { encoded, total } = header(hooks, { attnscope: JSON.stringify(config) });
  const file = new Uint8Array(total);
  new DataView(file.buffer).setBigUint64(0, BigInt(encoded.length), true);
  file.set(encoded, 8);
  let at = 8 + encoded.length;
  for (const h of hooks) {
    const v = values(h, out, a);
    new Uint8Array(file.buffer, at, v.length * 4).set(new Uint8Array(v.buffer, v.byteOffset, v.length * 4)); // little-endian, as WASM
    at += v.length * 4;
  }
  return { file, config, hooks: hooks.map((h) => ({ name: h.name, shape: h.shape })) };
}
