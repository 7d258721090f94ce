// The library under test, through its public npm API: the built package imported by its own name, or the copy of
// dist/ that bench/run.mjs takes at its start (ATTNSCOPE_BENCH_DIST), so a rebuild during a run cannot mix versions.

export const name = 'attnscope';

export async function load() {
  const lib = await import(process.env.ATTNSCOPE_BENCH_DIST || 'attnscope');
  await lib.init();
  return lib;
}

export function create(lib, { E, H, state }) {
  const mha = new lib.MultiHeadAttention({ embedDim: E, numHeads: H, bias: true, seed: 0 });
  mha.loadStateDict(state);
  return {
    forward(x, L, needWeights = true) {
      const { output, weights } = mha.forward({ data: x, shape: [1, L, E] }, undefined, undefined, {
        needWeights,
        averageWeights: false,
      });
      return { output: output.data, weights: weights ? weights.data : null };
    },
    dispose: () => mha.dispose(),
  };
}
