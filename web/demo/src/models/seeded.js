// The model the page looks at: token embeddings + sinusoidal positions feeding one attention layer.
// The page only talks to the interface below ({ embed, attention, stateDict, run, dispose }), so a
// trained model can replace the seeded one by passing its state dict and an embedding table.
import { MultiHeadAttention } from 'attnscope';
import { mulberry32 } from './random.js';

/**
 * Standard deviation of the seeded token embeddings. With unit-variance embeddings and
 * Xavier-initialised projections, random scores have a standard deviation well below 1 and every
 * head looks almost uniform; a larger spread gives the seeded heads visible (if meaningless)
 * preferences, which is what a page for looking at heads needs.
 */
export const EMBEDDING_STD = 2;

/** 32-bit hash of (token, seed): FNV-1a over the UTF-16 code units, then a murmur3 finaliser. */
export function hashToken(token, seed) {
  let h = 0x811c9dc5 ^ Math.imul(seed >>> 0, 0x9e3779b1);
  for (let i = 0; i < token.length; i++) h = Math.imul(h ^ token.charCodeAt(i), 0x01000193);
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Seeded embedding of one token string: hash(token, seed) -> PRNG -> Box–Muller normals.
 * The same string always gets the same vector for a given seed and size.
 */
export function seededTokenVector(token, embedDim, seed, std = EMBEDDING_STD) {
  const rand = mulberry32(hashToken(token, seed));
  const v = new Float32Array(embedDim);
  for (let i = 0; i < embedDim; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - rand())) * std;
    const a = 2 * Math.PI * rand();
    v[i] = r * Math.cos(a);
    if (i + 1 < embedDim) v[i + 1] = r * Math.sin(a);
  }
  return v;
}

/** Sinusoidal positions of "Attention Is All You Need": PE[p, 2i] = sin(p / 10000^(2i/E)), PE[p, 2i+1] = cos(…). */
export function sinusoidalPositions(length, embedDim) {
  const pe = new Float32Array(length * embedDim);
  for (let p = 0; p < length; p++) {
    for (let i = 0; i < embedDim; i += 2) {
      const angle = p / Math.pow(10000, i / embedDim);
      pe[p * embedDim + i] = Math.sin(angle);
      if (i + 1 < embedDim) pe[p * embedDim + i + 1] = Math.cos(angle);
    }
  }
  return pe;
}

/**
 * An embedding function: token vectors from `vectorOf(token)` plus sinusoidal positions.
 * @param {number} embedDim
 * @param {(token: string) => Float32Array} vectorOf
 * @returns {(tokens: string[]) => {data: Float32Array, shape: number[]}}
 */
export function positionalEmbedding(embedDim, vectorOf) {
  const cache = new Map();
  return (tokens) => {
    const data = sinusoidalPositions(tokens.length, embedDim);
    tokens.forEach((tok, p) => {
      let v = cache.get(tok);
      if (!v) cache.set(tok, (v = vectorOf(tok)));
      for (let i = 0; i < embedDim; i++) data[p * embedDim + i] += v[i];
    });
    return { data, shape: [tokens.length, embedDim] };
  };
}

/**
 * Embedding from a table (e.g. a trained model's): `vocab[k]` is row k of `weights` [V, E];
 * unknown tokens use row `unk` (default 0).
 */
export function tableEmbedding({ vocab, weights, unk = 0 }) {
  const [, embedDim] = weights.shape;
  const index = new Map(vocab.map((t, k) => [t, k]));
  return positionalEmbedding(embedDim, (tok) => {
    const k = index.get(tok) ?? unk;
    return weights.data.subarray(k * embedDim, (k + 1) * embedDim);
  });
}

/** What the page calls: embeddings, one attention layer, its weights, and a timed forward pass. */
export class AttentionModel {
  /**
   * @param {{ embed: (tokens: string[]) => {data: Float32Array, shape: number[]}, attention: MultiHeadAttention, description?: string }} parts
   */
  constructor({ embed, attention, description = '' }) {
    this.embed = embed;
    this.attention = attention;
    this.description = description;
    this._stateDict = null;
  }

  get embedDim() { return this.attention.embedDim; }
  get numHeads() { return this.attention.numHeads; }
  get headDim() { return this.attention.headDim; }

  /** The attention layer's PyTorch-named weights (copied out of WASM once, then cached). */
  stateDict() {
    return (this._stateDict ??= this.attention.stateDict());
  }

  /**
   * Self-attention (keyTokens omitted) or cross-attention (query = queryTokens, key = value = keyTokens).
   * `ms` is the time of the WASM forward pass alone.
   */
  run(queryTokens, keyTokens = null, { causal = false } = {}) {
    const query = this.embed(queryTokens);
    const key = keyTokens ? this.embed(keyTokens) : query;
    const t0 = performance.now();
    const { output, weights } = this.attention.forward(query, key, key, { causal, needWeights: true, averageWeights: false });
    const ms = performance.now() - t0;
    return { query, key, output, weights, ms };
  }

  dispose() {
    this.attention.dispose();
    this._stateDict = null;
  }
}

/** The page's default model: seeded embeddings and a seeded attention layer. */
export function createSeededModel({ embedDim, numHeads, seed }) {
  return new AttentionModel({
    embed: positionalEmbedding(embedDim, (tok) => seededTokenVector(tok, embedDim, seed)),
    attention: new MultiHeadAttention({ embedDim, numHeads, seed }),
    description: `seeded E=${embedDim} H=${numHeads} seed=${seed}`,
  });
}

/**
 * A model from trained weights: `stateDict` in PyTorch's nn.MultiheadAttention names and
 * `embedding` for `tableEmbedding` (or any `embed` function).
 */
export function createModelFromStateDict({ stateDict, numHeads, embedding, embed }) {
  const embedDim = stateDict['out_proj.weight'].shape[0];
  const attention = new MultiHeadAttention({ embedDim, numHeads });
  attention.loadStateDict(stateDict);
  return new AttentionModel({ embed: embed ?? tableEmbedding(embedding), attention, description: 'trained' });
}
