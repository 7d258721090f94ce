// The page at a phone's width (390 px), as a walk of it found it in 2026-12: the dates model's view with every head as
// wide as the others, its decoding drawn at a size to read and tap (scrolling sideways rather than shrinking), the
// bottleneck curve's labels readable, the examples' list within its card; axe clean, in both languages. Also found on
// that walk: the colour scale's note called every first column an attention sink.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, open, settled, axe, shot } from './helpers.js';
import { filesOf, loaded } from './open-helpers.js';

useBrowser();

const PHONE = { width: 390, height: 844 };

for (const [lang, locale] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
  test(`dates at 390 px: every head's map as wide as the others, the decoding at 0.8 of its size or more (${lang})`, async () => {
    const { page, problems, close } = await open(`#mode=s2s&lang=${lang}`, { locale, ...PHONE });
    await page.waitForSelector('#model-section .mv-cell canvas', { timeout: 20_000 });
    await settled(page);
    // Per group (encoder self, decoder self, cross) and layer: the heads' maps' widths.
    const widths = await page.$$eval('#model-section .mv-grid', (grids) => grids.map((g) => [...g.querySelectorAll('.mv-cell')].map((c) => c.getBoundingClientRect().width)));
    assert.ok(widths.length >= 2);
    for (const w of widths) {
      assert.ok(w.length >= 4, `${w.length} maps in a group`);
      assert.ok(Math.max(...w) - Math.min(...w) <= 2, `maps ${w.map((x) => x.toFixed(0)).join(', ')} px wide`);
      assert.ok(Math.min(...w) >= 50, `the narrowest map is ${Math.min(...w).toFixed(0)} px`);
    }
    // The decoding: drawn at 0.8 or more of its size, in a region that scrolls sideways and takes the focus.
    const dec = await page.$eval('#decode', (el) => {
      const svg = el.querySelector('svg.dec-svg');
      const width = svg.getBoundingClientRect().width;
      return { scale: width / svg.viewBox.baseVal.width, width, scrolls: el.scrollWidth, shows: el.clientWidth, tab: el.tabIndex, role: el.getAttribute('role'), label: el.getAttribute('aria-label') };
    });
    assert.ok(dec.scale >= 0.79, `the decoding is drawn at ${dec.scale.toFixed(2)}`);
    // All of it can be reached: the region scrolls over the whole drawing, none of it clipped.
    assert.ok(dec.width > dec.shows && dec.scrolls >= Math.floor(dec.width), `a drawing of ${dec.width} px in ${dec.shows} px scrolling over ${dec.scrolls} px`);
    assert.deepEqual([dec.tab, dec.role], [0, 'region']);
    assert.ok(dec.label.length > 3);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), true, 'the page itself does not scroll sideways');
    await page.$eval('#decode-section', (e) => e.scrollIntoView());
    await shot(page, `phone-dates-${lang}`);
    assert.deepEqual(await axe(page), []);
    assert.deepEqual(problems, []);
    await close();
  });

  test(`Why attention at 390 px: the curve's labels at 10 px or more, the examples' list within its card (${lang})`, async () => {
    const { page, problems, close } = await open(`#lang=${lang}`, { locale, ...PHONE });
    await page.waitForFunction(() => ['ready', 'error'].includes(window.__attnscopeDemo.why.status), null, { timeout: 15_000 });
    await page.waitForSelector('#why-curve svg.why-curve', { timeout: 15_000 });
    await settled(page);
    const sizes = await page.$eval('#why-curve svg.why-curve', (svg) => {
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      return [...svg.querySelectorAll('text')].map((x) => parseFloat(getComputedStyle(x).fontSize) * scale);
    });
    assert.ok(sizes.length > 5);
    assert.ok(Math.min(...sizes) >= 10, `the smallest label is ${Math.min(...sizes).toFixed(1)} px on screen`);
    const [select, textarea] = await page.evaluate(() => ['#why-examples', '#why-section textarea'].map((s) => document.querySelector(s).getBoundingClientRect().right));
    assert.ok(select <= textarea + 1, `the examples' list ends at ${select.toFixed(0)} px, the text box at ${textarea.toFixed(0)} px`);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), true);
    await page.$eval('#why-curve', (e) => e.scrollIntoView());
    await shot(page, `phone-why-curve-${lang}`);
    assert.deepEqual(await axe(page), []);
    assert.deepEqual(problems, []);
    await close();
  });
}

test('the colour scale\'s note names the first column it leaves out: a word in the dates maps, <bos> in the language model\'s', async () => {
  const { page, problems, close } = await open('#mode=s2s&lang=en');
  await page.waitForSelector('#model-section .mv-cell canvas', { timeout: 20_000 });
  await settled(page);
  // The dates model's maps start at the first word of the default date, "the fifth of march nineteen ninety".
  assert.equal(await page.inputValue('#date'), 'the fifth of march nineteen ninety');
  const first = 'the';
  assert.equal(await page.textContent('#legend-note'), `The first column (“${first}”) is left out of the scale and clipped at the top: where one column takes most of every row’s weight (an attention sink, often <bos>), the rest would stay dark.`);
  await page.click('#tab-self');
  // The language model is fetched on first use: a page waiting for it is idle with the dates maps' note still up.
  await page.waitForFunction(() => window.__attnscopeDemo.last.kind === 'lm' && !window.__attnscopeDemo.last.loading, null, { timeout: 15_000 });
  await settled(page);
  assert.match(await page.textContent('#legend-note'), /^The first column \(“<bos>”\) is left out of the scale/);
  // An opened checkpoint's maps say it of their first token too.
  await page.click('#tab-open');
  await page.setInputFiles('#open-files', filesOf('gpt2-lm'));
  await loaded(page);
  await page.fill('#open-text', 'the cat sat');
  await page.waitForFunction(() => document.querySelector('#open-tokens .tok')?.textContent === 'the', null, { timeout: 20_000 });
  await settled(page);
  assert.match(await page.textContent('#legend-note'), /^The first column \(“the”\) is left out of the scale/);
  assert.deepEqual(problems, []);
  await close();
});
