// What an opened model's maps show, and its attention sinks, in Chromium: the maps with a key hidden and rows
// renormalised, and value-weighted α·‖v‖, on gpt2-lm and on llama-gqa (4 query heads over 2 key/value heads), each
// against research.json's float64 PyTorch weights and value norms (tools/references/hf_research_reference.py); the
// "view, not the model" marks over every map and in the legend; the sink mass per head and the selected head's row
// four ways; the URL; axe and screenshots in both languages at desktop and phone widths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, settled, axe, ART } from './helpers.js';
import { HF, filesOf, loaded } from './open-helpers.js';

useBrowser();
const research = (name) => JSON.parse(readFileSync(join(HF, name, 'research.json'), 'utf8'));
// gpt2-lm reads text (its tokenizer gives research.json's ids); llama-gqa has no tokenizer.json and takes the ids.
const TEXT = { 'gpt2-lm': 'the cat sat on the mat', 'llama-gqa': research('llama-gqa').ids.join(' ') };

/** The page on fixture `name` with its research input, drawn. */
async function opened(name, { lang = 'en', locale = 'en-US', hash = '' } = {}) {
  const session = await open(`#mode=open&lang=${lang}${hash}`, { locale });
  const { page } = session;
  await page.setInputFiles('#open-files', filesOf(name));
  await page.waitForSelector('#open-show', { state: 'visible', timeout: 20_000 });
  await page.fill('#open-text', TEXT[name]);
  await page.waitForFunction((T) => document.querySelectorAll('#open-key option').length === T, research(name).ids.length, { timeout: 20_000 });
  await loaded(page);
  await settled(page);
  return session;
}

/** The maps the page draws now (the testhooks' read-only window) once the view `shows` is drawn. */
async function mapsNow(page, shows) {
  await page.waitForFunction((s) => {
    const m = window.__attnscopeDemo.openView;
    return m && (s === 'weights' ? !m.view : m.view?.shows === s && !m.view.waiting);
  }, shows, { timeout: 20_000 });
  await settled(page);
  return page.evaluate(() => window.__attnscopeDemo.openMaps);
}

/** Reference maps [L, H, T, T] with every row's weights times scale(m, j) (m = layer × head), renormalised, in float64. */
function reweighted(ref, scale) {
  const T = ref.ids.length, rows = ref.attention.length / T;
  const out = new Float64Array(ref.attention.length);
  for (let row = 0; row < rows; row++) {
    const m = Math.floor(row / T);
    let z = 0;
    for (let j = 0; j < T; j++) z += (out[row * T + j] = ref.attention[row * T + j] * scale(m, j));
    for (let j = 0; j < T; j++) out[row * T + j] = z > 0 ? out[row * T + j] / z : 0;
  }
  return out;
}

function sameMaps(shown, expected, what) {
  assert.equal(shown.length, expected.length, what);
  shown.forEach((x, i) => assert.ok(Math.abs(x - expected[i]) < 2e-5, `${what}: element ${i} is ${x}, PyTorch ${expected[i]}`));
}

/** The enlarged map's tooltip over a few cells: [query, key, value] as the page writes them on hover. */
async function hovered(page) {
  const big = page.locator('#open-maps canvas').nth(1);
  await big.scrollIntoViewIfNeeded();
  const box = await big.boundingBox();
  const out = [];
  for (const [fx, fy] of [[0.35, 0.3], [0.5, 0.6], [0.7, 0.85], [0.9, 0.95]]) {
    await page.mouse.move(box.x + fx * box.width, box.y + fy * box.height);
    const html = await page.$eval('#tooltip', (el) => (el.hidden ? '' : el.innerHTML));
    const m = html.match(/<sub>(\d+)<\/sub>.*<sub>(\d+)<\/sub>.*tip-num">([-\d.e]+)</);
    if (m) out.push(m.slice(1).map(Number));
  }
  await page.mouse.move(0, 0);
  return out;
}

/** The marks over the grid, the layer's maps and the head view, and the legend's title, in that order. */
const marks = (page) => page.evaluate(() => ['#open-mark-grid', '#open-mark-maps', '#open-mark-hv', '#legend .legend-title']
  .map((sel) => document.querySelector(sel)).map((e) => (e.hidden ? '' : e.textContent)));

test('gpt2-lm: a key hidden and rows renormalised, marked as a view over every map, follows the key picked', async () => {
  const ref = research('gpt2-lm');
  const { page, problems, close } = await opened('gpt2-lm');
  const T = ref.ids.length;
  sameMaps((await mapsNow(page, 'weights')).data, ref.attention, 'the weights');
  assert.deepEqual(await marks(page), ['', '', '', 'attention weight']);

  await page.selectOption('#open-show', 'hidden');
  let m = await mapsNow(page, 'hidden');
  assert.deepEqual(m.view, { shows: 'hidden', key: 0, token: 'the', waiting: false });
  sameMaps(m.data, reweighted(ref, (_, j) => (j === 0 ? 0 : 1)), 'key 0 hidden');
  for (const text of await marks(page)) assert.match(text, /not the model.*key 0/);

  // The key picked: 2 ("␣sat"); the enlarged map (layer 2, head 2) draws the view, as its tooltips say.
  await page.selectOption('#open-key', '2');
  await page.selectOption('#open-layer', '1');
  await page.selectOption('#open-head', '1');
  m = await mapsNow(page, 'hidden');
  assert.equal(m.view.key, 2);
  const expected = reweighted(ref, (_, j) => (j === 2 ? 0 : 1));
  sameMaps(m.data, expected, 'key 2 hidden');
  await settled(page);
  const cells = await hovered(page);
  assert.ok(cells.length >= 2, `tooltips read: ${JSON.stringify(cells)}`);
  for (const [i, j, v] of cells) assert.ok(Math.abs(v - expected[((1 * 2 + 1) * T + i) * T + j]) < 2e-5, `enlarged map (${i}, ${j}): ${v}`);
  // The page writes its URL 150 ms after a change.
  await page.waitForFunction((s) => location.hash.includes(s), 'oshow=hidden', { timeout: 5000 });
  await page.waitForFunction((s) => location.hash.includes(s), 'okey=2', { timeout: 5000 });
  // The exports say it too: the SVG's subtitle, and the HTML file over its map and its model view.
  const [svg] = await Promise.all([page.waitForEvent('download'), page.click('#open-export-svg')]);
  assert.match(readFileSync(await svg.path(), 'utf8'), /View, not the model: key 2 hidden, rows renormalised/);
  const [html] = await Promise.all([page.waitForEvent('download'), page.click('#open-export-html')]);
  assert.equal(readFileSync(await html.path(), 'utf8').match(/class="rs-mark">A view, not the model: key 2/g)?.length, 2);
  // The steps panel still checks the trace against the model's own map, not the view.
  await loaded(page);
  assert.equal(Number(await page.getAttribute('#open-steps', 'data-diff')), 0);

  await page.selectOption('#open-show', 'weights');
  sameMaps((await mapsNow(page, 'weights')).data, ref.attention, 'the weights again');
  assert.deepEqual(await marks(page), ['', '', '', 'attention weight']);
  assert.deepEqual(problems, []);
  await close();
});

for (const name of ['gpt2-lm', 'llama-gqa']) {
  test(`${name}: value-weighted maps, the sink mass and the selected head's row match PyTorch's weights and value norms`, async () => {
    const ref = research(name);
    const T = ref.ids.length, L = ref.layers, H = ref.value_norms.length / (L * T);
    const { page, problems, close } = await opened(name);
    await page.selectOption('#open-show', 'value');
    const m = await mapsNow(page, 'value');
    // llama-gqa: query heads 0, 1 read key/value head 0's values and 2, 3 head 1's (research.json's norms are per query head).
    sameMaps(m.data, reweighted(ref, (mh, j) => ref.value_norms[mh * T + j]), 'value-weighted');
    for (const text of await marks(page)) assert.match(text, /not the model/);

    await page.click('#open-sinks-btn');
    await page.waitForSelector('#open-sinks-out td[data-kind="norms"][data-value]', { timeout: 20_000 });
    await settled(page);
    // Sink mass on key 0: the mean over queries 1 … T−1 (query 0 sees only key 0).
    const mass = await page.$$eval('#open-sinks-out td[data-head][data-value]',
      (tds) => tds.map((td) => [Number(td.dataset.layer), Number(td.dataset.head), Number(td.dataset.value)]));
    assert.equal(mass.length, L * H);
    for (const [l, h, v] of mass) {
      let sum = 0;
      for (let i = 1; i < T; i++) sum += ref.attention[((l * H + h) * T + i) * T];
      assert.ok(Math.abs(v - sum / (T - 1)) < 1e-5, `layer ${l} head ${h}: sink mass ${v}, PyTorch ${sum / (T - 1)}`);
    }
    // The selected head's row at a query, four ways, with key 3 picked.
    await page.selectOption('#open-key', '3');
    await page.selectOption('#open-layer', String(L - 1));
    await page.selectOption('#open-head', String(H - 1));
    await page.click('#open-tokens button[data-i="6"]');
    await page.waitForFunction(() => document.querySelector('#open-sinks-out h4')?.textContent.includes('query 6'), null, { timeout: 20_000 });
    await settled(page);
    const row = await page.$$eval('#open-sinks-out td[data-kind][data-value]',
      (tds) => tds.map((td) => [td.dataset.kind, Number(td.dataset.key), Number(td.dataset.value)]));
    const mh = (L - 1) * H + (H - 1), at = (mh * T + 6) * T;
    const alpha = ref.attention.slice(at, at + T), norms = ref.value_norms.slice(mh * T, (mh + 1) * T);
    const renorm = (x) => { const z = x.reduce((a, b) => a + b, 0); return x.map((v) => v / z); };
    const want = { weights: alpha, hidden: renorm(alpha.map((a, j) => (j === 3 ? 0 : a))), norms, value: renorm(alpha.map((a, j) => a * norms[j])) };
    assert.equal(row.length, 4 * T);
    for (const [kind, j, v] of row) {
      assert.ok(Math.abs(v - want[kind][j]) < 2e-5 * Math.max(1, want[kind][j]), `${kind} key ${j}: ${v}, PyTorch ${want[kind][j]}`);
    }
    // The sink mass on key 3: queries 3 … T−1.
    const on3 = await page.$eval(`#open-sinks-out td[data-layer="0"][data-head="0"]`, (td) => Number(td.dataset.value));
    let sum = 0;
    for (let i = 3; i < T; i++) sum += ref.attention[i * T + 3];
    assert.ok(Math.abs(on3 - sum / (T - 3)) < 1e-5, `sink mass on key 3: ${on3}, PyTorch ${sum / (T - 3)}`);
    // The page writes its URL 150 ms after a change.
    await page.waitForFunction((s) => location.hash.includes(s), 'osink=1', { timeout: 5000 });
    assert.deepEqual(problems, []);
    await close();
  });
}

test('a link with a view and the sinks reopens them', async () => {
  const { page, problems, close } = await opened('gpt2-lm', { hash: '&oshow=hidden&okey=1&osink=1' });
  const m = await mapsNow(page, 'hidden');
  assert.equal(m.view.key, 1);
  assert.equal(await page.inputValue('#open-show'), 'hidden');
  assert.equal(await page.inputValue('#open-key'), '1');
  await page.waitForSelector('#open-sinks-out td[data-head]', { state: 'attached', timeout: 20_000 });
  assert.equal(await page.getAttribute('#open-sinks-btn', 'aria-pressed'), 'true');
  assert.deepEqual(problems, []);
  await close();
});

for (const [lang, locale, words] of [['en', 'en-US', /not the model/], ['zh', 'zh-CN', /不是模型本身/]]) {
  test(`a view and the sinks: axe clean, not wider than the screen, in words (${lang}, desktop and phone)`, async () => {
    const { page, close } = await opened('gpt2-lm', { lang, locale });
    await page.selectOption('#open-show', 'hidden');
    await page.click('#open-sinks-btn');
    await page.waitForSelector('#open-sinks-out td[data-kind="norms"][data-value]', { timeout: 20_000 });
    await mapsNow(page, 'hidden');
    assert.match(await page.textContent('#open-mark-maps'), words);
    assert.match(await page.textContent('#legend .legend-title'), words);
    for (const [width, label] of [[1280, 'desktop'], [390, 'phone']]) {
      await page.setViewportSize({ width, height: 844 });
      await settled(page);
      assert.deepEqual(await axe(page, ['#open-sinks', '#open-mark-maps', '#open-maps', '#legend']), [], `${lang} ${label}`);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), `${lang} ${label}: wider than the screen`);
      await page.locator('#open-section').screenshot({ path: join(ART, `research-sinks-${lang}-${label}.png`) });
    }
    await close();
  });
}
