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

test('the sample\'s prefilled prompts patch as they are, and its link reopens the sample (a walk of 2026-12-06 found neither)', async () => {
  const { page, context, problems, close } = await open('#mode=open&lang=en', { width: 1280, height: 900 });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.click('#open-sample');
  await loaded(page);
  await settled(page);
  // Its tokenizer spells " Mary" in 5 tokens: the names cannot be its answers. The sample's own pair runs.
  assert.equal(await page.inputValue('#open-patch-a'), ' sat');
  await page.click('#open-patch-btn');
  await page.waitForSelector('#open-patch-out td[data-value]', { state: 'attached', timeout: 20_000 });
  assert.equal(await page.locator('#open-patch-out td[data-value]').count(), 2 * 4);
  assert.match(await page.textContent('#open-patch-status'), /^8 heads patched, 14 tokens each\.$/);
  // A view of its own: head 3 of layer 2.
  await page.selectOption('#open-layer', '1');
  await page.selectOption('#open-head', '2');
  await settled(page);
  // Copy link: no word of files to pick again, and the link names the sample.
  await page.click('#copy-link');
  await page.waitForFunction(() => /^(Link copied|Link is in the address bar)$/.test(document.querySelector('#copy-link').textContent), null, { timeout: 5000 });
  const link = new URL(await page.$eval('#copy-link', (b) => b.dataset.url));
  assert.equal(new URLSearchParams(link.hash.slice(1)).get('osample'), '1');
  await close();
  // The link, opened afresh: the sample loads by itself (its files come with the page), with the link's text.
  const again = await open(link.hash, { width: 390, height: 844 });
  await loaded(again.page);
  await settled(again.page);
  assert.match(await again.page.textContent('#open-info'), /^GPT-2: 2 layers × 4 heads \(multi-head attention\), hidden 32/);
  assert.equal(await again.page.inputValue('#open-text'), new URLSearchParams(link.hash.slice(1)).get('otext'));
  // The link's view, not the model's first one.
  assert.deepEqual([await again.page.inputValue('#open-layer'), await again.page.inputValue('#open-head')], ['1', '2']);
  assert.match(await again.page.textContent('#open-status'), /^Memory needed: .* Loaded: /); // not "pick the same files again"
  assert.deepEqual([...problems, ...again.problems], []);
  await again.close();
});
