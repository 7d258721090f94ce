// The "Open a model" Patching tab in Chromium: gpt2-lm opened through the file input, every head patched from the
// clean prompt into the corrupted one in the model Worker, the map's numbers against tools/references/hf_patching_reference.py
// (float64 PyTorch); the messages for prompts of different lengths and an answer of two tokens; axe and
// screenshots in both languages at desktop and phone widths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { useBrowser, open, ROOT, ART } from './helpers.js';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const HF = join(ROOT, 'tests/fixtures/hf');
const NAMES = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
const filesOf = (name) => NAMES.map((n) => join(HF, name, n)).filter(existsSync);
const P = JSON.parse(readFileSync(join(HF, 'gpt2-lm', 'patching.json'), 'utf8'));

useBrowser();

async function opened(lang, locale) {
  const session = await open(`#mode=open&lang=${lang}`, locale ? { locale } : undefined);
  await session.page.setInputFiles('#open-files', filesOf('gpt2-lm'));
  await session.page.waitForSelector('#open-patch-btn', { state: 'visible', timeout: 20_000 });
  await session.page.waitForFunction(() => /GPT-2/.test(document.querySelector("#open-info")?.textContent ?? ''), null, { timeout: 20_000 });
  return session;
}

async function patch(page, clean, corrupted, a, b) {
  await page.fill('#open-patch-clean', clean);
  await page.fill('#open-patch-corrupted', corrupted);
  await page.fill('#open-patch-a', a);
  await page.fill('#open-patch-b', b);
  await page.focus('#open-patch-b');
  await page.keyboard.press('Enter'); // the form submits from the keyboard
}

test('every head patched: the map matches PyTorch; different lengths and a two-token answer are explained', async () => {
  const { page, problems, close } = await opened('en');
  await patch(page, P.clean_text, P.corrupted_text, ...P.answers.text);
  await page.waitForSelector('#open-patch-out td[data-value]', { state: 'attached', timeout: 20_000 });
  const cells = await page.$$eval('#open-patch-out td[data-value]', (els) => els.map((e) => [Number(e.dataset.layer), Number(e.dataset.head), Number(e.dataset.value)]));
  assert.equal(cells.length, P.layers * P.heads);
  // Logits agree to ~1e-6 of their size and the clean − corrupted difference is 0.198, so a ratio within 1e-3.
  for (const [l, h, v] of cells) assert.ok(Math.abs(v - P.answers.recovered[l][h]) < 1e-3, `layer ${l} head ${h}: ${v} shown, ${P.answers.recovered[l][h]} from PyTorch`);
  assert.match(await page.textContent('#open-patch-status'), /4 heads patched, 8 tokens each/);
  assert.match(await page.textContent('#open-patch-out figcaption'), /clean -13\.731, corrupted -13\.930/);
  assert.equal(await page.isHidden('#open-patch-cancel'), true);

  await patch(page, P.clean_text, 'the cat sat', ...P.answers.text);
  await page.waitForFunction(() => /same number of tokens/.test(document.querySelector('#open-patch-status').textContent), null, { timeout: 10_000 });
  assert.match(await page.textContent('#open-patch-status'), /the clean one has 8, the corrupted one 3/);
  assert.equal(await page.$('#open-patch-out td'), null, 'no map for a refused input');
  await patch(page, P.clean_text, P.corrupted_text, ' mat', 'b');
  await page.waitForFunction(() => /exactly one token/.test(document.querySelector('#open-patch-status').textContent), null, { timeout: 10_000 });
  assert.match(await page.textContent('#open-patch-status'), /“ mat” is 3 \(␣ m at\)/);
  assert.deepEqual(problems, []);
  await close();
});

for (const [lang, locale] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
  test(`the Patching tab: axe clean, not wider than the screen (${lang}, desktop and phone)`, async () => {
    const { page, close } = await opened(lang, locale);
    await patch(page, P.clean_text, P.corrupted_text, ...P.answers.text);
    await page.waitForSelector('#open-patch-out td[data-value]', { state: 'attached', timeout: 20_000 });
    await page.click('#open-patch-out summary');
    for (const [width, name] of [[1280, 'desktop'], [390, 'phone']]) {
      await page.setViewportSize({ width, height: 844 });
      await page.waitForTimeout(300);
      await page.addScriptTag({ content: AXE });
      const res = await page.evaluate(() => window.axe.run('#open-patch', { resultTypes: ['violations'] }));
      const bad = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
      assert.deepEqual(bad, [], `${lang} ${name}`);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), `${lang} ${name}: wider than the screen`);
      await page.locator('#open-patch').screenshot({ path: join(ART, `open-patching-${lang}-${name}.png`) });
    }
    await close();
  });
}
