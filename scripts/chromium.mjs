// Which Chromium the tests and the benchmarks launch through playwright-core, and the flags every launch passes.
// playwright-core never downloads a browser: these are Debian's programs. CHROMIUM_PATH overrides both.
//
// The tests launch chromium-headless-shell (Debian's package of that name): Chromium's headless mode as a program of
// its own, the same Blink, V8 and Skia without the browser's window and UI layers. The browser suite's 177 tests took
// 729 s of wall time and 1,332 CPU-seconds with it, against 901 s and 1,699 CPU-s with /usr/bin/chromium (2 cores,
// files two at a time), and `npm test` is CPU-bound. The benchmarks launch /usr/bin/chromium, the browser people run.
export const TEST_CHROMIUM = process.env.CHROMIUM_PATH || '/usr/lib/chromium/chromium-headless-shell';
export const BENCH_CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
// Without the networking flags Chromium keeps dialling out into a network that is closed here (docs/toolchain.md,
// "Headless Chromium").
export const CHROMIUM_ARGS = ['--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--no-first-run', '--disable-quic'];
