// Encodes each HF fixture's "text" with the npm package @huggingface/tokenizers and compares with its hand-derived
// input_ids. The package is not a dependency of attnscope: install it elsewhere and pass its entry point, e.g.
//   (cd /tmp/tk && npm i @huggingface/tokenizers)
//   node tools/references/check_hf_tokenizers.mjs /tmp/tk/node_modules/@huggingface/tokenizers/dist/tokenizers.mjs
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const entry = process.argv[2];
if (!entry) throw new Error('usage: node tools/references/check_hf_tokenizers.mjs <path to tokenizers.mjs>');
const { Tokenizer } = await import(pathToFileURL(path.resolve(entry)).href);
const root = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'tests', 'fixtures', 'hf');
const read = (...p) => JSON.parse(readFileSync(path.join(root, ...p), 'utf8'));
let bad = 0;
for (const name of readdirSync(root)) {
  if (!existsSync(path.join(root, name, 'tokenizer.json'))) continue;
  const tok = new Tokenizer(read(name, 'tokenizer.json'), read(name, 'tokenizer_config.json'));
  for (const input of read(name, 'reference.json').inputs.filter((i) => 'text' in i)) {
    const ids = tok.encode(input.text).ids;
    const same = JSON.stringify(ids) === JSON.stringify(input.input_ids);
    bad += same ? 0 : 1;
    console.log(`${same ? 'same' : 'DIFFERENT'} ${name} ${JSON.stringify(input.text)} -> ${JSON.stringify(ids)}` +
      (same ? '' : ` (reference ${JSON.stringify(input.input_ids)})`));
  }
}
process.exit(bad ? 1 : 0);
