// Offline: register the service worker that precaches the build (sw.js), and retry a failed model download
// when the network returns.
import { retryFailed } from './trained.js';

export function watchOffline(onRetry) {
  window.addEventListener('online', () => { if (retryFailed()) onRetry(); });
  if ('serviceWorker' in navigator && location.protocol !== 'file:' && !import.meta.env?.DEV) {
    navigator.serviceWorker.register(new URL('./sw.js', document.baseURI), { scope: './' }).catch((err) => console.info('attnscope: no offline copy', err.message));
  }
}
