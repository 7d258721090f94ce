// The page's side of the model Worker: requests as promises, progress as a callback, one worker at a time. A watchdog
// stops a Worker that stops answering and starts a new one on the next request: the page stays usable without a
// reload. While the Worker waits (on the network, between chunks) it answers pings at once; it is silent only while
// it runs code. It says when it enters the core's computation (phase 'compute', trusted and bounded by the memory
// plan, which can take long on a large model) and when it tokenizes (phase 'tokenize', the checkpoint's own rules);
// outside 'compute', WATCHDOG_MS of silence stop it.

/** Silence after which a Worker that is not computing is stopped (a tokenizer.json of 262,144 tokens loads in 3 s). */
export const WATCHDOG_MS = 10_000;
/** How long a Cancel waits for the Worker to acknowledge before it stops the Worker instead. */
export const CANCEL_MS = 1500;

/** The error of requests whose Worker was stopped: its name tells the page what happened. */
export class WorkerStoppedError extends Error {
  constructor(seconds) {
    super(`the model worker did not answer for ${seconds} s, so it was stopped and the model with it`);
    this.name = 'WorkerStopped';
    this.seconds = seconds;
  }
}

/**
 * @param {{ onProgress: (p: { loaded: number, total: number, file: string, wasmBytes?: number }) => void,
 *   onPlan?: (plan: import('attnscope').LoadPlan) => void,
 *   onPatchProgress?: (p: { done: number, total: number }) => void, onResearchProgress?: (p: { done: number, total: number }) => void,
 *   onStopped?: (error: Error) => void, watchdogMs?: number }} hooks
 */
export function createModelClient({ onProgress, onPlan, onPatchProgress, onResearchProgress, onStopped, watchdogMs = WATCHDOG_MS }) {
  let worker = null;
  const pending = new Map();
  let next = 1;
  let lastHeard = 0;
  let computing = false;
  let timer = null;

  const stop = (error) => {
    worker?.terminate();
    worker = null;
    clearInterval(timer);
    timer = null;
    computing = false;
    for (const p of pending.values()) p.reject(error);
    pending.clear();
    onStopped?.(error);
  };
  // Every second while a request is out: a ping, and the silence so far.
  const watch = () => {
    if (!pending.size) return;
    if (!computing && performance.now() - lastHeard > watchdogMs) { stop(new WorkerStoppedError(Math.round(watchdogMs / 1000))); return; }
    if (!computing) worker?.postMessage({ type: 'ping' });
  };
  const spawn = () => {
    const w = new Worker(new URL('./worker/model-worker.js', import.meta.url), { type: 'module' });
    w.onmessage = ({ data }) => {
      lastHeard = performance.now();
      if (data.type === 'phase') { computing = data.phase === 'compute'; return; }
      if (data.type === 'pong') return;
      if (data.type === 'progress') { onProgress(data); return; }
      if (data.type === 'plan') { onPlan?.(data); return; }
      if (data.type === 'patchProgress') { onPatchProgress?.(data); return; }
      if (data.type === 'researchProgress') { if (newest(data.id)) onResearchProgress?.(data); return; }
      computing = false; // a reply: the Worker is back in its event loop
      const p = pending.get(data.id);
      pending.delete(data.id);
      if (!p) return;
      if (data.error) {
        const E = { TypeError, RangeError }[data.error.name] ?? Error;
        const err = new E(data.error.message);
        if (data.error.name === 'AbortError') err.name = 'AbortError';
        if (data.error.memory) err.memory = data.error.memory; // a failed load's WebAssembly memory before and after
        if (data.error.kept) err.kept = true; // a failed load left the model open before it as it was
        if (data.error.badId) err.badId = data.error.badId; // a typed token id that is not one: { word, at, max }
        p.reject(err);
      } else p.resolve(data.value);
    };
    w.onerror = (e) => {
      for (const p of pending.values()) p.reject(new Error(e.message || 'the model worker failed'));
      pending.clear();
    };
    return w;
  };
  // A research request's progress counts while it is the newest of its kind still awaited: a lens superseded by a
  // newer one may report once more before the Worker sees the newer one, and that count is not the newer one's.
  const newest = (id) => {
    const p = pending.get(id);
    return id === undefined || (!!p && ![...pending].some(([other, q]) => other > id && q.type === p.type));
  };
  const send = (type, body = {}) => new Promise((resolve, reject) => {
    const id = next++;
    if (!pending.size) { lastHeard = performance.now(); computing = false; }
    pending.set(id, { resolve, reject, type });
    timer ??= setInterval(watch, 1000);
    worker.postMessage({ type, id, ...body });
  });
  // A fresh Worker first starts attnscope, with threads where the page is isolated, from the page's threaded files
  // (vite.config.js emits them into attnscope-mt/, as for the page's own init in main.js); a replaced one again.
  let started = null;
  const ensure = () => {
    if (worker) return;
    worker = spawn();
    started = send('start', { threadsUrl: new URL('./attnscope-mt/', document.baseURI).href });
    started.catch(() => {}); // a failed start fails the load too, which reports it
  };
  const request = (type, body = {}) => {
    ensure();
    return send(type, body);
  };
  return {
    /** `files`: { name: File } of the checkpoint, or `url`: a folder URL ending in '/'. */
    load: (source) => request('load', source),
    /** Cancels the load; a Worker too busy to hear it within CANCEL_MS is stopped, and the load is cancelled so. */
    cancel: () => {
      if (!worker) return;
      worker.postMessage({ type: 'cancel' });
      const load = [...pending.values()].find((p) => p.type === 'load');
      if (!load) return;
      setTimeout(() => {
        if ([...pending.values()].includes(load)) stop(new DOMException('The load was cancelled.', 'AbortError'));
      }, CANCEL_MS);
    },
    forward: (input) => request('forward', input),
    trace: (input) => request('trace', input),
    predict: (input) => request('predict', input),
    generate: (input) => request('generate', input),
    findHeads: () => request('findHeads'),
    patching: (input) => request('patching', input),
    /** The research tools' requests (open/worker/research.js): 'lens', 'compare', 'patchPositions'. */
    research: (type, input) => request(type, input),
    /** Hands the array of maps the page no longer shows back to the Worker, whose next forward writes into it. */
    recycle: (buffer) => worker?.postMessage({ type: 'recycle', buffer }, [buffer]),
    cancelPatching: () => worker?.postMessage({ type: 'cancelPatch' }),
    cancelLens: () => worker?.postMessage({ type: 'cancelLens' }),
    /** What the Worker's attnscope runs (runtimeInfo()): its build, threads and SIMD. */
    runtime: () => {
      ensure();
      return started;
    },
  };
}
