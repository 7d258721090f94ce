// Where a Hugging Face checkpoint's files come from: an object of named files (bytes, Blobs, URLs) or a folder URL,
// each file opened as a source that is read in order, chunk by chunk, so that no file is ever copied whole in JS.
import { describe, nodeFs, userUrlBase } from './runtime.js';

/** Bytes read per step: big enough that the per-call cost vanishes, small enough to stay out of the way. */
export const CHUNK_BYTES = 4 << 20;

const FILE_KINDS = 'an ArrayBuffer, a Uint8Array, a Blob, a File, a URL or a URL string';

const isBlob = (value) => typeof Blob === 'function' && value instanceof Blob;

/** A user's URL string: relative to the page or worker (browsers) or to the working directory (Node). */
export function toUrl(value, label) {
  if (value instanceof URL) return value;
  const base = userUrlBase() ?? `file://${typeof process === 'object' ? process.cwd() : ''}/`;
  try {
    return new URL(value, base);
  } catch {
    throw new TypeError(`${label}: expected an absolute URL or one relative to ${base}, got ${describe(value)}`);
  }
}

/** A folder of a model: a URL string or URL whose path ends in `/`. */
export const isFolderUrl = (value) => (typeof value === 'string' || value instanceof URL) && String(value).split(/[?#]/)[0].endsWith('/');

const isFileList = (value) => (Array.isArray(value) || (typeof FileList === 'function' && value instanceof FileList)) &&
  value.length > 0 && Array.from(value).every((file) => isBlob(file) && typeof file.name === 'string');

/**
 * Named files, the form `loadModel({ 'config.json': …, 'model.safetensors': … })` takes: a plain object, or the
 * Files of an `<input type="file" multiple>` (an array or a FileList), each named by its own name.
 */
export const isFileObject = (value) => isFileList(value) || (value !== null && typeof value === 'object' && !Array.isArray(value) &&
  !ArrayBuffer.isView(value) && !(value instanceof ArrayBuffer) && !(value instanceof URL) && !isBlob(value));

// --- sources: `size`, `prefix(n)` (the first n bytes, or fewer at the end), `chunks(from)` and `close()` ----------

function bufferSource(bytes) {
  return {
    size: bytes.length,
    async prefix(n) { return bytes.subarray(0, n); },
    async *chunks(from) {
      for (let at = from; at < bytes.length; at += CHUNK_BYTES) yield bytes.subarray(at, Math.min(at + CHUNK_BYTES, bytes.length));
    },
    close() {},
  };
}

function blobSource(blob) {
  // Blob.slice is a view: each arrayBuffer() reads only its own chunk (from disk, for a File).
  const read = async (from, to) => new Uint8Array(await blob.slice(from, to).arrayBuffer());
  return {
    size: blob.size,
    prefix: (n) => read(0, Math.min(n, blob.size)),
    async *chunks(from) {
      for (let at = from; at < blob.size; at += CHUNK_BYTES) yield read(at, Math.min(at + CHUNK_BYTES, blob.size));
    },
    close() {},
  };
}

// Node reads file: URLs with fs (its fetch cannot); one reused buffer, each chunk valid until the next is asked for.
async function fileSource(fs, url, label) {
  let handle;
  try {
    handle = await fs.open(url);
  } catch (cause) {
    throw Object.assign(new Error(`${label}: could not read ${url} (${cause.code ?? cause.message})`, { cause }), { code: cause.code });
  }
  const { size } = await handle.stat();
  const buffer = new Uint8Array(Math.min(CHUNK_BYTES, Math.max(size, 1)));
  const read = async (into, position) => {
    const { bytesRead } = await handle.read(into, 0, into.length, position);
    return into.subarray(0, bytesRead);
  };
  return {
    size,
    prefix: (n) => read(new Uint8Array(Math.min(n, size)), 0),
    async *chunks(from) {
      for (let at = from; at < size; at += CHUNK_BYTES) {
        const chunk = await read(buffer.subarray(0, Math.min(CHUNK_BYTES, size - at)), at);
        if (chunk.length === 0) throw new Error(`${label}: ${url} ended at byte ${at} of ${size} while it was read`);
        yield chunk;
      }
    },
    close: () => handle.close().catch(() => {}),
  };
}

async function fetched(url, label, signal) {
  let response;
  try {
    response = await fetch(url, { signal });
  } catch (cause) {
    if (signal?.aborted) throw signal.reason;
    throw new Error(`${label}: could not load ${url} (${cause.message})`, { cause });
  }
  if (!response.ok) throw Object.assign(new Error(`${label}: could not load ${url}: HTTP ${response.status}`), { status: response.status });
  return response;
}

// The size before the body: Content-Length of an unencoded response (a compressed one's length is not the file's).
function contentLength(response, url, label) {
  const length = response.headers.get('content-length');
  const encoding = response.headers.get('content-encoding');
  if (length === null || !/^\d+$/.test(length) || (encoding && encoding !== 'identity')) {
    response.body?.cancel().catch(() => {});
    throw new Error(`${label}: ${url} was sent without its size (no Content-Length${encoding ? `, Content-Encoding ${encoding}` : ''}); the weights stream into memory and need it: serve the file as it is`);
  }
  return Number(length);
}

/**
 * A fetched file. The header is read from the first response; the data then continues on it, unless `release`
 * closed it (sharded checkpoints: a browser opens only a few connections to one server at once, and each shard's
 * header comes before any data), in which case a second request streams the file again from the start.
 */
async function fetchSource(url, label, signal) {
  let response = await fetched(url, label, signal);
  const size = contentLength(response, url, label);
  let reader = response.body.getReader();
  let position = 0; // bytes of the current response consumed by `pending` and before
  let pending = new Uint8Array(0); // bytes read from it and not yet handed out
  const next = async () => {
    let read;
    try {
      read = await reader.read();
    } catch (cause) {
      if (signal?.aborted) throw signal.reason; // the caller's reason, not the stream's AbortError
      throw new Error(`${label}: ${url} failed while it was read (${cause.message})`, { cause });
    }
    const { done, value } = read;
    if (done) throw new Error(`${label}: ${url} ended at byte ${position + pending.length} of ${size} while it was read`);
    return value;
  };
  return {
    size,
    async prefix(n) {
      const want = Math.min(n, size);
      const parts = [pending];
      let have = pending.length;
      while (have < want) {
        const value = await next();
        parts.push(value);
        have += value.length;
      }
      if (parts.length > 1) {
        pending = new Uint8Array(have);
        let at = 0;
        for (const part of parts) pending.set(part, (at += part.length) - part.length);
      }
      return pending.subarray(0, want);
    },
    release() {
      reader?.cancel().catch(() => {});
      reader = null;
    },
    async *chunks(from) {
      if (!reader) {
        response = await fetched(url, label, signal);
        if (contentLength(response, url, label) !== size) throw new Error(`${label}: ${url} changed size while it was read`);
        reader = response.body.getReader();
        position = 0;
        pending = new Uint8Array(0);
      }
      for (let at = position; at < size;) {
        const value = pending.length ? pending : await next();
        pending = new Uint8Array(0);
        const begin = Math.max(from - at, 0);
        at += value.length;
        position = at;
        if (at > size) throw new Error(`${label}: ${url} is longer than the ${size} bytes its Content-Length said`);
        if (begin < value.length) yield value.subarray(begin);
      }
    },
    close() { this.release(); },
  };
}

/** Opens a URL: fs for file: URLs in Node, fetch otherwise (a browser fetches file: URLs too, where it may). */
async function urlSource(url, label, signal) {
  const fs = url.protocol === 'file:' ? nodeFs() : undefined;
  return fs ? fileSource(fs, url, label) : fetchSource(url, label, signal);
}

/**
 * A JSON file at a URL, whole: no Content-Length needed (servers often compress JSON, and then send none), read
 * with fs in Node for file: URLs.
 */
async function urlText(url, label, signal, check) {
  const fs = url.protocol === 'file:' ? nodeFs() : undefined;
  if (fs) return sourceText(await fileSource(fs, url, label), label, check);
  const response = await fetched(url, label, signal);
  // The size, when sent for the file as it is, is checked before the body; without one (or compressed), each part
  // as it arrives: a file past its limit stops there, not after gigabytes.
  const length = response.headers.get('content-length');
  const encoding = response.headers.get('content-encoding');
  const reader = response.body.getReader();
  const parts = [];
  let total = 0;
  try {
    if (check && length !== null && /^\d+$/.test(length) && (!encoding || encoding === 'identity')) check(Number(length), true);
    for (;;) {
      let read;
      try {
        read = await reader.read();
      } catch (cause) {
        if (signal?.aborted) throw signal.reason;
        throw new Error(`${label}: ${url} failed while it was read (${cause.message})`, { cause });
      }
      if (read.done) break;
      total += read.value.length;
      check?.(total, false);
      parts.push(read.value);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  }
  return decodeText(joined(parts, total), label);
}

function joined(parts, total) {
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const part of parts) bytes.set(part, (at += part.length) - part.length);
  return bytes;
}

function decodeText(bytes, label) {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new TypeError(`${label}: expected UTF-8 text (a JSON file), got bytes that are not`);
  }
}

async function sourceText(source, label, check) {
  try {
    check?.(source.size, true); // before a byte of it is read
    const parts = [];
    for await (const chunk of source.chunks(0)) parts.push(chunk.slice());
    return decodeText(joined(parts, parts.reduce((n, p) => n + p.length, 0)), label);
  } finally {
    source.close();
  }
}

/**
 * The files of a checkpoint: `text(name, { optional, check })` (JSON files; null when an optional one is absent;
 * `check(bytes, complete)` throws for a size past the file's limit, and is asked before the text is copied whole)
 * and `open(name)` (a weight file's source). `files` is an object of named files or a folder URL; `label` starts every error.
 */
export function checkpointFiles(files, caller, signal) {
  if (isFolderUrl(files)) {
    const folder = toUrl(files, caller);
    const at = (name) => new URL(encodeURIComponent(name), folder);
    return {
      where: (name) => String(at(name)),
      async open(name) { return urlSource(at(name), caller, signal); },
      async text(name, { optional = false, check } = {}) {
        try {
          return await urlText(at(name), caller, signal, check);
        } catch (error) {
          // A file the folder does not have: 404 from a server, ENOENT from a disk.
          if (optional && (error.status === 404 || error.code === 'ENOENT')) return null;
          throw error;
        }
      },
    };
  }
  const named = new Map();
  const entries = isFileList(files) ? Array.from(files, (file) => [file.name, file]) : Object.entries(files);
  for (const [name, value] of entries) {
    const ok = value instanceof ArrayBuffer || ArrayBuffer.isView(value) || isBlob(value) || value instanceof URL || typeof value === 'string';
    if (!ok) throw new TypeError(`${caller}: files['${name}']: expected ${FILE_KINDS}, got ${describe(value)}`);
    // A string is a URL; JSON text given in its place would otherwise be fetched as a file name.
    if (typeof value === 'string' && /^\s*[{[]/.test(value)) {
      throw new TypeError(`${caller}: files['${name}']: expected ${FILE_KINDS}, got a string that is JSON text, not a URL (pass the text as new TextEncoder().encode(text) or a Blob)`);
    }
    named.set(name, value);
  }
  const open = async (name, label) => {
    const value = named.get(name);
    if (value instanceof ArrayBuffer) return bufferSource(new Uint8Array(value));
    if (ArrayBuffer.isView(value)) return bufferSource(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
    if (isBlob(value)) return blobSource(value);
    return urlSource(toUrl(value, label), label, signal);
  };
  return {
    where: (name) => `files['${name}']`,
    async open(name) {
      if (!named.has(name)) throw new TypeError(`${caller}: files['${name}']: missing (given: ${[...named.keys()].join(', ') || 'no files'})`);
      return open(name, `${caller}: files['${name}']`);
    },
    async text(name, { optional = false, check } = {}) {
      if (!named.has(name)) {
        if (optional) return null;
        throw new TypeError(`${caller}: files['${name}']: missing: a Hugging Face checkpoint needs ${name} (given: ${[...named.keys()].join(', ') || 'no files'})`);
      }
      const label = `${caller}: files['${name}']`;
      const value = named.get(name);
      if (typeof value === 'string' || value instanceof URL) return urlText(toUrl(value, label), label, signal, check);
      return sourceText(await open(name, label), label, check);
    },
  };
}
