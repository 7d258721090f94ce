// ARCHITECTURE.md's layout tables against the tree: every file they name exists (nothing stale), and every source
// file of the library, the binding, the package, the demo, the scripts and the JS tests is named in them, so a newcomer finds any concept's home.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);

/** The rows of the tables under "## Layout" as [path cell, description cell]. */
function layoutRows() {
  const architecture = readFileSync(new URL('../../ARCHITECTURE.md', import.meta.url), 'utf8');
  const start = architecture.indexOf('\n## Layout\n');
  assert.ok(start >= 0, 'ARCHITECTURE.md has a "## Layout" section');
  const end = architecture.indexOf('\n## ', start + 1);
  const section = architecture.slice(start, end < 0 ? undefined : end);
  return section.split('\n').filter((line) => line.startsWith('| `')).map((line) => line.split(' | '));
}

// A backticked name that looks like a file or folder: `x.cpp`, `attend.*`, `views/*.js`, `peers/`.
const fileLike = /^[\w./*-]+(\.(hpp|cpp|h|js|mjs|d\.ts|ts|py|md|json|txt|html|safetensors|\*)|\/)$/;

test('the ARCHITECTURE.md layout tables name only files and folders that exist', () => {
  const rows = layoutRows();
  assert.ok(rows.length >= 15, `found ${rows.length} rows`);
  for (const [pathCell, what] of rows) {
    const bases = [...pathCell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    for (const base of bases) assert.ok(tracked.some((f) => f === base || f.startsWith(base.endsWith('/') ? base : `${base}/`)), `${base} exists`);
    for (const [, name] of what.matchAll(/`([^`]+)`/g)) {
      if (!fileLike.test(name) || name.startsWith('build/') || name.startsWith('dist/')) continue;
      // A file name matches the end of a tracked path, a folder name a whole path segment; `*` is any name part.
      const escaped = name.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]+');
      const pattern = new RegExp(`(^|/)${escaped}${name.endsWith('/') ? '' : '$'}`);
      assert.ok(tracked.some((f) => pattern.test(f)), `${name} (row ${bases.join(', ')}) exists in the tree`);
    }
  }
});

test('every source file of cpp/, web/src/, web/demo/src/, scripts/ and tests/js/ is named in the ARCHITECTURE.md layout tables', () => {
  const text = layoutRows().map((row) => row.join(' | ')).join('\n');
  const named = (file) => {
    const base = file.split('/').pop();
    const stem = base.replace(/(\.test)?\.(d\.ts|[^.]+)$/, '');
    // `name` alone or as the end of a path (`views/name.js`), never as the tail of a longer name (`random.js` is not
    // `dom.js`).
    const asName = (n) => new RegExp(`[\`/]${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\``).test(text);
    const folderGlob = `${file.split('/').slice(-2, -1)[0]}/*${base.slice(base.indexOf('.'))}`; // `views/*.js`
    return asName(base) || asName(`${stem}.*`) || asName(stem) || asName(folderGlob); // a whole path ends in `/base`
  };
  const sources = tracked.filter((f) => /^(cpp\/|web\/src\/|web\/demo\/src\/|scripts\/|tests\/js\/)/.test(f));
  assert.ok(sources.length > 40, `${sources.length} source files`);
  const missing = sources.filter((f) => !named(f));
  assert.deepEqual(missing, [], 'files the tables do not name');
});
