// The demo's scheduler: input handlers only change the state and call invalidate(); the work runs afterwards in
// short slices, so a keystroke never waits for drawing. Only the latest state is computed and drawn: a newer
// invalidate() abandons the pass in progress at its next slice. Views on screen are drawn first; views off screen
// follow in idle periods.

/** Give the browser a chance to handle input and paint: scheduler.yield() where there is one, else a macrotask. */
const yieldToBrowser = globalThis.scheduler?.yield
  ? () => globalThis.scheduler.yield()
  : () => new Promise((ok) => { const ch = new MessageChannel(); ch.port1.onmessage = () => ok(); ch.port2.postMessage(0); });

/** Run after the next paint: a keystroke's own frame (the typed character) is never held up by the work it causes. */
const afterPaint = (fn) => requestAnimationFrame(() => setTimeout(fn, 0));

// When the page last painted. Chromium runs scheduler.yield() continuations before rendering for up to 100 ms, so
// slices that only yield could still add up to one long frame: once a slice's worth of time has passed without a
// paint, the next yield waits for one (a frame then holds one slice, and a slice can overrun by one piece).
let paintedAt = 0;
const FRAME_MS = 12;
let watching = 0;
/** Note every frame while `busy()` (only while a pass runs: no animation frames are asked for on an idle page). */
function watchPaints(busy) {
  if (watching) return;
  const tick = (now) => {
    paintedAt = now;
    watching = busy() ? requestAnimationFrame(tick) : 0;
  };
  paintedAt = performance.now();
  watching = requestAnimationFrame(tick);
}

/**
 * Yield between slices: to input at once, and to a paint when the last one is FRAME_MS old. A hidden tab paints no
 * frames (requestAnimationFrame waits until it is shown), so there the work goes on without waiting for one.
 */
const nextSlice = () => (!globalThis.document?.hidden && performance.now() - paintedAt > FRAME_MS
  ? new Promise((ok) => afterPaint(ok))
  : yieldToBrowser());

/** An idle period (or 200 ms at most, so a busy page still finishes its views). */
const idle = globalThis.requestIdleCallback
  ? () => new Promise((ok) => requestIdleCallback(ok, { timeout: 200 }))
  : () => new Promise((ok) => setTimeout(ok, 0));

/** Work longer than this in one go, and input waits visibly; views are drawn one after another until it is used. */
const SLICE_MS = 12;

/**
 * @param {{ getState: () => object, compute: () => object, onDone?: (r: object) => void,
 *           views: { name: string, root?: Element, wants?: (r: object) => boolean, render: (state: object, r: object) => void }[] }} parts
 *   compute() returns the result of the current state (it may reuse work); each view draws it with render(state, r);
 *   `wants(r)` says whether a view shows anything for r (if not, it is skipped and counts as drawn). Views without a
 *   `root` count as always visible.
 */
export function createScheduler({ getState, compute, views, onDone }) {
  let version = 0;
  let running = false;
  let pending = false;
  const visible = new Map(views.map((v) => [v, true]));
  const drawn = new Map(); // view → version it last drew
  const tried = new Map(); // view off screen → version it last started drawing for (finished or abandoned midway)
  const status = { version: 0, visibleVersion: -1, visibleAt: null, consistentVersion: -1, consistentAt: null, result: null, timings: {} };

  if (typeof IntersectionObserver === 'function') {
    const byRoot = new Map(views.filter((v) => v.root).map((v) => [v.root, v]));
    const io = new IntersectionObserver((entries) => {
      for (const e of entries) visible.set(byRoot.get(e.target), e.isIntersecting);
    }, { rootMargin: '200px' });
    for (const r of byRoot.keys()) io.observe(r);
  }

  /**
   * Draw `view` for pass `v` unless it is hidden for this result or already drawn. A view whose render() returns an
   * iterator (a generator) is drawn in steps, with a yield to the browser whenever a slice is used up, or whenever
   * the step yields 'paint': it drew on a canvas, whose strokes the browser rasterises when the task ends (time this
   * clock does not see); a step that yields 'frame' changed what is on screen and waits for the next paint (its
   * layout, too, is time this clock does not see). Resolves to false if a newer state abandoned the drawing.
   */
  async function draw(view, r, v, slice) {
    if (drawn.get(view) === v) return true;
    if (!view.wants || view.wants(r)) {
      const t1 = performance.now();
      const steps = view.render(getState(), r);
      if (steps && typeof steps.next === 'function') {
        for (;;) {
          const step = steps.next();
          if (step.done) break;
          if (step.value === 'frame' || step.value === 'paint' || performance.now() - slice.t0 > SLICE_MS) {
            await (step.value === 'frame' ? new Promise((ok) => afterPaint(ok)) : nextSlice());
            slice.t0 = performance.now();
            if (version !== v) return false;
          }
        }
      }
      status.timings[view.name] = performance.now() - t1;
    }
    drawn.set(view, v);
    return true;
  }

  async function loop() {
    running = true;
    watchPaints(() => running);
    try {
      for (;;) {
        const v = version;
        const slice = { t0: performance.now() };
        const r = compute();
        status.result = r;
        status.timings.compute = performance.now() - slice.t0;
        let abandoned = false;
        // Visible views first, in page order, in slices of SLICE_MS between which input and paint get their turn.
        for (const view of views) {
          if (!visible.get(view) || drawn.get(view) === v) continue;
          if (performance.now() - slice.t0 > SLICE_MS) {
            await nextSlice();
            slice.t0 = performance.now();
            if (version !== v) { abandoned = true; break; }
          }
          if (!(await draw(view, r, v, slice))) { abandoned = true; break; }
        }
        if (!abandoned) {
          status.visibleVersion = v;
          status.visibleAt = performance.now();
          // Then the views off screen, one per idle period, so scrolling finds them drawn: the one that had its turn
          // longest ago first (page order among equals). In page order alone, a state that changed every idle period
          // or two (a sweep's progress) abandoned each pass at the same view, and the views after it never got their
          // turn. A turn counts once its drawing starts: a view abandoned midway goes to the back too.
          const turn = (view) => Math.max(drawn.get(view) ?? -1, tried.get(view) ?? -1);
          const offScreen = views.filter((view) => drawn.get(view) !== v).sort((a, b) => turn(a) - turn(b));
          for (const view of offScreen) {
            if (drawn.get(view) === v) continue;
            // A view with nothing to show for this result costs no idle period: on an opened model's tab the
            // included models' views are a dozen such, each of which would hold the views after it (the logit lens,
            // far down the page, waited about half a second behind them for its table).
            if (view.wants && !view.wants(r)) { drawn.set(view, v); continue; }
            await idle();
            slice.t0 = performance.now();
            if (version !== v) { abandoned = true; break; }
            tried.set(view, v);
            if (!(await draw(view, r, v, slice))) { abandoned = true; break; }
          }
        }
        if (!abandoned && version === v) {
          status.consistentVersion = v;
          status.consistentAt = performance.now();
          onDone?.(r);
          return;
        }
        // A newer state came in during the pass: start again after its keystroke has been painted.
        await new Promise((ok) => afterPaint(ok));
      }
    } finally {
      running = false;
    }
  }

  function kick() {
    if (!running) loop().catch((err) => { console.error(err); });
  }

  return {
    status,
    /** The state changed: compute and draw again (coalesced with any other change before the work starts). */
    invalidate() {
      version++;
      status.version = version;
      if (!running && !pending) { pending = true; afterPaint(() => { pending = false; kick(); }); }
    },
    get version() { return version; },
  };
}
