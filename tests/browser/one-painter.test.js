// One heat-map painter for every model (issue #33): our character model's map and an opened checkpoint's enlarged
// map are painted by the same code (maps/heatmap.js over maps/paint.js), beside the same legend element, and a cell
// of a known weight has the colour attnscope/figures' colour map gives weight / top under the page's scale.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { colormapHex } from 'attnscope/figures';
import { useBrowser, open, settled, demo, shot } from './helpers.js';
import { loaded, openLongFixture, typeIds, typeSettled } from './open-helpers.js';

useBrowser();

const rgbOf = (hex) => [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));

/** The pixels at the centres of cells [i, j] of a map drawn by the painter, as [r, g, b], and how it is laid out. */
async function cellPixels(page, sel, cells) {
  return page.$eval(sel, (c, cells) => {
    const k = c.width / parseFloat(c.style.width);
    const cell = Number(c.dataset.cellPx), left = Number(c.dataset.cellsLeft), top = Number(c.dataset.cellsTop);
    const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; // one read: Chromium warns of several
    const rgb = cells.map(([i, j]) => {
      const o = (Math.floor((top + (i + 0.5) * cell) * k) * c.width + Math.floor((left + (j + 0.5) * cell) * k)) * 4;
      return [px[o], px[o + 1], px[o + 2]];
    });
    return { painter: c.dataset.painter, cell, rgb };
  }, cells);
}

/** The legend beside a map: its classes, the bar's gradient stops and the top it shows. */
const legendOf = (page) => page.$eval('#legend', (el) => ({
  painter: el.dataset.painter,
  parts: [...el.children].map((c) => c.className),
  ticks: [...el.querySelectorAll('.legend-ticks > span')].map((s) => s.className),
  bar: getComputedStyle(el.querySelector('.legend-bar')).backgroundImage,
  max: el.querySelector('.legend-ticks .max').textContent,
}));

/** The colour the colour map gives t, or one step of the 256-entry table either side (weights shown to 1e-6). */
function assertColour(got, cmap, t, what) {
  const near = [-1, 0, 1].map((d) => rgbOf(colormapHex(cmap, Math.min(1, Math.max(0, t + d / 255)))));
  assert.ok(near.some((c) => c.every((x, k) => x === got[k])), `${what}: pixel ${got} is not ${cmap} at ${t.toFixed(4)} (${near[1]})`);
}

test('our model’s map and an opened checkpoint’s map: the same painter, legend and colours', async () => {
  // Our character model, the default scale ('rest': the layer's largest weight outside the first key, rounded up to
  // two decimals) and cividis.
  const text = 'The cat sat on the mat.';
  const ours = await open(`#mode=self&model=trained&cmap=cividis&text=${encodeURIComponent(text)}`);
  let page = ours.page;
  const r = (await demo(page)).last;
  const { H, L, S, qi } = r;
  assert.equal(r.kind, 'lm');
  let m = 0;
  r.weights.forEach((w, k) => { if (k % S) m = Math.max(m, w); });
  const top = Math.min(1, Math.max(0.01, Math.ceil(m * 100) / 100));
  const head = 1, i = qi > 2 ? 2 : qi + 1;
  const keys = [...Array(i + 1).keys()];
  const px = await cellPixels(page, `#maps .map-card[data-head="${head}"] canvas`, keys.map((j) => [i, j]));
  assert.equal(px.painter, 'heatmap');
  for (const j of keys) {
    const w = r.weights[(head * L + i) * S + j];
    assertColour(px.rgb[j], 'cividis', Math.min(1, w / top), `our map, head ${head + 1}, query ${i}, key ${j} (${w})`);
  }
  const oursLegend = await legendOf(page);
  assert.equal(oursLegend.max, top.toFixed(2));
  assert.equal(H, 4);
  // The model view's legend is the same element kind, painted by the same function.
  assert.deepEqual(await page.$eval('#mv-scale', (el) => [el.dataset.painter, el.dataset.cmap]), ['heatmap', 'cividis']);
  await ours.close();

  // The sample checkpoint, opened in one click, scale 0–1: the enlarged map's selected row against the steps table.
  const opened = await open('#mode=open&lang=en&cmap=cividis&scale=one');
  page = opened.page;
  await page.click('#open-sample');
  await loaded(page);
  await settled(page);
  const q = Number(await page.getAttribute('#open-steps', 'data-query'));
  const row = await page.$$eval('#open-steps .steps-table td.w', (tds) => tds.map((td) => Number(td.dataset.value)));
  assert.ok(row.length > 3, `${row.length} keys`);
  const big = '#open-maps canvas[data-painter]';
  const keys2 = [0, 1, Math.floor(q / 2), q];
  const px2 = await cellPixels(page, big, keys2.map((j) => [q, j]));
  assert.equal(px2.painter, 'heatmap');
  assert.ok(px2.cell >= 8, `cells of ${px2.cell} px leave the centre clear of the selected row's frame`);
  keys2.forEach((j, n) => assertColour(px2.rgb[n], 'cividis', row[j], `opened map, query ${q}, key ${j} (${row[j]})`));
  const openLegend = await legendOf(page);
  assert.equal(openLegend.max, '1.00');
  for (const k of ['painter', 'parts', 'ticks', 'bar']) assert.deepEqual(openLegend[k], oursLegend[k], `the legends' ${k}`);
  await shot(page, 'one-painter-open');
  assert.deepEqual([...ours.problems, ...opened.problems], []);
  await opened.close();
});

test('an opened causal model’s grid, its last token edited, folds only the rows after the kept ones: a whole paint’s pixels', async () => {
  // phi3-longrope-partial: 100 ids in 72-pixel maps, so each map is folded (open/grid.js keeps each pixel's maximum).
  const { page, problems, close } = await open('#mode=open&lang=en');
  await openLongFixture(page);
  await typeIds(page, 100);
  await settled(page);
  const grid = () => page.$eval('#open-grid canvas', (c) => ({ kept: Number(c.dataset.keptRows), px: c.toDataURL() }));
  assert.equal((await grid()).kept, 0, 'the first pass paints every row');
  // The last id changed: the Worker's cache reuses three blocks of 32 positions, so 96 rows of every map are the
  // same bits and only the rows after them are read again.
  const ids = Array.from({ length: 100 }, (_, i) => (i * 7) % 48);
  ids[99] = (ids[99] + 5) % 48;
  const first = (await demo(page)).last.run;
  await typeSettled(page, ids.join(' '));
  const edited = await grid();
  // The Worker names the run it edited, and the rows the two share.
  const run = (await demo(page)).last.run;
  assert.notEqual(run.seq, first.seq);
  assert.deepEqual(run.unchanged[0], [first.seq, 96]);
  assert.equal(edited.kept, 96);
  // Another scale and back: each a whole paint of the same run, whose pixels the edit's repaint must be.
  await page.selectOption('#scale', 'max');
  await settled(page);
  assert.equal((await grid()).kept, 0);
  await page.selectOption('#scale', 'rest');
  await settled(page);
  const whole = await grid();
  assert.equal(whole.kept, 0);
  assert.ok(whole.px === edited.px, 'the repaint from row 96 has a whole paint’s pixels');
  assert.deepEqual(problems, []);
  await close();
});
