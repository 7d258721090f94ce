// Browser tests of the demo's trained character language model (the default self-attention view, with its model
// view of every layer and head, its predictions, its step-by-step panel and its heads switched off), and of what both
// trained models share: their Chinese words and their lazy fetch. Maps are compared with the package run in Node on
// the very model files the page fetched (build/site/assets). The dates model's tests are dates.test.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, demo, exported, shot, settled, argmax, ART, datesModelShown } from './helpers.js';
import { builtModel, nodeModel, readHeader } from './trained-models.js';

const EN = 'The animal didn’t cross the street because it was too tired.';

useBrowser();

const showToken = (c) => (c === ' ' ? '␣' : c === '\n' ? '↵' : c);

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
    // A name too long for the badge's lines keeps the words before its parenthesis there; the legend has it whole.
    const short = name.replace(/\s*[(（].*$/, '');
    const whole = c.badge?.includes(name) || c.badge?.includes(`${short} ·`);
    assert.ok(whole && c.badge.includes(n.score.toFixed(2)), `layer ${n.layer} head ${n.head}: badge ${c.badge}`);
    assert.ok((await page.textContent('#modelview .mv-legend')).includes(name), `the legend names ${name}`);
    assert.ok(!/\((Chinese|English) text\)/.test(c.badge), `layer ${n.layer} head ${n.head}: badge ${c.badge}`);
  }
  assert.equal(await page.isVisible('#named-none'), named.length === 0);
  // The info line gives the training record's held-out losses: English, Chinese prose and everyday Chinese sentences.
  const { heldout, everyday } = header.training;
  assert.match(await page.textContent('#model-info'), new RegExp(`English ${heldout.en.loss.toFixed(2)} nats, Chinese `
    + `${heldout.zh_prose.loss.toFixed(2)} nats, everyday Chinese sentences ${everyday.loss.toFixed(2)} nats`));
  // The maps section shows the first layer with a named head (else the last), with the same badges.
  const layer = named.length ? Math.min(...named.map((n) => n.layer)) : L - 1;
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
  assert.equal(await page.isHidden('#continue-note'), true);
  // A text the model ends (its most likely next character is the end of text): greedy continuation would write
  // nothing, so the button is off and a note says why, where a click did nothing before.
  // A whole couplet, which the model ends: a half one may leave greedy decoding writing punctuation to the limit.
  const ending = '春眠不觉晓，处处闻啼鸟。';
  assert.equal(lm.generate(ending, { maxNewTokens: 1 }).text, '', 'the model ends this text');
  await page.fill('#text', ending);
  await settled(page);
  assert.ok(await page.isDisabled('#continue-btn'));
  assert.equal(await page.textContent('#continue-note'), 'The model ends the text here: “end of text” is its most likely next character, so it would write nothing more.');
  await page.fill('#text', prompt);
  await settled(page);
  assert.ok(await page.isEnabled('#continue-btn'));
  assert.equal(await page.isHidden('#continue-note'), true);
  await page.fill('#text', expected);
  await settled(page);
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
  await datesModelShown(page);
  await settled(page);
  assert.ok(await page.isVisible('#steps-section'));
  await page.click('#mode-tabs [data-mode="self"]');
  await settled(page);
  assert.equal((await demo(page)).last.kind, 'lm');
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
  // The language model is fetched on first use: the page is idle while it comes, with the dates model's info shown.
  await page.waitForFunction(() => window.__attnscopeDemo.last.kind === 'lm' && !window.__attnscopeDemo.last.loading, null, { timeout: 15_000 });
  await settled(page);
  assert.equal(await page.textContent('#model-switch [data-model="trained"]'), '训练好的字符模型');
  const { heldout, everyday } = readHeader(builtModel('char-lm')).training;
  assert.match(await page.textContent('#model-info'), new RegExp(`英文 ${heldout.en.loss.toFixed(2)} nats，中文 `
    + `${heldout.zh_prose.loss.toFixed(2)} nats，日常中文句子 ${everyday.loss.toFixed(2)} nats`));
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
test('maps whose cells are too small for every token label indices at a round step, never none', async () => {
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
    // A short text has a label on every token; 119 tokens on a head's map get an index every 2, 5, 10 or 20 (the
    // token of every cell is on hover).
    const head = maps.find((m) => m.head === '0');
    if (T < 20) assert.equal(head.step, 1);
    else assert.ok([2, 5, 10, 20].includes(head.step), `${width} px: an index every ${head.step} of ${T} tokens`);
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
    const doc = await exported(page);
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

for (const [lang, locale] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
  test(`the first screen shows attention: the sentence box and a live map at 1280 × 800, the sentence box at 390 × 844 (${lang})`, async () => {
    const { page, problems, close } = await open(`#lang=${lang}`, { locale, width: 1280, height: 800 });
    // Top and bottom of an element in the first viewport (before any scroll).
    const box = (sel) => page.$eval(sel, (el) => { const r = el.getBoundingClientRect(); return [r.top, r.bottom]; });
    const [, textBottom] = await box('#text');
    assert.ok(textBottom <= 800, `the sentence box ends at ${textBottom} px`);
    // The first layer's maps, drawn (a canvas with its pixels), start within the first screen.
    const [mapTop] = await box('#modelview .mv-cell[data-layer="0"] canvas');
    assert.ok(mapTop + 40 <= 800, `the first map starts at ${mapTop} px`);
    await shot(page, `first-screen-${lang}-desktop`);
    await page.setViewportSize({ width: 390, height: 844 });
    await settled(page);
    await page.evaluate(() => window.scrollTo(0, 0));
    const [phoneTextTop] = await box('#text');
    assert.ok(phoneTextTop + 30 <= 844, `on a phone the sentence box starts at ${phoneTextTop} px`);
    // The four mode tabs: two even rows of two.
    const rows = await page.$$eval('#mode-tabs [data-mode]', (els) => els.map((e) => Math.round(e.getBoundingClientRect().top)));
    assert.equal(new Set(rows).size, 2, `tab rows at ${rows}`);
    await shot(page, `first-screen-${lang}-phone`);
    assert.deepEqual(problems, []);
    await close();
  });
}
