// The demo's service worker: after one visit, the whole page (HTML, script, styles, WebAssembly and both trained
// models) works with the network off. The build (web/demo/vite.config.js) fills in the file list and its hash.
const FILES = self.__PRECACHE__;
const CACHE = `attnscope-${self.__PRECACHE_VERSION__}`;

self.addEventListener('install', (event) => {
  // Everything the page may ask for, fetched once now; a failed file fails the install (and the next visit retries).
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES.map((f) => new Request(f, { cache: 'reload' })))).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k.startsWith('attnscope-') && k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET' || new URL(req.url).origin !== location.origin) return;
  if (req.mode === 'navigate') {
    // The page itself: the network when there is one (a new build shows at once), else the cached copy.
    event.respondWith(fetch(req).catch(() => caches.match('./index.html', { cacheName: CACHE })));
    return;
  }
  // Assets have content hashes in their names: the cached copy is always right.
  event.respondWith(caches.match(req, { cacheName: CACHE, ignoreSearch: true }).then((hit) => hit ?? fetch(req)));
});
