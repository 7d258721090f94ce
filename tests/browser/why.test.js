// Browser tests of the "Why attention" section and the guided path: both languages at desktop and phone widths with
// axe-core, the player (play, pause, step, back), next/previous and the URL round trip, the guide's numbers against
// the step-by-step panel's. Screenshots go to test-artifacts/browser/why-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { axe, useBrowser, open, demo, settled, shot, ART } from './helpers.js';


useBrowser();


/** The page with the GRU models loaded (the trained files are fetched on first use) and drawn. */
async function openWhy(hash, opts) {
  const o = await open(hash, opts);
  await o.page.waitForFunction(() => window.__attnscopeDemo.why.status === 'ready' || window.__attnscopeDemo.why.status === 'error', null, { timeout: 15_000 });
  await settled(o.page);
  return o;
}
const sideways = (page) => page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);
const hashParam = (page, k) => page.evaluate((key) => new URLSearchParams(location.hash.slice(1)).get(key), k);
/** The page's own hash once its debounced replaceState has run. */
const urlSettled = (page) => page.waitForFunction(() => location.hash === window.__attnscopeDemo.hash, null, { timeout: 5000 });

// A curve file of the shape tools/measure/measure_bottleneck.py writes (null: longer than that model reads).
const LENGTHS = [1, 8, 16, 32, 64];
const CURVES = {
  curves: [
    { id: 'gru', lengths: LENGTHS, exact_match: [1, 0.9, 0.6, 0.2, 0.05] },
    { id: 'gru_attention', lengths: LENGTHS, exact_match: [1, 1, 0.98, 0.97, 0.95] },
    { id: 'transformer_2000', lengths: LENGTHS, exact_match: [1, 0.99, 0.97, 0.9, null] },
    { id: 'transformer', lengths: LENGTHS, exact_match: [1, 1, 1, 0.99, null] },
  ],
};

for (const [lang, locale] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
  test(`"Why attention" shows the context vector, the answer and the weights (${lang}, 1280 and 390 px, axe)`, async () => {
    const { page, problems, close } = await openWhy(`#lang=${lang}`, { locale });
    const d = await demo(page);
    assert.deepEqual(d.why.sourceTokens, ['the', 'fifth', 'of', 'march', 'nineteen', 'ninety']);
    // The fixed context vector as numbers: one cell per number, each showing its value.
    const cells = await page.$$eval('#why-ctx .why-vec span', (els) => els.map((e) => Number(e.textContent)));
    assert.equal(cells.length, d.why.bottleneck.context.length);
    assert.ok(cells.length >= 16);
    cells.forEach((v, i) => assert.ok(Math.abs(v - d.why.bottleneck.context[i]) <= 0.005 + 1e-9, `cell ${i}: ${v} vs ${d.why.bottleneck.context[i]}`));
    assert.equal(await page.textContent('#why-none-answer'), d.why.bottleneck.tokens.map((x) => (x === '<eos>' ? (lang === 'zh' ? '结束' : 'end') : x)).join(''));
    // The weights of the last step over the six words, as numbers that add up to 1.
    const w = await page.$$eval('#why-attn-row .why-weights .w-val', (els) => els.map((e) => Number(e.textContent)));
    assert.equal(w.length, 6);
    assert.ok(Math.abs(w.reduce((a, b) => a + b, 0) - 1) < 0.04);
    // Until the GRU models are in the build, the section says that it shows an untrained stand-in.
    const wired = await page.getAttribute('#why-section', 'data-wired');
    assert.equal(await page.isVisible('#why-standin'), wired === 'stand-in');
    assert.equal(d.why.standIn, wired === 'stand-in');
    assert.match(await page.textContent('#why-section h2'), lang === 'zh' ? /为什么需要注意力/ : /Why attention/);
    assert.deepEqual(await axe(page, '#why-section'), []);
    await page.locator('#why-section').screenshot({ path: join(ART, `why-section-${lang}-desktop.png`) });
    await page.setViewportSize({ width: 390, height: 844 });
    await settled(page);
    assert.equal(await sideways(page), false, 'the page scrolls sideways at 390 px');
    assert.deepEqual(await axe(page, '#why-section'), []);
    await page.locator('#why-section').screenshot({ path: join(ART, `why-section-${lang}-phone.png`) });
    assert.deepEqual(problems, []);
    await close();
  });
}

// Fill, wait for the page to settle, check: the steps have dates.test.js's shape, each with values of its own.
test('typing a date reruns both models; the link opens the same sentence in the transformer dates view', async () => {
  const { page, problems, close } = await openWhy('#lang=en');
  const before = (await demo(page)).why;
  await page.fill('#why-date', 'On Friday, 13 Sept. 2024');
  await settled(page);
  const after = (await demo(page)).why;
  assert.notDeepEqual(after.sourceTokens, before.sourceTokens);
  assert.notDeepEqual(after.bottleneck.context, before.bottleneck.context);
  assert.equal(await page.$$eval('#why-attn-row .why-weights li', (els) => els.length), after.sourceTokens.length);
  await urlSettled(page);
  assert.equal(await hashParam(page, 'date'), 'On Friday, 13 Sept. 2024');
  // An example replaces the sentence, and the picker shows which one it is.
  await page.selectOption('#why-examples', '2');
  await settled(page);
  assert.equal((await demo(page)).state.date, 'December 31st, 1999');
  assert.equal(await page.inputValue('#why-date'), 'December 31st, 1999');
  await page.fill('#why-date', 'On Friday, 13 Sept. 2024');
  await settled(page);
  assert.equal(await page.inputValue('#why-examples'), '1');
  await page.click('#why-to-s2s');
  await settled(page);
  const d = await demo(page);
  assert.equal(d.state.mode, 's2s');
  assert.equal(await page.inputValue('#date'), 'On Friday, 13 Sept. 2024');
  assert.equal(d.last.kind, 's2s');
  assert.deepEqual(problems, []);
  await close();
});

test('a link with wstep at the last step shows the finished view, as wstep=-1 does', async () => {
  const { page, problems, close } = await openWhy('#lang=en');
  const { weights, tokens } = (await demo(page)).why.attention;
  const n = weights.length;
  assert.equal(tokens[n - 1], '<eos>');
  const finished = [await page.textContent('#why-counter'), await page.textContent('#why-attn-row .why-step')];
  assert.deepEqual(finished, [`all ${n} steps written · the weights of step ${n - 1}`, `writing “${tokens[n - 2]}”`]);
  await close();
  const linked = await openWhy(`#lang=en&wstep=${n}`);
  assert.deepEqual([await linked.page.textContent('#why-counter'), await linked.page.textContent('#why-attn-row .why-step')], finished);
  assert.deepEqual([...problems, ...linked.problems], []);
  await linked.close();
});

test('the attention model steps: play, pause, step and back, with the step in the URL', async () => {
  const { page, problems, close } = await openWhy('#lang=en');
  const n = (await demo(page)).why.attention.weights.length;
  assert.ok(n > 1);
  assert.equal(await page.isDisabled('#why-step'), true, 'all steps shown: nothing to step to');
  // Finished, the weights shown are the last character's, not the end's.
  const tokens = (await demo(page)).why.attention.tokens;
  // One step counter: the step the weights are of, with no other count beside it.
  // The first example's answer ends with <eos>, so the last weights shown are those of the step before it.
  assert.equal(tokens[n - 1], '<eos>');
  assert.equal(await page.textContent('#why-attn-row .why-step'), `writing “${tokens[n - 2]}”`);
  assert.equal(await page.textContent('#why-counter'), `all ${n} steps written · the weights of step ${n - 1}`);
  await page.click('#why-back');
  await settled(page);
  assert.equal((await demo(page)).state.wstep, n - 1);
  assert.match(await page.textContent('#why-counter'), new RegExp(`step ${n - 1} of ${n}`));
  await urlSettled(page);
  assert.equal(await hashParam(page, 'wstep'), String(n - 1));
  // The weights shown are that step's.
  const shown = await page.$$eval('#why-attn-row .w-val', (els) => els.map((e) => Number(e.textContent)));
  const want = (await demo(page)).why.attention.weights[n - 2];
  shown.forEach((v, j) => assert.ok(Math.abs(v - want[j]) <= 0.005 + 1e-9));
  // Back at the end, Play starts again from the first step.
  await page.click('#why-step');
  await settled(page);
  assert.equal(await page.isDisabled('#why-step'), true);
  await page.click('#why-play');
  await page.waitForFunction(() => window.__attnscopeDemo.why.playing);
  await page.waitForFunction(() => window.__attnscopeDemo.state.wstep >= 2);
  await page.click('#why-pause');
  await settled(page);
  const paused = await demo(page);
  assert.equal(paused.why.playing, false);
  await page.waitForTimeout(800); // longer than a step at normal speed: nothing moves while paused
  assert.equal((await demo(page)).state.wstep, paused.state.wstep);
  if (paused.state.wstep > 0 && paused.state.wstep < n) {
    await page.click('#why-step');
    await settled(page);
    // The last step is the finished view (wstep −1), as on arrival.
    assert.equal((await demo(page)).state.wstep, paused.state.wstep + 1 < n ? paused.state.wstep + 1 : -1);
  }
  // A link with the step reproduces it.
  const { page: p2, close: c2 } = await openWhy(`#lang=en&wstep=2`);
  assert.match(await p2.textContent('#why-counter'), new RegExp(`step 2 of ${n}`));
  await c2();
  assert.deepEqual(problems, []);
  await close();
});

test('the bottleneck curve: a plot with one line per model and a table, or a note while there is no file', async () => {
  const { page, problems, close } = await openWhy('#lang=en');
  const hasFile = await page.isVisible('#why-curve svg');
  if (!hasFile) assert.match(await page.textContent('#why-curve-none'), /not in this build/);
  await page.evaluate((c) => window.__attnscopeDemo.api.setWhyCurves(c), CURVES);
  await settled(page);
  assert.equal(await page.$$eval('#why-curve svg.why-curve polyline', (els) => els.length), 4);
  assert.equal(await page.$$eval('#why-curve .why-legend li', (els) => els.length), 4);
  assert.equal(await page.$$eval('#why-curve table tbody tr', (els) => els.length), 5);
  // The last row (64 words): both GRUs measured, the transformers cannot read that far (an empty cell, no point).
  assert.deepEqual(await page.$$eval('#why-curve table tbody tr:last-child td', (tds) => tds.map((td) => td.textContent)), ['5.0%', '95.0%', '', '']);
  assert.equal(await page.$eval('#why-curve polyline:last-of-type', (p) => p.getAttribute('points').split(' ').length), 4);
  assert.deepEqual(await axe(page, '#why-curve'), []);
  await page.locator('#why-curve').screenshot({ path: join(ART, 'why-curve.png') });
  assert.deepEqual(problems, []);
  await close();
});

for (const [lang, locale] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
  test(`the guided path: six steps, next/previous, ${lang === 'en' ? 'the URL round trip, ' : ''}live numbers (${lang})`, async () => {
    const { page, problems, close } = await openWhy(`#lang=${lang}`, { locale });
    await page.click('#guide-start');
    await settled(page);
    assert.equal((await demo(page)).state.guide, 1);
    assert.equal(await page.evaluate(() => document.activeElement.id), 'guide-step-title');
    assert.equal(await page.$$eval('.guide-steps [data-guide]', (els) => els.length), 6);
    assert.equal(await page.getAttribute('.guide-steps [data-guide="1"]', 'aria-current'), 'step');
    assert.equal(await page.isDisabled('#guide-prev'), true);
    // Step 1: the fixed context vector, written into c = h_n with the reader's numbers.
    const d1 = await demo(page);
    assert.match(await page.textContent('#guide-live'), new RegExp(`c = h${d1.why.sourceTokens.length} `));
    assert.equal(await page.$$eval('#guide-live .why-vec span', (els) => els.length), d1.why.bottleneck.context.length);
    // It names the sentence it reads: the date of "Why attention?", not the one typed at the top.
    assert.ok((await page.textContent('#guide-live .guide-reading')).includes(`“${d1.why.sourceTokens.join(' ')}”`));
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await settled(page);
      await page.locator('#guide-section').screenshot({ path: join(ART, `why-guide1-${lang}-${width}.png`) });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    for (let step = 2; step <= 6; step++) {
      await page.click('#guide-next');
      await settled(page);
      const d = await demo(page);
      assert.equal(d.state.guide, step);
      if (step >= 3) {
        // The reader's own sentence in the trained character model: the page stays on it.
        assert.equal(d.state.mode, 'self');
        assert.equal(d.state.model, 'trained');
        assert.match(await page.textContent('#guide-live'), lang === 'zh' ? /你的句子/ : /Your sentence/);
        // The guide's numbers are the step-by-step panel's: the same query, head and weights.
        assert.equal(d.guide.step, step);
        assert.equal(d.guide.qi, d.last.qi);
        assert.equal(d.guide.head, d.last.steps.head);
        d.guide.weights.forEach((w, j) => assert.ok(Math.abs(w - d.last.steps.weights[j]) < 1e-12));
        assert.ok(Math.abs(d.guide.weights.reduce((a, b) => a + b, 0) - 1) < 1e-9);
      }
      const live = await page.textContent('#guide-live');
      if (step === 2) {
        // The last step's score of its strongest word, h_t · h̄_i, from the states the model returned.
        assert.match(live, /score\(ht, h̄\w+\) = ht · h̄\w+ = .* = -?\d+\.\d{3}/);
        assert.match(live, /softmax/);
      }
      if (step === 5) {
        // Step 4 for every position at once: a line per query (the picked one marked) naming the key its head weighs
        // most. The picked query's line agrees with the step-by-step panel's float64 weights.
        const lines = await page.$$eval('#guide-live .guide-every li', (lis) => lis.map((li) => ({ q: Number(li.dataset.q), k: Number(li.dataset.k),
          w: Number(li.dataset.w), current: li.getAttribute('aria-current') === 'true', text: li.textContent })));
        assert.equal(lines.length, Math.min(24, d.last.rows.length));
        assert.deepEqual(lines.filter((x) => x.current).map((x) => x.q), [d.last.qi]);
        const picked = lines.find((x) => x.current);
        const sw = d.last.steps.weights, [j, j2] = [...sw.keys()].sort((a, b) => sw[b] - sw[a]);
        assert.equal(picked.k, j);
        assert.ok(Math.abs(picked.w - sw[j]) < 1e-5, `${picked.w} against ${sw[j]}`);
        // Its strongest key and the next one, with their weights.
        const next = sw[j2] >= 0.005 ? `, ${d.last.cols[j2]} ${sw[j2].toFixed(2)}` : ''; // a second key of "0.00" is left out
        assert.equal(picked.text, `${d.last.rows[d.last.qi]} → ${d.last.cols[j]} ${sw[j].toFixed(2)}${next}`);
        // Causal: no query looks at a later key.
        assert.ok(lines.every((x) => x.k <= x.q), JSON.stringify(lines));
        // Numbered from 0, as the chips are: the list starts at its first query's position.
        assert.equal(await page.$eval('#guide-live .guide-every', (ol) => ol.start), lines[0].q);
        assert.match(live, lang === 'zh' ? /softmax/ : /matrix, one softmax per row/);
      }
      if (step === 4) {
        // score(Q, K_j) = … = s, with the scaled score of the strongest key written in.
        const d2 = await demo(page);
        const j = d2.guide.weights.indexOf(Math.max(...d2.guide.weights));
        assert.ok(live.includes(`= ${d2.guide.scaled[j].toFixed(3)}`), live);
        // K's subscript is the key's position, from 0 as the chips number it.
        assert.ok(live.includes(`score(Q, K${j}) =`), live);
        assert.match(live, lang === 'zh' ? /上下文 = Σ/ : /Context = Σ/);
      }
      if (step === 6) {
        assert.match(live, /W_Oᵀ/);
        // Every head drawn: one strip per head, a cell per key; the picked head's strongest key named beside it.
        const strips = await page.$$eval('#guide-live .guide-head-row', (rows) => rows.map((r) => ({
          tag: r.textContent, cells: r.querySelectorAll('i').length,
        })));
        assert.equal(strips.length, 4);
        assert.ok(strips.every((x) => x.cells === d.guide.weights.length));
        const w = d.guide.weights, j = w.indexOf(Math.max(...w));
        assert.ok(strips[d.guide.head].tag.includes(w[j].toFixed(2)), strips[d.guide.head].tag);
      }
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        await settled(page);
        assert.equal(await sideways(page), false, `step ${step} scrolls sideways at ${width} px`);
        if (step === 2 || step === 4 || step === 5 || step === 6) {
          assert.deepEqual(await axe(page, '#guide-section'), [], `step ${step} at ${width} px`);
          await page.locator('#guide-section').screenshot({ path: join(ART, `why-guide${step}-${lang}-${width}.png`) });
        }
      }
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    assert.equal(await page.isDisabled('#guide-next'), true);
    await page.click('#guide-prev');
    await settled(page);
    assert.equal((await demo(page)).state.guide, 5);
    await urlSettled(page);
    const hash = await page.evaluate(() => location.hash);
    assert.equal(await hashParam(page, 'guide'), '5');
    // The link reopens the same step with the same numbers (once: a second page is the same in both languages).
    if (lang === 'en') {
      const { page: p2, close: c2 } = await openWhy(hash, { locale });
      const a = await demo(page), b = await demo(p2);
      assert.equal(b.state.guide, 5);
      assert.deepEqual(b.guide, a.guide);
      assert.equal(await p2.textContent('#guide-step-title'), await page.textContent('#guide-step-title'));
      await c2();
    }
    await page.click('[data-guide="close"]');
    await settled(page);
    assert.equal((await demo(page)).state.guide, 0);
    await urlSettled(page);
    assert.equal(await hashParam(page, 'guide'), null);
    assert.deepEqual(problems, []);
    await close();
  });
}

test('the guide is reachable by keyboard: Tab to a step button and Enter moves there', async () => {
  const { page, problems, close } = await openWhy('#lang=en&guide=1');
  await page.focus('.guide-steps [data-guide="2"]');
  await page.keyboard.press('Enter');
  await settled(page);
  assert.equal((await demo(page)).state.guide, 2);
  await page.focus('#guide-back');
  await page.keyboard.press('Enter');
  await settled(page);
  assert.ok((await demo(page)).state.wstep >= 0);
  assert.deepEqual(problems, []);
  await close();
});

test('a hash with an out-of-range guide step or player step is clamped', async () => {
  const { page, close } = await openWhy('#lang=en&guide=9&wstep=-7');
  const d = await demo(page);
  assert.equal(d.state.guide, 6);
  assert.equal(d.state.wstep, -1);
  await shot(page, 'why-guide-clamped');
  await close();
});

test('the guide follows the step-by-step panel: another head there, other numbers here; the language switch redraws both', async () => {
  const { page, problems, close } = await openWhy('#lang=en&mode=s2s&attn=cross&guide=4');
  const before = await demo(page);
  await page.click('#head-tabs [data-head="1"]');
  await settled(page);
  const after = await demo(page);
  assert.equal(after.guide.head, 1);
  assert.equal(after.last.steps.head, 1);
  assert.notDeepEqual(after.guide.weights, before.guide.weights);
  after.guide.weights.forEach((w, j) => assert.ok(Math.abs(w - after.last.steps.weights[j]) < 1e-12));
  assert.match(await page.textContent('#guide-live'), /Head 2 of 4/);
  await page.click('#lang-btn');
  await settled(page);
  assert.match(await page.textContent('#guide-step-title'), /打分/);
  assert.match(await page.textContent('#why-section h2'), /为什么需要注意力/);
  assert.match(await page.textContent('#guide-live'), /第 2 个头/);
  assert.deepEqual(problems, []);
  await close();
});

// The long examples: the fixed vector loses part of the date, attention reads it (why/compare.js says how they were
// found). Each answer's truth is the date written in the sentence, not either model's output.
const LONG = [
  { pick: 'L0', date: '2024-09-13', words: 52 },
  { pick: 'L1', date: '1905-10-12', words: 54 },
];
for (const [lang, locale] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
  test(`a long sentence: both answers side by side, the fixed vector wrong and attention right (${lang}, 1280 and 390 px, axe)`, async () => {
    const { page, problems, close } = await openWhy(`#lang=${lang}`, { locale });
    const answer = (tokens) => tokens.filter((x) => x !== '<eos>').join('');
    for (const [i, ex] of LONG.entries()) {
      if (i === 1) { await page.setViewportSize({ width: 390, height: 844 }); await settled(page); }
      await page.selectOption('#why-examples', ex.pick);
      await settled(page);
      const d = (await demo(page)).why;
      assert.equal(d.sourceTokens.length, ex.words);
      assert.equal(answer(d.attention.tokens), ex.date, 'attention reads the date');
      assert.notEqual(answer(d.bottleneck.tokens), ex.date, 'the fixed vector loses it');
      // Side by side, with the truth marked: one line per model, then the verdict.
      const sides = await page.$$eval('#why-compare .why-cmp-side', (els) => els.map((e) => ({
        answer: e.querySelector('.why-cmp-answer').textContent, ok: !!e.querySelector('.why-ok'), bad: !!e.querySelector('.why-bad'),
      })));
      assert.deepEqual(sides, [
        { answer: answer(d.bottleneck.tokens), ok: false, bad: true },
        { answer: ex.date, ok: true, bad: false },
      ]);
      const verdict = await page.textContent('#why-compare .why-verdict');
      assert.ok(verdict.includes(String(ex.words)) && verdict.includes(ex.date), verdict);
      assert.match(verdict, lang === 'zh' ? /两个答案不同/ : /the two answers differ/);
      assert.match(await page.textContent('#why-compare'), lang === 'zh' ? /没有注意力.*有注意力/s : /Without attention.*With attention/s);
      assert.equal(await sideways(page), false);
      assert.deepEqual(await axe(page, '#why-section'), []);
      await page.locator('#why-section').screenshot({ path: join(ART, `why-long-${lang}-${i ? 'phone' : 'desktop'}.png`) });
    }
    assert.deepEqual(problems, []);
    await close();
  });
}

test('the sentence box takes a long sentence; "Add ten words" lengthens your own; a short one shows the same answer twice', async () => {
  const { page, problems, close } = await openWhy('#lang=en');
  let d = (await demo(page)).why;
  assert.equal(d.sourceTokens.length, 6);
  assert.match(await page.textContent('#why-compare .why-verdict'), /^6 words: both models give the same answer\.$/);
  assert.equal(await page.locator('#why-compare .why-ok, #why-compare .why-bad').count(), 0, 'no truth to mark for a sentence of yours');
  for (const n of [16, 26]) {
    await page.click('#why-more');
    await settled(page);
    d = (await demo(page)).why;
    assert.equal(d.sourceTokens.length, n);
    assert.equal((await page.inputValue('#why-date')).split(' ').length, n);
  }
  assert.deepEqual(d.sourceTokens.slice(0, 6), ['the', 'fifth', 'of', 'march', 'nineteen', 'ninety']);
  // Typed (pasted) in full, as long as the example: the same run as picking it.
  const long = 'On 13 September 2024 the company held its annual meeting at the hotel by the harbour and the mayor opened the '
    + 'festival and then the band played until late in the evening while the children ate dinner in the garden with '
    + 'their teachers and their friends and the crew of the ship';
  await page.fill('#why-date', long);
  await settled(page);
  d = (await demo(page)).why;
  assert.equal(d.sourceTokens.length, 52);
  assert.equal(await page.inputValue('#why-examples'), 'L0', 'the picker shows the example the sentence is');
  assert.equal(await page.textContent('#why-compare .why-cmp-side.attn .why-cmp-answer'), '2024-09-13');
  assert.deepEqual(problems, []);
  await close();
});

test('from a view without a trained model the guide takes the dates model at steps 3–6, and says so', async () => {
  const { page, problems, close } = await openWhy('#lang=en&mode=cross&guide=2');
  await page.click('#guide-next');
  await settled(page);
  const d = await demo(page);
  assert.equal(d.state.guide, 3);
  assert.equal(d.state.mode, 's2s');
  assert.equal(d.state.attn, 'cross');
  assert.equal(d.guide.qi, d.last.qi);
  assert.doesNotMatch(await page.textContent('#guide-live'), /Your sentence/);
  assert.deepEqual(problems, []);
  await close();
});

test('the guide says when it moves the page to the dates tab, and closing it goes back to the reader\'s tab', async () => {
  const { page, problems, close } = await openWhy('#lang=en&mode=cross');
  await page.click('#guide-start');
  await settled(page);
  await page.click('#guide-next');
  await settled(page);
  assert.equal((await demo(page)).state.mode, 'cross', 'steps 1 and 2 leave the tab as it is');
  assert.equal(await page.locator('.guide-moved').count(), 0);
  await page.click('#guide-next');
  await settled(page);
  assert.equal((await demo(page)).state.mode, 's2s');
  assert.equal(await page.textContent('.guide-moved'), 'The guide moved the page to the “Trained seq2seq: dates” tab to show a trained model; closing the guide goes back to “Encoder–decoder (cross) attention”.');
  await page.click('[data-guide="close"]');
  await settled(page);
  assert.equal((await demo(page)).state.mode, 'cross');
  // A tab the reader picks while the guide is open is theirs: closing the guide stays there.
  await page.click('#guide-start');
  await settled(page);
  await page.click('#guide-next');
  await page.click('#guide-next');
  await settled(page);
  assert.equal((await demo(page)).state.mode, 's2s');
  await page.click('#tab-self');
  await settled(page);
  await page.click('#tab-s2s');
  await settled(page);
  assert.equal(await page.locator('.guide-moved').count(), 0);
  await page.click('[data-guide="close"]');
  await settled(page);
  assert.equal((await demo(page)).state.mode, 's2s');
  assert.deepEqual(problems, []);
  await close();
});
