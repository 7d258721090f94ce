// Types of research.js: attention sinks read off forward()'s maps.
import type { Tensor } from './index.js';

/** A map derived from the model's, not computed by it: `view` says which. */
export interface AttentionView extends Tensor {
  view: 'hiddenKeys' | 'valueWeighted';
  /** With `view: 'hiddenKeys'`: the key positions hidden. */
  hiddenKeys?: number[];
}

export interface SinkMassOptions {
  /** The key position (or positions, their weights summed per row) whose weight is measured; default 0, the first token. */
  key?: number | number[];
  /** The first query row averaged (default 0); a causal query before `key` gives it 0. */
  fromQuery?: number;
}

/**
 * Per head, the mean over query rows of the weight on `key`: `[layers, heads]`. @throws TypeError for something that
 * is not forward's attention, RangeError for a position outside it.
 */
export function sinkMass(attention: Tensor, options?: SinkMassOptions): Tensor;

/** The maps with the key position(s) `key` hidden and every row renormalised over the rest: a view, marked as one. */
export function hideKeys(attention: Tensor, key: number | number[]): AttentionView;

/**
 * Value-weighted attention: α_ij·‖v_j‖ renormalised per row, with forward's `valueNorms` (`valueNorms: true`).
 * @throws RangeError when the norms' shape is not the maps' `[layers, heads, T]`.
 */
export function valueWeighted(attention: Tensor, valueNorms: Tensor): AttentionView;
