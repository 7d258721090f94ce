// Hugging Face checkpoints in Chromium, with no bundler: the package from a static host (an import map for
// @huggingface/tokenizers), a folder URL fetched and streamed, picked Files read in slices, and a cancelled load.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS as ARGS } from '../../scripts/chromium.mjs';
import { ROOT } from './helpers.js';

const reference = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/hf/gpt2-lm/reference.json'), 'utf8')).inputs[0];

// The page a user would write: attnscope and the tokenizer package straight from node_modules-like folders.
const PAGE = `<!doctype html><meta charset="utf-8">
<script type="importmap">{"imports": {"@huggingface/tokenizers": "/node_modules/@huggingface/tokenizers/dist/tokenizers.min.mjs"}}</script>
<script type="module">
  import { init, loadModel, memoryUsage } from '/dist/index.js';
  await init();
  const folder = '/tests/fixtures/hf/gpt2-lm/';
  const run = (model) => { const r = model.forward(${JSON.stringify(reference.text)}); model.dispose(); return { ids: r.ids, tokens: r.tokens, hidden: Array.from(r.hidden.data) }; };
  const fromFolder = run(await loadModel(folder));
  const names = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
  const files = await Promise.all(names.map(async (n) => new File([await (await fetch(folder + n)).blob()], n)));
  const events = [];
  const fromFiles = run(await loadModel(files, { onProgress: (p) => events.push(p) }));
  const before = memoryUsage().heapBytesInUse;
  const controller = new AbortController();
  let aborted = '';
  try {
    await loadModel('/tests/fixtures/hf/llama-sharded/', { signal: controller.signal, onProgress: () => controller.abort(new Error('cancelled')) });
  } catch (error) {
    aborted = error.message;
  }
  window.result = { fromFolder, fromFiles, last: events.at(-1), aborted, flat: memoryUsage().heapBytesInUse === before };
</script>`;

let server;
let url;
let browser;
before(async () => {
  assert.ok(existsSync(join(ROOT, 'dist/index.js')), 'dist/ is built (npm run build)');
  ({ server, url } = await startServer(ROOT, 0));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});
after(async () => {
  await browser?.close();
  await new Promise((ok) => (server ? server.close(ok) : ok()));
});

test('a folder URL and picked Files load gpt2-lm with its tokenizer; a cancelled load frees its memory', async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.route(`${url}hf.html`, (route) => route.fulfill({ contentType: 'text/html', body: PAGE }));
  await page.goto(`${url}hf.html`);
  const result = await page.waitForFunction(() => window.result, null, { timeout: 30_000 }).then((h) => h.jsonValue());
  assert.deepEqual(problems, []);
  for (const from of [result.fromFolder, result.fromFiles]) {
    assert.deepEqual(from.ids, reference.input_ids);
    assert.deepEqual(from.tokens, ['the', '␣cat', '␣sat', '␣on', '␣the', '␣', 'm', 'at']);
    const largest = Math.max(...reference.hidden.data.map(Math.abs));
    assert.ok(from.hidden.every((x, i) => Math.abs(x - reference.hidden.data[i]) <= 1e-4 * largest));
  }
  const size = readFileSync(join(ROOT, 'tests/fixtures/hf/gpt2-lm/model.safetensors')).length;
  assert.deepEqual(result.last, { loaded: size, total: size, file: 'model.safetensors' });
  assert.equal(result.aborted, 'cancelled');
  assert.equal(result.flat, true);
  await page.close();
});
