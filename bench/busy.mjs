// Busy neighbours for `npm run bench -- --busy=N`: N threads that spin for as long as the forward tables run, in the
// same process (Node: worker_threads) or page (Chromium: Web Workers). Each stands for what takes a core from a
// library's helper threads in real use: another library's thread pool, a page's busy main thread while the model
// runs in a Worker, another tab. With one neighbour on a 2-core machine, a 2-thread call shares its cores with it,
// which is what issue #21 asks the threads to survive: never slower than one thread.
const SPIN = 'for (;;) {}';

/** Starts `count` spinning threads; resolves, once each is running, to a function that stops them all. */
export async function startBusy(count) {
  if (!count) return async () => {};
  const workers = [];
  if (typeof window === 'undefined') {
    const { Worker } = await import('node:worker_threads');
    for (let i = 0; i < count; i++) {
      const w = new Worker(`require('node:worker_threads').parentPort.postMessage('spinning'); ${SPIN}`, { eval: true });
      await new Promise((ok, fail) => { w.once('message', ok); w.once('error', fail); });
      workers.push(w);
    }
  } else {
    const url = URL.createObjectURL(new Blob([`postMessage('spinning'); ${SPIN}`], { type: 'text/javascript' }));
    for (let i = 0; i < count; i++) {
      const w = new Worker(url);
      await new Promise((ok, fail) => { w.onmessage = ok; w.onerror = fail; });
      workers.push(w);
    }
    URL.revokeObjectURL(url);
  }
  return async () => {
    for (const w of workers) await w.terminate();
  };
}
