// "Open a model" (issue #22) in Chinese at a phone's width (390 px), for the kinds of model open.test.js opens in
// English at a desktop's: BERT (masked-token filling, sentence A / sentence B with token types) and a Llama-family
// checkpoint with grouped-query attention (heads grouped under their key/value head, RoPE a step of its own). The
// numbers on the page are checked against reference.json (the transformers run that made each fixture), the
// Chinese words are the page's own, nothing is wider than the screen, and axe finds no serious or critical issue
// at the phone's width and at a desktop's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, shot, axe } from './helpers.js';
import { HF, filesOf, reference, loaded, tracedAt, checkWeights } from './open-helpers.js';

useBrowser();

const PHONE = { locale: 'zh-CN', width: 390, height: 844 };

/** softmax(row)'s largest probability and where it is. */
function top(row) {
  const m = Math.max(...row);
  const z = row.reduce((s, x) => s + Math.exp(x - m), 0);
  const i = row.indexOf(m);
  return { i, p: 1 / z };
}
/** Row `t` of reference logits [T, V]. */
const logitsRow = (ref, t) => { const V = ref.logits.shape[1]; return ref.logits.data.slice(t * V, (t + 1) * V); };

/** At the phone's width and then at a desktop's: nothing wider than the screen, axe clean, a screenshot of each. */
async function checkLayout(page, name) {
  for (const [width, height, where] of [[390, 844, 'phone'], [1280, 900, 'desktop']]) {
    await page.setViewportSize({ width, height });
    await page.waitForTimeout(300);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), `${name} ${where}: wider than the screen`);
    assert.deepEqual(await axe(page), [], `${name} ${where}`);
    await shot(page, `open-${name}-zh-${where}`, { fullPage: true });
  }
}

test('bert-mlm in Chinese on a phone: [MASK] filled, sentence B has token type 1, numbers match reference.json', async () => {
  const { page, problems, close } = await open('#mode=open&lang=zh', PHONE);
  // Input 1 of the fixture: [CLS] the cat [MASK] [SEP] a dog [SEP], token types 0 0 0 0 0 1 1 1 (and two padded
  // keys, which take no weight: the rows of the first 8 keys are those of an unpadded run).
  const ref = reference('bert-mlm', 1);
  const vocab = JSON.parse(readFileSync(join(HF, 'bert-mlm/tokenizer.json'), 'utf8')).model.vocab;
  const token = Object.fromEntries(Object.entries(vocab).map(([w, i]) => [i, w]));
  await page.setInputFiles('#open-files', filesOf('bert-mlm'));
  await loaded(page);
  assert.match(await page.textContent('#open-status'), /^所需内存：.*已加载：参数 [\d.]+ KB；WebAssembly 内存共/);
  assert.match(await page.textContent('#open-info'), /^BERT：2 层 × 2 头（多头注意力），隐藏维度 16，头维度 8，学习的位置编码/);
  assert.match(await page.textContent('#open-hint'), /^编码器：每个词元都看到所有其他词元。在要填词的位置输入 \[MASK\]/);
  assert.equal(await page.isVisible('#open-pair'), true);

  await page.fill('#open-text', 'the cat [MASK]');
  await page.fill('#open-pair', 'a dog');
  const T = 8;
  await page.waitForFunction((n) => document.querySelectorAll('#open-tokens .tok').length === n && document.querySelector('#open-tokens .tok.type-b'), T, { timeout: 20_000 });
  const chips = await page.$$eval('#open-tokens .tok', (els) => els.map((e) => [e.textContent, e.classList.contains('type-b') ? 1 : 0]));
  assert.deepEqual(chips.map(([s]) => s), ref.input_ids.slice(0, T).map((id) => token[id]));
  assert.deepEqual(chips.map(([, b]) => b), ref.token_type_ids.slice(0, T));

  // What fills [MASK] (position 3): the softmax of reference.json's row 3 of logits.
  await page.waitForSelector('#open-predict .open-fill .next-tok');
  assert.match(await page.textContent('#open-predict .open-fill > span'), /^位置 3 的 \[MASK\]：$/);
  const best = top(logitsRow(ref, 3));
  assert.equal(await page.textContent('#open-predict .next-tok b'), token[best.i]);
  const title = await page.getAttribute('#open-predict .next-tok', 'title');
  assert.ok(Math.abs(parseFloat(title) - best.p * 100) < 0.01, `[MASK] filled with ${title}, ${(best.p * 100).toFixed(2)}% from reference.json`);

  // The weights of [MASK]'s query in layer 2, head 2, and of sentence B's "dog" in layer 1, head 1: they depend
  // on the token types (BERT adds a type embedding to every token).
  await page.selectOption('#open-layer', '1');
  await page.selectOption('#open-head', '1');
  await page.click('#open-tokens .tok[data-i="3"]');
  await tracedAt(page, 1, 1, 3);
  await checkWeights(page, ref, 1, 1, 3);
  assert.match(await page.textContent('#open-steps'), /注意力之前没有归一化（此模型在残差相加之后归一化）/);
  await page.selectOption('#open-layer', '0');
  await page.selectOption('#open-head', '0');
  await page.click('#open-tokens .tok[data-i="6"]');
  await tracedAt(page, 0, 0, 6);
  await checkWeights(page, ref, 0, 0, 6);
  await checkLayout(page, 'bert');
  assert.deepEqual(problems, []);
  await close();
});

test('llama-gqa in Chinese on a phone: heads under their key/value head, RoPE a step, numbers match reference.json', async () => {
  const { page, problems, close } = await open('#mode=open&lang=zh', PHONE);
  const ref = reference('llama-gqa');
  const T = ref.input_ids.length;
  await page.setInputFiles('#open-files', filesOf('llama-gqa'));
  await page.waitForSelector('#open-text-row:not([hidden])', { timeout: 20_000 });
  // Two sentences, with no space between them in Chinese.
  assert.equal(await page.textContent('#open-hint'), '因果模型：每个词元只看到自己和之前的词元。此检查点没有 tokenizer.json：请输入以空格分隔的词元编号。');
  assert.match(await page.textContent('#open-info'), /^Llama：2 层 × 4 头（分组查询注意力，4 个查询头共用 2 个键\/值头），隐藏维度 24，头维度 6，RoPE（θ = 10000），/);
  await page.fill('#open-text', ref.input_ids.join(' '));
  await page.waitForFunction((n) => document.querySelectorAll('#open-tokens .tok').length === n, T, { timeout: 20_000 });
  await loaded(page);
  assert.match(await page.textContent('#open-grid-note'), /^分组查询注意力：4 个查询头共用 2 个键\/值头，每个括号下 2 个。/);
  assert.deepEqual(await page.$eval('#open-head', (s) => [...s.options].map((o) => o.textContent)), ['头 1 · KV1', '头 2 · KV1', '头 3 · KV2', '头 4 · KV2']);

  // Heads 3 and 4 of layer 2 read the same key/value head; their weights still differ, as in reference.json.
  await page.selectOption('#open-layer', '1');
  await page.selectOption('#open-head', '2');
  await tracedAt(page, 1, 2, T - 1);
  await checkWeights(page, ref, 1, 2, T - 1);
  const steps = await page.textContent('#open-steps');
  assert.match(steps, /投影后的查询（头维度 6；它读取第 2 个键\/值头）/);
  assert.match(steps, /RoPE（θ = 10000）把每对维度旋转一个与位置成正比的角度/);
  await page.selectOption('#open-head', '3');
  await page.click('#open-tokens .tok[data-i="4"]');
  await tracedAt(page, 1, 3, 4);
  await checkWeights(page, ref, 1, 3, 4);

  // The next token after the last: the softmax of reference.json's last row of logits (ids, no tokenizer).
  const best = top(logitsRow(ref, T - 1));
  assert.match(await page.textContent('#open-predict .open-fill > span'), /^下一个词元：$/);
  assert.equal(await page.textContent('#open-predict .next-tok b'), `#${best.i}`);
  const title = await page.getAttribute('#open-predict .next-tok', 'title');
  assert.ok(Math.abs(parseFloat(title) - best.p * 100) < 0.01, `next token ${title}, ${(best.p * 100).toFixed(2)}% from reference.json`);
  await checkLayout(page, 'llama-gqa');
  assert.deepEqual(problems, []);
  await close();
});
