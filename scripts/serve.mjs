#!/usr/bin/env node
// Dependency-free static file server for the built demo: `node scripts/serve.mjs build/site`.
// Port from $PORT (default 8080; 0 picks a free one), bound to 127.0.0.1 only. Every response carries the
// cross-origin isolation headers (COOP same-origin + COEP require-corp), so the page gets SharedArrayBuffer and
// attnscope can run its threaded build; any host needs the same two headers for that.
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { stat, realpath } from 'node:fs/promises';
import { resolve, extname, sep, join } from 'node:path';
import { pathToFileURL } from 'node:url';

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
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      return send(res, 400, 'Bad Request\n');
    }
    if (pathname.includes('\0')) return send(res, 400, 'Bad Request\n');
    // Resolve inside root, then check again after following symlinks: no way out of the folder.
    let file = resolve(root, '.' + pathname);
    if (file !== root && !file.startsWith(root + sep)) return send(res, 403, 'Forbidden\n');
    try {
      let st = await stat(file);
      if (st.isDirectory()) {
        if (!pathname.endsWith('/')) {
          res.writeHead(301, { Location: pathname + '/' + (new URL(req.url, 'http://localhost').search || '') });
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
  const dir = process.argv[2];
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
