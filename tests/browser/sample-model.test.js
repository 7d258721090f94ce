// "Try the sample model": the tiny GPT-2-shaped checkpoint served with the page
// (tools/references/make_sample_model.py) opens in one click, gets every view of an opened model, and is in the
// service worker's precache list (so it opens offline); both languages at 1280 and 390 px, axe clean, no request off the page's server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, settled, axe, shot, ROOT, SITE } from './helpers.js';
import { loaded } from './open-helpers.js';

useBrowser();

const SAMPLE = join(ROOT, 'web/demo/sample/tiny-gpt2');

test('the sample is small and its files are precached by the service worker', () => {
  const files = readdirSync(SAMPLE);
  assert.deepEqual(files.sort(), ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
  const bytes = files.reduce((n, f) => n + statSync(join(SAMPLE, f)).size, 0);
  assert.ok(bytes < 100_000, `the sample is ${bytes} bytes`);
  const sw = readFileSync(join(SITE, 'sw.js'), 'utf8');
  const assets = readdirSync(join(SITE, 'assets'));
  for (const stem of ['model', 'tokenizer', 'tokenizer_config', 'config']) {
    const asset = assets.find((a) => new RegExp(`^${stem}-[\\w-]+\\.(json|safetensors)$`).test(a));
    assert.ok(asset, `${stem} is an asset of the build`);
    assert.ok(sw.includes(`./assets/${asset}`), `${asset} is precached`);
  }
});

for (const [lang, locale] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
  test(`one click opens the sample model with every view (${lang}, 1280 and 390 px, axe)`, async () => {
    const { page, problems, close } = await open(`#mode=open&lang=${lang}`, { locale });
    assert.match(await page.textContent('.open-sample'), lang === 'zh' ? /随机/ : /random/);
    await page.click('#open-sample');
    await page.waitForSelector('#open-tokens .tok', { timeout: 20_000 });
    await loaded(page);
    await settled(page);
    assert.match(await page.textContent('#open-info'), lang === 'zh' ? /^GPT-2：2 层 × 4 头（多头注意力），隐藏维度 32/ : /^GPT-2: 2 layers × 4 heads \(multi-head attention\), hidden 32/);
    // The page's first sentence, tokenized by the sample's tokenizer, and the steps table checking itself.
    assert.ok(await page.locator('#open-tokens .tok').count() > 10);
    assert.equal(await page.locator('#open-steps .check.ok').count(), 1);
    assert.equal(await page.locator('#open-steps .check.bad').count(), 0);
    assert.deepEqual(await axe(page), []);
    await shot(page, `sample-model-${lang}-desktop`, { fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await settled(page);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), true);
    assert.deepEqual(await axe(page), []);
    await shot(page, `sample-model-${lang}-phone`, { fullPage: true });
    assert.deepEqual(problems, []);
    await close();
  });
}
