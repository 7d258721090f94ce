// The player of the attention model's decoding in the "Why attention" section (play, pause, step, back): it only
// moves state.wstep (-1: every step shown) and asks for a redraw; the section and the guide share it.
import { SPEEDS } from '../state.js';
import { lastSteps } from './rnn.js';

let timer = 0;
let app = null;

const length = () => lastSteps();
/** The step shown now (1 … length): all of them when wstep is -1 or past the end. */
export const shownStep = (state, n = length()) => (state.wstep < 0 || state.wstep > n ? n : state.wstep);
export const isPlaying = () => timer !== 0;
/** Every step shown: wstep −1, or a link's wstep at or past the last step (the player itself keeps −1 there). */
const finished = (state, n) => state.wstep < 0 || state.wstep >= n;

/**
 * The step whose weights are shown (0-based): the newest one, except on the finished view (wstep -1), where it is
 * the last character before the end: the end step's weights say little (as the dates view does, models/compute.js).
 */
export function focusIndex(state, tokens, shown) {
  const cur = shown - 1;
  return finished(state, tokens.length) && cur > 0 && tokens[cur] === '<eos>' ? cur - 1 : cur;
}

export function pause() {
  clearInterval(timer);
  timer = 0;
  app?.invalidate();
}

export function step() {
  const n = length();
  const s = shownStep(app.state, n);
  if (s < n) app.state.wstep = s + 1;
  // The last step reached is the finished view (wstep −1), the same as a sentence shown whole: one "done" however
  // it was reached, with the same weights drawn (focusIndex).
  if (app.state.wstep >= n) { app.state.wstep = -1; clearInterval(timer); timer = 0; }
  app.invalidate();
}

/**
 * The player's counter: the step whose weights are drawn (`cur`, 0-based) of `n`, and on the finished view that every
 * step is written, since the weights drawn there are the last character's, not the end's.
 */
export function counterText(state, n, cur, t) {
  const drawn = cur >= 0 ? cur + 1 : shownStep(state, n);
  return finished(state, n) ? t('why.stepDone', { n, t: drawn }) : t('why.stepOf', { t: drawn, n });
}

export function back() {
  pause();
  app.state.wstep = Math.max(1, shownStep(app.state) - 1);
  app.invalidate();
}

export function play() {
  if (!length()) return;
  if (shownStep(app.state) >= length()) app.state.wstep = 0;
  clearInterval(timer);
  timer = setInterval(step, SPEEDS[app.state.speed] ?? SPEEDS.normal);
  step();
}

/** Which app the player drives (set once by the section's view). */
export function attachPlayer(a) { app = a; }

/** The four buttons, bound to the player (`prefix` keeps the ids of the section's and the guide's apart). */
export function playerButtons(prefix, t) {
  return `<div class="why-player" role="group" aria-label="${t('why.attnTitle')}">
    <button type="button" class="btn primary" data-why="play" id="${prefix}-play"><span aria-hidden="true">▶</span> ${t('dec.play')}</button>
    <button type="button" class="btn" data-why="pause" id="${prefix}-pause"><span aria-hidden="true">❚❚</span> ${t('dec.pause')}</button>
    <button type="button" class="btn" data-why="back" id="${prefix}-back"><span aria-hidden="true">◂</span> ${t('dec.back')}</button>
    <button type="button" class="btn" data-why="step" id="${prefix}-step">${t('dec.step')} <span aria-hidden="true">▸</span></button>
    <span class="counter" id="${prefix}-counter" aria-live="polite"></span>
  </div>`;
}

/** Clicks on [data-why] buttons inside `root` drive the player. */
export function bindPlayer(root) {
  root.addEventListener('click', (e) => {
    const b = e.target.closest('[data-why]');
    if (!b || b.disabled) return;
    ({ play, pause, step: () => { pause(); step(); }, back })[b.dataset.why]();
  });
}

/** Enable the buttons in `root` for the current step and player state. */
export function updateButtons(root, state, n, counter) {
  const s = shownStep(state, n);
  const on = (w) => root.querySelector(`[data-why="${w}"]`);
  if (!on('play')) return;
  on('play').disabled = isPlaying() || !n;
  on('pause').disabled = !isPlaying();
  on('step').disabled = s >= n;
  on('back').disabled = s <= 1;
  root.querySelector('.counter').textContent = counter;
}
