// What every consumer bundle does: init(), one seeded causal forward pass, and the numbers handed to the test
// (window.__result in a browser, one JSON line on stdout in Node), and runtimeInfo() when given.
export async function report(init, MultiHeadAttention, runtimeInfo) {
  let result;
  try {
    await init();
    const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 5 });
    const x = { data: Float32Array.from({ length: 24 }, (_, i) => Math.sin(i)), shape: [3, 8] };
    const { output, weights } = mha.forward(x, null, null, { causal: true });
    mha.dispose();
    result = { output: Array.from(output.data), weights: Array.from(weights.data), ...(runtimeInfo && { info: runtimeInfo() }) };
  } catch (error) {
    result = { error: String(error?.message ?? error) };
  }
  if (typeof window === 'object') window.__result = result;
  else console.log(JSON.stringify(result));
}
