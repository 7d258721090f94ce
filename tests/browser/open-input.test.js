// The Open tab's input box and steps panel as a walk of the page on 2026-12-06 found them: a box cleared (or holding
// only spaces, where the model has no tokenizer and the box takes ids) kept the last input's error, or showed the
// core's message about 0 token ids; and a model of 768 features drew strips 768 px wide, so that a phone's page
// scrolled sideways.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, settled, shot } from './helpers.js';
import { HF, loaded, openLongFixture } from './open-helpers.js';

useBrowser();

const errorShown = (page) => page.$eval('#open-input-error', (e) => (e.hidden ? '' : e.textContent));

for (const [lang, locale] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
  test(`an empty box, or spaces in a box of ids, shows no error; a bad id does until it is cleared (${lang})`, async () => {
    const { page, problems, close } = await open(`#mode=open&lang=${lang}`, { locale, width: 390, height: 844 });
    await openLongFixture(page); // no tokenizer: the box takes ids
    await loaded(page);
    await page.fill('#open-text', 'hello');
    await page.waitForFunction(() => !document.querySelector('#open-input-error').hidden, null, { timeout: 20_000 });
    assert.match(await errorShown(page), /hello/);
    for (const input of ['', '   ']) {
      await page.fill('#open-text', input);
      await settled(page);
      assert.equal(await errorShown(page), '', `no error for ${JSON.stringify(input)}`);
    }
    await page.fill('#open-text', '1 2 3');
    await page.waitForFunction(() => document.querySelectorAll('#open-tokens .tok').length === 3, null, { timeout: 20_000 });
    assert.equal(await errorShown(page), '');
    assert.deepEqual(problems, []);
    await close();
  });
}

/**
 * gpt2-lm's checkpoint widened to `E` features (its 16 → E, q|k|v's 48 → 3E; the MLP keeps 32 units), small random
 * weights: a model whose steps panel draws strips of E cells. With the fixture's tokenizer.
 */
function widened(E) {
  const dir = join(HF, 'gpt2-lm');
  const config = { ...JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')), n_embd: E };
  const bytes = readFileSync(join(dir, 'model.safetensors'));
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  const out = {};
  let offset = 0;
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const shape = t.shape.map((d) => (d === 16 ? E : d === 48 ? 3 * E : d));
    const count = shape.reduce((a, b) => a * b, 1);
    out[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + 4 * count] };
    offset += 4 * count;
  }
  const head = Buffer.from(JSON.stringify(out));
  const data = new Float32Array(offset / 4);
  for (let i = 0; i < data.length; i++) data[i] = 0.02 * Math.sin(i * 12.9898);
  const file = Buffer.concat([Buffer.alloc(8), head, Buffer.from(data.buffer)]);
  file.writeBigUInt64LE(BigInt(head.length), 0);
  return [
    { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(config)) },
    { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: file },
    { name: 'tokenizer.json', mimeType: 'application/json', buffer: readFileSync(join(dir, 'tokenizer.json')) },
  ];
}

test('a model of 768 features keeps a phone\'s page within its width; its strips are drawn narrower', async () => {
  const { page, problems, close } = await open('#mode=open&lang=en', { width: 390, height: 844 });
  await page.setInputFiles('#open-files', widened(768));
  await loaded(page);
  await page.fill('#open-text', 'the cat sat');
  await page.waitForFunction(() => document.querySelectorAll('#open-steps canvas.strip').length > 0, null, { timeout: 30_000 });
  await settled(page);
  const strips = await page.$$eval('#open-steps canvas.strip', (cs) => cs.map((c) => ({ drawn: c.width, shown: c.getBoundingClientRect().width })));
  assert.ok(strips.some((s) => s.drawn >= 768), `a strip has a cell a feature: ${JSON.stringify(strips)}`);
  assert.ok(strips.every((s) => s.shown <= 390), `every strip fits the screen: ${JSON.stringify(strips)}`);
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 390, 'the page does not scroll sideways');
  await shot(page, 'open-input-wide-strips-390');
  assert.deepEqual(problems, []);
  await close();
});

test('the opened model\'s token chips take the new language\'s label when the language changes', async () => {
  const { page, problems, close } = await open('#mode=open&lang=en');
  await page.click('#open-sample');
  await loaded(page);
  // A text of one's own, which a language change keeps (the page's example sentence would be replaced, and its
  // chips with it).
  await page.fill('#open-text', 'the cat sat');
  await page.waitForFunction(() => document.querySelectorAll('#open-tokens .tok').length === 3, null, { timeout: 20_000 });
  await settled(page);
  const label = () => page.$eval('#open-tokens .tok-row', (e) => e.getAttribute('aria-label'));
  assert.equal(await label(), 'Query token for the steps');
  await page.click('#lang-btn');
  await settled(page);
  assert.equal(await label(), '步骤中的查询词元'); // it stayed English before 2026-12-06
  assert.deepEqual(problems, []);
  await close();
});
