// Shows why the onnxruntime-web peer has no "out" variant: ORT 1.30's wasm backend accepts pre-allocated CPU output
// tensors in session.run(feeds, fetches) and returns them, but leaves their data as it was (it copies them into the
// WASM heap, binds that copy as the output and never copies the result back; lib/wasm/wasm-core-impl.ts).
//   node bench/ort-check.mjs
import * as ortPeer from './peers/ort.mjs';
import { buildMhaModel } from './onnx-graph.mjs';
import { makeCase, maxAbsDiff } from './common.mjs';

const ort = await ortPeer.load({ threads: 1 });
const [L, E, H] = [16, 64, 4];
const c = makeCase(L, E, H);
const model = buildMhaModel({ E, H, state: c.state, withWeights: true, graph: 'plain' });
const session = await ort.InferenceSession.create(model, { executionProviders: ['wasm'], logSeverityLevel: 3 });
const x = new ort.Tensor('float32', c.x, [1, L, E]);
const reference = await session.run({ x });
const output = new ort.Tensor('float32', new Float32Array(L * E), [1, L, E]);
const weights = new ort.Tensor('float32', new Float32Array(H * L * L), [1, H, L, L]);
const results = await session.run({ x }, { output, weights });
console.log(
  `(${L}, ${E}, ${H}) with pre-allocated outputs: returned the same tensors ${results.output === output && results.weights === weights}, ` +
    `output max error ${maxAbsDiff(output.data, reference.output.data).toExponential(1)} ` +
    `(all zeros: ${output.data.every((v) => v === 0)}), weights max error ${maxAbsDiff(weights.data, reference.weights.data).toExponential(1)}`,
);
await session.release();
