// The download budget of the default module: dist/attnscope.wasm, and its relaxed-SIMD twin attnscope-relaxed.wasm,
// which the same pages download instead, must each stay under the budget in scripts/lib.mjs (issue #12), the figure
// bench/run.mjs also reports against. Size is deterministic for a given toolchain, so unlike speed it is a test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { wasmBudgetBytes as budgetBytes } from '../../scripts/lib.mjs';

for (const file of ['attnscope.wasm', 'attnscope-relaxed.wasm']) {
  test(`dist/${file} is under ${budgetBytes.toLocaleString('en-US')} bytes`, () => {
    const { size } = statSync(fileURLToPath(new URL(`../../dist/${file}`, import.meta.url)));
    assert.ok(size < budgetBytes, `dist/${file} is ${size.toLocaleString('en-US')} bytes, over the budget of ` +
      `${budgetBytes.toLocaleString('en-US')}: build with -DCMAKE_EXE_LINKER_FLAGS=--profiling-funcs to see which functions grew`);
  });
}
