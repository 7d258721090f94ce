// The demo's service worker: after one visit, the whole page (HTML, script, styles, WebAssembly and both trained
// models) works with the network off. The build (web/demo/vite.config.js) fills in the file list and its version, a
// hash of every listed file's contents.
//
// A deploy never mixes two builds in one tab. Each tab is served, for as long as it lives, from the cache of the
// build it was opened with. A new worker takes over as soon as it has installed (tabs opened or reloaded after that
// get the new build), but it keeps an older build's cache while a tab still uses it, so that tab's lazily loaded
// files (a model, the threaded build under its fixed attnscope-mt/ names) are the ones its page was built with.
// A cache no open tab uses is deleted.
//
// Every response it serves carries Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy, so the page and its
// workers are cross-origin isolated, and run threads, on a static host that sends neither header: once this worker
// controls the page (from the second load on: src/offline.js reloads a first visit once, when it may).
const FILES = self.__PRECACHE__;
const PREFIX = 'attnscope-';
const CACHE = `${PREFIX}${self.__PRECACHE_VERSION__}`;
// Which build each tab (client) uses is stored in that build's own cache, as a made-up URL per client, so it
// survives the worker being stopped and restarted, and `caches.match` finds a client's build in one call.
const CLIENT_KEY = './__attnscope-client/';
const clientKey = (id) => new URL(CLIENT_KEY + encodeURIComponent(id), self.registration.scope).href;

self.addEventListener('install', (event) => {
  // Everything the page may ask for, fetched once now; a failed file fails the install (and the next visit retries).
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES.map((f) => new Request(f, { cache: 'reload' })))).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  // Every open tab is claimed, but keeps its build: a tab a previous worker served is recorded in that build's
  // cache. A tab with no record was opened before any worker (the first visit, whose files this worker has just
  // fetched): it is this build's.
  event.waitUntil((async () => {
    for (const client of await self.clients.matchAll({ includeUncontrolled: true, type: 'all' })) {
      if (!(await caches.match(clientKey(client.id)))) await assign(client.id, CACHE);
    }
    await self.clients.claim();
    await prune();
  })());
});

/** Records that client `id` uses build `cacheName`. */
async function assign(id, cacheName) {
  if (!id) return;
  const cache = await caches.open(cacheName);
  await cache.put(clientKey(id), new Response(cacheName));
}

/** The cache of the build client `id` was opened with; this worker's own for a client it has never seen. */
async function cacheOf(id) {
  const hit = id ? await caches.match(clientKey(id)) : undefined;
  return hit ? hit.text() : CACHE;
}

/**
 * Deletes the records of closed tabs, and every older build's cache that no open tab uses any more. A tab is looked
 * up with clients.get(), not clients.matchAll(): a tab still being opened is not listed yet, and get() waits for it,
 * where a missing record would hand that tab to the next build.
 */
async function prune() {
  for (const name of await caches.keys()) {
    if (!name.startsWith(PREFIX)) continue;
    const cache = await caches.open(name);
    let used = false;
    for (const req of await cache.keys()) {
      const { pathname } = new URL(req.url);
      const marker = pathname.lastIndexOf(CLIENT_KEY.slice(1));
      if (marker < 0) continue;
      if (await self.clients.get(decodeURIComponent(pathname.slice(marker + CLIENT_KEY.length - 1)))) used = true;
      else await cache.delete(req);
    }
    if (name !== CACHE && !used) await caches.delete(name);
  }
}

/**
 * `response` with the two headers of cross-origin isolation added (serve.mjs sends the same). A same-origin file
 * needs nothing more under `require-corp`; an error or an opaque response is passed on as it is.
 */
function isolated(response) {
  if (!response || response.status === 0 || response.type === 'opaque' || response.type === 'error') return response;
  const headers = new Headers(response.headers);
  headers.set('Cross-Origin-Opener-Policy', 'same-origin');
  headers.set('Cross-Origin-Embedder-Policy', 'require-corp');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET' || new URL(req.url).origin !== location.origin) return;
  if (req.mode === 'navigate') {
    // The page itself, from this worker's build, so that everything it asks for later matches it; the network only
    // when that build has no copy. The browser checks for a new sw.js on every navigation: after a deploy the new
    // worker installs in the background and the next reload shows the new build.
    event.respondWith((async () => isolated(await (async () => {
      await assign(event.resultingClientId, CACHE);
      const url = new URL(req.url);
      url.search = '';
      url.hash = '';
      const { scope } = self.registration;
      const isPage = url.href === scope || url.href === new URL('./index.html', scope).href;
      const cachedPage = () => caches.match('./index.html', { cacheName: CACHE });
      if (isPage) return (await cachedPage()) ?? fetch(req);
      // Another file opened as a page (the .wasm, say): this build's copy, else the network, else (offline) the page.
      const file = await caches.match(req, { cacheName: CACHE, ignoreSearch: true });
      return file ?? fetch(req).catch(async () => (await cachedPage()) ?? Response.error());
    })()))());
    event.waitUntil(prune());
    return;
  }
  event.respondWith((async () => isolated(await (async () => {
    const cacheName = await cacheOf(event.clientId);
    // A worker the page starts (the threaded build's helpers) uses the page's build for its own requests.
    const startsWorker = req.destination === 'worker' || req.destination === 'sharedworker';
    if (startsWorker && event.resultingClientId) await assign(event.resultingClientId, cacheName);
    // Every file of a build is in its cache; the network for anything else (or if that cache is gone after all).
    const hit = await caches.match(req, { cacheName, ignoreSearch: true });
    return hit ?? fetch(req);
  })()))());
});
