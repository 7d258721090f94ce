// The first screen on a phone (issue #33, item 4): within the first 390 × 844 px, the sentence box and a live map of
// the selected head, which follows the typing; the introduction reads below. Both languages, axe clean.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, open, settled, axe, shot, demo } from './helpers.js';

useBrowser();

const inFirstScreen = (page, sel) => page.$eval(sel, (e) => {
  const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && r.top >= 0 && r.bottom <= 844;
});

for (const [lang, locale] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
  test(`phone, first screen: the sentence box and a live map of the selected head (${lang}, 390 × 844, axe)`, async () => {
    const { page, problems, close } = await open(`#lang=${lang}`, { locale, width: 390, height: 844 });
    assert.equal(await page.evaluate(() => window.scrollY), 0);
    assert.equal(await inFirstScreen(page, '#text'), true, 'the sentence box is in the first screen');
    assert.equal(await page.isVisible('#glance canvas'), true);
    assert.equal(await inFirstScreen(page, '#glance canvas'), true, 'the live map is in the first screen');
    const canvasSize = await page.$eval('#glance canvas', (c) => c.getBoundingClientRect().width);
    assert.ok(canvasSize >= 150, `the map is ${canvasSize} px wide`);
    // The map is the selected layer and head of the page's own pass: its name says which.
    const d = await demo(page);
    assert.equal(await page.getAttribute('#glance', 'data-layer'), String(d.last.layer));
    assert.match(await page.textContent('#glance figcaption'), lang === 'zh' ? new RegExp(`第 ${d.last.layer + 1} 层`) : new RegExp(`Layer ${d.last.layer + 1}, head`));
    // By default layer 1's previous-token head (the model file names it): a diagonal just below the main one, named.
    assert.deepEqual([d.last.layer, d.state.head], [0, 0]);
    assert.match(await page.textContent('#glance figcaption'), lang === 'zh' ? /“前一个字符（训练时引导）”/ : /“previous token \(guided in training\)”/);
    // Typing redraws it.
    const before = await page.$eval('#glance canvas', (c) => c.toDataURL());
    await page.fill('#text', lang === 'zh' ? '我们一起去公园散步吧。' : 'A cat sat on the mat.');
    await settled(page);
    assert.notEqual(await page.$eval('#glance canvas', (c) => c.toDataURL()), before);
    assert.match(await page.getAttribute('#glance canvas', 'aria-label'), lang === 'zh' ? /最强的权重/ : /strongest weights/);
    // The introduction is still on the page, below the sentence.
    const top = (sel) => page.$eval(sel, (e) => e.getBoundingClientRect().top);
    const [introTop, cardTop] = [await top('.intro'), await top('.input-card')];
    assert.ok(introTop > cardTop);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), true);
    assert.deepEqual(await axe(page), []);
    await shot(page, `first-screen-${lang}-phone`);
    // On a desktop the model view beside the sentence is the live map: this one is not drawn there.
    await page.setViewportSize({ width: 1280, height: 800 });
    await settled(page);
    assert.equal(await page.isHidden('#glance'), true);
    assert.deepEqual(problems, []);
    await close();
  });
}

for (const [lang, locale, words] of [['en', 'en-US', /^New to attention\? The guided path/], ['zh', 'zh-CN', /^第一次接触注意力？引导路径/]]) {
  test(`the intro leads to the guided path, about 1,700 px down, with the focus on its start (${lang})`, async () => {
    const { page, problems, close } = await open(`#lang=${lang}`, { locale, width: 1280, height: 800 });
    await settled(page);
    assert.match(await page.textContent('#intro-guide'), words);
    // The page's own hash, once its debounced replaceState has written it (read before, it can still be "#lang=…").
    await page.waitForFunction(() => location.hash === window.__attnscopeDemo.hash, null, { timeout: 5000 });
    const hashBefore = await page.evaluate(() => location.hash);
    await page.click('#intro-guide');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'guide-start');
    const top = await page.$eval('#guide-section', (e) => e.getBoundingClientRect().top);
    assert.ok(top >= -1 && top < 200, `the guide is at ${top} px`);
    // The page's state (its hash) is untouched.
    await settled(page);
    assert.equal(await page.evaluate(() => location.hash), hashBefore);
    assert.deepEqual(problems, []);
    await close();
  });
}
