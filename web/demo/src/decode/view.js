// The decoding panel of the dates model: the source words, the output so far and the chosen step's cross-attention.
import { t } from '../i18n.js';
import { $, tabStopWhileScrolling } from '../dom.js';
import { renderDecode } from './draw.js';

/** The step's cross-attention over the source words, averaged over every head of every decoder layer. */
export function focusWeights(r) {
  if (r.focus < 0) return null;
  const [nl, H, N, S] = r.run.cross.shape;
  const w = new Float32Array(S);
  for (let l = 0; l < nl; l++) for (let h = 0; h < H; h++) {
    const off = ((l * H + h) * N + r.focus) * S;
    for (let j = 0; j < S; j++) w[j] += r.run.cross.data[off + j] / (nl * H);
  }
  return w;
}

/** @param {{ isPlaying: () => boolean }} app */
export function createDecodeView(app) {
  // Wider than a phone's screen it scrolls, and is then a Tab stop; on a desktop it fits, and is not.
  const checkTabStop = tabStopWhileScrolling($('#decode'));
  return {
    name: 'decode',
    root: $('#decode-section'),
    wants: (r) => r.kind === 's2s' && !r.entry && !r.sourceEmpty,
    render(state, r) {
      const run = r.run;
      const [nl, H, N] = run.cross.shape;
      renderDecode($('#decode'), { sourceTokens: run.sourceTokens, unk: run.unk, steps: run.steps, shown: r.shown, focus: r.focus, weights: focusWeights(r), cmap: state.cmap, ms: run.ms });
      checkTabStop();
      $('#decode-text').textContent = t('sec.decodeText', { n: nl * H });
      // One step counter: the step whose attention is drawn (finished, the last character before <eos>), as the text says.
      const drawn = r.focus >= 0 ? r.focus + 1 : r.shown;
      $('#dec-counter').textContent = t(r.finished ? 'dec.counterDone' : 'dec.counter', { t: drawn, n: N });
      const playing = app.isPlaying();
      $('#dec-play').disabled = playing;
      $('#dec-pause').disabled = !playing;
      $('#dec-step').disabled = r.shown >= N;
      $('#dec-back').disabled = r.shown <= 0;
      $('#dec-reset').disabled = r.shown === 0 && !playing;
      $('#decode-section').classList.toggle('playing', playing);
      $('#dec-speed').value = state.speed;
    },
  };
}
