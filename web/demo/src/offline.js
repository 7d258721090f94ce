// Offline: register the service worker that precaches the build (sw.js), and retry a failed model download
// when the network returns. The worker also makes the page cross-origin isolated on hosts that do not (sw-template.js).
import { retryFailed } from './models/trained.js';

const RELOADED = 'attnscope-isolation-reload';

/**
 * The page loaded before the service worker controlled it (a first visit, or a worker from before the isolation
 * headers), on a host that sends no COOP/COEP: it runs one thread. When the worker takes control, one reload makes it
 * isolated (the URL keeps the whole state), unless the reader has started (a key or a pointer since the load, which
 * could be a file being picked): then the next load gets threads. At most one such reload per tab, so a browser that
 * will not isolate the page even then is not reloaded again and again.
 */
function reloadIntoIsolation() {
  if (globalThis.crossOriginIsolated !== false || sessionStorage.getItem(RELOADED)) return;
  let started = false;
  for (const type of ['keydown', 'pointerdown']) window.addEventListener(type, () => { started = true; }, { capture: true, once: true });
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    if (started || globalThis.crossOriginIsolated || sessionStorage.getItem(RELOADED)) return;
    sessionStorage.setItem(RELOADED, '1');
    location.reload();
  });
}

export function watchOffline(onRetry) {
  window.addEventListener('online', () => { if (retryFailed()) onRetry(); });
  if ('serviceWorker' in navigator && location.protocol !== 'file:' && !import.meta.env?.DEV) {
    reloadIntoIsolation();
    navigator.serviceWorker.register(new URL('./sw.js', document.baseURI), { scope: './' }).catch((err) => console.info('attnscope: no offline copy', err.message));
  }
}
