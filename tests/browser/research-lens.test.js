// The logit lens of an opened model in Chromium: gpt2-lm (final norm and tied head) and bert-mlm (its masked-LM
// head), each cell's top-1 token and probability and a clicked cell's ten most probable tokens against
// research.json (tools/references/hf_research_reference.py, float64 PyTorch); axe and screenshots in both languages
// at desktop and phone widths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, settled, axe, ART } from './helpers.js';
import { HF, filesOf, typeSettled } from './open-helpers.js';

useBrowser();
const research = (name) => JSON.parse(readFileSync(join(HF, name, 'research.json'), 'utf8'));
const CASES = { 'gpt2-lm': 'the cat sat on the mat', 'bert-mlm': 'The dogs played!' };

/** The page on fixture `name` with its research input typed and the lens shown. */
async function withLens(name, lang = 'en', locale = 'en-US') {
  const session = await open(`#mode=open&lang=${lang}`, { locale });
  const { page } = session;
  await page.setInputFiles('#open-files', filesOf(name));
  await page.waitForSelector('#open-lens-btn', { state: 'visible', timeout: 20_000 });
  await typeSettled(page, CASES[name]);
  await page.click('#open-lens-btn');
  await page.waitForFunction((T) => document.querySelectorAll('#open-lens-out button[data-l="0"]').length === T
    && !document.querySelector('#open-lens-out').classList.contains('stale'), research(name).ids.length, { timeout: 20_000 })
    .catch(async (e) => {
      // What the lens said instead (its status line, its table's state), and the text it was asked for.
      const seen = await page.evaluate(() => ({ status: document.querySelector('#open-lens-status').textContent, out: document.querySelector('#open-lens-out').className,
        cells: document.querySelectorAll('#open-lens-out button[data-l="0"]').length, text: document.querySelector('#open-text').value,
        pressed: document.querySelector('#open-lens-btn').getAttribute('aria-pressed'), hidden: document.querySelector('#open-lens').hidden,
        progress: window.__attnscopeDemo.progress }));
      // The scheduler a second later: a version that keeps moving means views off screen never got their turn.
      await new Promise((ok) => setTimeout(ok, 1000));
      seen.later = await page.evaluate(() => window.__attnscopeDemo.progress);
      throw new Error(`${e.message}; the lens showed ${JSON.stringify(seen)}`);
    });
  await settled(page);
  return session;
}

/** Row (layer, position) of the reference's probabilities over the whole vocabulary. */
function refRow(ref, layer, position) {
  const T = ref.ids.length, V = ref.lens_probabilities.length / ((ref.layers + 1) * T);
  return ref.lens_probabilities.slice((layer * T + position) * V, (layer * T + position + 1) * V);
}

for (const name of Object.keys(CASES)) {
  test(`${name}: every cell of the logit lens is PyTorch's most probable token, and a click lists its top ten`, async () => {
    const ref = research(name);
    const { page, problems, close } = await withLens(name);
    const cells = await page.$$eval('#open-lens-out button[data-l]', (bs) => bs.map((b) => [Number(b.dataset.l), Number(b.dataset.p), Number(b.dataset.id), Number(b.dataset.prob)]));
    assert.equal(cells.length, (ref.layers + 1) * ref.ids.length);
    for (const [l, p, id, prob] of cells) {
      const row = refRow(ref, l, p);
      const best = Math.max(...row);
      // float32 against float64: the shown token is PyTorch's best, or one within 1e-5 of it (a near tie).
      assert.ok(best - row[id] < 1e-5, `layer ${l} position ${p}: #${id} shown (${row[id]}), PyTorch's best ${best}`);
      assert.ok(Math.abs(prob - best) < 1e-5 + 1e-4 * best, `layer ${l} position ${p}: ${prob} shown, ${best} in PyTorch`);
    }
    await page.click(`#open-lens-out button[data-l="${ref.layers}"][data-p="2"]`);
    await page.waitForSelector('#open-lens-top li', { timeout: 5000 });
    const top = await page.$$eval('#open-lens-top li', (lis) => lis.map((li) => [Number(li.dataset.id), Number(li.dataset.prob)]));
    const row = refRow(ref, ref.layers, 2);
    const sorted = [...row].sort((a, b) => b - a);
    assert.equal(top.length, 10);
    top.forEach(([id, prob], i) => {
      assert.ok(Math.abs(prob - sorted[i]) < 1e-5 + 1e-4 * sorted[i], `rank ${i + 1}: ${prob} shown, ${sorted[i]} in PyTorch`);
      assert.ok(Math.abs(row[id] - sorted[i]) < 1e-5, `rank ${i + 1}: #${id} has ${row[id]} in PyTorch, not the rank's ${sorted[i]}`);
    });
    assert.match(await page.textContent('#open-lens-top p'), new RegExp(`position 2`));
    // A causal model's lens reads the Worker's typing pass of the text shown (only the head runs); BERT's runs its own.
    assert.equal(await page.getAttribute('#open-lens', 'data-from-cache'), String(name === 'gpt2-lm'));
    assert.deepEqual(problems, []);
    await close();
  });
}

for (const [lang, locale, words] of [['en', 'en-US', /Embeddings/], ['zh', 'zh-CN', /嵌入/]]) {
  test(`the logit lens: axe clean, not wider than the screen, in words (${lang}, desktop and phone)`, async () => {
    const { page, close } = await withLens('gpt2-lm', lang, locale);
    await page.click('#open-lens-out button[data-l="1"][data-p="3"]');
    await page.waitForSelector('#open-lens-top li');
    assert.match(await page.textContent('#open-lens-out'), words);
    for (const [width, label] of [[1280, 'desktop'], [390, 'phone']]) {
      await page.setViewportSize({ width, height: 844 });
      await settled(page);
      assert.deepEqual(await axe(page, '#open-lens'), [], `${lang} ${label}`);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), `${lang} ${label}: wider than the screen`);
      await page.locator('#open-lens').screenshot({ path: join(ART, `research-lens-${lang}-${label}.png`) });
    }
    await close();
  });
}

test('the lens comes a row a call with its progress, and hiding it before it is done sends the Worker a cancel', async () => {
  const session = await open('#mode=open&lang=en');
  const { page, problems, close } = session;
  // Every message to and from the model Worker; a lens request is held back while __holdLens is set, so that the lens
  // stays running (this fixture's lens is done in a few ms).
  await page.evaluate(() => {
    window.__posted = [];
    window.__heard = [];
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (m, transfer) {
      window.__posted.push(m?.type);
      if (m?.type === 'lens' && window.__holdLens) return undefined;
      return post.call(this, m, transfer);
    };
    const Base = window.Worker;
    window.Worker = class extends Base {
      constructor(...args) {
        super(...args);
        this.addEventListener('message', ({ data }) => { if (data?.type === 'researchProgress') window.__heard.push(data); });
      }
    };
  });
  await page.setInputFiles('#open-files', filesOf('gpt2-lm'));
  await page.waitForSelector('#open-lens-btn', { state: 'visible', timeout: 20_000 });
  await typeSettled(page, CASES['gpt2-lm']);
  await page.click('#open-lens-btn');
  await page.waitForSelector('#open-lens-out button[data-l]', { timeout: 20_000 });
  const rows = research('gpt2-lm').layers + 1;
  assert.deepEqual(await page.evaluate(() => window.__heard.filter((p) => p.kind === 'lens').map((p) => [p.done, p.total])),
    Array.from({ length: rows }, (_, i) => [i + 1, rows]), 'a progress message after each call of a row');
  assert.match(await page.textContent('#open-lens-status'), new RegExp(`^${rows} rows × \\d+ positions, computed in`));
  // Another text: a new lens, held back, so it is running when the lens is hidden.
  await page.evaluate(() => { window.__holdLens = true; });
  await typeSettled(page, 'the dog sat');
  await page.waitForFunction(() => /^computing…$|^Computing the lens: \d+ of \d+ rows/.test(document.querySelector('#open-lens-status').textContent), null, { timeout: 10_000 });
  assert.equal(await page.evaluate(() => window.__posted.includes('cancelLens')), false);
  await page.click('#open-lens-btn');
  assert.equal(await page.evaluate(() => window.__posted.filter((m) => m === 'cancelLens').length), 1, 'hiding a running lens cancels it');
  await page.waitForFunction(() => document.querySelector('#open-lens-status').textContent === '' && !document.querySelector('#open-lens-out button'), null, { timeout: 5000 });
  assert.deepEqual(problems, []);
  await close();
});
