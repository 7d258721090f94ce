// Peer: the plain-JavaScript implementation in bench/plain-js.mjs (one thread: JavaScript has no shared-memory loops).
import { Unavailable } from '../common.mjs';

export const name = 'plain JS';

export async function load({ threads = 1 } = {}) {
  if (threads > 1) throw new Unavailable('single-threaded by nature');
  return import('../plain-js.mjs');
}

export function create(lib, { E, H, state }) {
  const mha = new lib.PlainMultiHeadAttention({ embedDim: E, numHeads: H });
  mha.loadStateDict(state);
  return {
    forward: (x, L, needWeights = true) => mha.forward(x, L, needWeights),
    dispose: () => mha.dispose(),
  };
}
