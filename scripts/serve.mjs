#!/usr/bin/env node
// Dependency-free static file server for the built demo: `node scripts/serve.mjs build/site`.
// Port from $PORT (default 8080; 0 picks a free one), bound to 127.0.0.1 only. Every response carries the
// cross-origin isolation headers (COOP same-origin + COEP require-corp), so the page gets SharedArrayBuffer and
// attnscope can run its threaded build; any host needs the same two headers for that.
//
// Why not `vite preview` with the same two headers (Vite 8.3, tried on the built demo): it gets the MIME types, the
// headers and the service worker right, but it serves dotfiles (/.env, /.git/config, also as /%2eenv) and has no
// option to refuse them; by default it answers a missing file (even /missing.js) with index.html and status 200,
// which would let the service worker cache a page under a script's name; with appType 'mpa' instead it answers a
// folder without its slash with 404 rather than a redirect; it answers POST with 404 rather than 405; and Vite
// documents it as a local check, not a server. Each of those is an assertion of tests/browser/serve.test.js.
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { stat, realpath } from 'node:fs/promises';
import { resolve, extname, sep, join, posix } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const HOST = '127.0.0.1';

export const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  // Must be exact: WebAssembly.instantiateStreaming refuses any other type.
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

function send(res, status, text) {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** What makes a page `crossOriginIsolated`: the two headers a host must send for attnscope's threaded build. */
export const CROSS_ORIGIN_ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

/**
 * Serve `dir` on 127.0.0.1:`port` (0 = any free port), cross-origin isolated unless `isolated` is false (the
 * browser tests use that to check the single-threaded fallback).
 * @returns {Promise<{ server: import('node:http').Server, url: string }>}
 */
export async function startServer(dir, port = 8080, { isolated = true } = {}) {
  const root = await realpath(resolve(dir));
  if (!(await stat(root)).isDirectory()) throw new Error(`not a directory: ${dir}`);

  const server = createServer(async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return send(res, 405, 'Method Not Allowed\n');
    }
    // Origin-form only ("/path?query"): anything else (an absolute URL, "*") is not a request for a file here.
    if (!req.url?.startsWith('/')) return send(res, 400, 'Bad Request\n');
    let pathname, search;
    try {
      // Parsed against a fixed origin by concatenation, not as a relative URL: a target like "//host/x" would
      // otherwise be read as another host's address and lose its first segment.
      const url = new URL(`http://localhost${req.url}`);
      search = url.search;
      pathname = decodeURIComponent(url.pathname);
    } catch {
      return send(res, 400, 'Bad Request\n');
    }
    // A backslash is a path separator to browsers (a Location of "/\\host" leaves the origin) and to Windows.
    if (pathname.includes('\0') || pathname.includes('\\')) return send(res, 400, 'Bad Request\n');
    // Resolved first: ".", "..", and repeated slashes (which %2f can smuggle past the URL parser) are gone before
    // any check, so every check below sees the path that is served. The result starts with exactly one "/".
    const clean = posix.normalize(posix.join('/', pathname));
    const segments = clean.split('/').filter(Boolean);
    // Dotfiles and dot-folders (.git, .env) are never part of a site: answered as missing, like files that are not there.
    if (segments.some((s) => s.startsWith('.'))) return send(res, 404, 'Not Found\n');
    let file = resolve(root, ...segments);
    if (file !== root && !file.startsWith(root + sep)) return send(res, 403, 'Forbidden\n');
    try {
      let st = await stat(file);
      if (st.isDirectory()) {
        if (!pathname.endsWith('/')) {
          // Built from the resolved, re-encoded path: one leading "/" and no "//", "\\" or "..", so the browser
          // stays on this origin whatever the request smuggled in.
          const location = ['', ...segments.map(encodeURIComponent), ''].join('/');
          res.writeHead(301, { Location: location + search, 'Content-Length': 0 });
          return res.end();
        }
        file = join(file, 'index.html');
        st = await stat(file);
      }
      const real = await realpath(file);
      if (real !== root && !real.startsWith(root + sep)) return send(res, 403, 'Forbidden\n');
      res.writeHead(200, {
        'Content-Type': MIME[extname(file).toLowerCase()] ?? 'application/octet-stream',
        'Content-Length': st.size,
        'Cache-Control': 'no-cache',
        'X-Content-Type-Options': 'nosniff',
        ...(isolated ? CROSS_ORIGIN_ISOLATION : {}),
      });
      if (req.method === 'HEAD') return res.end();
      createReadStream(file).on('error', () => res.destroy()).pipe(res);
    } catch (err) {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return send(res, 404, 'Not Found\n');
      return send(res, 500, 'Internal Server Error\n');
    }
  });

  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, HOST, () => { server.off('error', fail); ok(); });
  });
  return { server, url: `http://${HOST}:${server.address().port}/` };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  let dir;
  try {
    [dir] = parseArgs({ allowPositionals: true }).positionals;
  } catch {
    // An option: this script takes none (the port comes from $PORT).
  }
  if (!dir) {
    console.error('usage: node scripts/serve.mjs <folder>   (port: $PORT, default 8080)');
    process.exit(2);
  }
  const port = process.env.PORT === undefined || process.env.PORT === '' ? 8080 : Number(process.env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`invalid PORT: ${process.env.PORT}`);
    process.exit(2);
  }
  try {
    const { server, url } = await startServer(dir, port);
    console.log(`attnscope demo: ${url}`);
    const stop = () => server.close(() => process.exit(0));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  } catch (err) {
    console.error(`serve: ${err.code === 'EADDRINUSE' ? `port ${port} is in use (set PORT)` : err.message}`);
    process.exit(1);
  }
}
