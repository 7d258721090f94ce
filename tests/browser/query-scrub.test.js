// Issue #33 item 3: at a long input the query is picked beside the maps, by a scrubber, not by scrolling back up to the
// token chips: the maps' selected row, the chip, the steps panel and the link all follow it, by pointer or by keys,
// in both languages at a desktop's width and a phone's, and the page stays within the screen and axe clean.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, open, settled, axe, shot, demo } from './helpers.js';

useBrowser();

// 100 characters: with <bos> first, 101 tokens, so the last token (the default query) is row 100.
const LONG = 'the cat sat on the mat and the dog ran '.repeat(3).slice(0, 100);
const WORDS = { en: 'Query (row)', zh: '查询（行）' };

for (const [lang, locale, width, height] of [['en', 'en-US', 1280, 800], ['zh', 'zh-CN', 390, 844]]) {
  test(`a query scrubber beside the maps picks the row at a long input (${lang}, ${width} px, axe)`, async () => {
    const { page, problems, close } = await open(`#lang=${lang}&mode=self&model=trained`, { locale, width, height });
    await page.fill('#text', LONG);
    await settled(page);
    const range = page.locator('#query-range');
    assert.equal(await page.textContent('#query-pick > span:first-child'), WORDS[lang]);
    assert.equal(await range.getAttribute('max'), '100');
    assert.equal(await range.inputValue(), '100');
    // By keys: Home is the first token, each arrow one more.
    await range.focus();
    await page.keyboard.press('Home');
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
    await settled(page);
    assert.equal((await demo(page)).state.query, 5);
    // LONG[4] is the fifth character, token 5 after <bos>.
    assert.equal(await page.textContent('#query-out'), `${LONG[4] === ' ' ? '␣' : LONG[4]} 5`);
    assert.equal(await page.$eval('#query-select', (s) => s.value), '5');
    assert.equal(await page.$eval('#tokens [aria-pressed="true"] sub', (e) => e.textContent), '5');
    assert.equal(new URLSearchParams((await demo(page)).hash.slice(1)).get('q'), '5');
    // By pointer: the scrubber's middle is about the middle row.
    const box = await range.boundingBox();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await settled(page);
    const q = (await demo(page)).state.query;
    assert.ok(q >= 40 && q <= 60, `the middle of the scrubber picked row ${q}`);
    assert.equal(await page.$eval('#query-select', (s) => s.value), String(q));
    // The chip the pointer picked stays the one the steps panel explains; the scrubber sits by the maps, not the chips.
    const [scrubTop, mapsTop, mapsBottom] = await page.evaluate(() => [
      document.querySelector('#query-range').getBoundingClientRect().top,
      ...(({ top, bottom }) => [top, bottom])(document.querySelector('#maps-section').getBoundingClientRect())]);
    assert.ok(scrubTop >= mapsTop && scrubTop <= mapsBottom, 'the scrubber is in the maps section');
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), true);
    await page.$eval('#maps-section', (e) => e.scrollIntoView());
    await shot(page, `query-scrub-${lang}-${width}`);
    assert.deepEqual(await axe(page, '#maps-section'), []);
    assert.deepEqual(problems, []);
    await close();
  });
}

test('decoding has no query scrubber: the step is the query there', async () => {
  const { page, problems, close } = await open('#mode=s2s');
  assert.equal(await page.$eval('#query-pick', (e) => e.hidden), true);
  assert.deepEqual(problems, []);
  await close();
});
