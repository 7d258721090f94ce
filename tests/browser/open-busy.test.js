// Issue #33 item 3: while an opened model's Worker computes a new input, the maps shown are of the old one: the section
// is marked busy (dimmed and "computing…", shown by CSS only once the pass has taken 200 ms), and so are the tokens and
// predictions under the text box, and unmarked when the new maps arrive. In both languages, on the sample model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, open, settled } from './helpers.js';
import { loaded } from './open-helpers.js';

useBrowser();

/** Holds the page's forward requests to its Worker until `window.__releaseForwards()`: a pass then lasts as long as the
 * test needs to look at it. */
async function holdForwards(page) {
  await page.evaluate(() => {
    const post = Worker.prototype.postMessage;
    window.__heldForwards = [];
    window.__releaseForwards = () => { Worker.prototype.postMessage = post; for (const send of window.__heldForwards.splice(0)) send(); };
    Worker.prototype.postMessage = function (message, ...rest) {
      if (message?.type === 'forward') { window.__heldForwards.push(() => post.call(this, message, ...rest)); return undefined; }
      return post.call(this, message, ...rest);
    };
  });
}

const WORDS = { en: 'computing…', zh: '正在计算…' };

for (const [lang, locale] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
  test(`an opened model's maps are marked busy while the Worker computes, and unmarked after (${lang})`, async () => {
    const { page, problems, close } = await open(`#mode=open&lang=${lang}`, { locale });
    await page.click('#open-sample');
    await loaded(page);
    await settled(page);
    assert.equal(await page.$eval('#open-section', (s) => s.classList.contains('busy')), false);
    // The Worker is held, so the pass is still running when the page is looked at: the sample model is fast enough
    // that its answer can arrive before the next frame, and the busy state is then never drawn at all.
    await holdForwards(page);
    await page.fill('#open-text', lang === 'zh' ? '今天天气很好' : 'A new sentence to read.');
    await page.waitForSelector('#open-section.busy', { timeout: 10_000 });
    const marks = await page.evaluate(() => {
      const sec = document.querySelector('#open-section');
      return [sec.getAttribute('aria-busy'), document.querySelector('#open-busy').textContent,
        document.querySelector('#open-text-row').classList.contains('busy'), document.querySelector('#open-tokens').getAttribute('aria-busy'),
        document.querySelector('#open-predict').getAttribute('aria-busy')];
    });
    assert.deepEqual(marks, ['true', WORDS[lang], true, 'true', 'true']);
    // The note is shown once the pass has taken 200 ms (CSS), so a quick pass does not flash it.
    await page.waitForFunction(() => getComputedStyle(document.querySelector('#open-busy')).visibility === 'visible', null, { timeout: 5_000 });
    await page.evaluate(() => window.__releaseForwards());
    await page.waitForFunction(() => !document.querySelector('#open-section').classList.contains('busy'), null, { timeout: 20_000 });
    // Done: not busy, nothing said, and the note hidden until the next pass.
    assert.equal(await page.$eval('#open-section', (s) => s.getAttribute('aria-busy')), 'false');
    assert.equal(await page.$eval('#open-text-row', (s) => s.classList.contains('busy')), false);
    assert.equal(await page.getAttribute('#open-tokens', 'aria-busy'), 'false');
    assert.equal(await page.textContent('#open-busy'), '');
    assert.equal(await page.$eval('#open-busy', (e) => getComputedStyle(e).visibility), 'hidden');
    assert.deepEqual(problems, []);
    await close();
  });
}

test('a text box cleared while the Worker computes leaves nothing marked busy', async () => {
  const { page, problems, close } = await open('#mode=open&lang=en', { locale: 'en-US' });
  await page.click('#open-sample');
  await loaded(page);
  await settled(page);
  // The Worker is held: the pass is still "computing" when the box is cleared, however fast the sample model is.
  await holdForwards(page);
  await page.fill('#open-text', 'A new sentence to read.');
  await page.waitForSelector('#open-text-row.busy', { timeout: 10_000 });
  await page.fill('#open-text', '');
  await settled(page);
  const marks = await page.evaluate(() => ({ row: document.querySelector('#open-text-row').classList.contains('busy'),
    tokens: document.querySelector('#open-tokens').getAttribute('aria-busy'), note: document.querySelector('#open-busy').textContent }));
  assert.deepEqual(marks, { row: false, tokens: 'false', note: '' });
  // Released, the page goes on as before: the next text is computed and shown, and nothing stays busy.
  await page.evaluate(() => window.__releaseForwards());
  await page.fill('#open-text', 'Once more.');
  await page.waitForFunction(() => [...document.querySelectorAll('#open-tokens .tok')].map((c) => c.textContent).join('').includes('more'), null, { timeout: 20_000 });
  await page.waitForFunction(() => !document.querySelector('#open-text-row').classList.contains('busy'), null, { timeout: 20_000 });
  assert.equal(await page.textContent('#open-busy'), '');
  assert.deepEqual(problems, []);
  await close();
});
