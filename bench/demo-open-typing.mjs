// `node bench/demo.mjs --open=DIR --typing`: typing into the "Open a model" tab while the opened model computes
// (issue #22: INP p95 ≤ 50 ms and no frame over 50 ms while a 124M-parameter model computes at 128 tokens), in
// headless Chromium. Opens the checkpoint in DIR through the file input as a user would, puts T token ids into the
// tab's text field (one input event: the Worker starts a T-token forward pass), then types keys into that field at
// 10 a second while the Worker computes. The keys edit the last id (a digit, then Backspace, in turn), so every key
// asks for another T-token forward pass and the Worker stays busy throughout.
//
// Per run:
//   - INP: for every keystroke, the longest Event Timing entry of its interaction; Chromium reports only entries of
//     ≥ 16 ms, so a keystroke without one counts as 16 ms (an upper bound).
//   - long animation frames (> 50 ms) from the first key until the page has drawn the last key's forward pass; the
//     longest one, with its scripts (BENCH_VERBOSE=1 prints them).
//   - how many keys came while a forward pass was in the Worker (from the page's own messages to it), and how many
//     forward results the page drew while keys were coming.
//   - then, once every view has drawn, up to 6 keys one at a time, each after the view drew the one before: the wall
//     time from the key to every view drawn (the forward pass, the maps, the step-by-step panel): what a reader waits on.
import { join } from 'node:path';
import { initScript, inpPerKey, quantile, typeKeys } from './demo-typing.mjs';

/** Runs in the page after observeTyping: the forward requests to the page's model Worker. */
function instrument() {
  const perf = window.__bench;
  perf.forwards = [];
  // The page's model Worker, watched from outside: when each forward request left and its reply came back (a null
  // value: the Worker skipped it for a newer one). Listening adds nothing to the page's own handler.
  const Base = window.Worker;
  window.Worker = class extends Base {
    constructor(...args) {
      super(...args);
      const post = this.postMessage.bind(this);
      const byId = new Map();
      this.postMessage = (m, transfer) => {
        if (m?.type === 'forward') { const f = { id: m.id, text: m.text, sent: performance.now(), replied: 0, skipped: false, failed: false, ms: 0 }; byId.set(m.id, f); perf.forwards.push(f); }
        return post(m, transfer);
      };
      this.addEventListener('message', ({ data }) => {
        const f = data?.type === 'reply' && byId.get(data.id);
        if (f) Object.assign(f, { replied: performance.now(), skipped: data.value === null, failed: !!data.error, ms: data.value?.ms ?? 0 });
      });
    }
  };
}

/** Types `keys` keys at 10 a second into the focused field (`key(k)` names the k-th), then waits for `settled`. */
async function typeAndMeasure(page, keys, key, settled) {
  const t0 = await typeKeys(page, keys, key);
  const lastKey = await page.evaluate(() => performance.now());
  await page.waitForFunction(settled, null, { timeout: 600_000, polling: 200 });
  await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 100))));
  const r = await page.evaluate(({ t0, lastKey }) => {
    const b = window.__bench;
    const byId = new Map();
    for (const e of b.events) if (e.start >= t0 && e.duration > (byId.get(e.id)?.duration ?? 0)) byId.set(e.id, e);
    const busyAt = (t) => b.forwards.some((f) => f.sent <= t && (!f.replied || f.replied > t));
    const loafs = b.loafs.filter((x) => x.start + x.duration >= t0);
    const computed = b.forwards.filter((f) => !f.skipped && !f.failed && f.replied >= t0);
    return {
      interactions: [...byId.values()].map((e) => e.duration),
      worstKey: [...byId.values()].sort((x, y) => y.duration - x.duration)[0] ?? null,
      keys: b.keydowns.length,
      keysBusy: b.keydowns.filter(busyAt).length,
      drawnWhileTyping: computed.filter((f) => f.replied <= lastKey).length,
      forwardMs: computed.map((f) => f.ms),
      loafsTyping: loafs.filter((x) => x.start <= lastKey).map((x) => x.duration),
      loafs: loafs.map((x) => x.duration),
      long: loafs.filter((x) => x.duration > 50).sort((x, y) => y.duration - x.duration),
      noLoaf: !!b.noLoaf,
      settledMs: performance.now() - lastKey,
    };
  }, { t0, lastKey });
  return { ...r, inp: inpPerKey(r.interactions, r.keys) };
}

async function runOnce(browser, url, dir, T, keys) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  const page = await context.newPage();
  await page.addInitScript(initScript(instrument));
  await page.goto(`${url}#mode=open&lang=en`);
  await page.waitForSelector('body.ready', { timeout: 30_000 });
  await page.setInputFiles('#open-files', [join(dir, 'config.json'), join(dir, 'model.safetensors')]);
  await page.waitForSelector('#open-text-row:not([hidden])', { timeout: 600_000 });
  // T random ids below GPT-2's vocabulary; the last one is 12, so a typed digit keeps it a valid id (123 and so on).
  let seed = 7;
  const ids = Array.from({ length: T }, () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % 50257; });
  ids[T - 1] = 12;
  const text = ids.join(' ');
  await page.focus('#open-text');
  await page.evaluate((text) => {
    const el = document.querySelector('#open-text');
    el.value = text;
    el.setSelectionRange(text.length, text.length);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, text);
  // The T-token forward pass is on its way to the Worker: type meanwhile.
  await page.waitForFunction((text) => window.__bench.forwards.some((f) => f.text === text), text, { timeout: 10_000 });
  const busy = await typeAndMeasure(page, keys, (k) => (k % 2 ? 'Backspace' : String(3 + ((k >> 1) % 7))), () => {
    // Settled: the forward pass of the field's final text has come back, and every view has drawn it.
    const f = window.__bench.forwards.at(-1);
    return f.replied && !f.skipped && f.text === document.querySelector('#open-text').value && window.__attnscopeDemo?.idle;
  });
  busy.T = Number((await page.textContent('#open-model-text')).match(/^(\d+)/)?.[1]);
  // One key at a time, each once the view has drawn the one before: what a reader waits on between keys at T tokens
  // (the forward pass through the typing cache, the maps, the step-by-step panel's trace), wall time to the last view.
  const perKey = [], perKeyMs = [];
  for (let k = 0; k < Math.min(keys, 6); k++) {
    const start = Date.now();
    await page.keyboard.press(k % 2 ? 'Backspace' : String(3 + ((k >> 1) % 7)));
    await page.waitForFunction(() => {
      const f = window.__bench.forwards.at(-1);
      return f.replied && !f.skipped && f.text === document.querySelector('#open-text').value && window.__attnscopeDemo?.idle;
    }, null, { timeout: 600_000, polling: 'raf' });
    const f = await page.evaluate(() => { const f = window.__bench.forwards.at(-1); return { ms: f.ms, reply: f.replied - f.sent, after: performance.now() - f.replied }; });
    perKeyMs.push(Date.now() - start);
    perKey.push(`${perKeyMs.at(-1)} (forward ${f.ms.toFixed(0)}, reply ${f.reply.toFixed(0)}, then ${f.after.toFixed(0)})`);
  }
  Object.assign(busy, { perKey, perKeyMs });
  // The control, on the same page a moment later: the same keys into a field that computes nothing (the Patching
  // tab's clean prompt, read only when its form is sent), with the Worker idle.
  await page.focus('#open-patch-clean');
  await page.waitForTimeout(300);
  const idle = await typeAndMeasure(page, keys, (k) => (k % 2 ? 'Backspace' : String(3 + ((k >> 1) % 7))), () => window.__attnscopeDemo?.idle);
  await context.close();
  return { busy, idle };
}

/** The one-key-at-a-time column: the busy phase's key-to-drawn times, p50 (max); the control has none. */
const perKeyCell = (rs) => { const ms = rs.flatMap((r) => r.perKeyMs ?? []); return ms.length ? `${quantile(ms, 0.5).toFixed(0)} ms (${Math.max(...ms)} ms)` : '–'; };
const f16 = (x) => (x <= 16 ? '≤ 16 ms' : `${x.toFixed(0)} ms`);
const frames = (xs) => { const long = xs.filter((x) => x > 50); return `${long.length} (${long.length ? `${Math.max(...long).toFixed(0)} ms` : '–'})`; };

/** One line per phase of a run, for the log. */
function describe(name, r) {
  const parts = [`${name}: INP p50/p95/max ${f16(quantile(r.inp, 0.5))}/${f16(quantile(r.inp, 0.95))}/${f16(Math.max(...r.inp))}`,
    `${r.keysBusy} of ${r.keys} keys while the Worker computed`, `${r.drawnWhileTyping} results drawn while typing`];
  if (r.forwardMs.length) parts.push(`forward passes ${r.forwardMs.map((x) => x.toFixed(0)).join(', ')} ms`);
  parts.push(`frames > 50 ms while typing ${frames(r.loafsTyping)}, until settled ${frames(r.loafs)}`, `settled ${r.settledMs.toFixed(0)} ms after the last key`);
  return parts.join('; ');
}

/** Runs `runs` times (per site: this build, and `base` when given, taking turns) and prints a Markdown table. */
export async function benchOpenTyping({ browser, sites, dir, runs, tokens, keys, progress }) {
  for (const site of sites) site.all = [];
  for (let k = 0; k < runs; k++) {
    for (const site of sites) {
      const r = await runOnce(browser, site.url, dir, tokens, keys);
      const tag = `typing${site.label ? ` [${site.label}]` : ''} run ${k + 1}`;
      progress(`${tag}, ${r.busy.T} tokens, ${describe('Worker computing', r.busy)}`);
      progress(`${tag}, ${describe('control, Worker idle', r.idle)}`);
      progress(`${tag}, one key at a time once drawn: ${r.busy.perKey.join(', ')} ms from the key to every view drawn`);
      if (process.env.BENCH_VERBOSE) {
        for (const [phase, x] of Object.entries(r)) {
          progress(`  ${phase}: slowest key ${JSON.stringify(x.worstKey)}`);
          for (const l of x.long.slice(0, 4)) progress(`  ${phase}: long frame ${JSON.stringify(l)}`);
        }
      }
      site.all.push(r);
    }
  }
  const out = (s = '') => process.stdout.write(s + '\n');
  out();
  out(`Typing into an opened model while it computes: ${dir}, ${tokens} token ids, ${keys} keys at 10 a second, ${runs} runs${sites.length > 1 ? ' per build, taking turns' : ''} (\`node bench/demo.mjs --open=${dir} --typing --runs=${runs}${sites.length > 1 ? ' --base=…' : ''}\`).`);
  out('The control types the same keys into a field that computes nothing, on the same page with the Worker idle.');
  out('INP ≤ 16 means Chromium reported no entry (it reports ≥ 16 ms only). Targets: INP p95 ≤ 50 ms, no animation frame > 50 ms.');
  out();
  out(`| ${sites.length > 1 ? 'build | ' : ''}typing | keys while the Worker computed | INP p50 | INP p95 | INP max | frames > 50 ms while typing (max) | frames > 50 ms until drawn (max) | forward pass in the Worker, p50 | a key at a time once drawn: p50 (max) |`);
  out(`|${sites.length > 1 ? '---|' : ''}---|---|---|---|---|---|---|---|---|`);
  for (const { label, all } of sites) {
    for (const [phase, name] of [['busy', `into the model's text, ${tokens} tokens`], ['idle', 'control: Worker idle']]) {
      const rs = all.map((r) => r[phase]);
      const inp = rs.flatMap((r) => r.inp);
      const fw = rs.flatMap((r) => r.forwardMs);
      out(`| ${sites.length > 1 ? `${label} | ` : ''}${name} | ${rs.reduce((s, r) => s + r.keysBusy, 0)} of ${rs.reduce((s, r) => s + r.keys, 0)} | ${f16(quantile(inp, 0.5))} | ${f16(quantile(inp, 0.95))} | ${f16(Math.max(...inp))} | ${rs[0].noLoaf ? 'n/a' : frames(rs.flatMap((r) => r.loafsTyping))} | ${rs[0].noLoaf ? 'n/a' : frames(rs.flatMap((r) => r.loafs))} | ${fw.length ? `${quantile(fw, 0.5).toFixed(0)} ms` : '–'} | ${perKeyCell(rs)} |`);
    }
  }
}
