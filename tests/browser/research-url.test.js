// The research tools in the URL, in Chromium: a model opened from a folder URL with the logit lens (a cell open),
// the two prompts compared and one head patched at each position leaves a link that, in a fresh page and once the
// download is agreed to, reopens the model there and shows the same view with the same numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, settled, ART } from './helpers.js';
import { HF, typeSettled } from './open-helpers.js';

useBrowser();
const P = JSON.parse(readFileSync(join(HF, 'gpt2-lm', 'patching.json'), 'utf8'));

/** The "remote" folder: the fixture's files answered by the test (the page's Worker fetches them). */
const serve = (context) => context.route(/\/remote\/gpt2-lm\/[^/]+$/, (route) => {
  const file = join(HF, 'gpt2-lm', new URL(route.request().url()).pathname.split('/').pop());
  return existsSync(file) ? route.fulfill({ body: readFileSync(file) }) : route.fulfill({ status: 404 });
});

/** What the research tools show: the lens's cells and top ten, how far each head moved, the positions' values. */
const shown = (page) => page.evaluate(() => ({
  lens: [...document.querySelectorAll('#open-lens-out button[data-l]')].map((b) => b.dataset.prob),
  top: [...document.querySelectorAll('#open-lens-top li')].map((li) => li.dataset.prob),
  moved: [...document.querySelectorAll('#open-compare-out td[data-value]')].map((td) => td.dataset.value),
  positions: [...document.querySelectorAll('#open-positions-out td[data-value]')].map((td) => td.dataset.value),
}));

async function ready(page) {
  await page.waitForSelector('#open-lens-top li', { timeout: 20_000 });
  await page.waitForSelector('#open-compare-out td[data-value]', { state: 'attached', timeout: 20_000 });
  await page.waitForSelector('#open-positions-out td[data-value]', { state: 'attached', timeout: 20_000 });
  await settled(page);
}

test('a link keeps the model’s URL and the research view, and reopens both', async () => {
  const { page, context, problems, close } = await open('#mode=open&lang=en');
  await serve(context);
  const origin = new URL(page.url()).origin;
  await page.fill('#open-url', `${origin}/remote/gpt2-lm`);
  await page.click('#open-url-form button[type="submit"]');
  await page.waitForSelector('#open-lens-btn', { state: 'visible', timeout: 20_000 });
  await typeSettled(page, P.clean_text);
  await page.click('#open-lens-btn');
  await page.waitForSelector('#open-lens-out button[data-l="2"][data-p="5"]', { timeout: 20_000 });
  await page.click('#open-lens-out button[data-l="2"][data-p="5"]');
  await page.fill('#open-patch-clean', P.clean_text);
  await page.fill('#open-patch-corrupted', P.corrupted_text);
  await page.fill('#open-patch-a', P.answers.text[0]);
  await page.fill('#open-patch-b', P.answers.text[1]);
  await page.click('#open-compare-btn');
  await page.selectOption('#open-head', '1');
  await page.click('#open-patchpos-btn');
  await ready(page);
  const before = await shown(page);
  await page.waitForFunction(() => location.hash.includes('opos='), null, { timeout: 5000 });
  const hash = decodeURIComponent(await page.evaluate(() => location.hash)).replace(/\+/g, ' ');
  for (const part of [`ourl=${origin}/remote/gpt2-lm/`, 'olens=1', 'olcell=2.5', 'ocmp=1', 'opos=0.1', `oclean=${P.clean_text}`, `ocorrupt=${P.corrupted_text}`]) {
    assert.ok(hash.includes(part), `${part} in ${hash}`);
  }

  const again = await open(await page.evaluate(() => location.hash));
  await serve(again.context);
  await again.page.reload();
  await again.page.click('#open-link-yes'); // a link never downloads by itself
  await ready(again.page);
  assert.deepEqual(await shown(again.page), before);
  // The link's head too, not the model's first one (reset to 0 before 2026-12-06).
  assert.equal(await again.page.inputValue('#open-head'), '1');
  assert.match(await again.page.textContent('#open-lens-top p'), /After layer 2 \(output\), position 5/);
  assert.equal(await again.page.getAttribute('#open-lens-btn', 'aria-pressed'), 'true');
  assert.equal(await again.page.getAttribute('#open-compare-btn', 'aria-pressed'), 'true');
  await again.page.screenshot({ path: join(ART, 'research-url-reopened.png'), fullPage: true });
  assert.deepEqual([...problems, ...again.problems].filter((p) => !/404/.test(p)), []);
  await again.close();
  await close();
});
