// Issue #33's "★ pre…": the model view's head badges are never cut, at a desktop's width as at a phone's
// (phone-words.test.js checks 390 px): a name too long for its two lines gives way to its short form and score.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { useBrowser, open, ART } from './helpers.js';

useBrowser();

for (const [lang, locale] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
  for (const width of [1280, 1024]) {
    test(`the model view's head badges are whole at ${width} px (${lang})`, async () => {
      const { page, problems, close } = await open(`#lang=${lang}&mode=self&model=trained`, { locale, width, height: 800 });
      const badges = await page.$$eval('#modelview .mv-badge:not([hidden])', (els) => els.map((b) => ({
        text: b.textContent, clipped: b.scrollHeight > b.clientHeight + 1 || b.scrollWidth > b.clientWidth + 1 })));
      assert.ok(badges.length >= 4, `${badges.length} badges`);
      assert.deepEqual(badges.filter((b) => b.clipped || /…/.test(b.text)), [], 'a badge is cut');
      // Each still carries its score, as the legend gives it.
      for (const b of badges) assert.match(b.text, /· \d\.\d\d$/, b.text);
      await page.locator('#modelview').screenshot({ path: join(ART, `badges-${lang}-${width}.png`) });
      assert.deepEqual(problems, []);
      await close();
    });
  }
}
