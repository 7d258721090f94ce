// The Open a model tab as a new user meets it (a walk of the page on 2026-12-05 found each of these broken): the
// included model's panels leave with its tab, the query scrubber moves the opened model's query, a load that fails
// leaves the model open before it, a query spread thin over many keys is said so in the head view, and the next
// character's list keeps its width beside its label.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, settled, axe, shot, demo, ROOT } from './helpers.js';
import { HF, filesOf, loaded, openLongFixture, openHeld, typeIds } from './open-helpers.js';

useBrowser();

const hidden = (page, sel) => page.$eval(sel, (e) => e.hidden || e.closest('[hidden]') !== null);

for (const [lang, locale, width] of [['en', 'en-US', 1280], ['zh', 'zh-CN', 390]]) {
  test(`the Open tab shows only the opened model, and its scrubber moves that model's query (${lang}, ${width} px)`, async () => {
    const { page, problems, close } = await open(`#lang=${lang}&mode=self&model=trained`, { locale, width, height: 844 });
    await settled(page);
    // The character model's next character and head switches, with a head switched off.
    assert.equal(await hidden(page, '#lm-next'), false);
    await page.click('#ablation-heads [data-layer="0"][data-head="0"]');
    await settled(page);
    await page.click('#tab-open');
    await settled(page);
    for (const sel of ['#tokens', '#lm-next', '#ablation']) assert.equal(await hidden(page, sel), true, `${sel} is hidden in the Open tab`);

    await page.click('#open-sample');
    await loaded(page);
    await page.fill('#open-text', 'the cat sat on the mat and the dog ran after it');
    await page.waitForFunction(() => document.querySelectorAll('#open-tokens .tok').length > 8, null, { timeout: 20_000 });
    await settled(page);
    const T = await page.locator('#open-tokens .tok').count();
    // The header's badge times the opened model's pass.
    assert.match(await page.textContent('#timing'), lang === 'zh' ? /^前向计算（WASM）\d+\.\d 毫秒$/ : /^forward \(WASM\) \d+\.\d ms$/);
    const range = page.locator('#query-range');
    assert.equal(await range.getAttribute('max'), String(T - 1));
    assert.equal(await range.inputValue(), String(T - 1));
    await range.focus();
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await settled(page);
    const state = (await demo(page)).state;
    assert.equal(state.open.query, 2, 'the opened model\'s query moved');
    assert.equal(await page.$eval('#open-tokens .tok.selected', (b) => b.dataset.i), '2');
    await page.waitForFunction(() => document.querySelector('#open-steps')?.dataset.query === '2', null, { timeout: 20_000 });
    const token = await page.$eval('#open-tokens .tok[data-i="2"]', (b) => b.textContent);
    assert.equal(await page.textContent('#query-out'), `${token} 2`);
    await shot(page, `open-tab-scrub-${lang}-${width}`);
    assert.deepEqual(await axe(page), []);

    // Back in the first tab, its panels and its own query are as they were.
    await page.click('#tab-self');
    await settled(page);
    assert.equal(await hidden(page, '#lm-next'), false);
    assert.equal(await hidden(page, '#ablation'), false);
    assert.equal(await hidden(page, '#tokens'), false);
    assert.equal(await page.$eval('#query-range', (r) => r.max), String((await demo(page)).state.text.length));
    assert.deepEqual(problems, []);
    await close();
  });
}

for (const [lang, locale, words] of [['en', 'en-US', /could not be opened: config\.json: .+\. The model you had open is still open\.$/],
  ['zh', 'zh-CN', /无法打开模型：config\.json: .+。之前打开的模型仍然可用。$/]]) {
  test(`a load that fails leaves the model open before it, as it was (${lang})`, async () => {
    const { page, problems, close } = await open(`#mode=open&lang=${lang}`, { locale });
    await page.setInputFiles('#open-files', filesOf('gpt2-lm'));
    await loaded(page);
    await page.fill('#open-text', 'the cat sat');
    await settled(page);
    await page.click('#open-tokens .tok[data-i="1"]');
    await settled(page);
    const chips = await page.$$eval('#open-tokens .tok', (bs) => bs.map((b) => b.textContent));
    const info = await page.textContent('#open-info');
    await page.setInputFiles('#open-files', [
      { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from('{"model_type": "gpt2", "n_layer": ') },
      { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: readFileSync(join(HF, 'gpt2-lm/model.safetensors')) },
    ]);
    await page.waitForSelector('#open-status.error', { timeout: 20_000 });
    await settled(page);
    const status = await page.textContent('#open-status');
    assert.match(status, words);
    assert.doesNotMatch(status, /loadModel:/, 'the page names no call of its own');
    // The model, its input and its query are still there, and it still computes.
    assert.equal(await page.textContent('#open-info'), info);
    assert.deepEqual(await page.$$eval('#open-tokens .tok', (bs) => bs.map((b) => b.textContent)), chips);
    assert.equal((await demo(page)).state.open.query, 1);
    await page.fill('#open-text', 'the cat sat on');
    await page.waitForFunction((n) => document.querySelectorAll('#open-tokens .tok').length > n, chips.length, { timeout: 20_000 });
    await shot(page, `open-failed-kept-${lang}`);
    assert.deepEqual(problems.filter((p) => !/config/.test(p)), []);
    await close();
  });
}

/** The sample checkpoint with every query, key and value projection zeroed: each row's weights are 1 / (i + 1). */
function evenSample() {
  const dir = join(ROOT, 'web/demo/sample/tiny-gpt2');
  const bytes = Buffer.from(readFileSync(join(dir, 'model.safetensors')));
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  let zeroed = 0;
  for (const [name, t] of Object.entries(header)) {
    if (!/attn\.c_attn\.(weight|bias)$/.test(name)) continue;
    bytes.fill(0, 8 + n + t.data_offsets[0], 8 + n + t.data_offsets[1]);
    zeroed++;
  }
  assert.equal(zeroed, 4, 'two layers\' c_attn weight and bias');
  return ['config.json', 'tokenizer.json', 'tokenizer_config.json'].map((name) => ({ name, mimeType: 'application/json', buffer: readFileSync(join(dir, name)) }))
    .concat([{ name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: bytes }]);
}

test('a query that spreads its weight thin over many keys is said so in the head view (en, zh)', async () => {
  const { page, problems, close } = await open('#mode=open&lang=en');
  await page.setInputFiles('#open-files', evenSample());
  await loaded(page);
  await page.fill('#open-text', 'the cat sat on the mat and the dog ran '.repeat(6));
  await page.waitForFunction(() => document.querySelectorAll('#open-tokens .tok').length >= 64, null, { timeout: 20_000 });
  await settled(page);
  const T = await page.locator('#open-tokens .tok').count();
  const hv = () => page.$eval('#open-hv', (root) => ({
    mode: root.dataset.mode, label: root.querySelector('canvas.hv-lines').getAttribute('aria-label'), note: root.querySelector('.hv-note').textContent,
    keys: root.querySelectorAll('.hv-key').length,
  }));
  let v = await hv();
  assert.equal(v.mode, 'focus');
  // The last query, row T − 1, weighs each of its T keys 1 / T.
  const w = (1 / T).toFixed(3);
  assert.ok(v.label.startsWith('Head view: lines from the queries (left) to the keys (right). The selected query “'), v.label);
  assert.ok(v.label.endsWith(`” (${T - 1}) spreads its weight thin: no key gets more than ${w}, so none is named.`), v.label);
  assert.match(v.note, /spreads its weight thin/);
  assert.equal(v.keys, 0);
  await page.$eval('#open-hv', (e) => e.scrollIntoView());
  await shot(page, 'open-headview-spread');
  await page.click('#lang-btn');
  await settled(page);
  v = await hv();
  assert.ok(v.label.endsWith(`（${T - 1}）的权重分得很散：没有哪个键超过 ${w}，所以一个也不标出。`), v.label);
  assert.deepEqual(problems, []);
  await close();
});

test('the next character\'s list keeps its width beside its label at 1280 px', async () => {
  const { page, problems, close } = await open('#lang=en&mode=self&model=trained', { width: 1280, height: 800 });
  await settled(page);
  const box = await page.$eval('#lm-next', (el) => {
    const outer = el.getBoundingClientRect();
    const list = el.querySelector('#next-list').getBoundingClientRect();
    const items = [...el.querySelectorAll('.next-tok')].map((x) => x.getBoundingClientRect());
    return { listWidth: list.width, inside: items.every((r) => r.left >= outer.left - 0.5 && r.right <= outer.right + 0.5), items: items.length };
  });
  assert.ok(box.items >= 3);
  assert.ok(box.listWidth >= 250, `the list is ${box.listWidth} px wide`);
  assert.equal(box.inside, true, 'every prediction is inside its card');
  assert.deepEqual(problems, []);
  await close();
});

test('an exported figure of a long input leaves out the cells\' tooltips, which a short one keeps', async () => {
  const { page, problems, close } = await open('#mode=open&lang=en');
  await openLongFixture(page);
  const titles = async (T) => {
    await typeIds(page, T);
    await loaded(page);
    await settled(page);
    const [svg] = await Promise.all([page.waitForEvent('download'), page.click('#open-export-svg')]);
    const text = readFileSync(await svg.path(), 'utf8');
    assert.ok(text.includes(`data-q="${T - 1}" data-k="${T - 1}"`), 'every cell is drawn');
    return { titles: (text.match(/<title/g) ?? []).length, bytes: text.length };
  };
  const short = await titles(12);
  assert.ok(short.titles > 144, `${short.titles} titles at 12 tokens: one a cell`);
  const long = await titles(200);
  assert.ok(long.titles < 5, `${long.titles} titles at 200 tokens`);
  assert.ok(long.bytes < 200 * 200 * 120, `${long.bytes} bytes at 200 tokens`);
  assert.deepEqual(problems, []);
  await close();
});

test('a load started over one still running replaces it: the page and the Worker end on the newer model', async () => {
  const { page, context, problems, close } = await open('#mode=open&lang=en');
  await page.setInputFiles('#open-files', filesOf('gpt2-lm'));
  await loaded(page);
  // Load A: a folder URL whose weights arrive only when released. Load B, picked while A waits: llama-gqa.
  const release = await openHeld(page, context, 'gpt2-lm');
  await page.setInputFiles('#open-files', filesOf('llama-gqa'));
  await page.waitForFunction(() => /^Llama/.test(document.querySelector('#open-info')?.textContent ?? ''), null, { timeout: 20_000 });
  // A's weights arrive after B opened: nothing changes, and no failure is said.
  release();
  await page.waitForTimeout(1500);
  await settled(page);
  assert.match(await page.textContent('#open-info'), /^Llama/);
  assert.doesNotMatch(await page.textContent('#open-status'), /could not be opened|still open/);
  // The Worker holds B: its grid note names llama-gqa's shared key/value heads.
  await page.fill('#open-text', '1 5 9 3 7 2');
  await page.waitForFunction(() => document.querySelectorAll('#open-tokens .tok').length === 6, null, { timeout: 20_000 });
  await settled(page);
  assert.match(await page.textContent('#open-grid-note'), /4 query heads share 2 key\/value heads/);
  assert.deepEqual(problems, []);
  await close();
});
