// Shared by the "Open a model" browser tests (open*.test.js): the tiny checkpoints of tests/fixtures/hf/ and their
// reference.json (the transformers run that made each fixture), and waiting for and reading the steps panel.
// Not a test file itself (node --test runs *.test.js only).
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, settled } from './helpers.js';

export const HF = join(ROOT, 'tests/fixtures/hf');
const NAMES = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
/** The files of fixture `name` that the page's file input takes. */
export const filesOf = (name) => NAMES.map((n) => join(HF, name, n)).filter(existsSync);
/** Input `i` of fixture `name`'s reference.json: its ids, token types, logits and attention maps. */
export const reference = (name, i = 0) => JSON.parse(readFileSync(join(HF, name, 'reference.json'), 'utf8')).inputs[i];

/** Numbers as the steps panel writes them (`0.2934`, `2.95e-6`), in order. */
export const numbers = (text) => [...text.matchAll(/-?\d+(?:\.\d+)?(?:e[-+]?\d+)?/g)].map((m) => Number(m[0]));

/**
 * Types `text` into the opened model's sentence box and waits for the page to settle. The page redraws for the new
 * text, and the panel above the research buttons grows by up to 1,100 px over a few frames: a click between two of
 * those frames can land on what moved under the pointer.
 */
export async function typeSettled(page, text) {
  await page.fill('#open-text', text);
  await settled(page);
}

/** Wait until the steps panel shows a trace. */
export async function loaded(page) {
  await page.waitForSelector('#open-steps li', { timeout: 20_000 });
  await page.waitForFunction(() => !document.querySelector('#open-steps')?.textContent.includes('…') || document.querySelector('#open-steps li'), null, { timeout: 20_000 });
}

/**
 * Wait until the steps panel shows the trace of layer `l`, head `h` (picked in the selects) for query `q`: not the
 * previous trace, which stays on the panel, dimmed and aria-busy, until the next one arrives.
 */
export async function tracedAt(page, l, h, q) {
  await page.waitForFunction(([l, h, q]) => {
    const steps = document.querySelector('#open-steps');
    return document.querySelector('#open-layer')?.value === String(l) && document.querySelector('#open-head')?.value === String(h)
      && steps?.dataset.layer === String(l) && steps.dataset.head === String(h) && steps.dataset.query === String(q)
      && steps.getAttribute('aria-busy') !== 'true' && steps.querySelector('li');
  }, [l, h, q], { timeout: 20_000 });
}

/**
 * The weights the steps panel's table shows for the current query (every key: the table every model's panel shares,
 * steps/draw.js) against the reference map's row; the panel's own checks pass.
 */
export async function checkWeights(page, ref, l, h, q) {
  const [, H, T] = ref.attention.shape;
  const shown = await page.$$eval('#open-steps .steps-table td.w', (tds) => tds.map((td) => Number(td.dataset.value)));
  const row = ref.attention.data.slice(((l * H + h) * T + q) * T, ((l * H + h) * T + q + 1) * T);
  // One table row per key of the page's input; a reference run on a longer, padded batch gives its padding no weight.
  assert.ok(shown.length > 0 && shown.length <= T, `${shown.length} table rows for ${T} reference keys`);
  assert.ok(row.slice(shown.length).reduce((a, b) => a + b, 0) < 1e-6, 'the reference weighs no key the page does not show');
  shown.forEach((x, j) => assert.ok(Math.abs(x - row[j]) <= 6e-5 + 0.01 * Math.abs(row[j]), `layer ${l} head ${h} query ${q} key ${j}: ${x} shown, ${row[j]} in reference.json`));
  // The panel checks itself against the map: the trace's weights are the map's row, to the last bit, and the float64
  // walkthrough of the traced q, keys and values agrees with them.
  assert.equal(Number(await page.getAttribute('#open-steps', 'data-diff')), 0);
  assert.equal(await page.locator('#open-steps .check.ok').count(), 1);
  assert.equal(await page.locator('#open-steps .check.bad').count(), 0);
}

/** Opens phi3-longrope-partial: 4,096 positions and no tokenizer (its ids are typed), 4 heads, a vocabulary of 48. */
export async function openLongFixture(page) {
  await page.setInputFiles('#open-files', filesOf('phi3-longrope-partial'));
  await page.waitForSelector('#open-text-row:not([hidden])', { timeout: 20_000 });
}

/** Types `T` ids of that fixture's vocabulary (a fixed walk through its 48) and waits for their chips. */
export async function typeIds(page, T) {
  await page.fill('#open-text', Array.from({ length: T }, (_, i) => (i * 7) % 48).join(' '));
  await page.waitForFunction((n) => document.querySelectorAll('#open-tokens .tok').length === n, T, { timeout: 30_000 });
}

/**
 * Starts opening fixture `name` from a folder URL (/slow/<name>/) whose weights arrive only when the returned
 * function is called: a load held in progress, to cancel or to start another over. Waits for its progress row.
 */
export async function openHeld(page, context, name) {
  let release;
  const held = new Promise((ok) => { release = ok; });
  await context.route(new RegExp(`/slow/${name}/[^/]+$`), async (route) => {
    const file = join(HF, name, new URL(route.request().url()).pathname.split('/').pop());
    if (!existsSync(file)) return route.fulfill({ status: 404 });
    if (file.endsWith('model.safetensors')) await held;
    return route.fulfill({ body: readFileSync(file) }).catch(() => {});
  });
  await page.fill('#open-url', `${new URL(page.url()).origin}/slow/${name}/`);
  await page.click('#open-url-form button[type="submit"]');
  await page.waitForSelector('#open-progress-row:not([hidden])');
  return release;
}
