// Browser tests of the demo page's seeded ('untrained') view: build/site served on 127.0.0.1, driven in
// Debian's Chromium. Needs `npm run build && npm run build:demo` first. Screenshots go to test-artifacts/browser/.
// The page opens on the trained language model; these tests ask for the untrained layer in the URL
// (`#model=untrained`), except where they switch away from the default themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, demo, shot, canvasData, settled, ART } from './helpers.js';

const EN = 'The animal didn’t cross the street because it was too tired.';
const UNTRAINED = '#model=untrained';

const env = useBrowser();

test('loads without errors and draws one heat map per head plus the average', async () => {
  const { page, problems, close } = await open(UNTRAINED);
  const d = await demo(page);
  assert.equal(d.state.lang, 'en');
  assert.deepEqual(d.last.rows, ['The', 'animal', 'didn’t', 'cross', 'the', 'street', 'because', 'it', 'was', 'too', 'tired', '.']);
  assert.equal(d.last.H, 4);
  const cards = await page.$$eval('#maps .map-card', (els) => els.map((e) => ({ head: e.dataset.head, w: e.querySelector('canvas').width, h: e.querySelector('canvas').height })));
  assert.deepEqual(cards.map((c) => c.head), ['avg', '0', '1', '2', '3']);
  for (const c of cards) assert.ok(c.w > 100 && c.h > 100, `canvas of map ${c.head} is ${c.w}×${c.h}`);
  // A map really has colour in it: the centre pixel of the average map is not blank.
  const alpha = await page.$eval('#maps .map-card canvas', (c) => c.getContext('2d').getImageData(c.width / 2, c.height / 2, 1, 1).data[3]);
  assert.equal(alpha, 255);
  assert.equal(await page.$$eval('#tokens .tok', (els) => els.length), 12);
  assert.match(await page.textContent('#timing'), /forward \(WASM\) \d+\.\d\d ms/);
  assert.ok(d.last.ms >= 0, `forward took ${d.last.ms} ms`);
  // The pronoun is the default query token of the walkthrough.
  assert.equal(d.last.qi, 7);
  await shot(page, '01-default', { fullPage: true });
  await page.locator('#maps-section').screenshot({ path: join(ART, '01-maps.png') });
  assert.deepEqual(problems, []);
  await close();
});

test('typing recomputes tokens and maps on every keystroke', async () => {
  const { page, problems, close } = await open(UNTRAINED);
  const before = await canvasData(page, '#maps .map-card[data-head="1"] canvas');
  await page.fill('#text', 'Colourless green ideas sleep furiously');
  await settled(page);
  let d = await demo(page);
  assert.deepEqual(d.last.rows, ['Colourless', 'green', 'ideas', 'sleep', 'furiously']);
  assert.equal(await page.$$eval('#tokens .tok', (els) => els.length), 5);
  assert.notEqual(await canvasData(page, '#maps .map-card[data-head="1"] canvas'), before);
  // An empty sentence empties the views, and text brings them back.
  await page.fill('#text', '   ');
  await settled(page);
  assert.ok(await page.isVisible('#empty'));
  assert.equal(await page.$$eval('#maps .map-card', (els) => els.length), 0);
  await page.fill('#text', 'Colourless green ideas sleep furiously');
  await settled(page);
  assert.equal(await page.$$eval('#maps .map-card', (els) => els.length), 5);
  // One key at a time: every keystroke gives a new computation.
  await page.focus('#text');
  await page.keyboard.press('End');
  await page.keyboard.type(', 猫');
  await settled(page);
  d = await demo(page);
  assert.deepEqual(d.last.rows.slice(-2), [',', '猫']);
  assert.equal(d.last.weights.length, 4 * 7 * 7);
  // 64 tokens (the page's limit) are computed and drawn. (How fast: `npm run bench:demo`, not a timed test.)
  const long = Array.from({ length: 64 }, (_, i) => `w${i}`).join(' ');
  await page.fill('#text', long);
  await settled(page);
  d = await demo(page);
  assert.equal(d.last.L, 64);
  await page.fill('#text', long + ' more words');
  await settled(page);
  assert.match(await page.textContent('#tokens'), /64 of 66/);
  await shot(page, '02-long-sentence', { fullPage: false });
  assert.deepEqual(problems, []);
  await close();
});

test('changing the number of heads changes the number of maps', async () => {
  const { page, problems, close } = await open(UNTRAINED);
  await page.selectOption('#num-heads', '8');
  await settled(page);
  assert.equal(await page.$$eval('#maps .map-card', (els) => els.length), 9);
  assert.equal((await demo(page)).last.H, 8);
  await page.locator('#maps-section').screenshot({ path: join(ART, '03-eight-heads.png') });
  await page.selectOption('#num-heads', '2');
  await settled(page);
  assert.equal(await page.$$eval('#maps .map-card', (els) => els.length), 3);
  // Embedding size 48 offers 3 and 6 heads; 2 heads stay valid.
  await page.selectOption('#embed-dim', '48');
  await settled(page);
  assert.deepEqual(await page.$$eval('#num-heads option', (o) => o.map((x) => x.value)), ['1', '2', '3', '4', '6', '8']);
  await page.selectOption('#num-heads', '6');
  await settled(page);
  assert.equal(await page.$$eval('#maps .map-card', (els) => els.length), 7);
  assert.equal((await demo(page)).last.E, 48);
  assert.deepEqual(problems, []);
  await close();
});

test('head toggles and token hover change the head view', async () => {
  const { page, problems, close } = await open(UNTRAINED);
  const lines = () => canvasData(page, '#headview canvas.hv-lines');
  const all = await lines();
  await page.click('#headview .head-chip[data-head="1"]');
  await settled(page);
  assert.equal(await page.getAttribute('#headview .head-chip[data-head="1"]', 'aria-pressed'), 'false');
  const without1 = await lines();
  assert.notEqual(without1, all);
  await page.hover('#headview .hv-left .hv-tok[data-i="7"]');
  await settled(page);
  const hovered = await lines();
  assert.notEqual(hovered, without1);
  assert.equal(await page.$$eval('#headview .hv-tok.active', (e) => e.length), 1);
  await page.locator('#hv-section').screenshot({ path: join(ART, '04-headview-hover.png') });
  await page.mouse.move(5, 5);
  await settled(page);
  assert.equal(await lines(), without1);
  // "none" leaves an empty canvas; "all" brings every head back.
  await page.click('#headview [data-all="0"]');
  await settled(page);
  const blank = await page.$eval('#headview canvas.hv-lines', (c) => !new Uint32Array(c.getContext('2d').getImageData(0, 0, c.width, c.height).data.buffer).some((x) => x));
  assert.ok(blank);
  await page.click('#headview [data-all="1"]');
  await settled(page);
  assert.equal(await lines(), all);
  assert.deepEqual(problems, []);
  await close();
});

/** Weights of the walkthrough table, and the package's forward weights for the same row, recomputed in the page. */
async function stepsVersusForward(page) {
  const shown = await page.$$eval('#steps td.w', (tds) => tds.map((td) => Number(td.dataset.value)));
  const sum = Number(await page.getAttribute('#steps td.wsum', 'data-value'));
  const fresh = await page.evaluate(async () => {
    // An independent layer from the package (same seed), fed by the page's embedding code.
    const { api, state, last } = window.__attnscopeDemo;
    await api.init();
    const mha = new api.MultiHeadAttention({ embedDim: state.embedDim, numHeads: state.numHeads, seed: state.seed });
    const embed = api.positionalEmbedding(state.embedDim, (t) => api.seededTokenVector(t, state.embedDim, state.seed));
    const q = embed(last.rows);
    const k = state.mode === 'cross' ? embed(last.cols) : q;
    const { weights } = mha.forward(q, k, k, { causal: last.causal });
    mha.dispose();
    const head = last.steps.head, L = last.L, S = last.S;
    return { row: Array.from(weights.data.subarray((head * L + last.qi) * S, (head * L + last.qi + 1) * S)), shape: weights.shape, qi: last.qi, head };
  });
  return { shown, sum, fresh };
}

test('the steps panel shows weights that sum to 1 and equal forward()', async () => {
  const { page, problems, close } = await open(UNTRAINED);
  let { shown, sum, fresh } = await stepsVersusForward(page);
  assert.deepEqual(fresh.shape, [4, 12, 12]);
  assert.equal(shown.length, 12);
  assert.ok(Math.abs(shown.reduce((a, b) => a + b, 0) - 1) < 1e-5, `weights sum to ${shown.reduce((a, b) => a + b, 0)}`);
  assert.ok(Math.abs(sum - 1) < 1e-5);
  shown.forEach((w, j) => assert.ok(Math.abs(w - fresh.row[j]) < 1e-5, `key ${j}: shown ${w}, forward ${fresh.row[j]}`));
  assert.equal(await page.$$eval('#steps .check.ok', (e) => e.length), 2);
  assert.equal(await page.$$eval('#steps .check.bad', (e) => e.length), 0);

  // Another head and token, with the causal mask: later keys get exactly 0.
  await page.check('#causal');
  await page.click('#tokens .tok[data-i="3"]');
  await page.click('#head-tabs [data-head="2"]');
  await settled(page);
  ({ shown, sum, fresh } = await stepsVersusForward(page));
  assert.equal(fresh.qi, 3);
  assert.equal(fresh.head, 2);
  assert.ok(Math.abs(sum - 1) < 1e-5);
  shown.forEach((w, j) => assert.ok(Math.abs(w - fresh.row[j]) < 1e-5, `key ${j}: shown ${w}, forward ${fresh.row[j]}`));
  assert.deepEqual(shown.slice(4), Array(8).fill(0));
  assert.equal(await page.$$eval('#steps tr.masked', (e) => e.length), 8);
  await page.locator('#steps-section').screenshot({ path: join(ART, '05-steps-causal.png') });

  // The page's model interface takes trained weights: a state dict plus an embedding table gives
  // the same result as the seeded model they were taken from.
  const sameAsSeeded = await page.evaluate(() => {
    const { api } = window.__attnscopeDemo;
    const tokens = ['a', 'trained', 'model', 'a'];
    const seeded = api.createSeededModel({ embedDim: 32, numHeads: 2, seed: 5 });
    const vocab = ['<unk>', 'a', 'trained', 'model'];
    const weights = { data: new Float32Array(vocab.length * 32), shape: [vocab.length, 32] };
    vocab.forEach((t, k) => weights.data.set(api.seededTokenVector(t, 32, 5), k * 32));
    const trained = api.createModelFromStateDict({ stateDict: seeded.stateDict(), numHeads: 2, embedding: { vocab, weights } });
    const a = seeded.run(tokens), b = trained.run(tokens);
    seeded.dispose(); trained.dispose();
    let diff = 0;
    a.weights.data.forEach((x, k) => (diff = Math.max(diff, Math.abs(x - b.weights.data[k]))));
    a.output.data.forEach((x, k) => (diff = Math.max(diff, Math.abs(x - b.output.data[k]))));
    return diff;
  });
  assert.ok(sameAsSeeded < 1e-6, `trained-path model differs by ${sameAsSeeded}`);
  assert.deepEqual(problems, []);
  await close();
});

test('cross-attention draws target × source alignments', async () => {
  const { page, problems, close } = await open();
  await page.click('#mode-tabs [data-mode="cross"]');
  await page.fill('#src', 'The cat sat on the mat.');
  await page.fill('#tgt', '猫坐在垫子上。');
  await settled(page);
  const d = await demo(page);
  assert.deepEqual(d.last.cols, ['The', 'cat', 'sat', 'on', 'the', 'mat', '.']);
  assert.deepEqual(d.last.rows, ['猫', '坐', '在', '垫', '子', '上', '。']);
  assert.equal(d.last.causal, false);
  assert.ok(await page.isDisabled('#causal'));
  await page.fill('#src', 'The cat sat on the mat and purred.');
  await settled(page);
  const d2 = await demo(page);
  assert.equal(d2.last.L, 7);
  assert.equal(d2.last.S, 9);
  assert.equal(d2.last.weights.length, 4 * 7 * 9);
  // The map is wider than tall: 7 target rows × 9 source columns.
  const [w, h] = await page.$eval('#maps .map-card.avg canvas', (c) => [parseFloat(c.style.width), parseFloat(c.style.height)]);
  assert.ok(w > h, `map is ${w}×${h}`);
  const { shown, fresh } = await stepsVersusForward(page);
  assert.equal(shown.length, 9);
  shown.forEach((x, j) => assert.ok(Math.abs(x - fresh.row[j]) < 1e-5));
  await shot(page, '06-cross', { fullPage: true });
  assert.deepEqual(problems, []);
  await close();
});

test('exports PNG, SVG and JSON; clicking a map enlarges it', async () => {
  const { page, problems, close } = await open(UNTRAINED);
  const grab = async (click) => {
    const [dl] = await Promise.all([page.waitForEvent('download'), click()]);
    return { name: dl.suggestedFilename(), bytes: readFileSync(await dl.path()) };
  };
  const png = await grab(() => page.click('#maps .map-card[data-head="0"] [data-export="png"]'));
  assert.equal(png.name, 'attnscope-self-head1.png');
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(png.bytes.length > 2000);
  writeFileSync(join(ART, '07-export-head1.png'), png.bytes);
  const svg = await grab(() => page.click('#maps .map-card[data-head="avg"] [data-export="svg"]'));
  const text = svg.bytes.toString('utf8');
  assert.match(text, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(text, /<\/svg>\n?$/);
  writeFileSync(join(ART, '07-export-average.svg'), text);
  // Drawn by attnscope/figures: one cell per weight, each filled, with its indices.
  assert.equal((text.match(/<rect[^>]* data-q="\d+" data-k="\d+"/g) ?? []).length, 12 * 12);
  assert.match(text, /role="img"/);
  // The SVG parses as XML.
  const parsed = await page.evaluate((s) => new DOMParser().parseFromString(s, 'image/svg+xml').querySelector('parsererror') === null, text);
  assert.ok(parsed);
  const json = await grab(() => page.click('#export-json'));
  const doc = JSON.parse(json.bytes.toString('utf8'));
  assert.deepEqual(doc.shape, [4, 12, 12]);
  assert.equal(doc.queryTokens[7], 'it');
  for (const head of doc.weights) for (const row of head) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5);
  assert.equal(doc.average.length, 12);
  // Every setting of the view is in the file: a reader can rebuild the layer from it.
  const st = (await demo(page)).state;
  assert.deepEqual(doc.settings, { embedDim: st.embedDim, numHeads: st.numHeads, headDim: st.embedDim / st.numHeads, seed: st.seed, causal: st.causal, attention: 'self' });
  assert.equal(doc.model, 'untrained');

  // A click on a map picks a row; its Enlarge button (or a double-click) enlarges it.
  await page.click('#maps .map-card[data-head="2"] [data-zoom]');
  await page.waitForSelector('#zoom[open]');
  assert.equal(await page.textContent('#zoom-title'), 'Head 3');
  const box = await page.locator('#zoom-canvas').boundingBox();
  assert.ok(box.width > 400, `enlarged map is ${box.width} px wide`);
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.6);
  assert.match(await page.textContent('#tooltip'), /Head 3.*→.*\d\.\d{6}/s);
  await shot(page, '07-zoom');
  const zpng = await grab(() => page.click('#zoom [data-export="png"]'));
  assert.equal(zpng.name, 'attnscope-self-head3.png');
  assert.equal(zpng.bytes.readUInt32BE(0), 0x89504e47);
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.querySelector('#zoom').open);
  assert.deepEqual(problems, []);
  await close();
});

test('the URL carries the whole state: a copied link reproduces the view', async () => {
  const { page, problems, close } = await open(UNTRAINED);
  await page.fill('#text', 'Le chat boit du lait, il a soif.');
  await page.selectOption('#embed-dim', '32');
  await page.selectOption('#num-heads', '2');
  await page.fill('#seed', '7');
  await page.check('#causal');
  await page.click('#head-tabs [data-head="1"]');
  await page.click('#lang-btn');
  // The language switch rebuilds the head chips with narrower labels in a later frame: a click before that lands
  // where the old first chip was, which can be the new second one.
  await settled(page);
  await page.click('#headview .head-chip[data-head="0"]');
  await settled(page);
  assert.deepEqual((await demo(page)).state.off, [0]);
  await page.click('#copy-link');
  await page.waitForSelector('#copy-link[data-url]');
  const link = await page.getAttribute('#copy-link', 'data-url');
  assert.ok(link.startsWith(env.url + '#'));
  const a = await demo(page);

  const other = await open(link.slice(env.url.length), { locale: 'en-US' });
  const b = await demo(other.page);
  assert.equal(await other.page.inputValue('#text'), 'Le chat boit du lait, il a soif.');
  assert.equal(await other.page.inputValue('#embed-dim'), '32');
  assert.equal(await other.page.inputValue('#num-heads'), '2');
  assert.equal(await other.page.inputValue('#seed'), '7');
  assert.ok(await other.page.isChecked('#causal'));
  assert.equal(await other.page.getAttribute('html', 'lang'), 'zh-CN');
  assert.equal(await other.page.getAttribute('#headview .head-chip[data-head="0"]', 'aria-pressed'), 'false');
  assert.deepEqual(b.state, a.state);
  assert.deepEqual(b.last.weights, a.last.weights);
  assert.equal(b.last.steps.head, 1);
  // The address bar itself follows the state too (debounced).
  await page.waitForFunction(() => location.hash.includes('seed=7'));
  await shot(other.page, '08-restored-from-link');
  assert.deepEqual(problems, []);
  assert.deepEqual(other.problems, []);
  await other.close();
  await close();
});

test('the interface follows navigator.language and switches language', async () => {
  const zh = await open(UNTRAINED, { locale: 'zh-CN' });
  assert.equal(await zh.page.getAttribute('html', 'lang'), 'zh-CN');
  assert.equal(await zh.page.textContent('#maps-title'), '逐个头看注意力权重');
  // The Chinese default sentence, one token per character.
  const d = await demo(zh.page);
  assert.ok(d.last.rows.every((s) => s.length === 1));
  assert.ok(d.last.rows.includes('它'));
  assert.equal(d.last.rows[d.last.qi], '它');
  await shot(zh.page, '09-chinese', { fullPage: true });
  await zh.page.click('#lang-btn');
  assert.equal(await zh.page.getAttribute('html', 'lang'), 'en');
  assert.equal(await zh.page.textContent('#maps-title'), 'Attention weights, head by head');
  assert.equal(await zh.page.textContent('#lang-btn'), '中文');
  await zh.page.click('#lang-btn');
  assert.equal(await zh.page.textContent('#steps-title'), '注意力的每一步：跟踪一个查询词元');
  assert.deepEqual(zh.problems, []);
  await zh.close();
  const en = await open('', { locale: 'en-GB' });
  assert.equal(await en.page.inputValue('#text'), EN);
  assert.equal(await en.page.textContent('#lang-btn'), '中文');
  assert.deepEqual(en.problems, []);
  await en.close();
});

test('a hand-edited hash is read over the defaults: what it leaves out is reset, invalid values fall back', async () => {
  const { page, problems, close } = await open(UNTRAINED + '&text=' + encodeURIComponent('Le chat dort.') + '&d=32&h=2');
  assert.deepEqual((await demo(page)).last.rows, ['Le', 'chat', 'dort', '.']);
  // No text in the new hash: the default sentence, not the old one; a bad size falls back to the default.
  await page.evaluate(() => { location.hash = '#mode=self&model=untrained&d=33&h=99&scale=bogus&q=-7'; });
  await page.waitForFunction(() => window.__attnscopeDemo.state.text !== 'Le chat dort.');
  await settled(page);
  const d = await demo(page);
  assert.equal(d.state.text, EN);
  assert.equal(d.state.embedDim, 64);
  assert.equal(d.state.numHeads, 4);
  assert.equal(d.state.scale, 'rest');
  assert.equal(d.state.query, -1);
  assert.equal(await page.inputValue('#text'), EN);
  assert.equal(d.last.rows.length, 12);
  assert.deepEqual(problems, []);
  await close();
});
