// Two prompts of an opened model in Chromium: gpt2-lm's clean and corrupted prompts (patching.json's), how far each
// head's weights moved, and one head patched at each position, against a float64 GPT-2 written from modeling_gpt2.py
// (gpt2-float64.js, itself checked against patching.json's PyTorch numbers); the IOI prompts prefilled for a causal
// model; for BERT the comparison without patching; axe and screenshots in both languages at desktop and phone widths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, settled, axe, ART } from './helpers.js';
import { HF, filesOf } from './open-helpers.js';
import { Tokenizer } from '@huggingface/tokenizers';
import { gpt2 } from './gpt2-float64.js';

useBrowser();
const P = JSON.parse(readFileSync(join(HF, 'gpt2-lm', 'patching.json'), 'utf8'));
const ref = gpt2(join(HF, 'gpt2-lm'));

async function opened(name, lang = 'en', locale = 'en-US') {
  const session = await open(`#mode=open&lang=${lang}`, { locale });
  await session.page.setInputFiles('#open-files', filesOf(name));
  await session.page.waitForSelector('#open-compare-btn', { state: 'visible', timeout: 20_000 });
  // The info line names the family by its label (GPT-2 for gpt2-lm's gpt2).
  const info = (n) => document.querySelector('#open-info')?.textContent.toLowerCase().replace('-', '').startsWith(n);
  await session.page.waitForFunction(info, name.split('-')[0], { timeout: 20_000 });
  await settled(session.page);
  return session;
}

/** The Patching form's four fields, then `button`. */
async function run(page, button, [clean, corrupted, a, b]) {
  await page.fill('#open-patch-clean', clean);
  await page.fill('#open-patch-corrupted', corrupted);
  if (a !== undefined) { await page.fill('#open-patch-a', a); await page.fill('#open-patch-b', b); }
  await page.click(button);
}

const prompts = [P.clean_text, P.corrupted_text, ...P.answers.text];

test('the IOI prompts are prefilled; how far each head moved and one head patched at each position match float64', async () => {
  const { page, problems, close } = await opened('gpt2-lm');
  assert.equal(await page.inputValue('#open-patch-clean'), 'When Mary and John went to the store, John gave a drink to');
  assert.equal(await page.inputValue('#open-patch-corrupted'), 'When Mary and John went to the store, Mary gave a drink to');

  await run(page, '#open-compare-btn', prompts);
  await page.waitForSelector('#open-compare-out td[data-value]', { state: 'attached', timeout: 20_000 });
  const A = ref.forward(P.clean_ids), B = ref.forward(P.corrupted_ids);
  const moved = await page.$$eval('#open-compare-out td[data-value]', (els) => els.map((e) => [Number(e.dataset.layer), Number(e.dataset.head), Number(e.dataset.value)]));
  assert.equal(moved.length, 4);
  for (const [l, h, v] of moved) {
    const rows = A.maps[l][h].map((row, i) => row.reduce((s, x, j) => s + Math.abs(x - B.maps[l][h][i][j]), 0) / 2);
    const expected = rows.reduce((a, b) => a + b, 0) / rows.length;
    assert.ok(Math.abs(v - expected) < 1e-5, `layer ${l} head ${h}: ${v} shown, ${expected} in float64`);
  }
  assert.equal(await page.locator('#open-compare-out canvas').count(), 4); // clean, corrupted, difference, per head
  // The layers × heads map has its colour key, and a click on a head's cell (below the heads' names) picks that head.
  assert.equal(await page.$eval('#open-compare-out .rs-moved-legend', (e) => e.dataset.top), '1');
  const map = page.locator('#open-compare-out canvas.rs-moved-map');
  const cell = Number(await map.getAttribute('data-cell'));
  await map.click({ position: { x: 30 + 1.5 * cell, y: 16 + 1.5 * cell } });
  await page.waitForFunction(() => document.querySelector('#open-layer').value === '1' && document.querySelector('#open-head').value === '1', null, { timeout: 5000 });
  await page.selectOption('#open-layer', '0');
  await page.selectOption('#open-head', '0');

  // Layer 2, head 2 (indices 1, 1), patched at each position in turn.
  await page.selectOption('#open-layer', '1');
  await page.selectOption('#open-head', '1');
  await page.click('#open-patchpos-btn');
  await page.waitForSelector('#open-positions-out td[data-value]', { state: 'attached', timeout: 20_000 });
  const [a, b] = P.answers.ids;
  const dClean = A.logits[a] - A.logits[b], dCorrupted = B.logits[a] - B.logits[b];
  const cells = await page.$$eval('#open-positions-out td[data-value]', (els) => els.map((e) => [Number(e.dataset.position), Number(e.dataset.value)]));
  assert.equal(cells.length, P.clean_ids.length);
  for (const [p, v] of cells) {
    const out = ref.forward(P.corrupted_ids, (layer, ctx) => { if (layer === 1) ctx[1][p] = A.contexts[1][1][p]; });
    const expected = (out.logits[a] - out.logits[b] - dCorrupted) / (dClean - dCorrupted);
    // Logits agree to ~1e-6 of their size and the clean − corrupted difference is 0.198, so a ratio within 1e-3.
    assert.ok(Math.abs(v - expected) < 1e-3, `position ${p}: ${v} shown, ${expected} in float64`);
  }
  assert.match(await page.textContent('#open-research-status'), /Layer 2 head 2 patched at each of 8 positions/);
  // A gap of 0.198 between the two logit differences: no warning.
  assert.equal(await page.locator('#open-positions-out [data-near]').count(), 0);
  assert.deepEqual(problems, []);
  await close();
});

test('answers the two prompts barely tell apart: the maps of recovered fractions say the gap is small', async () => {
  const { page, problems, close } = await opened('gpt2-lm');
  // "the" against "a" after "…on the mat" and "…on the hat": the gap of the float64 GPT-2's logit differences.
  const [clean, corrupted, a, b] = ['the cat sat on the mat', 'the cat sat on the hat', 'the', 'a'];
  const tokenizer = new Tokenizer(...['tokenizer.json', 'tokenizer_config.json'].map((f) => JSON.parse(readFileSync(join(HF, 'gpt2-lm', f), 'utf8'))));
  const ids = (text) => tokenizer.encode(text).ids;
  const [A, B] = [ids(a)[0], ids(b)[0]];
  const difference = (text) => { const { logits } = ref.forward(ids(text)); return logits[A] - logits[B]; };
  const expected = Math.abs(difference(clean) - difference(corrupted));
  assert.ok(expected < 0.1, `the float64 gap is ${expected}`);
  await run(page, '#open-patch-btn', [clean, corrupted, a, b]);
  await page.waitForSelector('#open-patch-out canvas', { timeout: 20_000 });
  const near = await page.textContent('#open-patch-out [data-near]');
  assert.equal(near, `The two prompts’ logit differences are only ${expected.toFixed(3)} apart, and every fraction here is divided by that gap: a run’s small changes look large. Prompts that the model tells apart more give steadier fractions.`);
  await page.click('#open-patchpos-btn');
  await page.waitForSelector('#open-positions-out td[data-value]', { state: 'attached', timeout: 20_000 });
  assert.match(await page.textContent('#open-positions-out [data-near]'), /every fraction here is divided by that gap/);
  assert.deepEqual(problems, []);
  await close();
});

test('BERT: two prompts are compared, and nothing offers to patch them', async () => {
  const { page, problems, close } = await opened('bert-mlm');
  assert.equal(await page.isHidden('#open-patchpos-btn'), true);
  assert.equal(await page.isHidden('#open-patch-btn'), true);
  assert.equal(await page.isHidden('#open-patch-a'), true);
  await run(page, '#open-compare-btn', ['The dogs played!', 'The cats played!']);
  await page.waitForSelector('#open-compare-out canvas', { timeout: 20_000 });
  assert.ok(await page.locator('#open-compare-out canvas').count() >= 2);
  assert.deepEqual(problems, []);
  await close();
});

for (const [lang, locale, words] of [['en', 'en-US', /Clean − corrupted/], ['zh', 'zh-CN', /干净 − 损坏/]]) {
  test(`two prompts: axe clean, not wider than the screen, in words (${lang}, desktop and phone)`, async () => {
    const { page, close } = await opened('gpt2-lm', lang, locale);
    await run(page, '#open-compare-btn', prompts);
    await page.click('#open-patchpos-btn');
    await page.waitForSelector('#open-positions-out td[data-value]', { state: 'attached', timeout: 20_000 });
    await page.waitForSelector('#open-compare-out canvas', { timeout: 20_000 });
    assert.match(await page.textContent('#open-compare-out'), words);
    for (const [width, label] of [[1280, 'desktop'], [390, 'phone']]) {
      await page.setViewportSize({ width, height: 844 });
      await settled(page);
      assert.deepEqual(await axe(page, '#open-patch'), [], `${lang} ${label}`);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), `${lang} ${label}: wider than the screen`);
      await page.locator('#open-patch').screenshot({ path: join(ART, `research-two-${lang}-${label}.png`) });
    }
    await close();
  });
}
