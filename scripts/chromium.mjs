// Which Chromium the tests and the benchmarks launch through playwright-core, and the flags every launch passes.
// playwright-core never downloads a browser: this is Debian's program (package chromium); CHROMIUM_PATH overrides it.
// (The tests ran once on Debian's chromium-headless-shell, faster but with two pages that stopped: docs/toolchain.md.)
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
// Without the networking flags Chromium keeps dialling out into a network that is closed here (docs/toolchain.md,
// "Headless Chromium").
export const CHROMIUM_ARGS = ['--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--no-first-run', '--disable-quic'];
