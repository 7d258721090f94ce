// attnscope/figures: the SVG is parsed and every cell, line and label is checked against the weights it was drawn from.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { init, MultiHeadAttention } from 'attnscope';
import { heatmapSvg, headViewSvg, modelViewSvg } from 'attnscope/figures';
import { elements, inherited, parseXml, textOf } from './xml.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

// ------------------------------------------------------------------ references, independent of the package's code

// matplotlib's viridis and cividis at t = 0, 1/9, …, 1 (as R's viridisLite prints them); the full 256-entry tables
// stay within a few RGB units of the linear interpolation between these.
const STOPS = {
  viridis: ['#440154', '#482878', '#3e4a89', '#31688e', '#26828e', '#1f9e89', '#35b779', '#6dcd59', '#b4de2c', '#fde725'],
  cividis: ['#00204d', '#00336f', '#39486b', '#575c6d', '#707173', '#8a8779', '#a69d75', '#c4b56c', '#e4cf5b', '#ffea46'],
};
// Okabe & Ito (2008), "Color Universal Design": blue, orange, bluish green, vermillion, reddish purple, sky blue, black, yellow.
const OKABE_ITO = ['#0072b2', '#e69f00', '#009e73', '#d55e00', '#cc79a7', '#56b4e9', '#000000', '#c8b400'];

const rgb = (hex) => [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));
function mapColor(name, t) {
  const s = STOPS[name].map(rgb);
  const x = t * (s.length - 1);
  const k = Math.min(s.length - 2, Math.floor(x));
  return s[k].map((c, ch) => c + (s[k + 1][ch] - c) * (x - k));
}
const DENSE = Object.fromEntries(Object.keys(STOPS).map((name) => [name, Array.from({ length: 4097 }, (_, k) => mapColor(name, k / 4096))]));
/** The t in [0, 1] whose colour is nearest `hex` (dense search): reads a weight's position back from a fill. */
function positionOf(name, hex) {
  const target = rgb(hex);
  let best = 0, bestD = Infinity;
  for (let k = 0; k <= 4096; k++) {
    const c = DENSE[name][k];
    const d = (c[0] - target[0]) ** 2 + (c[1] - target[1]) ** 2 + (c[2] - target[2]) ** 2;
    if (d < bestD) { bestD = d; best = k / 4096; }
  }
  assert.ok(bestD < 3 * 3 ** 2, `${hex} is on the ${name} colour map (off by ${Math.sqrt(bestD).toFixed(1)} RGB units)`);
  return best;
}
// WCAG 2.x relative luminance and contrast ratio.
const luminance = (hex) => {
  const [r, g, b] = rgb(hex).map((c) => c / 255).map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const contrast = (a, b) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
};
const fullHex = (c) => (/^#[0-9a-f]{3}$/i.test(c) ? '#' + [...c.slice(1)].map((x) => x + x).join('') : c).toLowerCase();

// ------------------------------------------------------------------ helpers

const parse = (svg) => {
  const doc = parseXml(svg);
  return { doc, all: elements(doc) };
};
const cellsOf = (all, scope = null) => all.filter((e) => e.name === 'rect' && 'data-q' in e.attrs && (!scope || isInside(e, scope)));
const isInside = (e, scope) => { for (let p = e.parent; p; p = p.parent) if (p === scope) return true; return false; };
const labelsOf = (all, axis) => all.filter((e) => e.name === 'text' && e.attrs['data-axis'] === axis).map(textOf);

/** Expected colour-map positions of a [L, S] map under each scaling, written from the definitions in the docs. */
function expectedPositions(w, kind, { vmax, vmin } = {}) {
  const L = w.length, S = w[0].length;
  const all = w.flat();
  const top = vmax ?? Math.max(...(kind === 'excludeFirstKey' ? w.flatMap((r) => r.slice(1)) : all));
  return w.map((row) => row.map((v) => {
    if (kind === 'row') return v / Math.max(...row);
    if (kind === 'log') {
      const bottom = vmin ?? top / 1000;
      return v <= bottom ? 0 : Math.min(1, Math.log(v / bottom) / Math.log(top / bottom));
    }
    return Math.min(1, v / top);
  })).slice(0, L).map((r) => r.slice(0, S));
}

function assertCellsMatch(all, w, kind, colormap = 'viridis', extra = {}) {
  const cells = cellsOf(all);
  const L = w.length, S = w[0].length;
  assert.equal(cells.length, L * S, 'one cell per weight');
  const expected = expectedPositions(w, kind, extra);
  for (const c of cells) {
    const i = Number(c.attrs['data-q']), j = Number(c.attrs['data-k']);
    const t = positionOf(colormap, c.attrs.fill);
    // The package quantises t to 1/255 (a 256-entry table); allow that plus the stop interpolation's few units.
    assert.ok(Math.abs(t - expected[i][j]) < 0.012, `${kind}: cell (${i}, ${j}) = ${w[i][j]} should sit at ${expected[i][j].toFixed(4)} of ${colormap}, its fill ${c.attrs.fill} sits at ${t.toFixed(4)}`);
  }
}

let layer; // a real MultiHeadAttention's weights, exactly as forward returns them
const TOKENS = ['<bos>', 'The', 'animal', 'didn’t', 'cross', 'the', 'street'];
const nested = (data, offset, L, S) => Array.from({ length: L }, (_, i) => Array.from(data.subarray(offset + i * S, offset + (i + 1) * S)));

before(async () => {
  await init();
  const mha = new MultiHeadAttention({ embedDim: 16, numHeads: 4, seed: 7 });
  const T = TOKENS.length;
  const x = { data: Float32Array.from({ length: T * 16 }, (_, k) => 3 * Math.sin(0.37 * k + 1)), shape: [T, 16] };
  layer = mha.forward(x, null, null, { causal: true }).weights; // [4, T, T]
  mha.dispose();
});

// A map with an attention sink: the first key takes most of every row.
const SINK = [
  [1, 0, 0, 0],
  [0.9, 0.1, 0, 0],
  [0.8, 0.15, 0.05, 0],
  [0.7, 0.02, 0.08, 0.2],
];
const SINK_TOKENS = ['<bos>', 'a', 'b', 'c'];

// ------------------------------------------------------------------ heat map

test('heatmapSvg: every cell of a forward() head has the colour of its weight (linear, viridis and cividis)', () => {
  const [H, L, S] = layer.shape;
  assert.equal(H, 4);
  for (let h = 0; h < H; h++) {
    const { all } = parse(heatmapSvg(layer, TOKENS, { head: h }));
    assertCellsMatch(all, nested(layer.data, h * L * S, L, S), 'linear');
  }
  const { all } = parse(heatmapSvg(layer, TOKENS, { head: 2, colormap: 'cividis', vmax: 1 }));
  assertCellsMatch(all, nested(layer.data, 2 * L * S, L, S), 'linear', 'cividis', { vmax: 1 });
});

test('heatmapSvg: the scalings an attention sink cannot blind map each cell as documented', () => {
  for (const kind of ['linear', 'row', 'excludeFirstKey', 'log']) {
    const { all } = parse(heatmapSvg(SINK, SINK_TOKENS, { scale: kind }));
    assertCellsMatch(all, SINK, kind);
  }
  const { all } = parse(heatmapSvg(SINK, SINK_TOKENS, { scale: 'log', vmin: 0.01, vmax: 1 }));
  assertCellsMatch(all, SINK, 'log', 'viridis', { vmin: 0.01, vmax: 1 });
  // The point of the sink scalings: without them the non-sink weights are all in the bottom fifth of the colours.
  const position = (svg, i, j) => positionOf('viridis', cellsOf(parse(svg).all).find((c) => c.attrs['data-q'] === String(i) && c.attrs['data-k'] === String(j)).attrs.fill);
  assert.ok(position(heatmapSvg(SINK, SINK_TOKENS), 3, 3) < 0.25);
  assert.ok(position(heatmapSvg(SINK, SINK_TOKENS, { scale: 'excludeFirstKey' }), 3, 3) > 0.99);
  // The end colours are matplotlib's own.
  const fills = cellsOf(parse(heatmapSvg(SINK, SINK_TOKENS)).all).map((c) => c.attrs.fill);
  assert.ok(fills.includes('#fde725') && fills.includes('#440154'));
  // The legend says when the first key goes beyond the top of the scale.
  assert.match(textOf(parse(heatmapSvg(SINK, SINK_TOKENS, { scale: 'excludeFirstKey' })).doc), /≥ 0\.2/);
});

test('heatmapSvg: head picks one head, the default is the mean of the heads, batch picks the batch entry', () => {
  const [H, L, S] = layer.shape;
  const mean = Array.from({ length: L }, (_, i) => Array.from({ length: S }, (_, j) => {
    let s = 0;
    for (let h = 0; h < H; h++) s += layer.data[(h * L + i) * S + j];
    return s / H;
  }));
  assertCellsMatch(parse(heatmapSvg(layer, TOKENS)).all, mean, 'linear');
  assertCellsMatch(parse(heatmapSvg(layer, TOKENS, { head: 'mean', scale: 'row' })).all, mean, 'row');
  // [batch, heads, q, k]: entry 1 is the sink map in head 0, entry 0 is its transpose.
  const sink = SINK.flat();
  const transposed = SINK[0].map((_, j) => SINK.map((r) => r[j]));
  const batched = { data: Float32Array.from([...transposed.flat(), ...transposed.flat(), ...sink, ...sink]), shape: [2, 2, 4, 4] };
  assertCellsMatch(parse(heatmapSvg(batched, SINK_TOKENS, { batch: 1, head: 0, scale: 'row' })).all, SINK.map((r) => r.map(Math.fround)), 'row');
  assert.throws(() => heatmapSvg(batched, SINK_TOKENS), { name: 'RangeError', message: /^heatmapSvg: options\.batch: the weights hold 2 batch entries/ });
  // Averaged weights [q, k] and nested arrays work as they are.
  assertCellsMatch(parse(heatmapSvg({ data: Float32Array.from(sink), shape: [4, 4] }, SINK_TOKENS)).all, SINK.map((r) => r.map(Math.fround)), 'linear');
});

test('heatmapSvg: one label per query and per key, in order; none when off or when the cells are too small', () => {
  const { all } = parse(heatmapSvg(layer, TOKENS, { head: 0 }));
  assert.deepEqual(labelsOf(all, 'query'), TOKENS);
  assert.deepEqual(labelsOf(all, 'key'), TOKENS);
  assert.deepEqual(labelsOf(parse(heatmapSvg(layer, TOKENS, { labels: false })).all, 'query'), []);
  // Cross-attention: 2 queries over 3 keys.
  const cross = parse(heatmapSvg([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], ['un', 'deux'], { keyTokens: ['one', 'two', 'three'] })).all;
  assert.deepEqual(labelsOf(cross, 'query'), ['un', 'deux']);
  assert.deepEqual(labelsOf(cross, 'key'), ['one', 'two', 'three']);
  // 120 tokens: 6 px cells carry no labels under 'auto', but do with labels: true.
  const n = 120;
  const big = { data: new Float32Array(n * n).fill(1 / n), shape: [n, n] };
  const words = Array.from({ length: n }, (_, k) => `w${k}`);
  assert.equal(labelsOf(parse(heatmapSvg(big, words, { tooltips: false })).all, 'key').length, 0);
  assert.equal(labelsOf(parse(heatmapSvg(big, words, { labels: true, tooltips: false })).all, 'key').length, n);
  // Characters stand upright in their cells; a '<bos>' among them is turned to read upwards.
  const turned = (tokens) => parse(heatmapSvg(tokens.map(() => tokens.map(() => 1 / tokens.length)), tokens)).all
    .filter((e) => e.attrs['data-axis'] === 'key').map((e) => /rotate\(-90\)/.test(e.attrs.transform ?? ''));
  assert.deepEqual(turned(['<bos>', 'a', 'b', 'c', 'd']), [true, false, false, false, false]);
  // Fewer than four in five fit: all turn, so the labels read alike.
  assert.deepEqual(turned(['<bos>', 'a', 'b', 'c']), [true, true, true, true]);
  // Invisible tokens become visible, long ones are shortened without splitting an emoji.
  const odd = parse(heatmapSvg([[0.5, 0.5], [0.5, 0.5]], [' ', '\n'])).all;
  assert.deepEqual(labelsOf(odd, 'query'), ['␣', '↵']);
  const family = '👩‍👩‍👧'.repeat(13);
  assert.deepEqual(labelsOf(parse(heatmapSvg([[1]], [family])).all, 'query'), ['👩‍👩‍👧'.repeat(11) + '…']);
});

test('figures escape token text: markup characters, quotes, emoji and CJK come back as text, never as elements', () => {
  const tokens = ['<script>alert(1)</script>', 'a & b', '"quoted" \'single\'', ']]>', '注意力', '🐈‍⬛', '&amp;', 'nul\u0000', 'lone\ud800'];
  const n = tokens.length;
  const w = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 0.5 : 0.5 / (n - 1))));
  // Labels longer than 12 characters are shortened (these are all single code units).
  const expectedLabels = tokens.map((t) => t.replace('\u0000', '␀').replace('\ud800', '\ufffd')).map((t) => (t.length > 12 ? t.slice(0, 11) + '…' : t));
  for (const svg of [
    heatmapSvg(w, tokens, { title: '</title><script>x</script>', subtitle: '<b>&', labels: true }),
    headViewSvg(w, tokens, { title: '<svg onload="x">' }),
    modelViewSvg([[w]], tokens, { labels: true, tooltips: true, captions: [['<i>&']] }),
  ]) {
    const { doc, all } = parse(svg); // strict: a stray '<' or '&' would not parse
    assert.equal(doc.name, 'svg');
    const names = new Set(all.map((e) => e.name));
    for (const bad of ['script', 'b', 'i']) assert.ok(!names.has(bad), `no <${bad}> element`);
    assert.equal(all.filter((e) => e.name === 'svg').length, 1);
    assert.deepEqual(labelsOf(all, 'query'), expectedLabels);
    assert.deepEqual(labelsOf(all, 'key'), expectedLabels);
    assert.ok(all.every((e) => Object.keys(e.attrs).every((k) => !/^on/i.test(k))), 'no event handler attributes');
  }
  const { all } = parse(heatmapSvg(w, tokens, { title: '</title><script>x</script>' }));
  assert.equal(textOf(all.find((e) => e.name === 'title')), '</title><script>x</script>');
  assert.ok(all.some((e) => e.name === 'title' && textOf(e) === '<script>alert(1)</script> → a & b: 0.0625'), 'cell tooltips carry the raw token text');
});

test('figures are accessible: role="img", a <title> and a <desc> naming the strongest weights', () => {
  const [, L, S] = layer.shape;
  for (const [svg, strongestOf] of [
    [heatmapSvg(layer, TOKENS, { head: 1 }), (data) => data.subarray(L * S, 2 * L * S)],
    [headViewSvg(layer, TOKENS), (data) => data],
    [modelViewSvg([layer, layer], TOKENS), (data) => data],
  ]) {
    const { doc, all } = parse(svg);
    assert.equal(doc.attrs.role, 'img');
    const [titleId, descId] = doc.attrs['aria-labelledby'].split(' ');
    const title = all.find((e) => e.attrs.id === titleId), desc = all.find((e) => e.attrs.id === descId);
    assert.equal(title.name, 'title');
    assert.equal(desc.name, 'desc');
    assert.equal(doc.children.find((c) => typeof c !== 'string'), title, '<title> is the first child');
    assert.ok(textOf(title).length > 10);
    // The largest weight of what is drawn, with both of its tokens, is named in the description.
    const data = strongestOf(layer.data);
    let k = 0;
    for (let x = 1; x < data.length; x++) if (data[x] > data[k]) k = x;
    const i = Math.floor(k / S) % L, j = k % S;
    assert.ok(textOf(desc).includes(`“${TOKENS[i]}” → “${TOKENS[j]}” ${Number(data[k].toPrecision(4))}`), `${textOf(desc)} names the strongest weight`);
  }
  assert.equal(textOf(parse(heatmapSvg(SINK, SINK_TOKENS, { description: 'My words.' })).all.find((e) => e.name === 'desc')), 'My words.');
});

test('all text has a contrast of at least 4.5:1 against what it sits on', () => {
  for (const svg of [
    heatmapSvg(layer, TOKENS, { head: 0, values: true, title: 'T', subtitle: 'S' }),
    heatmapSvg(SINK, SINK_TOKENS, { values: true, colormap: 'cividis', scale: 'log' }),
    headViewSvg(layer, TOKENS, { title: 'T', subtitle: 'S', query: 2 }),
    modelViewSvg({ data: layer.data, shape: [1, ...layer.shape] }, TOKENS, { captions: [['a', 'b', 'c', 'd']], title: 'T', subtitle: 'S' }),
  ]) {
    const { all } = parse(svg);
    const texts = all.filter((e) => e.name === 'text');
    assert.ok(texts.length > 0);
    for (const t of texts) {
      const fill = fullHex(inherited(t, 'fill') ?? '#000000');
      // Numbers printed in a cell sit on that cell's colour; all other text on the white background.
      const cell = 'data-q' in t.attrs && all.find((c) => c.name === 'rect' && c.attrs['data-q'] === t.attrs['data-q'] && c.attrs['data-k'] === t.attrs['data-k']);
      const background = cell ? cell.attrs.fill : '#ffffff';
      assert.ok(contrast(fill, background) >= 4.5, `"${textOf(t)}" in ${fill} on ${background}: ${contrast(fill, background).toFixed(2)}:1`);
    }
    assert.equal(fullHex(all.find((e) => e.name === 'rect').attrs.fill), '#ffffff', 'the background is white');
  }
});

test('heatmapSvg with values prints every weight in its cell', () => {
  const { all } = parse(heatmapSvg(SINK, SINK_TOKENS, { values: true }));
  const printed = all.filter((e) => e.name === 'text' && 'data-q' in e.attrs);
  assert.equal(printed.length, 16);
  for (const t of printed) assert.equal(textOf(t), SINK[t.attrs['data-q']][t.attrs['data-k']].toFixed(2));
});

// ------------------------------------------------------------------ head view

test('headViewSvg: one line per head, query and key above minWeight, its opacity the weight, its colour the head\'s', () => {
  const [H, L, S] = layer.shape;
  const { all } = parse(headViewSvg(layer, TOKENS));
  const groups = all.filter((e) => e.attrs['data-role'] === 'lines');
  assert.deepEqual(groups.map((g) => Number(g.attrs['data-head'])), [0, 1, 2, 3]);
  let drawn = 0;
  for (const g of groups) {
    const h = Number(g.attrs['data-head']);
    assert.equal(fullHex(g.attrs.stroke), OKABE_ITO[h]);
    const lines = g.children.filter((c) => typeof c !== 'string');
    const seen = new Set();
    for (const line of lines) {
      const i = Number(line.attrs['data-q']), j = Number(line.attrs['data-k']);
      const w = layer.data[(h * L + i) * S + j];
      assert.ok(Math.abs(Number(line.attrs['stroke-opacity']) - w) <= 5e-4, `head ${h} line ${i}→${j}: opacity ${line.attrs['stroke-opacity']} for weight ${w}`);
      seen.add(`${i},${j}`);
    }
    for (let i = 0; i < L; i++) for (let j = 0; j < S; j++) {
      assert.equal(seen.has(`${i},${j}`), layer.data[(h * L + i) * S + j] >= 0.01, `head ${h} ${i}→${j} drawn iff its weight is ≥ 0.01`);
    }
    drawn += lines.length;
  }
  assert.ok(drawn > H * L, 'lines were drawn');
  assert.deepEqual(labelsOf(all, 'query'), TOKENS);
  assert.deepEqual(labelsOf(all, 'key'), TOKENS);
  // One query, two heads, every weight: exactly that query's S lines per head.
  const one = parse(headViewSvg(layer, TOKENS, { query: 4, heads: [3, 1], minWeight: 0 })).all;
  const lines = one.filter((e) => e.name === 'line' && 'data-q' in e.attrs);
  assert.ok(lines.every((l) => l.attrs['data-q'] === '4'));
  assert.deepEqual(one.filter((e) => e.attrs['data-role'] === 'lines').map((g) => g.attrs['data-head']), ['3', '1']);
  assert.equal(lines.length, [1, 3].reduce((n, h) => n + Array.from({ length: S }, (_, j) => layer.data[(h * L + 4) * S + j]).filter((w) => w > 0).length, 0));
  assert.equal(one.find((e) => e.attrs['data-axis'] === 'query' && textOf(e) === TOKENS[4]).attrs['font-weight'], '700');
});

// ------------------------------------------------------------------ model view

test('modelViewSvg: a map per layer and head on one shared scale, each cell the colour of its weight', () => {
  const [H, L, S] = layer.shape;
  // Two layers: the forward() weights, and the same squared (so the scale's maximum is shared between them).
  const second = { data: layer.data.map((v) => v * v), shape: layer.shape };
  const stacked = { data: Float32Array.from([...layer.data, ...second.data]), shape: [2, H, L, S] };
  const svgs = [modelViewSvg(stacked, TOKENS), modelViewSvg([layer, second], TOKENS)];
  assert.equal(svgs[0], svgs[1], '[layers, heads, q, k] and a list of [heads, q, k] draw the same figure');
  const { all } = parse(svgs[0]);
  const maps = all.filter((e) => e.attrs['data-role'] === 'map');
  assert.equal(maps.length, 2 * H);
  const top = Math.max(...stacked.data);
  for (const m of maps) {
    const l = Number(m.attrs['data-layer']), h = Number(m.attrs['data-head']);
    const w = nested(stacked.data, (l * H + h) * L * S, L, S);
    assertCellsMatch(elements(m), w, 'linear', 'viridis', { vmax: top });
  }
  // Per-row scaling is per row of each map; captions go under their maps.
  const rowScaled = parse(modelViewSvg(stacked, TOKENS, { scale: 'row', captions: [['a', null, 'c', 'd'], ['e', 'f', 'g', 'h']] })).all;
  const m = rowScaled.find((e) => e.attrs['data-role'] === 'map' && e.attrs['data-layer'] === '1' && e.attrs['data-head'] === '2');
  assertCellsMatch(elements(m), nested(stacked.data, (H + 2) * L * S, L, S), 'row');
  assert.deepEqual(textOf(m.children.find((c) => c.name === 'text')), 'g');
  assert.equal(rowScaled.filter((e) => e.attrs['data-role'] === 'map' && e.children.some((c) => c.name === 'text')).length, 7);
});

// ------------------------------------------------------------------ errors

test('bad arguments throw TypeError or RangeError naming the call, the argument, what was expected and given', () => {
  const w = { data: new Float32Array(4 * 3 * 3), shape: [4, 3, 3] };
  const t3 = ['a', 'b', 'c'];
  const cases = [
    [() => heatmapSvg(w, ['a', 'b']), RangeError, /^heatmapSvg: tokens: expected 3 strings \(one per query of weights \[4, 3, 3\]\), got 2$/],
    [() => heatmapSvg(w, ['a', 'b', 5]), TypeError, /^heatmapSvg: tokens\[2\]: expected a string, got number 5$/],
    [() => heatmapSvg(w, 'abc'), TypeError, /^heatmapSvg: tokens: expected an array of strings, got string "abc"$/],
    [() => heatmapSvg({ data: new Float64Array(3), shape: [3] }, t3), RangeError, /^heatmapSvg: weights: expected \[queries, keys\] or \[heads, queries, keys\] or \[batch, heads, queries, keys\], got shape \[3\]$/],
    [() => heatmapSvg({ data: new Uint8Array(9), shape: [3, 3] }, t3), TypeError, /^heatmapSvg: weights\.data: expected a Float32Array or Float64Array, got Uint8Array\(9\)$/],
    [() => heatmapSvg({ data: new Float32Array(8), shape: [3, 3] }, t3), RangeError, /^heatmapSvg: weights: data has 8 values but shape \[3, 3\] needs 9$/],
    [() => heatmapSvg([[1, 0], [1]], ['a', 'b']), RangeError, /^heatmapSvg: weights: nested arrays must be rectangular/],
    [() => heatmapSvg([[1, 0], [1, '0']], ['a', 'b']), TypeError, /^heatmapSvg: weights: nested arrays must hold numbers, got string "0"$/],
    [() => heatmapSvg(null, t3), TypeError, /^heatmapSvg: weights: expected a tensor .* got null$/],
    [() => heatmapSvg(w, t3, { head: 4 }), RangeError, /^heatmapSvg: options\.head: expected a whole number from 0 to 3 \(4 heads\), got 4$/],
    [() => heatmapSvg(w, t3, { head: 'max' }), RangeError, /^heatmapSvg: options\.head: expected a head index or 'mean', got string "max"$/],
    [() => heatmapSvg(w, t3, { batch: 0 }), RangeError, /^heatmapSvg: options\.batch: weights of shape \[4, 3, 3\] have no batch dimension$/],
    [() => heatmapSvg(w, t3, { scale: 'sqrt' }), RangeError, /^heatmapSvg: options\.scale: expected 'linear', 'row', 'excludeFirstKey', 'log', got string "sqrt"$/],
    [() => heatmapSvg(w, t3, { colormap: 'jet' }), RangeError, /^heatmapSvg: options\.colormap: expected 'viridis', 'cividis', got string "jet"$/],
    [() => heatmapSvg(w, t3, { vmax: 0 }), RangeError, /^heatmapSvg: options\.vmax: expected a finite number above 0, got 0$/],
    [() => heatmapSvg(w, t3, { scale: 'log', vmin: 2, vmax: 1 }), RangeError, /^heatmapSvg: options\.vmin: expected a value below the top of the scale \(1\), got 2$/],
    [() => heatmapSvg(w, t3, { keyTokens: ['x'] }), RangeError, /^heatmapSvg: options\.keyTokens: expected 3 strings \(one per key of weights \[4, 3, 3\]\), got 1$/],
    [() => heatmapSvg(w, t3, { cellsize: 3 }), TypeError, /^heatmapSvg: unknown option 'cellsize' \(expected one of .*cellSize/],
    [() => heatmapSvg(w, t3, { labels: 'yes' }), TypeError, /^heatmapSvg: options\.labels: expected true, false or 'auto', got string "yes"$/],
    [() => heatmapSvg(w, t3, { id: '1 2' }), RangeError, /^heatmapSvg: options\.id: expected letters/],
    [() => heatmapSvg(w, t3, { strings: { heads: 'x' } }), TypeError, /^heatmapSvg: options\.strings: unknown key 'heads'/],
    [() => heatmapSvg(w, t3, 'fast'), TypeError, /^heatmapSvg: options: expected an options object, got string "fast"$/],
    [() => headViewSvg(w, t3, { heads: [0, 9] }), RangeError, /^headViewSvg: options\.heads\[1\]: expected a whole number from 0 to 3 \(4 heads\), got 9$/],
    [() => headViewSvg(w, t3, { heads: 2 }), TypeError, /^headViewSvg: options\.heads: expected an array of head indices, got number 2$/],
    [() => headViewSvg(w, t3, { query: 1.5 }), RangeError, /^headViewSvg: options\.query: expected a whole number from 0 to 2 \(3 queries\), got 1\.5$/],
    [() => headViewSvg(w, t3, { minWeight: 2 }), RangeError, /^headViewSvg: options\.minWeight: expected a finite number from 0 to 1, got 2$/],
    [() => headViewSvg(w, ['a']), RangeError, /^headViewSvg: tokens: expected 3 strings/],
    [() => modelViewSvg(w, t3), RangeError, /^modelViewSvg: weights: expected \[batch, heads, queries, keys\], got shape \[4, 3, 3\]$/],
    [() => modelViewSvg([w, { data: new Float32Array(9), shape: [1, 3, 3] }], t3), RangeError, /^modelViewSvg: weights\[1\]: expected shape \[4, 3, 3\] like weights\[0\], got \[1, 3, 3\]$/],
    [() => modelViewSvg([w], t3, { captions: [['a']] }), RangeError, /^modelViewSvg: options\.captions\[0\]: expected 4 entries \(one per head\), got 1$/],
    [() => modelViewSvg([w], t3, { captions: [[1, 2, 3, 4]] }), TypeError, /^modelViewSvg: options\.captions\[0\]\[0\]: expected a string or null, got number 1$/],
  ];
  for (const [call, type, message] of cases) assert.throws(call, (e) => e instanceof type && e.constructor === type && message.test(e.message), String(message));
  // Nothing is left in a bad state: the same call with good arguments works.
  assert.equal(cellsOf(parse(heatmapSvg(w, t3, { head: 3 })).all).length, 9);
});

test('the same input gives the same SVG; two figures of one page get different ids', () => {
  assert.equal(heatmapSvg(layer, TOKENS), heatmapSvg(layer, TOKENS));
  const ids = [heatmapSvg(layer, TOKENS, { head: 0 }), heatmapSvg(layer, TOKENS, { head: 1 }), headViewSvg(layer, TOKENS), modelViewSvg([layer], TOKENS)]
    .map((svg) => parse(svg).doc.attrs['aria-labelledby']);
  assert.equal(new Set(ids).size, ids.length);
  assert.match(heatmapSvg(layer, TOKENS, { id: 'fig-2' }), /id="fig-2-title"/);
});

// ------------------------------------------------------------------ the package

test('attnscope/figures imports nothing outside its folder: no WebAssembly, no DOM', () => {
  const dir = path.join(root, 'dist', 'figures');
  const files = readdirSync(dir).filter((f) => f.endsWith('.js'));
  assert.ok(files.length >= 5);
  for (const f of files) {
    const source = readFileSync(path.join(dir, f), 'utf8');
    for (const [, spec] of source.matchAll(/\bfrom\s+'([^']+)'/g)) assert.match(spec, /^\.\/[\w-]+\.js$/, `${f} imports ${spec}`);
    assert.doesNotMatch(source, /\bdocument\.|\bwindow\.|import\(/, `${f} uses no DOM and no dynamic import`);
  }
});

test('the README\'s example scripts write figures that parse, and the declarations type-check a consumer', { timeout: 120_000 }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'attnscope-figures-'));
  try {
    execFileSync(process.execPath, [path.join(root, 'web', 'examples', 'figure.mjs')], { cwd: work });
    for (const f of ['heatmap.svg', 'head-view.svg']) assert.equal(parse(readFileSync(path.join(work, f), 'utf8')).doc.attrs.role, 'img');
    assert.deepEqual(labelsOf(parse(readFileSync(path.join(work, 'heatmap.svg'), 'utf8')).all, 'key'), ['The', 'cat', 'sat', 'on', 'the', 'mat', '.']);

    // The README quotes this script's code (all but its leading comment lines) verbatim.
    const script = readFileSync(path.join(root, 'web', 'examples', 'figure-from-json.mjs'), 'utf8').replace(/^(\/\/.*\n)+/, '');
    assert.ok(readFileSync(path.join(root, 'README.md'), 'utf8').includes('```js\n' + script + '```'), 'README.md quotes web/examples/figure-from-json.mjs');
    const attention = [[SINK, SINK], [SINK, SINK]];
    writeFileSync(path.join(work, 'attention.json'), JSON.stringify({ tokens: SINK_TOKENS, attention }));
    execFileSync(process.execPath, [path.join(root, 'web', 'examples', 'figure-from-json.mjs'), 'attention.json'], { cwd: work });
    assertCellsMatch(parse(readFileSync(path.join(work, 'layer1-head1.svg'), 'utf8')).all, SINK, 'excludeFirstKey');
    assert.equal(cellsOf(parse(readFileSync(path.join(work, 'model-view.svg'), 'utf8')).all).length, 4 * 16);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  // Inside the package folder, 'attnscope/figures' resolves through package.json "exports" to dist/figures/index.d.ts.
  const dir = path.join(root, 'build', 'figures-tsc');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'good.ts'), `
    import { heatmapSvg, headViewSvg, modelViewSvg, COLORMAPS, type HeatmapOptions } from 'attnscope/figures';
    const w = { data: new Float32Array(4), shape: [2, 2] };
    const o: HeatmapOptions = { scale: 'excludeFirstKey', colormap: COLORMAPS[1], head: 'mean' };
    export const svg: string = heatmapSvg(w, ['a', 'b'], o) + headViewSvg([[1, 0], [0, 1]], ['a', 'b'], { query: 1 })
      + modelViewSvg([w], ['a', 'b'], { captions: [[null]] });`);
  writeFileSync(path.join(dir, 'bad.ts'), `
    import { heatmapSvg } from 'attnscope/figures';
    heatmapSvg({ data: new Float32Array(4), shape: [2, 2] }, ['a', 'b'], { scale: 'sqrt' });`);
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  // One tsc run for both files (tsc is slow on a shared machine): the only error is bad.ts's.
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022' }, files: ['good.ts', 'bad.ts'] }));
  assert.throws(() => execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }), (e) => {
    const errors = e.stdout.split('\n').filter((line) => /error TS/.test(line));
    assert.equal(errors.length, 1, e.stdout);
    assert.match(errors[0], /^bad\.ts\(3,.*error TS2322: Type '"sqrt"' is not assignable to type 'ColorScaling/);
    return true;
  });
});
