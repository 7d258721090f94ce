// Two builds of the package side by side in one process: the hot paths (attention, both models) timed interleaved (so the loaded machine's
// drift hits both alike) and checked to give the same results. For a change that must not slow them, e.g. which
// files are built -Oz. Usage: node bench/compare-builds.mjs <before-dist> [<after-dist> (default: dist)] [--rounds N]
// [--only TEXT] (only the hot paths whose name contains TEXT) [--configs 2048x768x12,...] (the MultiHeadAttention sizes;
// default 16x64x4,128x512x8) [--threads N] (init({ threads: N }) for both builds) [--out] (forward() into caller-owned
// arrays, so a 192 MiB weights array is not allocated and faulted in on every call: the kernels' time shows)
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatTable, fmtMs, makeCase, maxAbsDiff, timeInterleaved } from './common.mjs';

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '3' }, only: { type: 'string', default: '' }, configs: { type: 'string', default: '16x64x4,128x512x8' },
    threads: { type: 'string', default: '1' }, out: { type: 'boolean', default: false },
  },
});
const rounds = Number(options.rounds);
const only = options.only;
const configs = options.configs.split(',').map((c) => c.split('x').map(Number));
const threads = Number(options.threads);
const useOut = options.out;
const [beforeDir, afterDir = 'dist'] = positionals;
if (!beforeDir) throw new Error('usage: node bench/compare-builds.mjs <before-dist> [<after-dist>] [--rounds N]');

const builds = {};
for (const [id, dir] of [['before', beforeDir], ['after', afterDir]]) {
  const lib = await import(pathToFileURL(path.resolve(dir, 'index.js')).href);
  await lib.init(threads > 1 ? { threads } : undefined);
  builds[id] = { lib, dir, wasmBytes: statSync(path.resolve(dir, 'attnscope.wasm')).size };
}
const model = readFileSync(new URL('../models/char-lm.safetensors', import.meta.url));
const prompt = 'the attention of the model ';

// Each case: per build, a function to time; its result is compared between the builds.
const cases = [];
for (const [L, E, H] of configs) {
  const c = makeCase(L, E, H);
  const per = {};
  for (const [id, { lib }] of Object.entries(builds)) {
    const mha = new lib.MultiHeadAttention({ embedDim: E, numHeads: H, bias: true, seed: 0 });
    mha.loadStateDict(c.state);
    const options = { needWeights: true, averageWeights: false };
    if (useOut) options.out = { output: new Float32Array(L * E), weights: new Float32Array(H * L * L) };
    per[id] = () => mha.forward({ data: c.x, shape: [1, L, E] }, undefined, undefined, options).output.data;
  }
  cases.push({ name: `MultiHeadAttention.forward (${L}, ${E}, ${H})${threads > 1 ? `, ${threads} threads` : ''}`, per });
}
const lms = {};
const s2s = {};
for (const [id, { lib }] of Object.entries(builds)) {
  lms[id] = await lib.loadModel(model);
  s2s[id] = await lib.loadModel(readFileSync(new URL('../models/dates-seq2seq.safetensors', import.meta.url)));
}
cases.push({ name: 'LanguageModel.forward (char-lm, 27 tokens)', per: Object.fromEntries(Object.entries(lms).map(([id, lm]) => [id, () => lm.forward(prompt).logits.data])) });
cases.push({ name: 'LanguageModel.generate (char-lm, 32 new)', per: Object.fromEntries(Object.entries(lms).map(([id, lm]) => [id, () => lm.generate(prompt, { maxNewTokens: 32 }).ids])) });
cases.push({ name: 'Seq2SeqModel.translate (dates-seq2seq)', per: Object.fromEntries(Object.entries(s2s).map(([id, m]) => [id, () => m.translate('the first of june two thousand').outputIds])) });

const rows = [['hot path', 'before ms', 'after ms', 'after ÷ before (each round)', 'median ratio', 'max |diff|']];
for (const { name, per } of cases.filter((c) => c.name.includes(only))) {
  const ratios = [];
  let last;
  for (let r = 0; r < rounds; r++) {
    // The order alternates between rounds: the first timed build does not always get the warmer machine.
    const order = r % 2 ? ['after', 'before'] : ['before', 'after'];
    last = await timeInterleaved(Object.fromEntries(order.map((id) => [id, per[id]])), { budgetMs: 3000, minMs: 600 });
    ratios.push(last.after.ms / last.before.ms);
  }
  const diff = maxAbsDiff(Float32Array.from(last.before.last), Float32Array.from(last.after.last));
  const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)];
  rows.push([name, fmtMs(last.before.ms), fmtMs(last.after.ms), ratios.map((x) => x.toFixed(3)).join(' '), median.toFixed(3), String(diff)]);
}
for (const m of [...Object.values(lms), ...Object.values(s2s)]) m.dispose();
console.log(`before: ${beforeDir} (${builds.before.wasmBytes.toLocaleString('en-US')} B .wasm); after: ${afterDir} (${builds.after.wasmBytes.toLocaleString('en-US')} B .wasm); Node ${process.version}; ${rounds} rounds, ms = median per call of the last round\n`);
console.log(formatTable(rows));
