// Tests of scripts/serve.mjs, the static server the demo and the browser tests use (no browser needed).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { startServer } from '../../scripts/serve.mjs';

let dir, outside, server, url;

before(async () => {
  outside = mkdtempSync(join(tmpdir(), 'attnscope-secret-'));
  writeFileSync(join(outside, 'secret.txt'), 'secret');
  dir = mkdtempSync(join(tmpdir(), 'attnscope-site-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
  const files = { 'a.js': 'export {}', 'a.mjs': 'export {}', 'a.css': 'body{}', 'a.wasm': '\0asm', 'a.svg': '<svg/>', 'a.png': 'png', 'a.json': '{}' };
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, 'assets', name), body);
  symlinkSync(join(outside, 'secret.txt'), join(dir, 'link.txt'));
  // Dotfiles a site folder may pick up (a checkout, an editor, a deploy tool): none of them is ever served.
  mkdirSync(join(dir, '.git'));
  writeFileSync(join(dir, '.git', 'config'), 'secret');
  writeFileSync(join(dir, '.env'), 'secret');
  writeFileSync(join(dir, 'assets', '.hidden'), 'secret');
  ({ server, url } = await startServer(dir, 0));
});

after(async () => {
  await new Promise((ok) => server.close(ok));
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

/** A raw GET, so paths like /../ reach the server unnormalised. */
function get(path, method = 'GET', from = url) {
  const { port } = new URL(from);
  return new Promise((ok, fail) => {
    const req = request({ host: '127.0.0.1', port, path, method }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => ok({ status: res.statusCode, type: res.headers['content-type'], location: res.headers.location, headers: res.headers, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

test('listens on 127.0.0.1 with a free port when asked for port 0', () => {
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  assert.notEqual(new URL(url).port, '0');
});

test('serves index.html for / and the right MIME types', async () => {
  const root = await get('/');
  assert.equal(root.status, 200);
  assert.equal(root.type, 'text/html; charset=utf-8');
  const want = { 'a.js': 'text/javascript', 'a.mjs': 'text/javascript', 'a.css': 'text/css', 'a.wasm': 'application/wasm', 'a.svg': 'image/svg+xml', 'a.png': 'image/png', 'a.json': 'application/json' };
  for (const [name, type] of Object.entries(want)) {
    const r = await get(`/assets/${name}`);
    assert.equal(r.status, 200, name);
    assert.equal(r.type.split(';')[0], type, name);
  }
  assert.equal((await get('/assets')).status, 301);
  assert.equal((await get('/assets?x=1')).location, '/assets/?x=1');
  assert.equal((await get('/missing.js')).status, 404);
  assert.equal((await get('/', 'POST')).status, 405);
  const head = await get('/assets/a.css', 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
});

test('never serves anything outside the folder', async () => {
  for (const path of ['/../../etc/passwd', '/..%2f..%2fetc%2fpasswd', '/%2e%2e/%2e%2e/etc/passwd', '/assets/..%2f..%2f..%2fetc%2fpasswd', '/link.txt', '/%00']) {
    const r = await get(path);
    assert.ok([400, 403, 404].includes(r.status), `${path} gave ${r.status}`);
    assert.ok(!r.body.includes('root:') && !r.body.includes('secret'), path);
  }
});

test('sends the cross-origin isolation headers the threaded build needs, unless told not to', async () => {
  for (const path of ['/', '/assets/a.wasm', '/assets/a.js']) {
    const { headers } = await get(path);
    assert.equal(headers['cross-origin-opener-policy'], 'same-origin', path);
    assert.equal(headers['cross-origin-embedder-policy'], 'require-corp', path);
  }
  const plain = await startServer(dir, 0, { isolated: false });
  try {
    const { status, headers } = await get('/', 'GET', plain.url);
    assert.equal(status, 200);
    assert.equal(headers['cross-origin-opener-policy'], undefined);
    assert.equal(headers['cross-origin-embedder-policy'], undefined);
  } finally {
    await new Promise((ok) => plain.server.close(ok));
  }
});

// Issue #24: "/%2fevil.example%2f.." once answered 301 with Location "//evil.example/../", which a browser reads as
// another host. Every redirect must stay on this origin, however the path smuggles slashes, backslashes or dots in.
test('never redirects to another origin', async () => {
  const tricks = ['/%2fevil.example%2f..', '/%2f%2fevil.example%2f..', '/%2F%2Fevil.example%2F..%2Fassets', '/assets/%2f%2fevil.example%2f..%2f..%2fassets',
    '/%5cevil.example%2f..', '/%5c%5cevil.example%2f..%2fassets', '//evil.example/..', '///evil.example/%2e%2e', '/%2fevil.example%2f..?x=1'];
  for (const path of tricks) {
    const r = await get(path);
    assert.ok([200, 301, 400, 404].includes(r.status), `${path} gave ${r.status}`);
    if (r.status !== 301) continue;
    assert.match(r.location, /^\/(?![/\\])/, `${path} redirected to ${r.location}`);
    const target = new URL(r.location, url);
    assert.equal(target.origin, new URL(url).origin, `${path} redirected to ${r.location}`);
  }
  // The cases that do redirect go to the folder the path resolves to.
  assert.equal((await get('/%2fevil.example%2f..')).location, '/');
  assert.equal((await get('/%2F%2Fevil.example%2F..%2Fassets')).location, '/assets/');
  assert.equal((await get('/%2fevil.example%2f..?x=1')).location, '/?x=1');
});

test('never serves dotfiles or dot-folders, however the path is spelled', async () => {
  for (const path of ['/.env', '/%2eenv', '/.git/config', '/.git/', '/%2egit%2fconfig', '/assets/.hidden', '/assets/%2ehidden', '/assets/..%2f.env', '/assets/%2e%2e/.env', '/x/..%2f.git%2fconfig']) {
    const r = await get(path);
    assert.equal(r.status, 404, `${path} gave ${r.status}`);
    assert.ok(!r.body.includes('secret'), path);
  }
});

test('resolves a path before checking it: the same file however the path gets there', async () => {
  for (const path of ['/assets/a.css', '/assets/../assets/a.css', '/assets/..%2fassets%2fa.css', '//assets//a.css', '/%2fassets/./a.css', '/x/%2e%2e/assets/a.css']) {
    const r = await get(path);
    assert.equal(r.status, 200, `${path} gave ${r.status}`);
    assert.equal(r.body, 'body{}', path);
  }
});
