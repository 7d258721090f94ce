// What the demo benches share about typing: the page-side observers of interactions (Event Timing), long animation
// frames and keydowns, the keys typed at 10 a second, and INP with the entries Chromium does not report.

const KEY_INTERVAL_MS = 100; // 10 keys a second

/** The q-quantile of xs (nearest rank); NaN for none. */
export const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : NaN;
};

/**
 * Runs in the page, before its own scripts: collects from the start every Event Timing entry of an interaction, every
 * long animation frame and every keydown into `window.__bench` (`noLoaf` where the browser has no LoAF).
 */
export function observeTyping() {
  const perf = (window.__bench = { events: [], loafs: [], keydowns: [] });
  new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.interactionId) perf.events.push({ id: e.interactionId, name: e.name, start: e.startTime, duration: e.duration, delay: e.processingStart - e.startTime, processing: e.processingEnd - e.processingStart }); })
    .observe({ type: 'event', durationThreshold: 16, buffered: true });
  try {
    new PerformanceObserver((l) => { for (const e of l.getEntries()) perf.loafs.push({ start: e.startTime, duration: e.duration, blocking: e.blockingDuration,
      render: e.renderStart ? e.startTime + e.duration - e.renderStart : 0, layout: e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0,
      scripts: e.scripts.map((x) => `${x.invoker} ${x.duration.toFixed(0)}ms (${x.sourceFunctionName || '?'}@${x.sourceCharPosition})`) }); })
      .observe({ type: 'long-animation-frame', buffered: true });
  } catch { perf.noLoaf = true; }
  addEventListener('keydown', (e) => perf.keydowns.push(e.timeStamp), true);
}

/** An init script for page.addInitScript that runs `observeTyping` and then each of `more`, all in the page. */
export const initScript = (...more) => ({ content: [observeTyping, ...more].map((f) => `(${f})();`).join('\n') });

/**
 * Clears what the page has collected so far, then presses `n` keys at 10 a second into the focused field (`key(k)`
 * names the k-th). Returns the page's clock when it started, from which the caller reads its entries.
 */
export async function typeKeys(page, n, key) {
  const t0 = await page.evaluate(() => { const b = window.__bench; b.events.length = 0; b.loafs.length = 0; b.keydowns.length = 0; return performance.now(); });
  const start = Date.now();
  for (let k = 0; k < n; k++) {
    const wait = start + k * KEY_INTERVAL_MS - Date.now();
    if (wait > 0) await new Promise((ok) => setTimeout(ok, wait));
    // Not awaited in lockstep with the page: keys keep coming at 10 a second even if the page lags.
    await page.keyboard.press(key(k));
  }
  return t0;
}

/** One INP sample per key: the reported interactions, and 16 ms (an upper bound) for each key Chromium did not report. */
export const inpPerKey = (interactions, keys) => [...interactions, ...Array(Math.max(0, keys - interactions.length)).fill(16)];
