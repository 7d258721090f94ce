// The tables of `npm run bench:models` (bench/models.mjs): forward medians and ratios against the targets, load
// time to the first result, WASM memory, generation with the cache, and the two libraries' agreement.
import fs from 'node:fs';
import path from 'node:path';

/** Max |Δ| of logits (and the largest |logit|) and of attention between the two libraries' dumps, per length. */
export function agreement(dir, lengths, ours = 'attnscope-baseline') {
  const read = (lib, T, key) => {
    const b = fs.readFileSync(path.join(dir, `${lib}-${T}-${key}.f32`));
    return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
  };
  const rows = {};
  for (const T of lengths) {
    const row = {};
    for (const key of ['logits', 'attention']) {
      const a = read(ours, T, key), b = read('onnxruntime-web', T, key);
      if (a.length !== b.length) throw new Error(`${key} at ${T}: ${a.length} against ${b.length} values`);
      let diff = 0, largest = 0;
      for (let i = 0; i < a.length; i++) {
        const d = Math.abs(a[i] - b[i]);
        if (!(d <= diff)) diff = d; // NaN wins
        if (Math.abs(b[i]) > largest) largest = Math.abs(b[i]);
      }
      row[key] = { maxAbsDiff: diff, maxAbs: largest };
    }
    rows[T] = row;
  }
  return rows;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const ms = (x) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x < 10 ? 2 : 0)} ms`);
const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const table = (head, rows) => {
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map(() => '---').join('|')}|`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  console.log('');
};

/** Floats a forward pass of T tokens holds besides the parameters (pretrained/model.cpp and forward.cpp). */
function workspaceBytes(c, T) {
  const d = c.n_embd ?? c.hidden_size, L = c.n_layer ?? c.num_hidden_layers, H = c.n_head ?? c.num_attention_heads;
  const kvH = c.num_key_value_heads ?? H, hd = c.head_dim ?? d / H, I = c.n_inner ?? c.intermediate_size ?? 4 * d;
  const outputs = T * c.vocab_size + L * H * T * T + T * d;
  const caches = 2 * L * T * kvH * hd;
  const activations = 3 * T * d + T * (H + 2 * kvH) * hd + T * H * hd + 2 * T * I + 32 * T * 1.25 + 2 * T * (hd + 8);
  return 4 * (outputs + caches + activations);
}

/** Per library and length, each round's 1-thread median over its 2-thread median (issue #35: at least 1.7×). */
function secondThread(results) {
  const rows = [];
  const libOf = (r) => (r.lib === 'attnscope' ? `attnscope (${r.simd ?? 'baseline'})` : r.lib);
  const groups = [...new Set(results.runs.map((r) => `${r.env}|${r.model}|${libOf(r)}`))];
  for (const g of groups) {
    const [env, model, lib] = g.split('|');
    const of = (threads) => results.runs.filter((r) => r.env === env && r.model === model && libOf(r) === lib && r.threads === threads);
    const one = of(1), two = of(2);
    if (!one.length || !two.length) continue;
    for (const T of results.lengths) {
      const ratios = one.map((r) => {
        const pair = two.find((x) => x.round === r.round);
        return pair ? r.forward[T].medianMs / pair.forward[T].medianMs : NaN;
      }).filter((x) => !Number.isNaN(x));
      const m = median(ratios);
      rows.push([model, env, lib, T, one.map((r) => ms(r.forward[T].medianMs)).join(', '), two.map((r) => ms(r.forward[T].medianMs)).join(', '),
        ratios.map((x) => `${x.toFixed(2)}×`).join(', '), `${m.toFixed(2)}×`, m >= 1.7 ? 'met' : 'MISSED']);
    }
  }
  return rows;
}

export function printTables(results, configs = {}) {
  const runs = results.runs;
  // One row per attnscope build (init({ simd }); results from before the two builds were all SIMD128), each against
  // the same onnxruntime-web runs.
  const simdOf = (r) => r.simd ?? 'baseline';
  const keys = [...new Set(runs.filter((r) => r.lib === 'attnscope').map((r) => `${r.env}|${r.model}|${r.threads}|${simdOf(r)}`))];
  const pick = (env, model, threads, lib, simd) => runs.filter((r) => r.env === env && r.model === model && r.threads === threads && r.lib === lib &&
    (lib !== 'attnscope' || simdOf(r) === simd));
  console.log(`## bench:models, ${results.started}, ${results.seconds?.toFixed(0)} s, load average ${results.machine.loadAtStart} at the start, ${results.machine.loadAtEnd} at the end${results.machine.chromium ? `, Chromium ${results.machine.chromium}` : ''}\n`);
  const forward = [], load = [], gen = [], mem = [], targets = [];
  for (const key of keys) {
    const [env, model, t, simd] = key.split('|');
    const threads = Number(t);
    const att = pick(env, model, threads, 'attnscope', simd), ort = pick(env, model, threads, 'onnxruntime-web');
    const threadsNote = att.some((r) => r.reportedThreads !== threads) ? ` (attnscope ran ${att[0]?.reportedThreads})` : '';
    for (const T of results.lengths) {
      const a = median(att.flatMap((r) => r.forward[T].times)), b = median(ort.flatMap((r) => r.forward[T].times));
      const n = att.flatMap((r) => r.forward[T].times).length;
      const cpu = (rs) => (rs.every((r) => r.forward[T].cpuTimes) ? median(rs.flatMap((r) => r.forward[T].cpuTimes)) : NaN);
      const ca = cpu(att), cb = cpu(ort);
      forward.push([model, env, simd, `${threads}${threadsNote}`, T, ms(a), ms(b), `${(b / a).toFixed(2)}×`, n, b / a >= 1.5 ? 'met' : 'MISSED',
        Number.isNaN(ca) ? '–' : `${ms(ca)} / ${ms(cb)} (${(cb / ca).toFixed(2)}×)`]);
      targets.push(b / a >= 1.5);
    }
    const la = median(att.map((r) => r.loadMs)), lb = median(ort.map((r) => r.loadMs));
    load.push([model, env, simd, threads, ms(la), ms(lb), `${(lb / la).toFixed(2)}×`, la <= lb ? 'met' : 'MISSED']);
    for (const r of att.filter((x) => x.generate)) {
      const g = r.generate;
      const ratio = g.rerunMs / g.cachedMs;
      gen.push([model, env, simd, threads, `${g.tokens}`, `${ms(g.cachedMs)} (${(g.tokens / g.cachedMs * 1000).toFixed(1)} tok/s)`,
        `${ms(g.rerunMs)} (${(g.tokens / g.rerunMs * 1000).toFixed(1)} tok/s)`, `${ratio.toFixed(1)}×`, g.same ? 'yes' : 'NO', ratio >= 10 ? 'met' : 'MISSED']);
    }
    const m = att[0]?.memoryAfterRuns;
    if (m && m.wasmBytes) {
      const config = configs[model];
      const T = Math.max(...results.lengths);
      const limit = config ? 1.15 * m.parameterBytes + workspaceBytes(config, T) : NaN;
      mem.push([model, env, simd, threads, mib(m.parameterBytes), mib(att[0].memoryAfterLoad.wasmBytes), mib(m.wasmBytes),
        config ? mib(limit) : '?', config ? (m.wasmBytes <= limit ? 'met' : 'MISSED') : '?']);
    }
  }
  console.log('### Forward, logits + every layer\'s attention (median of every timed run)\n');
  table(['network', 'env', 'attnscope build', 'threads', 'T', 'attnscope', 'onnxruntime-web', 'ORT ÷ attnscope', 'runs', '≥ 1.5×', 'CPU time, attnscope / ORT (Node)'], forward);
  const scaling = secondThread(results);
  if (scaling.length) {
    console.log('### The second thread: 1 thread ÷ 2 threads, per round (each round runs both; the median of its timed runs)\n');
    table(['network', 'env', 'library', 'T', '1 thread', '2 threads', 'ratio per round', 'median ratio', '≥ 1.7×'], scaling);
  }
  console.log('### Load: bytes in memory → first result (attnscope loadModel + forward; ORT session creation + run)\n');
  table(['network', 'env', 'attnscope build', 'threads', 'attnscope', 'onnxruntime-web', 'ORT ÷ attnscope', 'no slower'], load);
  console.log('### WASM memory (attnscope)\n');
  table(['network', 'env', 'attnscope build', 'threads', 'parameters (F32)', 'after load', `after the ${Math.max(...results.lengths)}-token runs`, '1.15 × parameters + workspace', 'within'], mem);
  if (gen.length) {
    console.log(`### generate: ${results.generate.prompt}-token prompt, ${results.generate.tokens} new tokens, KV cache against re-running the sequence per token\n`);
    table(['network', 'env', 'attnscope build', 'threads', 'tokens', 'with the cache', 're-run', 'ratio', 'same tokens', '≥ 10×'], gen);
  }
  const agree = Object.entries(results.agreement);
  if (agree.length) {
    console.log('### Agreement (Node, 1 thread, first run at each length)\n');
    // Per build ({ baseline: rows, relaxed: rows }); an older result holds one build's rows directly.
    const byBuild = (v) => (v.baseline || v.relaxed ? Object.entries(v) : [['baseline', v]]);
    table(['network', 'attnscope build', 'T', 'max abs Δ logits', 'max abs logit', 'max abs Δ attention'], agree.flatMap(([model, v]) =>
      byBuild(v).flatMap(([simd, rows]) => Object.entries(rows).map(([T, r]) => [model, simd, T, r.logits.maxAbsDiff.toExponential(1), r.logits.maxAbs.toFixed(2), r.attention.maxAbsDiff.toExponential(1)]))));
  }
  console.log(`Forward target (≥ 1.5× on every row): ${targets.every(Boolean) ? 'met' : `MISSED on ${targets.filter((x) => !x).length} of ${targets.length} rows`}.`);
}
