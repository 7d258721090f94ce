// What each command (`npm start`, `npm test`, `npm run fuzz`) needs from the system, how each tool is found, and Debian 12's
// package for it. scripts/setup.mjs checks and installs from this list; the README's table is checked against it.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { CHROMIUM } from './chromium.mjs';
import { emscriptenToolchain } from './lib.mjs';

export const onPath = (program) => (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && existsSync(path.join(dir, program)));
// The prefixes the build searches for header-only dependencies (CMakeLists.txt: find_package natively, and
// ATTNSCOPE_HOST_PREFIX_PATH for WASM builds).
const header = (file) => ['/usr/local/include', '/usr/include'].some((dir) => existsSync(path.join(dir, file)));
const anyFile = (dir, pattern) => existsSync(dir) && readdirSync(dir, { recursive: true }).some((f) => pattern.test(String(f)));

export const requirements = [
  { tool: 'Emscripten 3.1 (em++ and its CMake toolchain file)', debian: 'emscripten', where: 'em++ on PATH, with cmake/Modules/Platform/Emscripten.cmake in its folder',
    found: () => onPath('em++') && emscriptenToolchain() !== null, commands: ['start', 'test'] },
  { tool: 'xsimd 8 headers', debian: 'libxsimd-dev', where: 'xsimd/xsimd.hpp in /usr/local/include or /usr/include', found: () => header('xsimd/xsimd.hpp'), commands: ['start', 'test', 'fuzz'] },
  { tool: 'CMake ≥ 3.21', debian: 'cmake', where: 'cmake on PATH', found: () => onPath('cmake'), commands: ['start', 'test', 'fuzz'] },
  { tool: 'Ninja', debian: 'ninja-build', where: 'ninja on PATH', found: () => onPath('ninja'), commands: ['start', 'test', 'fuzz'] },
  { tool: 'a C++17 compiler (native tests)', debian: 'g++', where: 'g++ on PATH', found: () => onPath('g++'), commands: ['test'] },
  { tool: 'Catch2 2.x headers (C++ tests)', debian: 'catch2', where: 'catch2/catch.hpp in /usr/local/include or /usr/include', found: () => header('catch2/catch.hpp'), commands: ['test'] },
  { tool: 'nlohmann/json headers (C++ tests)', debian: 'nlohmann-json3-dev', where: 'nlohmann/json.hpp in /usr/local/include or /usr/include', found: () => header('nlohmann/json.hpp'), commands: ['test'] },
  { tool: 'clang 14 (the fuzzer)', debian: 'clang-14', where: 'clang++-14 on PATH', found: () => onPath('clang++-14'), commands: ['fuzz'] },
  { tool: "clang 14's libFuzzer and sanitizer runtimes", debian: 'libclang-rt-14-dev', where: '/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a',
    found: () => anyFile('/usr/lib/llvm-14/lib/clang', /libclang_rt\.fuzzer-[^/]*\.a$/), commands: ['fuzz'] },
  { tool: 'g++ -m32 with ASan + UBSan (the asan suite, 32-bit; lib32asan8 and lib32ubsan1 come with it)', debian: 'g++-multilib',
    where: '/usr/lib/gcc/x86_64-linux-gnu/12/32/libasan.so', found: () => existsSync('/usr/lib/gcc/x86_64-linux-gnu/12/32/libasan.so'), commands: ['test'] },
  { tool: "NumPy for Debian's /usr/bin/python3 (the python suite)", debian: 'python3-numpy', where: '/usr/lib/python3/dist-packages/numpy/__init__.py',
    found: () => existsSync('/usr/lib/python3/dist-packages/numpy/__init__.py'), commands: ['test'] },
  // Without a CJK font headless Chromium draws every Chinese character as an empty box, so the zh screenshots the
  // browser tests write would show nothing to judge.
  { tool: 'a Chinese font (the browser tests\' zh screenshots)', debian: 'fonts-wqy-microhei', where: '/usr/share/fonts/truetype/wqy/wqy-microhei.ttc',
    found: () => existsSync('/usr/share/fonts/truetype/wqy/wqy-microhei.ttc'), commands: ['test'] },
  { tool: 'Chromium (browser and bundler tests)', debian: 'chromium', where: process.env.CHROMIUM_PATH || `${CHROMIUM} (or $CHROMIUM_PATH)`,
    found: () => existsSync(CHROMIUM), commands: ['test'] },
];

