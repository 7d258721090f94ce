// Issue #33 item 3: a long input's token chips fold away, so the maps come up under the sentence box; a short
// input offers no fold. Both languages, a desktop's width and a phone's, axe clean folded and open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, open, settled, axe, shot } from './helpers.js';
import { loaded } from './open-helpers.js';

useBrowser();

// 100 characters: with <bos> first, 101 tokens.
const LONG = 'the cat sat on the mat and the dog ran '.repeat(3).slice(0, 100);
const WORDS = { en: { hide: 'Hide the 101 tokens', show: 'Show the 101 tokens' }, zh: { hide: '收起 101 个词元', show: '展开 101 个词元' } };
const top = (page, sel) => page.$eval(sel, (e) => e.getBoundingClientRect().top + window.scrollY);

for (const [lang, locale, width, height] of [['en', 'en-US', 1280, 800], ['zh', 'zh-CN', 390, 844]]) {
  test(`a long input's token chips fold away and back (${lang}, ${width} px, axe)`, async () => {
    const { page, problems, close } = await open(`#lang=${lang}&mode=self&model=trained`, { locale, width, height });
    // The default sentence is short: nothing to fold.
    assert.equal(await page.$eval('#tokens-toggle', (b) => b.hidden), true);
    await page.fill('#text', LONG);
    await settled(page);
    const toggle = page.locator('#tokens-toggle');
    assert.equal(await toggle.textContent(), WORDS[lang].hide);
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    const before = await top(page, '#tokens-hint');
    await toggle.click();
    await settled(page);
    assert.equal(await toggle.textContent(), WORDS[lang].show);
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    assert.equal(await page.$eval('#tokens', (e) => e.hidden), true);
    // What follows the chips moves up by the strip's height (at least four rows of chips).
    const after = await top(page, '#tokens-hint');
    assert.ok(before - after >= 100, `the text below the chips moved up ${before - after} px`);
    // Folded it stays while the reader types and picks another query with the scrubber.
    await page.fill('#text', LONG.slice(0, 99));
    await settled(page);
    assert.equal(await page.$eval('#tokens', (e) => e.hidden), true);
    assert.equal(await toggle.textContent(), WORDS[lang].show.replace('101', '100'));
    assert.deepEqual(await axe(page, ['#tokens-toggle', '#tokens', '#tokens-hint']), []);
    await shot(page, `token-fold-${lang}-${width}`);
    await toggle.click();
    await settled(page);
    assert.equal(await page.$eval('#tokens', (e) => e.hidden), false);
    assert.equal(await page.locator('#tokens .tok').count(), 100);
    // Back to a short sentence: the chips are shown and no fold is offered.
    await page.fill('#text', 'short');
    await settled(page);
    assert.equal(await page.$eval('#tokens-toggle', (b) => b.hidden), true);
    assert.equal(await page.$eval('#tokens', (e) => e.hidden), false);
    assert.deepEqual(problems, []);
    await close();
  });
}

test('the fold is not offered in the other tabs', async () => {
  const { page, problems, close } = await open('#mode=self&model=trained');
  await page.fill('#text', LONG);
  await settled(page);
  await page.click('#tab-open');
  await settled(page);
  assert.equal(await page.$eval('#tokens-toggle', (b) => b.hidden), true);
  // Back in the first tab the long sentence's fold is there again.
  await page.click('#tab-self');
  await settled(page);
  assert.equal(await page.$eval('#tokens-toggle', (b) => b.hidden), false);
  assert.deepEqual(problems, []);
  await close();
});

// An opened model's chips fold the same way (the sample model: its tokenizer gives more than 64 tokens for LONG twice),
// and its steps table lists the strongest keys.
for (const [lang, locale, width, height] of [['en', 'en-US', 1280, 800], ['zh', 'zh-CN', 390, 844]]) {
  test(`an opened model's long input folds its chips too (${lang}, ${width} px, axe)`, async () => {
    const { page, problems, close } = await open(`#mode=open&lang=${lang}`, { locale, width, height });
    await page.click('#open-sample');
    await page.waitForSelector('#open-tokens .tok', { timeout: 20_000 });
    await loaded(page);
    const toggle = page.locator('#open-tokens-toggle');
    assert.equal(await toggle.isHidden(), true);
    await page.fill('#open-text', LONG + LONG);
    await settled(page);
    await page.waitForFunction(() => document.querySelectorAll('#open-tokens .tok').length > 64, null, { timeout: 20_000 });
    const n = await page.locator('#open-tokens .tok').count();
    assert.equal(await toggle.textContent(), WORDS[lang].hide.replace('101', String(n)));
    const before = await top(page, '#open-predict');
    await toggle.click();
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    assert.equal(await page.$eval('#open-tokens', (e) => e.hidden), true);
    assert.ok(before - (await top(page, '#open-predict')) >= 100, 'the predictions moved up under the text box');
    assert.deepEqual(await axe(page, '#open-text-row'), []);
    await shot(page, `token-fold-open-${lang}-${width}`);
    await toggle.click();
    assert.equal(await page.$eval('#open-tokens', (e) => e.hidden), false);
    // The steps table of a long input lists the strongest keys, in order (every key re-laid out at each keystroke
    // cost seconds at 500 tokens); its sum is still over every key, and a button lists them all.
    await page.waitForSelector('#open-steps .steps-table td.w');
    const listed = () => page.$$eval('#open-steps .steps-table tbody th.k sub', (subs) => subs.map((s) => Number(s.textContent)));
    const few = await listed();
    assert.ok(few.length >= 32 && few.length <= 34, `${few.length} keys listed`);
    assert.deepEqual(few, [...few].sort((a, b) => a - b));
    assert.ok(few.includes(n - 1), 'the query itself is listed');
    const weights = await page.$$eval('#open-steps .steps-table td.w', (tds) => tds.map((td) => Number(td.dataset.value)));
    const sum = Number(await page.getAttribute('#open-steps td.wsum', 'data-value'));
    assert.ok(Math.abs(sum - 1) < 1e-6 && weights.reduce((a, b) => a + b, 0) < sum + 1e-9);
    const every = page.locator('#open-steps [data-every-key]');
    assert.equal(await every.textContent(), lang === 'zh' ? `显示全部 ${n} 个键` : `Show all ${n} keys`);
    await every.click();
    assert.deepEqual(await listed(), Array.from({ length: n }, (_, j) => j));
    assert.equal(await every.textContent(), lang === 'zh' ? '只显示最强的 32 个' : 'Only the 32 strongest');
    await every.click();
    assert.deepEqual(await listed(), few);
    // An early query sees fewer keys than the list holds: it lists those it sees, not keys the mask gave 0.
    await page.click('#open-tokens .tok[data-i="10"]');
    await page.waitForFunction(() => document.querySelector('#open-steps')?.dataset.query === '10' && document.querySelector('#open-steps').getAttribute('aria-busy') !== 'true', null, { timeout: 20_000 });
    assert.deepEqual(await listed(), Array.from({ length: 11 }, (_, j) => j));
    assert.equal(await page.textContent('#open-steps .steps-keys > span'), lang === 'zh'
      ? `此查询能看到的 11 个键（掩码挡住了其余 ${n - 11} 个）；求和与校验覆盖全部 ${n} 个键。`
      : `The 11 keys this query sees (the mask blocks the other ${n - 11}); the sums and the check are over all ${n}.`);
    // A query that sees more keys than the list holds: its strongest, among those it sees.
    await page.click(`#open-tokens .tok[data-i="${n - 20}"]`);
    await page.waitForFunction((q) => document.querySelector('#open-steps')?.dataset.query === q && document.querySelector('#open-steps').getAttribute('aria-busy') !== 'true', String(n - 20), { timeout: 20_000 });
    // The rows after the first screenful go in a frame or two later.
    await page.waitForFunction(() => document.querySelectorAll('#open-steps .steps-table tbody tr').length >= 32, null, { timeout: 20_000 });
    const seen = await listed();
    assert.ok(seen.length >= 32 && seen.every((j) => j <= n - 20), `${seen.length} keys listed, all at most ${n - 20}`);
    assert.equal(await page.textContent('#open-steps .steps-keys > span'), lang === 'zh'
      ? `此查询能看到的 ${n - 19} 个键中权重最大的 ${seen.length} 个（掩码挡住了其余 19 个），按位置排列；求和与校验覆盖全部 ${n} 个键。`
      : `The ${seen.length} keys with the largest weights of the ${n - 19} this query sees (the mask blocks the other 19), in order; the sums and the check are over all ${n}.`);
    assert.deepEqual(problems, []);
    await close();
  });
}
