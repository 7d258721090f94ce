// The cache export of an opened model in Chromium: hook kinds ticked, the file's size shown before anything runs,
// then the .safetensors download and its JSON config. The downloaded bytes are parsed here (the safetensors header,
// little-endian F32) and compared with research.json's float64 PyTorch attention and residual stream
// (tools/references/hf_research_reference.py), on gpt2-lm and on bert-mlm with its post-norm stream; axe and
// screenshots in both languages at desktop and phone widths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, open, settled, axe, ART } from './helpers.js';
import { HF, filesOf, typeSettled } from './open-helpers.js';

useBrowser();
const research = (name) => JSON.parse(readFileSync(join(HF, name, 'research.json'), 'utf8'));
const TEXT = { 'gpt2-lm': 'the cat sat on the mat', 'bert-mlm': 'The dogs played!' };

/** A safetensors file's tensors as { name: { shape, data: Float32Array } } and its metadata, read from its bytes. */
function safetensors(bytes) {
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  const out = {};
  for (const [name, v] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    assert.equal(v.dtype, 'F32', name);
    const [s, e] = v.data_offsets;
    const b = bytes.subarray(8 + n + s, 8 + n + e);
    out[name] = { shape: v.shape, data: new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)) };
  }
  return { tensors: out, metadata: header.__metadata__ };
}

/** The page on fixture `name` with its text, the export form open and exactly `kinds` ticked. */
async function withForm(name, kinds, { lang = 'en', locale = 'en-US' } = {}) {
  const session = await open(`#mode=open&lang=${lang}`, { locale });
  const { page } = session;
  await page.setInputFiles('#open-files', filesOf(name));
  await page.waitForSelector('#open-cache-btn', { state: 'visible', timeout: 20_000 });
  await typeSettled(page, TEXT[name]);
  await page.click('#open-cache-btn');
  await page.waitForSelector('#open-cache-hooks input', { timeout: 20_000 });
  for (const input of await page.$$('#open-cache-hooks input')) {
    const want = kinds.includes(await input.getAttribute('value'));
    if (want !== await input.isChecked()) await input.click();
  }
  await page.waitForSelector('#open-cache-plan[data-bytes]:not([data-bytes=""])', { timeout: 20_000 });
  await settled(page);
  return session;
}

for (const name of ['gpt2-lm', 'bert-mlm']) {
  test(`${name}: the cache's size is shown before export, and its hook_pattern and hook_resid_post are PyTorch's`, async () => {
    const ref = research(name);
    const T = ref.ids.length, L = ref.layers, d = ref.width, H = ref.attention.length / (L * T * T);
    const { page, problems, close } = await withForm(name, ['attn.hook_pattern', 'hook_resid_post']);
    const planned = Number(await page.getAttribute('#open-cache-plan', 'data-bytes'));
    // Every tensor's bytes and the header: two hooks per layer, F32.
    assert.ok(planned > 4 * L * (H * T * T + T * d), `${planned} bytes planned`);
    assert.match(await page.textContent('#open-cache-plan'), new RegExp(`${2 * L} tensors for ${T} tokens`));
    assert.match(await page.textContent('#open-cache-hooks'), /blocks\.\{l\}\.attn\.hook_pattern/);

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#open-cache-export')]);
    assert.equal(download.suggestedFilename(), `attnscope-${name.split('-')[0]}-cache.safetensors`);
    const bytes = readFileSync(await download.path());
    assert.equal(bytes.length, planned, 'the file is as large as the page said');
    const { tensors, metadata } = safetensors(bytes);
    const names = Array.from({ length: L }, (_, l) => [`blocks.${l}.attn.hook_pattern`, `blocks.${l}.hook_resid_post`]).flat();
    assert.deepEqual(Object.keys(tensors).sort(), names.sort());
    for (let l = 0; l < L; l++) {
      const p = tensors[`blocks.${l}.attn.hook_pattern`];
      assert.deepEqual(p.shape, [1, H, T, T]);
      p.data.forEach((x, i) => {
        const want = ref.attention[l * H * T * T + i];
        assert.ok(Math.abs(x - want) < 2e-5, `layer ${l} pattern ${i}: ${x}, PyTorch ${want}`);
      });
      const r = tensors[`blocks.${l}.hook_resid_post`];
      assert.deepEqual(r.shape, [1, T, d]);
      r.data.forEach((x, i) => {
        const want = ref.residual[(l + 1) * T * d + i];
        assert.ok(Math.abs(x - want) < 1e-4 * Math.max(1, Math.abs(want)), `layer ${l} resid_post ${i}: ${x}, PyTorch ${want}`);
      });
    }
    // The config, in the file's metadata and as the JSON link beside it.
    assert.deepEqual(JSON.parse(metadata.attnscope).tokens, ref.ids);
    await page.waitForSelector('#open-cache-links a[download$=".json"]');
    const [json] = await Promise.all([page.waitForEvent('download'), page.click('#open-cache-links a[download$=".json"]')]);
    const config = JSON.parse(readFileSync(await json.path(), 'utf8'));
    assert.equal(config.n_layers, L);
    assert.equal(config.n_heads, H);
    assert.equal(config.d_model, d);
    assert.equal(config.n_ctx, T);
    assert.deepEqual(config.tokens, ref.ids);
    assert.deepEqual(config.hooks, Object.keys(tensors));
    // The page writes its URL 150 ms after a change.
    await page.waitForFunction((s) => location.hash.includes(s), 'ocache=pattern%2Cresid_post', { timeout: 5000 });
    assert.deepEqual(problems, []);
    await close();
  });
}

test('with nothing ticked nothing can be exported; another kind changes the size before it runs', async () => {
  const { page, problems, close } = await withForm('gpt2-lm', ['attn.hook_pattern']);
  const one = Number(await page.getAttribute('#open-cache-plan', 'data-bytes'));
  await page.click('#open-cache-hooks input[value="attn.hook_q"]');
  await page.waitForFunction((b) => Number(document.querySelector('#open-cache-plan').dataset.bytes) > b, one, { timeout: 20_000 });
  await page.click('#open-cache-hooks input[value="attn.hook_q"]');
  await page.click('#open-cache-hooks input[value="attn.hook_pattern"]');
  await settled(page);
  assert.equal(await page.isDisabled('#open-cache-export'), true);
  assert.match(await page.textContent('#open-cache-plan'), /Tick at least one hook/);
  assert.deepEqual(problems, []);
  await close();
});

for (const [lang, locale, words] of [['en', 'en-US', /the attention weights/], ['zh', 'zh-CN', /注意力权重/]]) {
  test(`the cache export: axe clean, not wider than the screen, in words (${lang}, desktop and phone)`, async () => {
    const { page, close } = await withForm('gpt2-lm', ['attn.hook_pattern', 'hook_resid_post'], { lang, locale });
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#open-cache-export')]);
    await download.path();
    await page.waitForSelector('#open-cache-links a');
    assert.match(await page.textContent('#open-cache'), words);
    for (const [width, label] of [[1280, 'desktop'], [390, 'phone']]) {
      await page.setViewportSize({ width, height: 844 });
      await settled(page);
      assert.deepEqual(await axe(page, '#open-cache'), [], `${lang} ${label}`);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), `${lang} ${label}: wider than the screen`);
      await page.locator('#open-cache').screenshot({ path: join(ART, `research-cache-${lang}-${label}.png`) });
    }
    await close();
  });
}
