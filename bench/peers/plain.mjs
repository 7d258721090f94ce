// Peer: the plain-JavaScript implementation in bench/plain-js.mjs.

export const name = 'plain JS';

export async function load() {
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
