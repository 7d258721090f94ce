// The registry of families (cpp/src/families/registry.cpp) is the only list of families: what the core reads, what
// docs/huggingface.md's table lists, and what the page says come from it or are checked against it here; and a
// family's knowledge stays in its own files (issue 30: `git grep -l -w -i <model_type>` names at most 3 files).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { init, supportedFamilies } from 'attnscope';

const root = new URL('../../', import.meta.url);
before(() => init());

test('supportedFamilies() is the registry: each model_type once, each with its name, in the registry\'s order', () => {
  const families = supportedFamilies();
  const registry = readFileSync(new URL('cpp/src/families/registry.cpp', root), 'utf8');
  const listed = [...registry.match(/checkpoints\[\] = \{([^}]*)\}/)[1].matchAll(/&(\w+)_family/g)].map((m) => m[1]);
  assert.deepEqual(families.map((f) => f.modelType), listed);
  assert.equal(new Set(listed).size, listed.length);
  for (const { modelType, label } of families) {
    assert.match(modelType, /^[a-z0-9_]+$/);
    assert.ok(label.length > 0, modelType);
  }
});

test("docs/huggingface.md's table has a row for every family, and no other", () => {
  const docs = readFileSync(new URL('docs/huggingface.md', root), 'utf8');
  const rows = [...docs.matchAll(/^\| `([a-z0-9_]+)` \|/gm)].map((m) => m[1]).filter((name) => name !== 'model_type'); // its header row
  assert.deepEqual([...rows].sort(), supportedFamilies().map((f) => f.modelType).sort());
});

test('a family is known in at most 3 files of cpp/, web/src/ and web/demo/src/', (t) => {
  try {
    execFileSync('git', ['rev-parse', '--git-dir'], { cwd: root, stdio: 'ignore' });
  } catch {
    t.skip('not a git checkout');
    return;
  }
  const files = (type) => execFileSync('git', ['grep', '-l', '-w', '-i', type, '--', 'cpp', 'web/src', 'web/demo/src'], { cwd: root, encoding: 'utf8' })
    .split('\n').filter(Boolean);
  for (const { modelType } of supportedFamilies()) {
    let found = [];
    try {
      found = files(modelType);
    } catch (error) {
      if (error.status !== 1) throw error; // 1: no match at all
    }
    assert.ok(found.length <= 3, `${modelType} is named in ${found.length} files: ${found.join(', ')}`);
  }
});
