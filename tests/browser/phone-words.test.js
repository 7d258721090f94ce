// Issue #33's small breaks, each checked in the page: Open a model's first sentence in the page's language, its info
// line in words (not code names, nor MHA, GQA, MQA), and the phone layout (the model view's maps and head names, the
// four tabs in two even rows), in both languages at 390 px (and 1280 px for the words), axe clean.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, open, settled, axe, shot } from './helpers.js';
import { filesOf } from './open-helpers.js';

useBrowser();

const LANGS = [['en', 'en-US'], ['zh', 'zh-CN']];
const FIRST = { en: 'The animal didn’t cross the street because it was too tired.', zh: '小狗没有吃饭，因为它一点也不想吃。' };
const openText = (page) => page.$eval('#open-text', (e) => e.value);

for (const [lang, locale] of LANGS) {
  test(`Open a model: the first sentence is in the page's language, and the info line is in words (${lang})`, async () => {
    const { page, problems, close } = await open(`#mode=open&lang=${lang}`, { locale });
    // Before a model is open, the sentence waits in the page's state (and its link).
    const otext = await page.evaluate(() => new URLSearchParams(window.__attnscopeDemo.hash.slice(1)).get('otext'));
    assert.equal(otext, FIRST[lang]);
    // A causal model with a tokenizer keeps the sentence and reads it.
    await page.setInputFiles('#open-files', filesOf('gpt2-lm'));
    await page.waitForSelector('#open-tokens .tok', { timeout: 20_000 });
    assert.equal(await openText(page), FIRST[lang]);
    // The language button takes the first sentence with it; a sentence the reader typed stays.
    await page.click('#lang-btn');
    await settled(page);
    const other = lang === 'zh' ? 'en' : 'zh';
    assert.equal(await openText(page), FIRST[other]);
    await page.fill('#open-text', 'my own words');
    await page.click('#lang-btn');
    await settled(page);
    assert.equal(await openText(page), 'my own words');
    // A Llama-shaped checkpoint: RMSNorm and a gated MLP, named in words.
    await page.setInputFiles('#open-files', filesOf('llama-gqa'));
    await page.waitForFunction(() => /Llama/.test(document.querySelector('#open-info')?.textContent ?? ''), null, { timeout: 20_000 });
    const info = await page.textContent('#open-info');
    assert.doesNotMatch(info, /rmsNorm|swiglu|layerNorm|gelu/);
    // How its heads share keys and values in words, not MHA / GQA / MQA.
    assert.doesNotMatch(info, /MHA|GQA|MQA/);
    assert.match(info, lang === 'zh' ? /^Llama：2 层 × 4 头（分组查询注意力，4 个查询头共用 2 个键\/值头）/
      : /^Llama: 2 layers × 4 heads \(grouped-query attention, 4 query heads over 2 key\/value heads\)/);
    // The family by its own name, not config.json's model_type.
    assert.match(info, /^Llama[:：]/);
    assert.match(info, lang === 'zh' ? /均方根归一化（RMSNorm），门控前馈层（SwiGLU）/ : /RMS norm, gated MLP \(SwiGLU\)/);
    // One key/value head for all four: multi-query attention, in words too.
    await page.setInputFiles('#open-files', filesOf('llama-mqa'));
    const mqa = lang === 'zh' ? '（多查询注意力，所有头共用一个键/值头）' : '(multi-query attention, one key/value head for all)';
    await page.waitForFunction((w) => (document.querySelector('#open-info')?.textContent ?? '').includes(w), mqa, { timeout: 20_000 });
    assert.doesNotMatch(await page.textContent('#open-info'), /MHA|GQA|MQA/);
    assert.deepEqual(await axe(page), []);
    assert.deepEqual(problems, []);
    await close();
  });

  test(`the phone layout: the model view's maps fill the width with whole head names; the tabs are two even rows (${lang})`, async () => {
    const { page, problems, close } = await open(`#lang=${lang}&mode=self&model=trained`, { locale, width: 390, height: 844 });
    const cells = await page.$$eval('#modelview .mv-cell', (els) => els.map((e) => {
      const b = e.querySelector('.mv-badge');
      return { width: e.getBoundingClientRect().width, badge: b.hidden ? null : b.textContent, clipped: !b.hidden && b.scrollHeight > b.clientHeight + 1 };
    }));
    assert.equal(cells.length, 12);
    assert.ok(cells.every((c) => c.width >= 70), `maps ${cells.map((c) => Math.round(c.width)).join(', ')} px wide`);
    const named = cells.filter((c) => c.badge);
    assert.ok(named.length >= 4);
    assert.deepEqual(named.filter((c) => c.clipped || /…|\(|（/.test(c.badge)), [], 'a badge is cut or carries its parenthesis');
    // Each badge is a name from the legend below, where the whole name and its score are.
    const legend = await page.textContent('#modelview .mv-legend');
    for (const c of named) assert.ok(legend.includes(c.badge), `${c.badge} is not in the legend`);
    // The four tabs: two rows of two, each row's buttons of one height and the rows of equal height.
    const tabs = await page.$$eval('#mode-tabs [role="tab"]', (els) => els.map((e) => {
      const r = e.getBoundingClientRect();
      return { top: Math.round(r.top), h: Math.round(r.height) };
    }));
    assert.equal(new Set(tabs.map((x) => x.top)).size, 2, JSON.stringify(tabs));
    assert.equal(new Set(tabs.map((x) => x.h)).size, 1, JSON.stringify(tabs));
    assert.ok(tabs[0].h <= 60, `tabs ${tabs[0].h} px tall`);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), true);
    assert.deepEqual(await axe(page), []);
    await shot(page, `phone-model-view-${lang}`, { fullPage: true });
    assert.deepEqual(problems, []);
    await close();
  });
}
