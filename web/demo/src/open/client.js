// The page's side of the model Worker: requests as promises, progress as a callback, one worker per page.
/**
 * @param {{ onProgress: (p: { loaded: number, total: number, file: string, wasmBytes?: number }) => void,
 *   onPlan?: (plan: import('attnscope').LoadPlan) => void,
 *   onPatchProgress?: (p: { done: number, total: number }) => void }} hooks
 */
export function createModelClient({ onProgress, onPlan, onPatchProgress }) {
  const worker = new Worker(new URL('../worker/model-worker.js', import.meta.url), { type: 'module' });
  const pending = new Map();
  let next = 1;
  worker.onmessage = ({ data }) => {
    if (data.type === 'progress') { onProgress(data); return; }
    if (data.type === 'plan') { onPlan?.(data); return; }
    if (data.type === 'patchProgress') { onPatchProgress?.(data); return; }
    const p = pending.get(data.id);
    pending.delete(data.id);
    if (!p) return;
    if (data.error) {
      const E = { TypeError, RangeError }[data.error.name] ?? Error;
      const err = new E(data.error.message);
      if (data.error.name === 'AbortError') err.name = 'AbortError';
      p.reject(err);
    } else p.resolve(data.value);
  };
  worker.onerror = (e) => {
    for (const p of pending.values()) p.reject(new Error(e.message || 'the model worker failed'));
    pending.clear();
  };
  const request = (type, body = {}) => new Promise((resolve, reject) => {
    const id = next++;
    pending.set(id, { resolve, reject });
    worker.postMessage({ type, id, ...body });
  });
  // First: the Worker starts attnscope, with threads where the page is isolated, from the page's threaded files
  // (vite.config.js emits them into attnscope-mt/, as for the page's own init in main.js).
  const started = request('start', { threadsUrl: new URL('./attnscope-mt/', document.baseURI).href });
  started.catch(() => {}); // a failed start fails the load too, which reports it
  return {
    /** `files`: { name: File } of the checkpoint, or `url`: a folder URL ending in '/'. */
    load: (source) => request('load', source),
    cancel: () => worker.postMessage({ type: 'cancel' }),
    forward: (input) => request('forward', input),
    trace: (input) => request('trace', input),
    generate: (input) => request('generate', input),
    findHeads: () => request('findHeads'),
    patching: (input) => request('patching', input),
    cancelPatching: () => worker.postMessage({ type: 'cancelPatch' }),
    /** What the Worker's attnscope runs (runtimeInfo()): its build, threads and SIMD. */
    runtime: () => started,
  };
}
