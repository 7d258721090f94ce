// Accessibility of the demo: axe-core (pinned devDependency) in every mode and both languages with no serious or
// critical violation; text alternatives of the heat maps; keyboard use of the tabs; few Tab stops and a skip link;
// no live region announcing every keystroke. Screenshots of each mode at desktop and phone widths go to
// test-artifacts/browser/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { axe, useBrowser, open, demo, settled, shot, ART } from './helpers.js';


useBrowser();


const MODES = [
  ['lm', '#mode=self&model=trained'],
  ['untrained', '#mode=self&model=untrained'],
  ['cross', '#mode=cross'],
  ['dates', '#mode=s2s'],
];

for (const [lang, locale] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
  for (const [name, hash] of MODES) {
    test(`axe-core: no serious or critical violations (${name}, ${lang})`, async () => {
      const { page, problems, close } = await open(`${hash}&lang=${lang}`, { locale });
      assert.deepEqual(await axe(page), []);
      await shot(page, `a11y-${name}-${lang}-desktop`, { fullPage: true });
      // The same page on a phone: nothing is wider than the screen, so no table hides a column off-screen.
      await page.setViewportSize({ width: 390, height: 844 });
      await settled(page);
      const wide = await page.evaluate(() => [...document.querySelectorAll('main *')]
        .filter((el) => {
          if (el.offsetParent === null || el.getBoundingClientRect().right <= document.documentElement.clientWidth + 1) return false;
          // Inside a box that scrolls sideways (a wide table on a phone): reachable, so fine.
          for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return false;
          return true;
        })
        .slice(0, 5).map((el) => `${el.tagName.toLowerCase()}#${el.id}.${el.className}: right ${Math.round(el.getBoundingClientRect().right)}`));
      assert.deepEqual(wide, []);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1), 'the page scrolls sideways at 390 px');
      // The step table's weight column is on screen, not behind a sideways scroll.
      if (await page.isVisible('#steps td.w')) {
        const [right, width] = await page.$eval('#steps td.w', (td) => [td.getBoundingClientRect().right, document.documentElement.clientWidth]);
        assert.ok(right <= width, `the weight column ends at ${right} px on a ${width} px screen`);
      }
      assert.deepEqual(await axe(page), []);
      await shot(page, `a11y-${name}-${lang}-phone`, { fullPage: true });
      assert.deepEqual(problems, []);
      await close();
    });
  }
}

test('every heat map has a text alternative: its strongest weights as a label, and the whole table on demand', async () => {
  const { page, problems, close } = await open('#mode=self&model=untrained&text=' + encodeURIComponent('The cat sat on the mat because it was warm.'));
  const d = await demo(page);
  const label = await page.getAttribute('#maps .map-card[data-head="1"] canvas', 'aria-label');
  assert.equal(await page.getAttribute('#maps .map-card[data-head="1"] canvas', 'role'), 'img');
  // The strongest weight of head 2 is named in the label with its value.
  const H1 = d.last.weights.slice(d.last.L * d.last.S, 2 * d.last.L * d.last.S);
  const k = H1.indexOf(Math.max(...H1));
  const [i, j] = [Math.floor(k / d.last.S), k % d.last.S];
  assert.ok(label.includes(`${d.last.rows[i]} → ${d.last.cols[j]} ${H1[k].toFixed(2)}`), label);
  // The table: reachable by keyboard (a <details> summary), one cell per weight, equal to the page's weights.
  await page.focus('#maps .map-card[data-head="1"] details summary');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#maps .map-card[data-head="1"] table.values');
  const cells = await page.$$eval('#maps .map-card[data-head="1"] table.values tbody td', (tds) => tds.map((td) => Number(td.textContent)));
  assert.equal(cells.length, d.last.L * d.last.S);
  cells.forEach((x, n) => assert.ok(Math.abs(x - H1[n]) <= 5e-4, `cell ${n}: ${x} vs ${H1[n]}`));
  // The model view's cells say what they show.
  const lm = await open('#mode=self&model=trained');
  const mv = await lm.page.getAttribute('#modelview .mv-cell[data-layer="0"][data-head="0"]', 'aria-label');
  assert.match(mv, /^Layer 1, Head 1.*strongest weights: .+ → .+ \d\.\d\d/);
  assert.deepEqual(problems, []);
  assert.deepEqual(lm.problems, []);
  await lm.close();
  await close();
});

test('tabs follow the WAI-ARIA pattern, the page has a skip link and few Tab stops, and typing is not announced', async () => {
  const { page, problems, close } = await open();
  // Mode tabs: one Tab stop, arrow keys select.
  assert.deepEqual(await page.$$eval('#mode-tabs [role="tab"]', (els) => els.map((e) => e.tabIndex)), [0, -1, -1, -1]);
  await page.focus('#mode-tabs [data-mode="self"]');
  await page.keyboard.press('ArrowRight');
  await settled(page);
  assert.equal((await demo(page)).state.mode, 'cross');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.mode), 'cross');
  assert.equal(await page.getAttribute('#mode-tabs [data-mode="cross"]', 'aria-selected'), 'true');
  assert.equal(await page.getAttribute('#mode-tabs [data-mode="cross"]', 'aria-controls'), 'cross-inputs');
  await page.keyboard.press('End');
  await settled(page);
  assert.equal((await demo(page)).state.mode, 'open');
  await page.keyboard.press('Home');
  await settled(page);
  assert.equal((await demo(page)).state.mode, 'self');
  // The model switch is a radio group: one Tab stop, the arrow keys move and check.
  assert.deepEqual(await page.$$eval('#model-switch [data-model]', (bs) => bs.map((b) => b.tabIndex)), [0, -1]);
  await page.focus('#model-switch [data-model="trained"]');
  await page.keyboard.press('ArrowRight');
  await settled(page);
  assert.equal((await demo(page)).state.model, 'untrained');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.model), 'untrained');
  assert.deepEqual(await page.$$eval('#model-switch [data-model]', (bs) => bs.map((b) => [b.tabIndex, b.getAttribute('aria-checked')])), [[-1, 'false'], [0, 'true']]);
  // Head tabs of the steps panel.
  await page.click('#model-switch [data-model="untrained"]');
  await settled(page);
  await page.focus('#head-tabs [aria-selected="true"]');
  await page.keyboard.press('ArrowRight');
  await settled(page);
  assert.equal((await demo(page)).state.head, 1);
  assert.equal(await page.evaluate(() => document.activeElement.dataset.head), '1');
  // A skip link is the first Tab stop of the page, shows when focused, and leads to the main content.
  const first = await page.evaluate(() => [...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')].find((e) => e.tabIndex >= 0 && !e.disabled)?.className);
  assert.equal(first, 'skip-link');
  await page.focus('.skip-link');
  assert.ok(await page.evaluate(() => { const r = document.activeElement.getBoundingClientRect(); return r.width > 10 && r.top >= 0; }), 'the skip link shows when focused');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'main');
  // No live region announces every keystroke.
  assert.deepEqual(await page.$$eval('[aria-live]', (els) => els.map((e) => e.id).filter((id) => ['tokens', 'timing'].includes(id))), []);
  // The trained view with 128 characters has a reasonable number of Tab stops.
  await page.click('#model-switch [data-model="trained"]');
  await page.fill('#text', 'x'.repeat(127));
  await settled(page);
  const stops = await page.$$eval('a[href], button, input, select, textarea, [tabindex]', (els) => els.filter((e) => e.tabIndex >= 0 && !e.disabled && e.offsetParent !== null).length);
  assert.ok(stops < 80, `${stops} Tab stops`);
  await shot(page, 'a11y-tabs');
  assert.deepEqual(problems, []);
  await close();
});

test('on a desktop the decoding and the bottleneck curve fit and are no Tab stops (on a phone they scroll and are: phone-layout.test.js)', async () => {
  const region = (page, sel) => page.$eval(sel, (el) => ({ fits: el.scrollWidth <= el.clientWidth + 1 && el.scrollHeight <= el.clientHeight + 1,
    stop: el.tabIndex >= 0, role: el.getAttribute('role') }));
  const dates = await open('#mode=s2s&lang=en');
  await dates.page.waitForSelector('#decode svg.dec-svg', { timeout: 20_000 });
  await settled(dates.page);
  assert.deepEqual(await region(dates.page, '#decode'), { fits: true, stop: false, role: 'region' });
  assert.deepEqual(dates.problems, []);
  await dates.close();
  const why = await open('#lang=en');
  await why.page.waitForSelector('#why-curve svg', { state: 'attached', timeout: 20_000 });
  await settled(why.page);
  assert.deepEqual(await region(why.page, '#why-curve'), { fits: true, stop: false, role: 'region' });
  assert.deepEqual(why.problems, []);
  await why.close();
});

test('the model view is one Tab stop per group of maps: the arrow keys move between its maps, Enter picks one', async () => {
  const { page, problems, close } = await open('#lang=en');
  await page.waitForSelector('#modelview .mv-cell canvas', { timeout: 20_000 });
  await settled(page);
  const stops = () => page.$$eval('#modelview .mv-grid', (grids) => grids.map((g) => [...g.querySelectorAll('.mv-cell')].filter((c) => c.tabIndex === 0).length));
  assert.deepEqual(await stops(), [1]);
  const focused = () => page.evaluate(() => { const c = document.activeElement.closest('.mv-cell'); return c ? [Number(c.dataset.layer), Number(c.dataset.head)] : null; });
  await page.focus('#modelview .mv-cell[data-layer="0"][data-head="0"]');
  await page.keyboard.press('ArrowRight');
  assert.deepEqual(await focused(), [0, 1]);
  await page.keyboard.press('ArrowDown');
  assert.deepEqual(await focused(), [1, 1]);
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft'); // the first map of layer 2 goes back to the last of layer 1
  assert.deepEqual(await focused(), [0, 3]);
  await page.keyboard.press('End');
  const layers = await page.$$eval('#modelview .mv-rowhead', (els) => els.length);
  assert.deepEqual(await focused(), [layers - 1, 3]);
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowDown');
  // Still one stop, the map last moved to; Enter picks it (the maps and the head view move to its layer).
  assert.deepEqual(await stops(), [1]);
  assert.equal(await page.$eval('#modelview .mv-cell[tabindex="0"]', (c) => `${c.dataset.layer}/${c.dataset.head}`), '1/0');
  await page.keyboard.press('Enter');
  await settled(page);
  assert.equal((await demo(page)).state.layer, 1);
  // Tab leaves the grid rather than walking through its maps.
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  assert.equal(await focused(), null);
  // With the focus elsewhere, the stop follows the selected layer: its first map.
  await page.evaluate(() => { location.hash = '#lang=en&layer=2'; });
  await page.waitForFunction(() => window.__attnscopeDemo.last.layer === 2, null, { timeout: 10_000 });
  await settled(page);
  assert.equal(await page.$eval('#modelview .mv-cell[tabindex="0"]', (c) => `${c.dataset.layer}/${c.dataset.head}`), '2/0');
  // The dates model's three groups (encoder, decoder, cross): one stop each.
  await page.evaluate(() => { location.hash = '#lang=en&mode=s2s'; });
  await page.waitForFunction(() => document.querySelectorAll('#modelview .mv-grid').length === 3, null, { timeout: 20_000 });
  await settled(page);
  assert.deepEqual(await stops(), [1, 1, 1]);
  assert.deepEqual(problems, []);
  await close();
});

test('axe within a part of the page finds a violation placed in that part, and not one placed outside it', async () => {
  // The other tests check the part of the page they are about (helpers.js, axe's `within`): that must still fail.
  const { page, problems, close } = await open('#mode=self&model=trained');
  assert.deepEqual(await axe(page, '#hv-section'), []);
  // An unlabelled text box (axe's "label" rule, critical) in the head view's section, then one outside it.
  await page.evaluate(() => document.querySelector('#hv-section').append(Object.assign(document.createElement('input'), { id: 'unlabelled-in' })));
  assert.match((await axe(page, '#hv-section')).join('\n'), /^label \(critical\): #unlabelled-in$/m);
  assert.match((await axe(page, ['#maps-section', '#hv-section'])).join('\n'), /#unlabelled-in/);
  assert.deepEqual(await axe(page, '#maps-section'), []);
  await page.evaluate(() => document.querySelector('#unlabelled-in').remove());
  await page.evaluate(() => document.querySelector('#maps-section').append(Object.assign(document.createElement('input'), { id: 'unlabelled-out' })));
  assert.deepEqual(await axe(page, '#hv-section'), []);
  assert.match((await axe(page)).join('\n'), /#unlabelled-out/);
  // A part that is not on the page is an error, not a pass, alone or in a list.
  await assert.rejects(axe(page, '#no-such-part'), /nothing on the page matches #no-such-part/);
  await assert.rejects(axe(page, ['#hv-section', '#no-such-part']), /nothing on the page matches #no-such-part/);
  assert.deepEqual(problems, []);
  await close();
});
