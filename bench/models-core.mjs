// One library's part of `npm run bench:models`, in Node and in a page alike: load a network from bytes already in
// memory (attnscope's loadModel of config.json + model.safetensors, or an onnxruntime-web session of model.onnx),
// time forward passes that return logits and every layer's attention, and measure memory and generation.
// bench/models.mjs runs this in one process (or page) per library and run, alternating the libraries.

/** Token ids every library and every process gets: a fixed pseudo-random sequence below `vocab`. */
export function tokenIds(T, vocab, seed = 7) {
  let a = seed >>> 0;
  const ids = new Array(T);
  for (let i = 0; i < T; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    ids[i] = ((t ^ (t >>> 14)) >>> 0) % vocab;
  }
  return ids;
}

const now = () => performance.now();
// CPU time of the whole process (every thread), Node only: on a loaded machine the wall clock measures the load,
// while one thread's CPU time stays close to what the wall clock would be on an idle core.
const cpuNow = () => {
  const u = globalThis.process?.cpuUsage?.();
  return u ? (u.user + u.system) / 1000 : NaN;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** attnscope: `{ load(), forward(ids), memory(), generate(ids, n), rerun(ids, n) }` over the npm API. */
async function attnscopeLibrary({ threads, simd = 'baseline', distUrl }) {
  const a = await import(distUrl ?? 'attnscope');
  await a.init({ threads, simd });
  const reported = a.runtimeInfo().threads;
  if (a.runtimeInfo().simd !== simd) throw new Error(`init({ simd: '${simd}' }) runs ${JSON.stringify(a.runtimeInfo())}`);
  let model = null, plan = null;
  return {
    reportedThreads: reported,
    // `safetensors`: the file's bytes, or a Blob or URL that loadModel streams (a file too large to hold in JS too).
    async load({ config, safetensors }) {
      model = await a.loadModel({ 'config.json': config, 'model.safetensors': safetensors }, { onPlan: (p) => { plan = p; } });
    },
    plan: () => plan,
    forward(ids) {
      const { logits, attention } = model.forward(ids, { needAttention: true });
      return { logits: logits.data, attention: attention.data };
    },
    memory: () => ({ ...a.memoryUsage(), parameterBytes: model.parameterBytes }),
    generate: (ids, n) => model.generate(ids, { maxNewTokens: n, stopToken: null }).ids,
    // The same greedy tokens without the cache: the whole sequence again for every new token (no attention asked).
    rerun(ids, n, vocab) {
      const seq = [...ids];
      for (let i = 0; i < n; i++) {
        const { logits } = model.forward(seq, { needAttention: false });
        seq.push(argmaxLast(logits.data, vocab));
      }
      return seq.slice(ids.length);
    },
  };
}

function argmaxLast(logits, vocab) {
  const base = logits.length - vocab;
  let best = 0;
  for (let j = 1; j < vocab; j++) if (logits[base + j] > logits[base + best]) best = j;
  return best;
}

/** onnxruntime-web 1.30, WASM backend, numThreads = threads (global to the process or page), optimisation `all`. */
async function ortLibrary({ threads }) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false; // in this thread, as attnscope runs
  ort.env.logLevel = 'error';
  let session = null;
  return {
    reportedThreads: threads,
    async load({ onnx }) {
      session = await ort.InferenceSession.create(onnx, {
        executionProviders: ['wasm'], graphOptimizationLevel: 'all', executionMode: 'sequential', logSeverityLevel: 3,
      });
    },
    async forward(ids) {
      const input = new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
      const out = await session.run({ input_ids: input });
      const result = { logits: out.logits.data, attention: out.attentions.data };
      for (const t of Object.values(out)) t.dispose?.();
      return result;
    },
    memory: () => ({}),
  };
}

/**
 * Runs one library once: load (bytes in memory → first result at lengths[0]), `warmup` untimed and `runs` timed
 * forward passes per length, memory after the longest pass; with `generate`, the cache against re-running.
 * `keep(T, output)` sees the first output at each length (the agreement check). Returns plain numbers.
 */
export async function runLibrary({ lib, threads, simd, files, lengths, vocab, runs = 3, warmup = 1, generate = null,
  distUrl, keep, progress = () => {} }) {
  const library = lib === 'attnscope' ? await attnscopeLibrary({ threads, simd, distUrl }) : await ortLibrary({ threads });
  const result = { lib, threads, simd: lib === 'attnscope' ? simd : undefined, reportedThreads: library.reportedThreads, forward: {} };
  const t0 = now();
  await library.load(files);
  const loaded = now();
  const first = await library.forward(tokenIds(lengths[0], vocab));
  const t1 = now();
  result.loadMs = t1 - t0;
  result.loadOnlyMs = loaded - t0;
  if (keep) await keep(lengths[0], first);
  result.memoryAfterLoad = library.memory();
  if (library.plan) result.plan = library.plan();
  for (const T of lengths) {
    const ids = tokenIds(T, vocab);
    const times = [], cpuTimes = [];
    for (let i = 0; i < warmup + runs; i++) {
      const c = cpuNow();
      const s = now();
      const out = await library.forward(ids);
      const ms = now() - s;
      if (i >= warmup) {
        times.push(ms);
        cpuTimes.push(cpuNow() - c);
      }
      if (i === 0 && keep && T !== lengths[0]) await keep(T, out);
    }
    result.forward[T] = { medianMs: median(times), times, ...(Number.isNaN(cpuTimes[0]) ? {} : { cpuTimes }) };
    progress(`${lib} ${threads}t T=${T}: ${times.map((t) => t.toFixed(0)).join(' ')} ms`);
  }
  result.memoryAfterRuns = library.memory();
  if (generate && library.generate) {
    const ids = tokenIds(generate.prompt, vocab, 11);
    library.generate(ids, 2); // warm: the cache's code paths
    let s = now();
    const cached = library.generate(ids, generate.tokens);
    result.generate = { tokens: cached.length, cachedMs: now() - s };
    s = now();
    const rerun = library.rerun(ids, generate.tokens, vocab);
    result.generate.rerunMs = now() - s;
    result.generate.same = rerun.length === cached.length && rerun.every((t, i) => t === cached[i]);
    progress(`${lib} generate: ${result.generate.cachedMs.toFixed(0)} ms cached, ${result.generate.rerunMs.toFixed(0)} ms re-run`);
  }
  return result;
}
