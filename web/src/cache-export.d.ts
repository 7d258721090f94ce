// Types of cache-export.js: a forward pass as a safetensors file under TransformerLens's hook names.
import type { AblatedHead, Model, NumberList } from './model.js';

/** One hook of a cache: `blocks.{l}.attn.hook_pattern` `[1, heads, T, T]`, `blocks.{l}.hook_resid_pre` `[1, T, d]`, … */
export interface CacheHook {
  name: string;
  shape: number[];
}

export interface CachePlan {
  /** The hooks the file will hold, in its order, with their bytes (F32). */
  hooks: (CacheHook & { bytes: number })[];
  /** The file's exact size in bytes, header included. */
  bytes: number;
}

export interface CacheOptions {
  /**
   * The hooks to write (default every one): full names (`blocks.3.attn.hook_pattern`) or kinds, every layer's
   * (`hook_pattern`, `attn.hook_z`, `hook_resid_post`, `ln_final.hook_normalized`). @throws RangeError for a name
   * this model has no hook of.
   */
  hooks?: string[];
}

export interface ExportedCache {
  /** The safetensors file; its metadata's `attnscope` key holds `config` as JSON. */
  file: Uint8Array;
  /** Model type, TransformerLens's sizes (n_layers, n_heads, n_key_value_heads, d_head, d_model, d_vocab, n_ctx), tokens, hook names. */
  config: Record<string, unknown>;
  hooks: CacheHook[];
}

/** The hooks and the exact byte size a cache of `input` would have, before anything is computed. */
export function cachePlan(model: Model, input: string | NumberList, options?: CacheOptions): CachePlan;

/**
 * One forward pass of `input` (text or ids) as a safetensors file under TransformerLens's hook names, batch dimension
 * 1: hook_resid_pre / hook_resid_mid / hook_resid_post, attn.hook_q / hook_k / hook_v (before QK-norm and RoPE;
 * k and v per key/value head), attn.hook_pattern, attn.hook_z, ln_final.hook_normalized. Causal and encoder models.
 */
export function exportCache(model: Model, input: string | NumberList, options?: CacheOptions & {
  attentionMask?: NumberList; tokenTypeIds?: NumberList; ablate?: AblatedHead[]; ablation?: 'zero' | 'mean';
}): ExportedCache;
