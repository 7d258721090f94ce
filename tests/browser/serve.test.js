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
