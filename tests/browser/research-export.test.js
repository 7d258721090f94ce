// The HTML export of an opened model's view, in Chromium: one file with no script and nothing to fetch (every
// picture a data: URL, the styles inline), holding the selected head's map, the model view, the logit lens and the
// two prompts' results with the page's numbers; opened with the network cut off it shows everything. Both languages,
// desktop and phone, axe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, settled, axe, ART } from './helpers.js';
import { HF, filesOf, typeSettled } from './open-helpers.js';

const env = useBrowser();
const P = JSON.parse(readFileSync(join(HF, 'gpt2-lm', 'patching.json'), 'utf8'));

for (const [lang, locale, words, click] of [['en', 'en-US', /Logit lens/, /Click/], ['zh', 'zh-CN', /Logit 透镜/, /点击/]]) {
  test(`the view saved as one HTML file that opens offline (${lang})`, async () => {
    const { page, problems, close } = await open(`#mode=open&lang=${lang}`, { locale });
    await page.setInputFiles('#open-files', filesOf('gpt2-lm'));
    await page.waitForSelector('#open-lens-btn', { state: 'visible', timeout: 20_000 });
    await typeSettled(page, P.clean_text);
    await page.click('#open-lens-btn');
    await page.fill('#open-patch-clean', P.clean_text);
    await page.fill('#open-patch-corrupted', P.corrupted_text);
    await page.fill('#open-patch-a', P.answers.text[0]);
    await page.fill('#open-patch-b', P.answers.text[1]);
    await page.click('#open-compare-btn');
    await page.click('#open-patchpos-btn');
    await page.waitForSelector('#open-positions-out td[data-value]', { state: 'attached', timeout: 20_000 });
    await page.waitForSelector('#open-lens-out button[data-l]', { timeout: 20_000 }).catch(async (e) => {
      // What the lens said instead (its status line: an error, or still computing), and the page's problems so far.
      // Whether the lens was asked for at all (the button, the state) and whether the maps' pass had arrived.
      const seen = await page.evaluate(() => ({ pressed: document.querySelector('#open-lens-btn').getAttribute('aria-pressed'),
        lens: window.__attnscopeDemo.state.open.lens, text: window.__attnscopeDemo.state.open.text,
        tokens: document.querySelectorAll('#open-tokens .tok').length, sectionHidden: document.querySelector('#open-section').hidden,
        progress: window.__attnscopeDemo.progress }));
      // The scheduler a second later: a version that keeps moving means views off screen never got their turn.
      await new Promise((ok) => setTimeout(ok, 1000));
      seen.later = await page.evaluate(() => window.__attnscopeDemo.progress);
      throw new Error(`${e.message}\nthe lens: ${await page.textContent('#open-lens-status')}; ${JSON.stringify(seen)}; ${problems.join('; ')}`);
    });
    await settled(page);
    const lens = await page.$$eval('#open-lens-out button[data-l]', (bs) => bs.map((b) => b.dataset.prob));
    const positions = await page.$$eval('#open-positions-out td[data-value]', (tds) => tds.map((td) => td.dataset.value));

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#open-export-html')]);
    assert.match(download.suggestedFilename(), /^attnscope-gpt2-layer1-head1\.html$/);
    const html = readFileSync(await download.path(), 'utf8');
    assert.doesNotMatch(html, /<script/i, 'no script');
    assert.doesNotMatch(html, /<link\b/i, 'no stylesheet from elsewhere');
    assert.doesNotMatch(html, /\bsrc="(?!data:)/, 'every src a data: URL');
    assert.doesNotMatch(html, /url\((?!["']?(?:data:|#))/, 'no url() but data: or the file\'s own ids');
    assert.match(html, /<svg/);
    assert.match(html, words);
    assert.doesNotMatch(html, click, 'no hint that a click does something: the file has no script');

    // Opened with every request refused: nothing is asked for, and every picture is drawn.
    const context = await env.browser.newContext({ locale, viewport: { width: 1280, height: 900 } });
    const requests = [];
    await context.route('**/*', (route) => { requests.push(route.request().url()); return route.abort(); });
    const saved = await context.newPage();
    await saved.setContent(html, { waitUntil: 'load' });
    assert.deepEqual(requests, []);
    const images = await saved.$$eval('img', (imgs) => imgs.map((i) => i.complete && i.naturalWidth > 0));
    assert.ok(images.length >= 4 && images.every(Boolean), `${images.length} pictures, all drawn: ${images}`);
    assert.deepEqual(await saved.$$eval('.rs-cell[data-prob]', (s) => s.map((x) => x.dataset.prob)), lens, 'the lens as the page showed it');
    assert.deepEqual(await saved.$$eval('td[data-position]', (s) => s.map((x) => x.dataset.value)), positions, 'the positions as the page showed them');
    for (const [width, label] of [[1280, 'desktop'], [390, 'phone']]) {
      await saved.setViewportSize({ width, height: 844 });
      assert.deepEqual(await axe(saved), [], `${lang} ${label}`);
      await saved.screenshot({ path: join(ART, `research-export-${lang}-${label}.png`), fullPage: true });
    }
    assert.deepEqual(problems, []);
    await context.close();
    await close();
  });
}
