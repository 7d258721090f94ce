// The docs: npm run docs turns the declarations' TSDoc into the API reference (build/docs), with warnings as errors
// (typedoc.json), so a broken {@link} or an undocumented export fails here rather than on the published page; and
// every comment that cites docs/toolchain.md names one of its headings, and every relative Markdown link resolves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('npm run docs writes the API reference of attnscope and attnscope/figures from the TSDoc', { timeout: 120_000 }, () => {
  execFileSync(process.execPath, ['node_modules/typedoc/bin/typedoc', '--options', 'typedoc.json', '--logLevel', 'Warn'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const page = readFileSync(new URL('../../build/docs/classes/attnscope.MultiHeadAttention.html', import.meta.url), 'utf8');
  assert.match(page, /Multi-head attention with learned projections/);
  assert.match(page, /needWeights/);
  const figures = readFileSync(new URL('../../build/docs/functions/attnscope_figures.heatmapSvg.html', import.meta.url), 'utf8');
  assert.match(figures, /A heat map of one attention map/);
});

test('every citation of docs/toolchain.md names a heading it has', () => {
  const headings = new Set(readFileSync(new URL('../../docs/toolchain.md', import.meta.url), 'utf8')
    .split('\n').filter((line) => /^#{2,} /.test(line)).map((line) => line.replace(/^#+ /, '')));
  const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n')
    .filter((f) => /\.(js|mjs|cjs|ts|cpp|hpp|h|py|txt|cmake|md)$|CMakeLists\.txt$/.test(f) && f !== 'docs/toolchain.md');
  const citations = [];
  for (const file of tracked) {
    const text = readFileSync(`${root}/${file}`, 'utf8');
    // The file name, a comma, then the heading in double quotes, possibly on the next comment line.
    for (const [, heading] of text.matchAll(/docs\/toolchain\.md,(?:\s|#|\/\/|\*)*"([^"]+)"/g)) citations.push({ file, heading });
    // The notes this file replaced are not in the repository: a citation of them, or of one of their numbers, is stale.
    assert.doesNotMatch(text, /TOOLCHAIN\.md|\bpitfalls? \d/, `${file} cites notes that are not in the repository`);
  }
  assert.ok(citations.length >= 10, `found ${citations.length} citations`);
  for (const { file, heading } of citations) assert.ok(headings.has(heading), `${file} cites "${heading}", which docs/toolchain.md has no heading for`);
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');

test('every relative link of the repository\'s Markdown names a file that exists, and a heading of it', () => {
  const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
  const markdown = tracked.filter((f) => f.endsWith('.md'));
  const anchorsOf = (file) => new Set(readFileSync(`${root}/${file}`, 'utf8').replace(/```[\s\S]*?```/g, '')
    .split('\n').filter((line) => /^#{1,6} /.test(line)).map((line) => slug(line.replace(/^#+ /, '').replace(/`/g, ''))));
  let links = 0;
  for (const file of markdown) {
    const text = readFileSync(`${root}/${file}`, 'utf8').replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:)/.test(target)) continue;
      links += 1;
      const [pathPart, anchor] = target.split('#');
      const resolved = pathPart ? new URL(pathPart, `file:///${file}`).pathname.slice(1) : file;
      assert.ok(tracked.some((f) => f === resolved || f.startsWith(`${resolved.replace(/\/$/, '')}/`)), `${file}: ${target}: no such file`);
      if (anchor !== undefined) assert.ok(anchorsOf(resolved).has(anchor), `${file}: ${target}: ${resolved} has no heading #${anchor}`);
    }
  }
  assert.ok(links >= 10, `found ${links} relative links`);
});
