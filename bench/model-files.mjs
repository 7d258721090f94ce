// How long loadModel takes to reject a corrupted model file, next to loading the intact one (same run, same files).
// Usage: node bench/model-files.mjs   (after node scripts/build.mjs). Prints a table; nothing is asserted.
import { readFileSync } from 'node:fs';
import { init, loadModel } from '../dist/index.js';

await init();
const file = new Uint8Array(readFileSync(new URL('../models/char-lm.safetensors', import.meta.url)));
const view = new DataView(file.buffer, file.byteOffset);
const length = Number(view.getBigUint64(0, true));
const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + length)));

function encode(h) {
  const text = new TextEncoder().encode(JSON.stringify(h));
  const out = new Uint8Array(8 + text.length + file.length - 8 - length);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  out.set(file.subarray(8 + length), 8 + text.length);
  return out;
}
const edited = (edit) => {
  const h = structuredClone(header);
  edit(h);
  return encode(h);
};
const metadata = (key, edit) => edited((h) => {
  const v = JSON.parse(h.__metadata__[key]);
  edit(v);
  h.__metadata__[key] = JSON.stringify(v);
});

const cases = [
  ['intact (loads)', file],
  ['truncated by 1 byte', file.subarray(0, file.length - 1)],
  ['header length 2^63', (() => { const f = file.slice(); f[7] = 0x80; return f; })()],
  ['last tensor dtype F16', edited((h) => { h['head.bias'].dtype = 'F16'; })],
  ['config.n_layers = 1e6', metadata('config', (c) => { c.n_layers = 1e6; })],
  ['config.d_ff one too many', metadata('config', (c) => { c.d_ff += 1; })],
  ['last tensor renamed (strict load)', edited((h) => { h['head.biax'] = h['head.bias']; delete h['head.bias']; })],
  ['vocab.bos_id = 99999', metadata('vocab', (v) => { v.bos_id = 99999; })],
];

const runs = 15;
console.log(`char-lm.safetensors, ${(file.length / 1e6).toFixed(2)} MB; median and max of ${runs} runs after one warm-up\n`);
console.log('| case | median ms | max ms | result |');
console.log('|---|---|---|---|');
for (const [name, bytes] of cases) {
  const times = [];
  let result = '';
  for (let i = 0; i <= runs; i++) {
    const started = performance.now();
    try {
      const model = await loadModel(bytes);
      result = 'loaded';
      model.dispose();
    } catch (error) {
      result = `${error.name}`;
    }
    if (i > 0) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(`| ${name} | ${times[runs >> 1].toFixed(2)} | ${times[runs - 1].toFixed(2)} | ${result} |`);
}
