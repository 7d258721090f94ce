// The circuits of an opened model in Chromium: every head's ‖W_Q·W_Kᵀ‖ and ‖W_V·W_O‖ and one head's singular values,
// on gpt2-lm and on llama-gqa (its head 4 reads key/value head 2), against research.json's float64 PyTorch products of
// the file's own tensors (tools/references/hf_research_reference.py); axe and screenshots in both languages at desktop
// and phone widths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, settled, axe, ART } from './helpers.js';
import { HF, filesOf } from './open-helpers.js';

useBrowser();
const research = (name) => JSON.parse(readFileSync(join(HF, name, 'research.json'), 'utf8'));

/** The page on fixture `name` with the circuits shown and head (layer, head) picked. */
async function withCircuits(name, layer, head, { lang = 'en', locale = 'en-US' } = {}) {
  const session = await open(`#mode=open&lang=${lang}`, { locale });
  const { page } = session;
  await page.setInputFiles('#open-files', filesOf(name));
  await page.waitForSelector('#open-circuits-btn', { state: 'visible', timeout: 20_000 });
  // The panel above the button grows for a few frames after the load: a click in between can miss it.
  await settled(page);
  await page.click('#open-circuits-btn');
  await page.selectOption('#open-layer', String(layer));
  await page.selectOption('#open-head', String(head));
  await page.waitForSelector(`#open-circuits-out .rs-circ-head[data-layer="${layer}"][data-head="${head}"]:not(.stale) li`, { timeout: 20_000 });
  await settled(page);
  return session;
}

for (const name of ['gpt2-lm', 'llama-gqa']) {
  test(`${name}: every head's QK and OV norms and one head's singular values are PyTorch's`, async () => {
    const ref = research(name);
    const { layer, head } = ref.circuit;
    const { page, problems, close } = await withCircuits(name, layer, head);
    const norms = await page.$$eval('#open-circuits-out td[data-kind]',
      (tds) => tds.map((td) => [td.dataset.kind, Number(td.dataset.layer), Number(td.dataset.head), Number(td.dataset.value)]));
    const H = ref.qk_norms.length / ref.layers;
    assert.equal(norms.length, 2 * ref.layers * H);
    for (const [kind, l, h, v] of norms) {
      const want = ref[`${kind}_norms`][l * H + h];
      assert.ok(Math.abs(v - want) < 1e-4 * want, `${kind} layer ${l} head ${h}: ${v}, PyTorch ${want}`);
    }
    const sv = await page.$$eval('#open-circuits-out li[data-kind]',
      (lis) => lis.map((li) => [li.dataset.kind, Number(li.dataset.index), Number(li.dataset.value)]));
    assert.equal(sv.length, ref.circuit.qk_singular.length + ref.circuit.ov_singular.length);
    for (const [kind, i, v] of sv) {
      const want = ref.circuit[`${kind}_singular`][i];
      assert.ok(Math.abs(v - want) < 1e-4 * ref.circuit[`${kind}_singular`][0], `${kind} σ${i + 1}: ${v}, PyTorch ${want}`);
    }
    const text = await page.textContent('#open-circuits-out');
    assert.match(text, new RegExp(`Layer ${layer + 1} head ${head + 1}`));
    // llama-gqa's head 3 (0-based) of 4 over 2 key/value heads reads key/value head 1: the page counts from 1.
    if (name === 'llama-gqa') assert.match(text, /reads key\/value head 2 \(of 2\)/);
    else assert.doesNotMatch(text, /key\/value head/);
    // The page writes its URL 150 ms after a change.
    await page.waitForFunction((s) => location.hash.includes(s), 'ocirc=1', { timeout: 5000 });
    assert.deepEqual(problems, []);
    await close();
  });
}

for (const [lang, locale, words] of [['en', 'en-US', /QK singular values/], ['zh', 'zh-CN', /QK 奇异值/]]) {
  test(`the circuits: axe clean, not wider than the screen, in words (${lang}, desktop and phone)`, async () => {
    const { page, close } = await withCircuits('llama-gqa', 1, 3, { lang, locale });
    assert.match(await page.textContent('#open-circuits-out'), words);
    for (const [width, label] of [[1280, 'desktop'], [390, 'phone']]) {
      await page.setViewportSize({ width, height: 844 });
      await settled(page);
      assert.deepEqual(await axe(page, '#open-circuits'), [], `${lang} ${label}`);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), `${lang} ${label}: wider than the screen`);
      await page.locator('#open-circuits').screenshot({ path: join(ART, `research-circuits-${lang}-${label}.png`) });
    }
    await close();
  });
}
