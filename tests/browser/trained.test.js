// Browser tests of the demo's trained models: the character language model (the default self-attention
// view, with its model view of every layer and head) and the dates encoder–decoder, decoded step by step.
// The expected dates are computed here from the words, independently of the model; attention maps are
// compared with the package run in Node on the very model files the page fetched (build/site/assets).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { init, loadModel } from '../../dist/index.js';
import { useBrowser, open, demo, shot, settled, SITE, ART } from './helpers.js';

const EN = 'The animal didn’t cross the street because it was too tired.';

useBrowser();

/** The model file the built page fetches (Vite copies models/<name>.safetensors to assets/<name>-<hash>.safetensors). */
function builtModel(name) {
  const dir = join(SITE, 'assets');
  const file = readdirSync(dir).find((f) => f.startsWith(`${name}-`) && f.endsWith('.safetensors'));
  assert.ok(file, `no ${name}-*.safetensors in ${dir}`);
  return join(dir, file);
}

/** A model file's config and named heads, read by hand (tools/MODEL_FORMAT.md): uint64 length, JSON, __metadata__. */
function readHeader(path) {
  const bytes = readFileSync(path);
  const meta = JSON.parse(bytes.subarray(8, 8 + Number(bytes.readBigUInt64LE(0))).toString('utf8')).__metadata__;
  assert.equal(meta.format, 'attnscope-model/1');
  return { config: JSON.parse(meta.config), named_heads: JSON.parse(meta.named_heads) };
}

let nodeModels = null;
/** The same model files, loaded by the package in Node. */
async function nodeModel(name) {
  if (!nodeModels) { await init(); nodeModels = {}; }
  return (nodeModels[name] ??= await loadModel(builtModel(name)));
}

const showToken = (c) => (c === ' ' ? '␣' : c === '\n' ? '↵' : c);

// ------------------------------------------------------------------------------------------------
// An independent reading of English dates in words: the ISO date, and which words spell which field.
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const UNITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const TEENS = ['ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const ORDINALS = ['', 'first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth', 'eleventh', 'twelfth',
  'thirteenth', 'fourteenth', 'fifteenth', 'sixteenth', 'seventeenth', 'eighteenth', 'nineteenth', 'twentieth'];

function parseDate(text) {
  const words = text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  const fields = { year: [], month: [], day: [] };
  let month = 0, day = 0;
  words.forEach((w, i) => { if (MONTHS.includes(w)) { month = MONTHS.indexOf(w) + 1; fields.month.push(i); } });
  // The day: "13th", "13", or an ordinal in words ("fifth", "twenty second", "thirty first", "thirtieth").
  for (let i = 0; i < words.length && !day; i++) {
    const w = words[i];
    const m = /^(\d{1,2})(st|nd|rd|th)?$/.exec(w);
    if (m) { day = Number(m[1]); fields.day.push(i); continue; }
    const o = w === 'thirtieth' ? 30 : ORDINALS.indexOf(w);
    if (o <= 0) continue;
    day = o;
    fields.day.push(i);
    if (o < 10 && ['twenty', 'thirty'].includes(words[i - 1])) { day += 10 * TENS.indexOf(words[i - 1]); fields.day.unshift(i - 1); }
  }
  // The year: the remaining number words, e.g. "nineteen ninety", "twenty twenty four", "nineteen oh five",
  // "nineteen hundred and five", "two thousand and twelve".
  const taken = new Set([...fields.month, ...fields.day]);
  const yearWords = [];
  words.forEach((w, i) => {
    if (!taken.has(i) && (UNITS.includes(w) || TEENS.includes(w) || TENS.slice(2).includes(w) || ['hundred', 'thousand', 'oh', 'and'].includes(w))) {
      yearWords.push(w);
      fields.year.push(i);
    }
  });
  const parts = [];
  for (let k = 0; k < yearWords.length; k++) {
    const w = yearWords[k];
    if (w === 'and') continue;
    if (w === 'hundred' || w === 'thousand') parts.push(w);
    else if (w === 'oh') parts.push(UNITS.indexOf(yearWords[++k]));
    else if (TEENS.includes(w)) parts.push(10 + TEENS.indexOf(w));
    else if (TENS.includes(w)) {
      const u = UNITS.indexOf(yearWords[k + 1]);
      parts.push(10 * TENS.indexOf(w) + (u > 0 ? u : 0));
      if (u > 0) k++;
    } else parts.push(UNITS.indexOf(w));
  }
  const th = parts.indexOf('thousand'), hu = parts.indexOf('hundred');
  const year = th >= 0 ? parts[th - 1] * 1000 + (parts[th + 1] ?? 0) : hu >= 0 ? parts[hu - 1] * 100 + (parts[hu + 1] ?? 0) : parts[0] * 100 + (parts[1] ?? 0);
  const pad = (n, k) => String(n).padStart(k, '0');
  return { iso: `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`, words, fields };
}

// Dates in words, read by parseDate above (the model also reads digits: see the next tests and
// tests/js/dates-model.test.js).
const DATES = [
  'the fifth of march nineteen ninety',
  'on friday the 13th of september twenty twenty four',
  'december the thirty first nineteen ninety nine',
  '12 october nineteen oh five',
  'the twenty second of february in the year two thousand and twelve',
  'the 9th of november nineteen hundred and five',
];

test('the date reader of these tests reads its examples', () => {
  assert.equal(parseDate(DATES[0]).iso, '1990-03-05');
  assert.equal(parseDate(DATES[1]).iso, '2024-09-13');
  assert.equal(parseDate(DATES[2]).iso, '1999-12-31');
  assert.equal(parseDate(DATES[3]).iso, '1905-10-12');
  assert.equal(parseDate(DATES[4]).iso, '2012-02-22');
  assert.equal(parseDate(DATES[5]).iso, '1905-11-09');
  assert.deepEqual(parseDate(DATES[2]).fields, { year: [4, 5, 6], month: [0], day: [2, 3] });
});

/** Cross-attention row t averaged over every decoder layer and head: [S]. */
function crossRow(d, t) {
  const [Ld, H, N, S] = d.shapes.cross;
  const row = new Array(S).fill(0);
  for (let l = 0; l < Ld; l++) for (let h = 0; h < H; h++) for (let j = 0; j < S; j++) row[j] += d.cross[((l * H + h) * N + t) * S + j] / (Ld * H);
  return row;
}
const argmax = (a) => a.reduce((b, x, i) => (x > a[b] ? i : b), 0);

// ------------------------------------------------------------------------------------------------
test('the trained language model is the default: a layers × heads model view with the named heads labelled', async () => {
  const file = builtModel('char-lm');
  const header = readHeader(file);
  const { n_layers: L, n_heads: H } = header.config;
  const named = header.named_heads ?? [];
  const { page, problems, close } = await open();
  let d = await demo(page);
  assert.equal(d.state.model, 'trained');
  assert.equal(d.last.kind, 'lm');
  assert.deepEqual(d.last.rows, ['<bos>', ...Array.from(EN, showToken)]);
  assert.equal(await page.$$eval('#tokens .tok', (els) => els.length), Array.from(EN).length + 1);
  // The step-by-step panel works on the trained model too: one row per key, its weights equal to the model's own.
  assert.ok(await page.isVisible('#steps-section'));
  assert.equal(await page.$$eval('#steps td.w', (els) => els.length), d.last.L);

  // One map per layer and head, every one drawn.
  const cells = await page.$$eval('#modelview .mv-cell', (els) => els.map((e) => {
    const c = e.querySelector('canvas');
    const badge = e.querySelector('.mv-badge');
    return {
      layer: Number(e.dataset.layer), head: Number(e.dataset.head), w: c.width, h: c.height,
      alpha: c.getContext('2d').getImageData(c.width / 2, c.height / 2, 1, 1).data[3],
      badge: badge.hidden ? null : badge.textContent,
    };
  }));
  assert.equal(cells.length, L * H);
  assert.deepEqual(cells.map((c) => `${c.layer}/${c.head}`), [...Array(L * H).keys()].map((k) => `${Math.floor(k / H)}/${k % H}`));
  for (const c of cells) {
    assert.ok(c.w > 80 && c.h > 80, `map ${c.layer}/${c.head} is ${c.w}×${c.h}`);
    assert.equal(c.alpha, 255, `map ${c.layer}/${c.head} is blank`);
  }
  // The named heads of the file, and only they, carry a badge with their name and score.
  assert.equal(cells.filter((c) => c.badge).length, named.length);
  for (const n of named) {
    const c = cells.find((x) => x.layer === n.layer && x.head === n.head);
    // The badge names the behaviour; which language it was measured on is in its title, not on every sentence.
    const name = n.name.replace(/\s*\((Chinese|English) text\)$/, '');
    assert.ok(c.badge?.includes(name) && c.badge.includes(n.score.toFixed(2)), `layer ${n.layer} head ${n.head}: badge ${c.badge}`);
    assert.ok(!/\((Chinese|English) text\)/.test(c.badge), `layer ${n.layer} head ${n.head}: badge ${c.badge}`);
  }
  assert.equal(await page.isVisible('#named-none'), named.length === 0);
  // The maps section shows the deepest layer with a named head (else the last), with the same badges.
  const layer = named.length ? Math.max(...named.map((n) => n.layer)) : L - 1;
  assert.equal(d.last.layer, layer);
  assert.equal(await page.$$eval('#maps .map-card', (els) => els.length), H + 1);
  assert.equal(await page.$$eval('#maps .map-badge:not([hidden])', (els) => els.length), named.filter((n) => n.layer === layer).length);

  // The page's weights are the package's, run in Node on the same file.
  const lm = await nodeModel('char-lm');
  const ref = lm.forward(EN);
  const T = ref.ids.length;
  assert.equal(d.last.L, T);
  const diff = (dd, l) => {
    let m = 0;
    dd.last.weights.forEach((x, k) => (m = Math.max(m, Math.abs(x - ref.attention.data[l * H * T * T + k]))));
    return m;
  };
  assert.ok(diff(d, layer) < 1e-5, `weights differ from Node's by ${diff(d, layer)}`);
  // The next-character prediction is the argmax of the last row of logits.
  const V = ref.logits.shape[1];
  const lastRow = Array.from(ref.logits.data.subarray((T - 1) * V, T * V));
  const best = argmax(lastRow);
  assert.equal(d.last.next[0].token, best === lm.vocab.bosId ? null : lm.vocab.tokens[best]);
  assert.equal(await page.$$eval('#next-list .next-tok', (els) => els.length), 5);
  await shot(page, '10-lm-default', { fullPage: true });
  await page.locator('#model-section').screenshot({ path: join(ART, '10-lm-modelview.png') });

  // Clicking a map enlarges it and moves the maps and the head view to its layer.
  const target = { layer: (layer + 1) % L, head: H - 1 };
  await page.click(`#modelview .mv-cell[data-layer="${target.layer}"][data-head="${target.head}"] canvas`);
  await page.waitForSelector('#zoom[open]');
  assert.match(await page.textContent('#zoom-title'), new RegExp(`^Head ${H}`));
  d = await demo(page);
  assert.equal(d.state.layer, target.layer);
  assert.equal(d.last.layer, target.layer);
  assert.ok(diff(d, target.layer) < 1e-5);
  assert.equal(await page.inputValue('#layer-select'), `self:${target.layer}`);
  assert.equal(await page.textContent('#maps-title'), `Layer ${target.layer + 1}, head by head`);
  assert.equal(await page.$$eval('#headview .head-chip', (els) => els.length), H);
  await shot(page, '11-lm-zoom');
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.querySelector('#zoom').open);
  await page.waitForFunction((l) => location.hash.includes(`layer=${l}`), target.layer);
  assert.deepEqual(problems, []);
  await close();
});

test('the language model reads characters, cuts at max_len, predicts and continues the text', async () => {
  const lm = await nodeModel('char-lm');
  const maxLen = lm.config.maxLen;
  const { page, problems, close } = await open();
  await page.fill('#text', 'Hello, world');
  await settled(page);
  let d = await demo(page);
  assert.deepEqual(d.last.rows, ['<bos>', 'H', 'e', 'l', 'l', 'o', ',', '␣', 'w', 'o', 'r', 'l', 'd']);
  // A character the model never saw is <unk>, and marked.
  await page.fill('#text', 'Hello ☃');
  await settled(page);
  d = await demo(page);
  assert.equal(d.last.ids.at(-1), lm.vocab.unkId);
  assert.equal(await page.$$eval('#tokens .tok.unk', (els) => els.length), 1);
  // Longer than the context: <bos> and the first max_len − 1 characters, and the page says so.
  const long = 'abcd efgh '.repeat(30);
  await page.fill('#text', long);
  await settled(page);
  d = await demo(page);
  assert.equal(d.last.L, maxLen);
  assert.equal(d.last.truncated, true);
  assert.match(await page.textContent('#tokens .warn'), new RegExp(`first ${maxLen - 1} of ${long.length} characters`));
  assert.ok(await page.isDisabled('#continue-btn'));
  // "Continue" appends the greedy continuation, as the package computes it.
  const prompt = 'The cat sat on the';
  await page.fill('#text', prompt);
  await settled(page);
  const expected = prompt + lm.generate(prompt, { maxNewTokens: 40 }).text;
  await page.click('#continue-btn');
  await settled(page);
  assert.equal(await page.inputValue('#text'), expected);
  d = await demo(page);
  assert.equal(d.last.L, Array.from(expected).length + 1);
  await page.locator('.input-card').screenshot({ path: join(ART, '12-lm-continue.png') });
  // The JSON export holds the chosen layer of the trained model.
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  assert.equal(dl.suggestedFilename(), 'attnscope-lm-weights.json');
  const doc = JSON.parse(readFileSync(await dl.path(), 'utf8'));
  // Every layer, not only the one on screen; the layer on screen equals the page's maps.
  assert.deepEqual(doc.shape, [d.last.layers, d.last.H, d.last.L, d.last.L]);
  assert.equal(doc.attention.length, d.last.layers);
  assert.equal(doc.settings.layer, d.last.layer);
  assert.equal(doc.model, 'char-lm.safetensors');
  assert.deepEqual(doc.tokens, d.last.rows);
  const onScreen = doc.attention[d.last.layer].flat(2);
  onScreen.forEach((x, k) => assert.ok(Math.abs(x - d.last.weights[k]) < 1e-6, `weight ${k}: ${x} vs ${d.last.weights[k]}`));
  // The end of the text is named as such, never '<bos>'.
  assert.ok(doc.nextCharacter.every((x) => x.token !== '<bos>' && x.token !== null));
  assert.deepEqual(problems, []);
  await close();
});

test('switching to "untrained" restores the seeded single layer, and back', async () => {
  const { page, problems, close } = await open();
  await page.click('#model-switch [data-model="untrained"]');
  await settled(page);
  let d = await demo(page);
  assert.equal(d.last.kind, 'seeded');
  assert.deepEqual(d.last.rows, ['The', 'animal', 'didn’t', 'cross', 'the', 'street', 'because', 'it', 'was', 'too', 'tired', '.']);
  assert.equal(d.last.H, 4);
  assert.deepEqual(await page.$$eval('#maps .map-card', (els) => els.map((e) => e.dataset.head)), ['avg', '0', '1', '2', '3']);
  assert.ok(await page.isVisible('#steps-section'));
  assert.equal(await page.$$eval('#steps td.w', (els) => els.length), 12);
  assert.ok(await page.isHidden('#model-section'));
  assert.ok(await page.isVisible('#embed-dim'));
  assert.equal(await page.textContent('#maps-title'), 'Attention weights, head by head');
  await page.waitForFunction(() => location.hash.includes('model=untrained'));
  await shot(page, '13-untrained', { fullPage: false });
  await page.click('#model-switch [data-model="trained"]');
  await settled(page);
  d = await demo(page);
  assert.equal(d.last.kind, 'lm');
  assert.ok(await page.isVisible('#steps-section'));
  assert.ok(await page.isVisible('#model-section'));
  assert.ok(await page.isHidden('#embed-dim'));
  // The dates model has its step-by-step panel too (tested below); back to self-attention keeps the trained model.
  await page.click('#mode-tabs [data-mode="s2s"]');
  await settled(page);
  assert.ok(await page.isVisible('#steps-section'));
  await page.click('#mode-tabs [data-mode="self"]');
  await settled(page);
  assert.equal((await demo(page)).last.kind, 'lm');
  assert.deepEqual(problems, []);
  await close();
});

test('the dates model writes the right ISO date for several phrasings', async () => {
  const { page, problems, close } = await open('#mode=s2s');
  let d = await demo(page);
  assert.equal(d.last.kind, 's2s');
  for (const date of DATES) {
    const ref = parseDate(date);
    await page.fill('#date', date);
    await settled(page);
    d = await demo(page);
    assert.deepEqual(d.last.sourceTokens, ref.words);
    assert.equal(d.last.text, ref.iso, `“${date}” gave ${d.last.text}, expected ${ref.iso}`);
    assert.equal(d.last.shown, d.last.N);
    assert.equal(d.last.outputTokens.at(-1), '<eos>');
    assert.equal(await page.textContent('#dec-text'), ref.iso);
  }
  // Digit years are words of the vocabulary; the words around a date mostly are not, and the page marks them <unk>.
  await page.fill('#date', 'we met on December 31 1999');
  await settled(page);
  assert.deepEqual(await page.$$eval('#tokens .tok.unk', (els) => els.map((e) => e.firstChild.textContent)), ['we', 'met']);
  assert.equal(await page.textContent('#dec-text'), '1999-12-31');
  // The model's own answers for a day the month does not have and for a missing year, said plainly.
  await page.fill('#date', 'the 31st of April 2021');
  await settled(page);
  assert.equal((await demo(page)).last.text, 'invalid');
  assert.equal(await page.textContent('#dec-text'), 'not a valid date');
  await page.fill('#date', 'July 4th');
  await settled(page);
  assert.equal((await demo(page)).last.text, '--07-04');
  assert.equal(await page.textContent('#dec-text'), '--07-04 (no year given)');
  // No words: nothing to decode.
  await page.fill('#date', ' , ');
  await settled(page);
  assert.ok(await page.isVisible('#empty'));
  assert.ok(await page.isHidden('#decode-section'));
  assert.deepEqual(problems, []);
  await close();
});

test('cross-attention of the year, month and day digits peaks on the words that spell them', async () => {
  const { page, problems, close } = await open('#mode=s2s');
  for (const date of DATES) {
    const ref = parseDate(date);
    await page.fill('#date', date);
    await settled(page);
    const d = await demo(page);
    assert.equal(d.last.text, ref.iso);
    // Output positions in YYYY-MM-DD: the century digit, the decade digit, the last month digit and both
    // day digits each read their own field. (The leading month digit and the second year digit follow from
    // what was already written and read elsewhere.)
    for (const [field, t] of [['year', 0], ['year', 2], ['month', 6], ['day', 8], ['day', 9]]) {
      const j = argmax(crossRow(d.last, t));
      assert.ok(ref.fields[field].includes(j), `“${date}”: output ${t} (“${ref.iso[t]}”) reads most “${ref.words[j]}”, not a ${field} word (${ref.fields[field].map((k) => ref.words[k])})`);
    }
  }
  // The decoding panel draws the same weights: click the last month digit of the first date.
  const ref = parseDate(DATES[2]);
  await page.fill('#date', DATES[2]);
  await settled(page);
  await page.click('#decode .dec-slot[data-t="6"]');
  await settled(page);
  const d = await demo(page);
  assert.equal(d.last.focus, 6);
  const row = crossRow(d.last, 6);
  d.last.focusWeights.forEach((w, j) => assert.ok(Math.abs(w - row[j]) < 1e-6));
  assert.equal(argmax(d.last.focusWeights), ref.fields.month[0]);
  assert.match(await page.textContent('#dec-say'), /wrote “2”.*looked most at “december”/);
  await page.locator('#decode-section').screenshot({ path: join(ART, '14-s2s-month-digit.png') });
  assert.deepEqual(problems, []);
  await close();
});

test('decoding step by step: Step adds one token, Play runs to the end, Pause stops', async () => {
  const date = DATES[0];
  const iso = parseDate(date).iso;
  const { page, problems, close } = await open(`#mode=s2s&speed=fast&step=0&date=${encodeURIComponent(date)}`);
  const now = async () => (await demo(page)).last;
  let d = await now();
  assert.equal(d.shown, 0);
  assert.equal(d.written, '');
  assert.ok(await page.isVisible('#empty'));
  assert.ok(await page.isDisabled('#dec-back'));
  assert.ok(await page.isDisabled('#dec-pause'));
  // Before the first step the decoder and cross-attention maps are empty; the encoder's are drawn.
  assert.equal(await page.$$eval('#modelview .mv-cell.blank', (els) => els.length), await page.$$eval('#modelview .mv-cell:not([data-attn="enc"])', (els) => els.length));
  await page.locator('#decode-section').screenshot({ path: join(ART, '15-s2s-start.png') });

  await page.click('#dec-step');
  await settled(page);
  d = await now();
  assert.deepEqual([d.shown, d.written, d.focus, d.L], [1, iso[0], 0, 1]);
  await page.click('#dec-step');
  await page.click('#dec-step');
  await settled(page);
  d = await now();
  assert.deepEqual([d.shown, d.written], [3, iso.slice(0, 3)]);
  assert.equal(await page.textContent('#dec-counter'), `step 3 of ${d.N}`);
  await shot(page, '16-s2s-step3', { fullPage: true });
  await page.click('#dec-back');
  await settled(page);
  assert.equal((await now()).shown, 2);

  // Play (fast) runs to the end and stops there.
  await page.click('#dec-play');
  await page.waitForFunction(() => { const l = window.__attnscopeDemo.last; return l.shown === l.N && !l.playing; }, null, { timeout: 10_000 });
  d = await now();
  assert.equal(d.written, iso);
  assert.ok(await page.isEnabled('#dec-play'));
  assert.ok(await page.isDisabled('#dec-pause'));
  assert.ok(await page.isDisabled('#dec-step'));
  assert.equal((await demo(page)).state.step, d.N);

  // Reset, play slowly, pause: nothing moves any more.
  await page.click('#dec-reset');
  await page.selectOption('#dec-speed', 'normal');
  await settled(page);
  assert.equal((await now()).shown, 0);
  await page.click('#dec-play');
  await page.waitForFunction(() => window.__attnscopeDemo.last.shown >= 2, null, { timeout: 5000 });
  await page.click('#dec-pause');
  await settled(page);
  d = await now();
  const paused = d.shown;
  assert.equal(d.playing, false);
  assert.ok(paused >= 2 && paused < d.N, `paused at ${paused}`);
  await page.waitForTimeout(1400);
  d = await now();
  assert.equal(d.shown, paused);
  assert.equal(d.written, iso.slice(0, paused));
  await page.waitForFunction((s) => location.hash.includes(`step=${s}`) && location.hash.includes('speed=normal'), paused);
  assert.deepEqual(problems, []);
  await close();
});

test('the dates model view: encoder, decoder and cross-attention, named heads, URL state', async () => {
  const header = readHeader(builtModel('dates-seq2seq'));
  const c = header.config;
  const named = header.named_heads ?? [];
  const date = DATES[1];
  const { page, problems, close } = await open(`#mode=s2s&attn=enc&layer=1&step=4&speed=slow&date=${encodeURIComponent(date)}`);
  let d = await demo(page);
  assert.deepEqual([d.state.attn, d.state.layer, d.state.step, d.state.speed], ['enc', 1, 4, 'slow']);
  assert.equal(await page.inputValue('#dec-speed'), 'slow');
  assert.equal(await page.inputValue('#layer-select'), 'enc:1');
  assert.equal(await page.textContent('#maps-title'), 'Encoder self-attention, layer 2, head by head');
  assert.deepEqual(d.last.rows, parseDate(date).words);
  assert.equal(d.last.shown, 4);
  const counts = { enc: c.n_enc_layers * c.n_heads, dec: c.n_dec_layers * c.n_heads, cross: c.n_dec_layers * c.n_heads };
  for (const [attn, n] of Object.entries(counts)) {
    assert.equal(await page.$$eval(`#modelview .mv-cell[data-attn="${attn}"]`, (els) => els.length), n, attn);
  }
  const attnOf = { enc_self: 'enc', dec_self: 'dec', dec_cross: 'cross' };
  assert.equal(await page.$$eval('#modelview .mv-cell.named', (els) => els.length), named.length);
  for (const n of named) {
    const cell = `#modelview .mv-cell[data-attn="${attnOf[n.attn]}"][data-layer="${n.layer}"][data-head="${n.head}"]`;
    assert.equal(await page.textContent(`${cell} .mv-badge`), n.score.toFixed(2));
    assert.ok((await page.getAttribute(cell, 'title')).includes(n.name), n.name);
  }
  for (const name of new Set(named.map((n) => n.name))) assert.ok((await page.textContent('#modelview')).includes(`★ ${name}`), name);
  await page.locator('#model-section').screenshot({ path: join(ART, '17-s2s-modelview.png') });
  // Clicking a cross-attention map: enlarged, and the maps show that layer's alignment so far.
  await page.click('#modelview .mv-cell[data-attn="cross"][data-layer="0"][data-head="1"] canvas');
  await page.waitForSelector('#zoom[open]');
  assert.match(await page.textContent('#zoom-title'), /^Head 2/);
  d = await demo(page);
  assert.deepEqual([d.state.attn, d.state.layer, d.last.L, d.last.S], ['cross', 0, 4, parseDate(date).words.length]);
  await shot(page, '18-s2s-zoom');
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => location.hash.includes('attn=cross') && location.hash.includes('layer=0'));
  assert.deepEqual(problems, []);
  await close();
});

test('the new views speak Chinese', async () => {
  const { page, problems, close } = await open('#mode=s2s', { locale: 'zh-CN' });
  assert.equal(await page.textContent('#decode-title'), '逐步解码');
  assert.equal(await page.textContent('#mode-tabs [data-mode="s2s"]'), '训练好的 Seq2Seq：日期');
  assert.equal(await page.textContent('#dec-play span:last-child'), '播放');
  assert.match(await page.textContent('#modelview'), /编码器自注意力/);
  assert.match(await page.textContent('#dec-say'), /^第 \d+ 步/);
  await shot(page, '19-s2s-chinese', { fullPage: true });
  await page.click('#mode-tabs [data-mode="self"]');
  await settled(page);
  assert.equal(await page.textContent('#model-switch [data-model="trained"]'), '训练好的字符模型');
  // The Chinese default sentence is one the language model can read: no <unk> character.
  assert.equal((await demo(page)).last.kind, 'lm');
  assert.equal(await page.$$eval('#tokens .tok.unk', (els) => els.length), 0);
  // A head measured on one language does not say so on the badge of every sentence.
  assert.doesNotMatch(await page.textContent('#modelview'), /（中文文本）|（英文文本）|Chinese text|English text/);
  // The shipped model's heads are named in Chinese too, and the one trained towards its pattern says so.
  const modelView = await page.textContent('#modelview');
  assert.match(modelView, /归纳头/);
  assert.match(modelView, /前一个字符（训练时引导）/);
  assert.doesNotMatch(modelView, /induction|guided in training/);
  await page.click('[data-example="poem"]');
  await settled(page);
  const d = await demo(page);
  assert.equal(d.last.kind, 'lm');
  assert.equal(d.last.rows[1], '床');
  assert.match(await page.textContent('#maps-title'), /^第 \d 层/);
  await shot(page, '20-lm-chinese-poem', { fullPage: false });
  assert.deepEqual(problems, []);
  await close();
});

test('the trained models are fetched only when a view needs them, with a loading state', async () => {
  // The transformer models only: the "Why attention" section at the top of the page shows its two small GRU models
  // (dates-gru*, 0.3 MB each) as soon as it is drawn, so those are fetched with the page by design.
  const fetched = (page) => page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name.split('/').pop()).filter((n) => n.endsWith('.safetensors') && !n.startsWith('dates-gru')));
  const { page, problems, close } = await open('#model=untrained');
  assert.deepEqual(await fetched(page), []);
  // Hold the language model back until the loading state has been seen.
  let release;
  const gate = new Promise((ok) => (release = ok));
  await page.route('**/char-lm-*.safetensors', async (route) => { await gate; await route.continue(); });
  await page.click('#model-switch [data-model="trained"]');
  await page.waitForSelector('#model-status.loading');
  assert.match(await page.textContent('#model-status'), /^Loading the trained model \(char-lm\.safetensors/);
  assert.equal(await page.getAttribute('body', 'data-loading'), 'lm');
  assert.ok(await page.isHidden('#maps-section'));
  await page.locator('.input-card').screenshot({ path: join(ART, '21-lm-loading.png') });
  release();
  await page.waitForSelector('body:not([data-loading])');
  await settled(page);
  assert.equal((await demo(page)).last.kind, 'lm');
  assert.ok(await page.isHidden('#model-status'));
  assert.deepEqual((await fetched(page)).map((n) => n.split('-')[0]), ['char']);
  await page.click('#mode-tabs [data-mode="s2s"]');
  await page.waitForFunction(() => window.__attnscopeDemo.last.kind === 's2s' && !window.__attnscopeDemo.last.loading);
  assert.deepEqual((await fetched(page)).map((n) => n.replace(/-[^-]+$/, '')), ['char-lm', 'dates-seq2seq']);
  assert.deepEqual(problems, []);
  await close();
});

test('the step-by-step panel on any layer and head of the language model starts from the layer input and equals the model', async () => {
  const lm = await nodeModel('char-lm');
  const { numLayers: L, numHeads: H, dModel: E } = lm.config;
  const { page, problems, close } = await open();
  const ref = lm.forward(EN, { needAttention: true });
  const T = ref.ids.length;
  for (const [layer, head, qi] of [[0, 0, T - 1], [L - 1, H - 1, 7], [1, 2, 0]]) {
    await page.selectOption('#layer-select', `self:${layer}`);
    await page.click(`#head-tabs [data-head="${head}"]`);
    await page.click(`#tokens .tok[data-i="${qi}"]`);
    await settled(page);
    const d = await demo(page);
    assert.equal(d.last.layer, layer);
    assert.equal(d.last.steps.head, head);
    assert.equal(d.last.steps.qi, qi);
    // The panel's weights (float64, from the rebuilt layer input) equal the package's forward pass in Node.
    const shown = await page.$$eval('#steps td.w', (tds) => tds.map((td) => Number(td.dataset.value)));
    assert.equal(shown.length, T);
    const row = ref.attention.data.subarray(((layer * H + head) * T + qi) * T, ((layer * H + head) * T + qi + 1) * T);
    shown.forEach((w, j) => assert.ok(Math.abs(w - row[j]) < 1e-4, `layer ${layer} head ${head} query ${qi} key ${j}: shown ${w}, forward ${row[j]}`));
    // Causal: keys after the query are masked; the rest add up to 1.
    assert.equal(await page.$$eval('#steps tr.masked', (e) => e.length), T - 1 - qi);
    assert.ok(Math.abs(shown.reduce((a, b) => a + b, 0) - 1) < 1e-5);
    // Both self-checks pass (weights and the attention output against WebAssembly).
    assert.equal(await page.$$eval('#steps .check.ok', (e) => e.length), 2);
    // The input is shown as numbers: x and LayerNorm(x), E of each; then q, k and their element-wise product.
    const counts = (sel) => page.$$eval(sel, (rows) => rows.map((r) => r.querySelectorAll('.vec span').length));
    assert.deepEqual(await counts('#steps .step-input .vec-row'), [E, E]);
    assert.deepEqual(await counts('#steps .worked .vec-row'), [E / H, E / H, E / H]);
  }
  await page.locator('#steps-section').screenshot({ path: join(ART, '22-lm-steps.png') });
  // Typing at the end reuses the unchanged rows of the layer input: the panel still equals the model.
  await page.focus('#text');
  await page.keyboard.press('End');
  await page.keyboard.type(' Yes.');
  await page.click('#tokens .tok[data-i="3"]');
  await settled(page);
  const ref2 = lm.forward(EN + ' Yes.', { needAttention: true });
  const T2 = ref2.ids.length;
  const d2 = await demo(page);
  const shown2 = await page.$$eval('#steps td.w', (tds) => tds.map((td) => Number(td.dataset.value)));
  const { layer: l2, head: h2 } = { layer: d2.last.layer, head: d2.last.steps.head };
  const row2 = ref2.attention.data.subarray(((l2 * H + h2) * T2 + 3) * T2, ((l2 * H + h2) * T2 + 4) * T2);
  assert.equal(shown2.length, T2);
  shown2.forEach((w, j) => assert.ok(Math.abs(w - row2[j]) < 1e-4, `after typing, key ${j}: shown ${w}, forward ${row2[j]}`));
  assert.equal(await page.$$eval('#steps .check.ok', (e) => e.length), 2);
  assert.deepEqual(problems, []);
  await close();
});

test('the step-by-step panel with a head switched off equals the model with that head off, and checks itself', async () => {
  const lm = await nodeModel('char-lm');
  const text = 'The cat sat on the mat. The cat';
  const ablate = [{ layer: 0, head: 1 }];
  const { page, problems, close } = await open(`#mode=self&model=trained&text=${encodeURIComponent(text)}&ablate=0.1`);
  // The head that is off (its weights still shown), another head of its layer, and later layers it changes.
  for (const [layer, head, qi] of [[0, 1, 5], [0, 0, 7], [1, 2, 9], [2, 3, 12]]) {
    await page.selectOption('#layer-select', `self:${layer}`);
    await page.click(`#head-tabs [data-head="${head}"]`);
    await page.click(`#tokens .tok[data-i="${qi}"]`);
    await settled(page);
    assert.deepEqual((await demo(page)).last.ablated, ablate);
    const shown = await page.$$eval('#steps td.w', (tds) => tds.map((td) => Number(td.dataset.value)));
    const off = lm.forward(text, { ablate }).attention, all = lm.forward(text).attention;
    const T = off.shape[2], at = ((layer * off.shape[1] + head) * T + qi) * T;
    shown.forEach((w, j) => assert.ok(Math.abs(w - off.data[at + j]) < 1e-4, `layer ${layer} head ${head} query ${qi} key ${j}: shown ${w}, forward({ ablate }) ${off.data[at + j]}`));
    if (layer > 0) assert.ok(shown.some((w, j) => Math.abs(w - all.data[at + j]) > 1e-6), `layer ${layer}: the head off in layer 0 changes its input`);
    assert.equal(await page.$$eval('#steps .check.ok', (e) => e.length), 2, `layer ${layer} head ${head}: both self-checks pass`);
  }
  assert.deepEqual(problems, []);
  await close();
});

test('the step-by-step panel on the dates model: encoder, decoder and cross-attention, any layer and head, equal the model', async () => {
  const s2s = await nodeModel('dates-seq2seq');
  const { numHeads: H, dModel: E } = s2s.config;
  const date = 'on friday the 13th of september twenty twenty four';
  const { page, problems, close } = await open(`#mode=s2s&date=${encodeURIComponent(date)}`);
  // The reference: the package's greedy decoding in Node, with every attention map.
  const ref = s2s.translate(date);
  const maps = { enc: ref.encoderAttention, dec: ref.decoderAttention, cross: ref.crossAttention };
  const S = ref.sourceTokens.length, N = ref.outputIds.length;
  const cases = [['enc', 0, 0, 3], ['enc', maps.enc.shape[0] - 1, H - 1, S - 1], ['dec', 0, 1, N - 1], ['dec', maps.dec.shape[0] - 1, 2, 4],
    ['cross', 0, 0, 0], ['cross', maps.cross.shape[0] - 1, H - 1, 7]];
  for (const [attn, layer, head, qi] of cases) {
    await page.selectOption('#layer-select', `${attn}:${layer}`);
    await page.click(`#head-tabs [data-head="${head}"]`);
    await page.selectOption('#query-select', String(qi));
    await settled(page);
    const d = await demo(page);
    assert.equal(d.last.attn, attn);
    assert.equal(d.last.layer, layer);
    assert.equal(d.last.steps.head, head);
    assert.equal(d.last.steps.qi, qi);
    // Rows of the maps are the output tokens for the decoder's attentions, the source words for the encoder's; the
    // keys are the source words except in the decoder's self-attention.
    const [, , A, B] = maps[attn].shape;
    const keys = attn === 'dec' ? N : S;
    assert.equal(B, keys);
    const shown = await page.$$eval('#steps td.w', (tds) => tds.map((td) => Number(td.dataset.value)));
    assert.equal(shown.length, keys, `${attn} ${layer}: one row per key`);
    const row = maps[attn].data.subarray(((layer * H + head) * A + qi) * B, ((layer * H + head) * A + qi + 1) * B);
    shown.forEach((w, j) => assert.ok(Math.abs(w - row[j]) < 1e-4, `${attn} layer ${layer} head ${head} query ${qi} key ${j}: shown ${w}, translate() ${row[j]}`));
    assert.ok(Math.abs(shown.reduce((a, b) => a + b, 0) - 1) < 1e-5);
    // Only the decoder's self-attention is causal.
    assert.equal(await page.$$eval('#steps tr.masked', (e) => e.length), attn === 'dec' ? N - 1 - qi : 0);
    // The keys are labelled with what they are: source words, or the decoder's inputs (<bos> then what it wrote).
    const keyLabels = await page.$$eval('#steps tbody th.k', (ths) => ths.map((th) => th.firstChild.textContent));
    assert.deepEqual(keyLabels, attn === 'dec' ? ['<bos>', ...ref.outputTokens.slice(0, -1)] : ref.sourceTokens);
    assert.equal(await page.$$eval('#steps .check.ok', (e) => e.length), 2, `${attn} ${layer}: both self-checks pass`);
    const counts = (sel) => page.$$eval(sel, (rows) => rows.map((r) => r.querySelectorAll('.vec span').length));
    assert.deepEqual(await counts('#steps .step-input .vec-row'), [E, E]);
    assert.deepEqual(await counts('#steps .worked .vec-row'), [E / H, E / H, E / H]);
    if (attn === 'cross') await page.locator('#steps-section').screenshot({ path: join(ART, '23-s2s-steps-cross.png') });
  }
  assert.deepEqual(problems, []);
  await close();
});

test('maps whose cells are too small for every label label every k-th token, never none', async () => {
  const long = 'The cat sat on the mat. The cat sat on the mat. The dog lay by the door, and the cat looked at it for a bit long while';
  for (const [text, width] of [['The cat sat.', 1280], [long, 1280], [long, 390]]) {
    const { page, problems, close } = await open(`#mode=self&model=trained&text=${encodeURIComponent(text)}`, { width });
    const T = Array.from(text).length + 1;
    const maps = await page.$$eval('#maps .map-card canvas', (cs) => cs.map((c) => {
      // Ink in the label margins: dark pixels left of the map (row labels) and above it (column labels).
      const k = c.width / parseFloat(c.style.width);
      const left = Math.floor(Number(c.dataset.labelLeft) * k) - 2, top = Math.floor(Number(c.dataset.labelTop) * k) - 2;
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let inkLeft = 0, inkTop = 0;
      for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) {
        const o = (y * c.width + x) * 4;
        if (px[o + 3] > 128 && px[o] < 120 && px[o + 1] < 120 && px[o + 2] < 120) { if (x < left) inkLeft++; else if (y < top) inkTop++; }
      }
      return { step: Number(c.dataset.labelStep), inkLeft, inkTop, head: c.closest('.map-card').dataset.head };
    }));
    for (const m of maps) {
      assert.ok(m.step >= 1, `${width} px, ${T} tokens, map ${m.head}: labelled (step ${m.step})`);
      assert.ok(m.inkLeft > 50 && m.inkTop > 20, `${width} px, ${T} tokens, map ${m.head}: label ink left ${m.inkLeft}, top ${m.inkTop}`);
    }
    // A short text has a label on every token; 128 tokens on a head's map get every k-th.
    const head = maps.find((m) => m.head === '0');
    if (T < 20) assert.equal(head.step, 1);
    else assert.ok(head.step > 1 && head.step < T / 4, `${width} px: every ${head.step}th of ${T} tokens`);
    if (T > 20) await page.locator('#maps .map-card[data-head="0"]').screenshot({ path: join(ART, `24-lm-map-sparse-labels-${width}.png`) });
    assert.deepEqual(problems, []);
    await close();
  }
});

/** The k most likely next tokens after the last position of `logits`, as the page lists them. */
function topNext(logits, k) {
  const [T, V] = logits.shape;
  const x = Array.from(logits.data.subarray((T - 1) * V, T * V));
  const m = Math.max(...x);
  const z = x.reduce((a, v) => a + Math.exp(v - m), 0);
  return [...x.keys()].sort((a, b) => x[b] - x[a]).slice(0, k).map((id) => ({ id, p: Math.exp(x[id] - m) / z }));
}

test('switching a head off changes the prediction and the continuation to what forward/generate({ ablate }) give', async () => {
  const lm = await nodeModel('char-lm');
  const { numLayers: L, numHeads: H, maxLen } = lm.config;
  const text = 'The cat sat on the mat. The cat sat on the m';
  const { page, problems, close } = await open(`#mode=self&model=trained&text=${encodeURIComponent(text)}`);
  const pressed = () => page.$$eval('#ablation-heads [data-layer]', (bs) => bs.map((b) => `${b.dataset.layer}.${b.dataset.head}:${b.getAttribute('aria-pressed')}`));
  // One toggle per layer and head of the file, all on.
  assert.deepEqual(await pressed(), [...Array(L * H).keys()].map((k) => `${Math.floor(k / H)}.${k % H}:false`));
  assert.ok(await page.isHidden('#ablation-compare'));
  const before = (await demo(page)).last.next;
  const { ids } = lm.tokenize(text);
  const room = Math.min(40, maxLen - ids.length);
  const token = (id) => (id === lm.vocab.bosId ? null : lm.vocab.tokens[id]);
  // Each named head of the file (data-driven), or the first head if there are none: off, checked, restored.
  for (const target of (lm.namedHeads.length ? lm.namedHeads.slice(0, 2) : [{ layer: 0, head: 0 }]).map(({ layer, head }) => ({ layer, head }))) {
    await page.click(`#ablation-heads [data-layer="${target.layer}"][data-head="${target.head}"]`);
    await settled(page);
    assert.deepEqual((await pressed()).filter((x) => x.endsWith(':true')), [`${target.layer}.${target.head}:true`]);
    const d = await demo(page);
    assert.deepEqual(d.last.ablated, [target]);
    assert.match(d.hash, new RegExp(`ablate=${target.layer}\\.${target.head}(&|$)`));
    assert.match(await page.textContent('#ablation-status'), new RegExp(`layer ${target.layer + 1} H${target.head + 1}`));
    // The prediction on the page is the package's forward pass with that head off, run here in Node.
    const ref = topNext(lm.forward(text, { ablate: [target] }).logits, 5);
    assert.deepEqual(d.last.next.map((x) => x.token), ref.map((x) => token(x.id)));
    d.last.next.forEach((x, i) => assert.ok(Math.abs(x.p - ref[i].p) < 1e-5, `p of ${x.token}: page ${x.p}, forward({ ablate }) ${ref[i].p}`));
    const shownPct = await page.$$eval('#next-list .next-tok', (els) => els.map((e) => Number.parseFloat(e.title)));
    shownPct.forEach((p, i) => assert.ok(Math.abs(p - ref[i].p * 100) < 0.006, `listed ${p}%, forward ${ref[i].p * 100}%`));
    // …and it is not the prediction with every head.
    assert.ok(d.last.next.some((x, i) => x.token !== before[i].token || Math.abs(x.p - before[i].p) > 1e-4), 'switching the head off changed nothing');
    // The continuations side by side: every head, and this one off, as generate() writes them.
    const conts = await page.$$eval('#ablation-compare .abl-cont', (qs) => qs.map((q) => q.textContent));
    assert.deepEqual(conts, [lm.generate(ids, { maxNewTokens: room }).text, lm.generate(ids, { maxNewTokens: room, ablate: [target] }).text]);
    // …and their next tokens: every head's (as before), and this one off (as forward({ ablate })).
    const sides = await page.$$eval('#ablation-compare .abl-next', (cs) => cs.map((c) => Number(c.dataset.p)));
    assert.ok(Math.abs(sides[0] - before[0].p) < 1e-5 && Math.abs(sides[1] - ref[0].p) < 1e-5, `next-token sides ${sides}`);
    // The JSON export says so, and holds the prediction with the head off.
    const doc = (await demo(page)).exported;
    assert.deepEqual(doc.settings.ablate, [target]);
    assert.deepEqual(doc.nextCharacter.map((x) => x.token), ref.map((x) => token(x.id) ?? '<end>'));
    // The model view marks the head.
    assert.deepEqual(await page.$$eval('#modelview .mv-cell.off', (els) => els.map((e) => `${e.dataset.layer}.${e.dataset.head}`)), [`${target.layer}.${target.head}`]);
    await page.locator('.input-card').screenshot({ path: join(ART, '25-lm-head-off.png') });
    await page.click('#ablation-restore');
    await settled(page);
    assert.deepEqual((await demo(page)).last.next, before);
    assert.ok(!(await demo(page)).hash.includes('ablate='));
  }
  // A hand-edited hash: heads the model does not have are left out; the others are off.
  await page.evaluate((h) => { location.hash = h; }, `#mode=self&model=trained&text=${encodeURIComponent(text)}&ablate=0.1,${L + 5}.0,x`);
  await settled(page);
  assert.deepEqual((await demo(page)).last.ablated, [{ layer: 0, head: 1 }]);
  assert.deepEqual(problems, []);
  await close();
});
