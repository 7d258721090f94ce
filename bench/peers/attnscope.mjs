// The library under test, through its public npm API: the built package imported by its own name, or the copy of
// dist/ that bench/run.mjs takes at its start (ATTNSCOPE_BENCH_DIST; in the browser page, a global of that name), so
// a rebuild during a run cannot mix versions.
import { Unavailable } from '../common.mjs';

export const name = 'attnscope';

function distUrl() {
  return globalThis.ATTNSCOPE_BENCH_DIST ?? globalThis.process?.env?.ATTNSCOPE_BENCH_DIST ?? 'attnscope';
}

/** The build bench/run.mjs --simd asks for (init({ simd })): 'auto' (the probe's pick), 'baseline' or 'relaxed'. */
export function benchSimd() {
  return globalThis.ATTNSCOPE_BENCH_SIMD ?? globalThis.process?.env?.ATTNSCOPE_BENCH_SIMD ?? 'auto';
}

/**
 * The thread count the loaded build reports ({ threads: null } if it reports none) and why it fell back, if it says. The threaded build is asked for with
 * init({ threads }); what reports the running build is looked for in the places an API would put it (init's result,
 * a runtime/build info function, memoryUsage()), so the bench runs before and after that API exists.
 */
function reportedThreads(lib, initResult) {
  const sources = [initResult];
  for (const fn of ['runtimeInfo', 'buildInfo', 'info', 'threadCount', 'getThreads', 'memoryUsage']) {
    try {
      if (typeof lib[fn] === 'function') sources.push(lib[fn]());
    } catch {
      // not this one
    }
  }
  sources.push(lib.threads);
  for (const s of sources) {
    if (Number.isInteger(s)) return { threads: s };
    for (const key of ['threads', 'threadCount', 'numThreads'])
      if (s && typeof s === 'object' && Number.isInteger(s[key])) return { threads: s[key], why: s.fallbackReason };
  }
  return { threads: null };
}

/** init({ threads }); above one thread, a build that does not report that many threads is "n/a (not built)". */
export async function load({ threads = 1 } = {}) {
  const lib = await import(distUrl());
  // init() refuses options it does not know (TypeError): a build without the `threads` option is an unthreaded one.
  let initResult;
  try {
    const simd = benchSimd();
    initResult = await lib.init({ ...(threads === 1 ? {} : { threads }), ...(simd === 'auto' ? {} : { simd }) });
  } catch (error) {
    if (error instanceof TypeError && /unknown option 'threads'/.test(error.message)) throw new Unavailable(`not built: init({ threads: ${threads} }) runs an unthreaded build`);
    throw error;
  }
  const { threads: running, why } = reportedThreads(lib, initResult);
  if (threads > 1 && !(running >= threads)) {
    const runs = running ? `${running} thread${running > 1 ? 's' : ''}` : 'an unthreaded build';
    throw new Unavailable(`not built: init({ threads: ${threads} }) runs ${runs}${why ? ` (${why})` : ''}`);
  }
  if (threads === 1 && running > 1) throw new Error(`init({ threads: 1 }) runs ${running} threads`);
  return lib;
}

/**
 * The two ways the API hands results back, timed like a peer's paths (the faster stands for attnscope, the table
 * says which): `fresh`, new Float32Arrays every call, and `out`, the caller's own arrays reused across calls
 * (`options.out`), which skips allocating and faulting in new pages (192 MiB of weights at (2048, 768, 12)). Neither
 * peer has a working equivalent: tfjs's dataSync() always allocates, and onnxruntime-web 1.30 returns pre-allocated
 * CPU output tensors without writing into them (node bench/ort-check.mjs).
 */
export const variants = ['fresh', 'out'];

export function create(lib, { E, H, state, variant = 'fresh' }) {
  const mha = new lib.MultiHeadAttention({ embedDim: E, numHeads: H, bias: true, seed: 0 });
  mha.loadStateDict(state);
  let out = null; // the `out` variant's arrays, made again when the length or needWeights changes
  return {
    forward(x, L, needWeights = true) {
      if (variant === 'out' && (out?.L !== L || out.needWeights !== needWeights)) {
        out = { L, needWeights, output: new Float32Array(L * E), weights: needWeights ? new Float32Array(H * L * L) : undefined };
      }
      const options = { needWeights, averageWeights: false };
      if (variant === 'out') options.out = { output: out.output, ...(needWeights ? { weights: out.weights } : {}) };
      const { output, weights } = mha.forward({ data: x, shape: [1, L, E] }, undefined, undefined, options);
      return { output: output.data, weights: weights ? weights.data : null };
    },
    dispose: () => mha.dispose(),
  };
}
