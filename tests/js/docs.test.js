// npm run docs: TypeDoc turns the declarations' TSDoc into the API reference (build/docs), with warnings as errors
// (typedoc.json), so a broken {@link} or an undocumented export fails here rather than on the published page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('npm run docs writes the API reference from the TSDoc', { timeout: 120_000 }, () => {
  execFileSync(process.execPath, ['node_modules/typedoc/bin/typedoc', '--options', 'typedoc.json', '--logLevel', 'Warn'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const page = readFileSync(new URL('../../build/docs/classes/MultiHeadAttention.html', import.meta.url), 'utf8');
  assert.match(page, /Multi-head attention with learned projections/);
  assert.match(page, /needWeights/);
});
