// Issue #33, items 1 and 3: one head view for every model (ours and an opened checkpoint), focused on the selected
// query at a long input, labelled with its token and its strongest keys', and within 600 px whatever the length; a
// row of our maps (or of the head view) picks the query, and the chip, the scrubber, the steps panel and the URL
// follow. Both languages, 1280 and 390 px, axe clean.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, open, settled, axe, shot, demo, canvasData } from './helpers.js';
import { loaded, tracedAt, openLongFixture, typeIds } from './open-helpers.js';

useBrowser();

// 127 characters: with <bos> first, 128 tokens, the language model's longest input.
const LONG = 'the cat sat on the mat and the dog ran '.repeat(4).slice(0, 127);
const LANGS = [['en', 'en-US'], ['zh', 'zh-CN']];
/** The canvas's bound: MAX_ROWS_HEIGHT (576) of rows and the 22 px captions, whatever the length. */
const MAX_CANVAS = 600;

/** What the head view under `sel` shows: its canvas's size, its focus, its labels, its note and its thinning. */
const view = (page, sel) => page.$eval(sel, (root) => {
  const c = root.querySelector('canvas.hv-lines');
  const b = c.getBoundingClientRect();
  return {
    mode: root.dataset.mode, focus: Number(root.dataset.focus), lines: Number(root.dataset.lines), of: Number(root.dataset.of),
    width: b.width, height: b.height, right: root.querySelector('.hv-body').getBoundingClientRect().right,
    query: root.querySelector('.hv-query')?.textContent.replace(/\s+/g, ' ').trim(),
    // The selected query: a thin view's slider, or the token marked in a view with every token.
    selected: Number(root.querySelector('.hv-query')?.getAttribute('aria-valuenow') ?? root.querySelector('.hv-left .hv-tok.selected')?.dataset.i),
    keys: [...root.querySelectorAll('.hv-key')].map((e) => Number(e.dataset.i)),
    note: root.querySelector('.hv-note').textContent, label: c.getAttribute('aria-label'), canvases: root.querySelectorAll('canvas').length,
  };
});
const query = async (page) => (await demo(page)).state.query;
const hashQuery = async (page) => new URLSearchParams((await demo(page)).hash.slice(1)).get('q');
/** The largest weight of each key for query `qi` over heads `heads` of a [H, L, S] array (the page's own maps). */
function keyWeights(w, H, L, S, qi, heads = [...Array(H).keys()]) {
  const out = new Array(S).fill(0);
  for (const h of heads) for (let j = 0; j < S; j++) out[j] = Math.max(out[j], w[(h * L + qi) * S + j]);
  return out;
}
const argmax = (a) => a.reduce((b, x, i) => (x > a[b] ? i : b), 0);
/** Click the head view's query column at row `i` (its rows are `rowH` tall under a 22 px caption). */
async function clickQueryRow(page, sel, i, rowH) {
  const col = page.locator(`${sel} .hv-left`);
  await col.scrollIntoViewIfNeeded();
  const box = await col.boundingBox();
  await page.mouse.click(box.x + box.width / 2, box.y + 22 + (i + 0.5) * rowH);
}

/** At our model's 128 tokens: the query moved by keys on its label and by pointer, then head 0 off and on again. */
async function moveTheQueryAndAHead(page, d) {
  const { L, S, H } = d;
  let v;
  // By keys on the query's label (a slider): the selection itself moves, and the chip, scrubber and link follow.
  await page.focus('#headview .hv-query');
  await page.keyboard.press('ArrowUp');
  await settled(page);
  assert.equal(await query(page), 126);
  assert.equal(await page.inputValue('#query-range'), '126');
  assert.equal(await page.$eval('#query-select', (s) => s.value), '126');
  assert.equal(await hashQuery(page), '126');
  assert.equal(await page.evaluate(() => document.activeElement.classList.contains('hv-query')), true);
  v = await view(page, '#headview');
  assert.equal(v.query, `${d.rows[126]} 126`);
  // By pointer: a row of the query column.
  await clickQueryRow(page, '#headview', 40, 576 / 128);
  await settled(page);
  assert.equal(await query(page), 40);
  assert.equal(await page.$eval('#tokens [aria-pressed="true"] sub', (e) => e.textContent), '40');
  v = await view(page, '#headview');
  assert.equal(v.focus, 40);
  assert.equal(v.keys[0], argmax(keyWeights(d.weights, H, L, S, 40)));

  // The heads' toggles still work with the focus: a head off changes the lines and the keys' weights.
  const before = await canvasData(page, '#headview canvas.hv-lines');
  await page.click('#headview .head-chip[data-head="0"]');
  await settled(page);
  assert.equal(await page.getAttribute('#headview .head-chip[data-head="0"]', 'aria-pressed'), 'false');
  assert.notEqual(await canvasData(page, '#headview canvas.hv-lines'), before);
  v = await view(page, '#headview');
  assert.equal(v.keys[0], argmax(keyWeights(d.weights, H, L, S, 40, [1, 2, 3])));
  await page.click('#headview .head-chip[data-head="0"]');
  await settled(page);
}

for (const [lang, locale] of LANGS) {
  test(`our model at 128 tokens: the head view is focused on the query, labelled and within ${MAX_CANVAS} px (${lang}, 1280 and 390 px, axe)`, async () => {
    const { page, problems, close } = await open(`#lang=${lang}&mode=self&model=trained`, { locale });
    await page.fill('#text', LONG);
    await settled(page);
    const d = (await demo(page)).last;
    const { L, S, H } = d;
    assert.equal(L, 128);
    let v = await view(page, '#headview');
    assert.equal(v.mode, 'focus');
    assert.ok(v.height <= MAX_CANVAS, `the head view's canvas is ${v.height} px tall`);
    // The default query is the last token: its label is its token and its index.
    assert.equal(v.focus, 127);
    assert.equal(v.query, `${d.rows[127]} 127`);
    // Its strongest key (over the heads shown) is named first; every key named weighs more than 0.02 in some head.
    const w = keyWeights(d.weights, H, L, S, 127);
    assert.equal(v.keys[0], argmax(w));
    assert.ok(v.keys.length >= 1 && v.keys.length <= 8 && v.keys.every((j) => w[j] > 0.02), `keys named: ${v.keys}`);
    assert.ok(v.label.includes(`“${d.rows[127]}”`), v.label);
    // The faint lines are thinned to 1,500 over the four heads, and the note says so.
    assert.equal(v.lines, 1500);
    assert.ok(v.of > 1500 && v.of <= (H * L * (L + 1)) / 2, `${v.of} lines in all`);
    assert.match(v.note, lang === 'zh' ? /条线中只画出最强的 1,500 条/ : /the 1,500 strongest are drawn/);

    // The interactions below do the same in both languages: they run once, in English (the Chinese run checks the
    // words, the layout at both widths and axe).
    if (lang === 'en') await moveTheQueryAndAHead(page, d);

    await page.$eval('#hv-section', (e) => e.scrollIntoView());
    await shot(page, `headview-lm128-${lang}-1280`);
    assert.deepEqual(await axe(page, '#hv-section'), []);
    await page.setViewportSize({ width: 390, height: 844 });
    await settled(page);
    v = await view(page, '#headview');
    assert.ok(v.height <= MAX_CANVAS, `the head view's canvas is ${v.height} px tall at 390 px`);
    assert.ok(v.width >= 100, `its lines are ${v.width} px wide`);
    assert.ok(v.right <= 390, `the head view ends at ${v.right} px`);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), true);
    await page.$eval('#hv-section', (e) => e.scrollIntoView());
    await shot(page, `headview-lm128-${lang}-390`);
    assert.deepEqual(await axe(page, '#hv-section'), []);
    assert.deepEqual(problems, []);
    await close();
  });
}

test('a short input keeps every token and every line: no focus, no thinning', async () => {
  const { page, problems, close } = await open('#lang=en&mode=self&model=trained&text=the%20cat%20sat');
  const v = await view(page, '#headview');
  assert.equal(v.mode, 'all');
  assert.equal(v.focus, -1);
  assert.equal(await page.$$eval('#headview .hv-left .hv-tok', (els) => els.length), 12);
  assert.equal(await page.$$eval('#headview .hv-right .hv-tok', (els) => els.length), 12);
  assert.equal(v.note, 'Every line is drawn; opacity is the weight.');
  assert.deepEqual(problems, []);
  await close();
});

for (const [lang, locale, width, height] of [['en', 'en-US', 1280, 900], ['zh', 'zh-CN', 390, 844]]) {
  test(`a row of our maps picks the query; the enlarged map's rows too (${lang}, ${width} px, axe)`, async () => {
    const { page, problems, close } = await open(`#lang=${lang}&mode=self&model=trained`, { locale, width, height });
    await page.fill('#text', LONG.slice(0, 40));
    await settled(page);
    const { L } = (await demo(page)).last;
    /** Click row `i` of canvas `sel` (painted by maps/heatmap.js, whose dataset says where its cells are). */
    const clickRow = async (sel, i) => {
      const c = page.locator(sel);
      await c.scrollIntoViewIfNeeded();
      const [left, top, cell, cssW] = await c.evaluate((e) => [e.dataset.cellsLeft, e.dataset.cellsTop, e.dataset.cellPx, e.style.width].map(parseFloat));
      const box = await c.boundingBox();
      const k = box.width / cssW;
      await page.mouse.click(box.x + (left + 1.5 * cell) * k, box.y + (top + (i + 0.5) * cell) * k);
    };
    const follows = async (i) => {
      assert.equal(await query(page), i);
      assert.equal(await page.inputValue('#query-range'), String(i));
      assert.equal(await page.$eval('#query-select', (s) => s.value), String(i));
      assert.equal(await page.$eval('#tokens [aria-pressed="true"] sub', (e) => e.textContent), String(i));
      assert.equal(await hashQuery(page), String(i));
      assert.equal((await view(page, '#headview')).selected, i);
    };
    assert.equal(L, 41);
    await clickRow('#maps .map-card[data-head="1"] canvas', 10);
    await settled(page);
    await follows(10);
    // A click picks; it does not enlarge (the button does).
    assert.equal(await page.$eval('#zoom', (z) => z.open), false);
    // Keys on a focused map move the query a row.
    await page.focus('#maps .map-card[data-head="1"] canvas');
    await page.keyboard.press('ArrowDown');
    await settled(page);
    await follows(11);
    await page.$eval('#maps-section', (e) => e.scrollIntoView());
    await shot(page, `headview-maprow-${lang}-${width}`);
    assert.deepEqual(await axe(page, '#maps-section'), []);
    // The enlarged map: its Enlarge button opens it, and a row there picks the query as well.
    await page.click('#maps .map-card[data-head="2"] [data-zoom]');
    await page.waitForSelector('#zoom[open]');
    await clickRow('#zoom-canvas', 20);
    await settled(page);
    await follows(20);
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('#zoom').open);
    assert.deepEqual(problems, []);
    await close();
  });
}

for (const [lang, locale] of LANGS) {
  test(`an opened checkpoint's layer view uses the same head view (${lang}, 1280 and 390 px, axe)`, async () => {
    const { page, problems, close } = await open(`#mode=open&lang=${lang}`, { locale });
    await page.click('#open-sample');
    await page.waitForSelector('#open-tokens .tok', { timeout: 20_000 });
    await loaded(page);
    await settled(page);
    const T = await page.locator('#open-tokens .tok').count();
    assert.ok(T > 32, `${T} tokens`);
    // One head view: our class, its canvas and note, no head toggles (the layer view shows one head).
    assert.equal(await page.$eval('#open-hv', (e) => e.classList.contains('headview')), true);
    assert.equal(await page.locator('#open-hv .hv-toggles').count(), 0);
    assert.equal(await page.locator('#open-hv-note').count(), 0);
    let v = await view(page, '#open-hv');
    assert.equal(v.canvases, 1);
    assert.equal(v.mode, 'focus');
    assert.ok(v.height <= MAX_CANVAS, `the head view's canvas is ${v.height} px tall`);
    assert.equal(v.focus, T - 1);
    assert.ok(v.query.endsWith(` ${T - 1}`), v.query);
    assert.match(v.note, lang === 'zh' ? /^所选查询的线完整画出/ : /^The selected query’s lines are drawn in full/);
    // A row of its query column picks that query: the steps panel traces it.
    const [layer, head] = await Promise.all(['#open-layer', '#open-head'].map((s) => page.inputValue(s).then(Number)));
    await clickQueryRow(page, '#open-hv', 5, Math.min(24, 576 / T));
    await tracedAt(page, layer, head, 5);
    await settled(page);
    v = await view(page, '#open-hv');
    assert.equal(v.focus, 5);
    assert.ok(v.query.endsWith(' 5'), v.query);
    await page.$eval('#open-hv', (e) => e.scrollIntoView());
    await shot(page, `headview-open-${lang}-1280`);
    assert.deepEqual(await axe(page, ['#open-maps', '#open-hv']), []);
    await page.setViewportSize({ width: 390, height: 844 });
    await settled(page);
    v = await view(page, '#open-hv');
    assert.ok(v.height <= MAX_CANVAS && v.right <= 390, `${v.height} px tall, ending at ${v.right} px`);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), true);
    await page.$eval('#open-hv', (e) => e.scrollIntoView());
    await shot(page, `headview-open-${lang}-390`);
    assert.deepEqual(await axe(page, ['#open-maps', '#open-hv']), []);
    assert.deepEqual(problems, []);
    await close();
  });
}

test('an opened checkpoint at 512 tokens: the same bound, 1,500 lines of the map, the query labelled', async () => {
  const { page, problems, close } = await open('#mode=open&lang=en');
  await openLongFixture(page);
  const T = 512;
  await typeIds(page, T);
  await loaded(page);
  await settled(page);
  await page.waitForFunction((q) => document.querySelector('#open-hv')?.dataset.focus === q, String(T - 1), { timeout: 30_000 });
  const v = await view(page, '#open-hv');
  assert.ok(v.height <= MAX_CANVAS, `the head view's canvas is ${v.height} px tall`);
  assert.equal(v.lines, 1500);
  // A causal map of 512 rows: up to 512 · 513 / 2 lines, of which 1,500 drawn.
  assert.ok(v.of > 100_000 && v.of <= (T * (T + 1)) / 2, `${v.of} lines`);
  assert.match(v.note, new RegExp(`Of the ${v.of.toLocaleString('en-US')} lines, the 1,500 strongest are drawn`));
  assert.ok(v.query.endsWith(` ${T - 1}`), v.query);
  assert.ok(v.keys.length >= 1 && v.keys.length <= 8);
  await page.$eval('#open-hv', (e) => e.scrollIntoView());
  await shot(page, 'headview-open-512-en-1280');
  assert.deepEqual(problems, []);
  await close();
});
