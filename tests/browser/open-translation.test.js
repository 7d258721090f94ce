// "Open a model" with a translation model (issue 31): BART with its tokenizer.json in English at a desktop's width,
// Marian with only SentencePiece files in Chinese at a phone's. The page shows the greedy translation and the three
// attentions of the chosen layer and head: cross-attention (output rows × source columns) beside the encoder's and
// the decoder's maps; the output tokens are reference.json's greedy ones (the transformers-semantics run that made
// each fixture); the Marian folder takes token ids and says why; "Why attention" links to this tab; axe is clean.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, shot, axe } from './helpers.js';
import { HF } from './open-helpers.js';

useBrowser();

const filesOf = (name) => ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'source.spm', 'target.spm', 'vocab.json']
  .map((n) => join(HF, name, n)).filter(existsSync);
const referenceOf = (name) => JSON.parse(readFileSync(join(HF, name, 'reference.json'), 'utf8'));
/**
 * Waits for the translation view of a source of `sourceLength` tokens (the page may first show the example text's,
 * or sample ids'); returns how many tokens the page's greedy translation has.
 */
async function ready(page, sourceLength) {
  await page.waitForFunction((n) => {
    const view = document.querySelector('#open-translation');
    return view?.dataset.ready && !view.hidden && document.querySelector('#open-s2s-cross')?.dataset.cols === String(n);
  }, sourceLength, { timeout: 20_000 });
  return Number(await page.getAttribute('#open-translation', 'data-ready'));
}

test('BART in English: the translation, and cross-attention (output × source) beside the encoder\'s and decoder\'s maps', async () => {
  const { page, problems, close } = await open('#mode=open', { width: 1280, height: 800 });
  const ref = referenceOf('bart-cg');
  await page.setInputFiles('#open-files', filesOf('bart-cg'));
  await page.waitForSelector('#open-text-row:not([hidden])', { timeout: 20_000 });
  assert.match(await page.textContent('#open-hint'), /^A translation model \(an encoder–decoder\)/);
  assert.match(await page.textContent('#open-info'), /^BART: 2 layers × 4 heads/);
  await page.fill('#open-text', ref.text);
  // The page decodes up to the decoder's positions (no end token here): the reference's greedy steps come first.
  const N = await ready(page, ref.translate.source_ids.length);
  assert.ok(N >= ref.translate.tokens.length);
  // Cross-attention: one row per output token, one column per source token.
  assert.equal(await page.getAttribute('#open-s2s-cross', 'data-rows'), String(N));
  assert.equal(await page.getAttribute('#open-s2s-cross', 'data-cols'), String(ref.translate.source_ids.length));
  assert.equal(await page.getAttribute('#open-s2s-encoder', 'data-rows'), String(ref.translate.source_ids.length));
  assert.equal(await page.getAttribute('#open-s2s-decoder', 'data-cols'), String(N));
  assert.match(await page.getAttribute('#open-s2s-cross', 'aria-label'), /^Cross-attention · layer 1 · head 1\. Strongest weight of each row: /);
  // The maps of layer 2, head 3; the encoder has 2 heads, so its map is its last head's.
  await page.selectOption('#open-s2s-layer', '1');
  await page.selectOption('#open-s2s-head', '2');
  await page.waitForFunction(() => document.querySelector('#open-s2s-cross-title').textContent.endsWith('layer 2 · head 3'));
  assert.match(await page.textContent('#open-s2s-encoder-title'), /layer 2 · head 2$/);
  // The three maps sit side by side at a desktop's width.
  const boxes = await Promise.all(['cross', 'encoder', 'decoder'].map((k) => page.locator(`#open-s2s-${k}`).boundingBox()));
  assert.ok(boxes[0].y === boxes[1].y && boxes[1].y === boxes[2].y && boxes[0].x < boxes[1].x && boxes[1].x < boxes[2].x, JSON.stringify(boxes));
  assert.equal(await page.isVisible('#open-section'), false, 'the single-stack maps are not shown for an encoder–decoder');
  assert.deepEqual(await axe(page), []);
  await shot(page, 'open-translation-bart-en', { fullPage: true });
  assert.deepEqual(problems, []);
  await close();
});

test('Marian with only source.spm and target.spm, in Chinese on a phone: token ids, the page says why; the maps fit', async () => {
  const { page, problems, close } = await open('#mode=open&lang=zh', { locale: 'zh-CN', width: 390, height: 844 });
  const ref = referenceOf('marian-mt');
  await page.setInputFiles('#open-files', filesOf('marian-mt'));
  await page.waitForSelector('#open-text-row:not([hidden])', { timeout: 20_000 });
  assert.match(await page.textContent('#open-hint'), /此文件夹只有 SentencePiece 模型（source\.spm、target\.spm），没有 tokenizer\.json/);
  await page.fill('#open-text', ref.translate.source_ids.join(' '));
  await ready(page, ref.translate.source_ids.length);
  const shown = (await page.textContent('#open-s2s-text')).split(' ').map(Number);
  assert.deepEqual(shown.slice(0, ref.translate.tokens.length), ref.translate.tokens, 'the reference\'s greedy tokens first');
  assert.match(await page.textContent('#open-s2s-cross-title'), /^交叉注意力 · 第 1 层 · 头 1$/);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), 'wider than the screen');
  assert.deepEqual(await axe(page), []);
  await shot(page, 'open-translation-marian-zh-phone', { fullPage: true });
  assert.deepEqual(problems, []);
  await close();
});

test('"Why attention" links to a real translation model, in English and Chinese', async () => {
  for (const [lang, words] of [['en', /^The same attention in a real translation model/], ['zh', /^真实翻译模型/]]) {
    const { page, close } = await open(`#lang=${lang}`);
    assert.match(await page.textContent('#why-to-open'), words);
    assert.match(await page.getAttribute('#why-to-open', 'href'), /mode=open/);
    await page.click('#why-to-open');
    await page.waitForSelector('#open-inputs:not([hidden])');
    await close();
  }
});
