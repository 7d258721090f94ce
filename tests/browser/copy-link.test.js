// Issue #33's "Copy link" for a model opened from files on a disk: the link carries the text and the view, not the
// files, so the button says the files must be picked again (in both languages, whether or not the clipboard took the
// link); a link of our own model says only that it was copied.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, open, shot } from './helpers.js';
import { filesOf, loaded } from './open-helpers.js';

useBrowser();

// The page's words, written out here rather than read from open/messages.js, so a change to them is seen.
const FILES = { en: /files must be picked again/, zh: /需要重新选择它的文件/ };
const DONE = { en: /^(Link copied|Link is in the address bar)$/, zh: /^(链接已复制|链接已在地址栏中)$/ };

/** Click Copy link and read what the button then says: it answers after the clipboard does, not on the click. */
async function copyLink(page) {
  const before = await page.textContent('#copy-link');
  await page.click('#copy-link');
  await page.waitForFunction((b) => document.querySelector('#copy-link').textContent !== b, before, { timeout: 5000 });
  return page.textContent('#copy-link');
}

for (const [lang, locale] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
  test(`Copy link of a model opened from local files says the files must be picked again (${lang}, 390 px)`, async () => {
    const { page, context, problems, close } = await open(`#mode=open&lang=${lang}`, { locale, width: 390, height: 844 });
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.setInputFiles('#open-files', filesOf('gpt2-lm'));
    await loaded(page);
    assert.match(await copyLink(page), FILES[lang]);
    // The longer words wrap inside the card on a phone rather than running past its edge.
    const [btn, card] = await page.$eval('#copy-link', (b) => [b, b.closest('.card')].map((e) => e.getBoundingClientRect().right));
    assert.ok(btn <= card, `the button ends at ${btn} px, its card at ${card} px`);
    // The link itself holds the view: the mode and the text, and no file.
    const link = new URL(await page.$eval('#copy-link', (b) => b.dataset.url));
    const p = new URLSearchParams(link.hash.slice(1));
    assert.equal(p.get('mode'), 'open');
    assert.equal(p.get('otext'), await page.$eval('#open-text', (e) => e.value));
    assert.equal(p.has('ourl'), false);
    await shot(page, `copy-link-files-${lang}`);
    assert.deepEqual(problems, []);
    await close();
  });

  test(`Copy link of our own model says only that the link was copied (${lang})`, async () => {
    const { page, problems, close } = await open(`#mode=self&model=trained&lang=${lang}`, { locale });
    assert.match(await copyLink(page), DONE[lang]);
    assert.deepEqual(problems, []);
    await close();
  });
}
