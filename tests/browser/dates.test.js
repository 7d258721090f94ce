// Browser tests of the demo's dates encoder–decoder: the ISO date it writes, where its cross-attention looks,
// decoding step by step, its model view and its step-by-step panel. The expected dates are computed here from the
// words, independently of the model; attention is compared with the package run in Node on the very model file the
// page fetched (build/site/assets). The language model's tests are trained.test.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { useBrowser, open, demo, shot, settled, argmax, ART } from './helpers.js';
import { builtModel, nodeModel, readHeader } from './trained-models.js';

useBrowser();

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

// Its steps (fill the input, wait for the page to settle, check) have the shape of why.test.js's: each checks values
// of its own, written out so that a failure names the step.
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

test('a link with step=N (every step, from before the finished view was step -1) shows the finished view', async () => {
  const date = DATES[0];
  const iso = parseDate(date).iso;
  const N = iso.length + 1; // the date's characters, then <eos>
  const { page, problems, close } = await open(`#mode=s2s&step=${N}&date=${encodeURIComponent(date)}`);
  await page.waitForSelector('#decode svg.dec-svg', { timeout: 20_000 });
  await settled(page);
  const d = (await demo(page)).last;
  assert.deepEqual([d.shown, d.N, d.focus], [N, N, N - 2]);
  assert.equal(await page.textContent('#dec-counter'), `all ${N} steps written · the weights of step ${N - 1}`);
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
  // The end reached by Play is the finished view, as a date shown whole: the same state, weights and counter.
  assert.equal((await demo(page)).state.step, -1);
  // One step counter: every step written, and the step the text and the weights are of (the one that wrote the last
  // character, not <eos>).
  await settled(page);
  // The date's characters, then <eos>: the last character is written at step iso.length, one before the end.
  assert.equal(d.N, iso.length + 1);
  assert.match(await page.textContent('#decode'), new RegExp(`Step ${iso.length}:`));
  assert.equal(await page.textContent('#dec-counter'), `all ${iso.length + 1} steps written · the weights of step ${iso.length}`);

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
