// The Patching tab of an opened model: a clean and a corrupted prompt of one length and two answer tokens; every
// head's context is patched from the clean run into the corrupted one (in the model Worker), and the layers × heads
// map shows the logit difference each recovers: 0 = the corrupted run's, 1 = the clean run's.
import { t } from '../i18n.js';
import { $, escapeHtml, setText } from '../dom.js';
import { drawHeadMap, strongest, HEAD_LABELS_TOP } from './headmap.js';
import { sampleIds } from './hash.js';
import { lutOf } from '../maps/paint.js';

/** The prefilled prompts: who gets the drink is the name that was not repeated. */
const PROMPT = 'When Mary and John went to the store, {x} gave a drink to';
/** An encoder's two prompts (compared, not patched): one word changed. */
const ENCODER_PAIR = ['The dogs played in the park.', 'The cats played in the park.'];
/**
 * The sample model's pair: its tokenizer (268 byte-level tokens) spells " Mary" in 5, so the names cannot be the
 * answers; " sat" and " on" are one token each, and the prompts differ in one token.
 */
const SAMPLE_PAIR = { clean: 'the cat sat on the mat and the cat', corrupted: 'the cat sat on the mat and the sat', a: ' sat', b: ' on' };

/**
 * A recovered fraction divides by the clean and corrupted prompts' logit differences' gap: under NEAR_GAP (a tenth of
 * a nat, about 10 % in the odds of A over B) the division turns a run's small changes into large fractions, and the
 * map says so above itself. `value` has the two differences as `clean` and `corrupted`.
 */
const NEAR_GAP = 0.1;
export const nearWarning = ({ clean, corrupted }) => (Math.abs(clean - corrupted) < NEAR_GAP
  ? `<p class="warn" data-near>${escapeHtml(t('open.patchNear', { gap: Math.abs(clean - corrupted).toFixed(3) }))}</p>` : '');

const LEFT = 30, TOP = HEAD_LABELS_TOP;
// A diverging scale, white at 0: blue towards 1 (recovered), orange towards −1 (pushed further away); the pair
// stays apart under the common colour-vision deficiencies.
const BLUE = [0, 114, 178], ORANGE = [213, 94, 0];
export function colourRgb(v) {
  const x = Math.max(-1, Math.min(1, Number.isFinite(v) ? v : 0));
  const end = x >= 0 ? BLUE : ORANGE, f = Math.abs(x);
  return end.map((c) => Math.round(255 + (c - 255) * f));
}
export const colour = (v) => `rgb(${colourRgb(v).join(',')})`;
/** The same scale for the painter: (v + 1) / 2 in [0, 1] is v in [−1, 1]. */
export const PATCH_COLORS = lutOf((u) => colourRgb(2 * u - 1));

/** The Patching form's progress bar at `done` of `total` (0: not known yet); both sweeps, of heads and of positions, use it. */
export function showProgressBar({ done, total }) {
  const bar = $('#open-patch-progress');
  bar.max = total || 1;
  bar.value = done ?? 0;
}

/** @param {{ run: (input: object) => void, cancel: () => void }} app */
export function createPatchingView(app) {
  const root = $('#open-patch');
  const out = $('#open-patch-out');
  const field = (id) => $(`#open-patch-${id}`).value;
  $('#open-patch-form').addEventListener('submit', (e) => {
    e.preventDefault();
    app.run({ clean: field('clean'), corrupted: field('corrupted'), answers: [field('a'), field('b')] });
  });
  $('#open-patch-cancel').addEventListener('click', () => app.cancel());
  let drawn = null;
  let filled = null; // the loaded model the fields were prefilled for
  let showing = false; // the page shows a sweep running: its progress goes to the bar and the status alone
  function showProgress({ done, total }) {
    showProgressBar({ done, total });
    setText($('#open-patch-status'), t('open.patchRunning', { done, total: total || '…' }));
  }
  /**
   * A pair that works as it is: the indirect-object prompts (the names swapped, so both have the same tokens in any
   * tokenizer), or without a tokenizer an induction pair of ids (A B C D A B C → D, with E for D in the corrupted one);
   * the sample model's own pair.
   */
  function prefill(info, sample) {
    if (filled === info) return;
    filled = info;
    const ids = info.hasTokenizer ? null : sampleIds(info.config.vocabSize).split(' ').slice(0, 5);
    const pair = info.kind === 'encoder' ? { clean: ENCODER_PAIR[0], corrupted: ENCODER_PAIR[1] } : sample ? SAMPLE_PAIR : ids
      ? { clean: [...ids.slice(0, 4), ...ids.slice(0, 3)], corrupted: [...ids.slice(0, 3), ids[4], ...ids.slice(0, 3)], a: ids[3], b: ids[4] }
      : { clean: PROMPT.replace('{x}', 'John'), corrupted: PROMPT.replace('{x}', 'Mary'), a: ' Mary', b: ' John' };
    for (const [k, v] of Object.entries(pair)) { const el = $(`#open-patch-${k}`); if (!el.value) el.value = Array.isArray(v) ? v.join(' ') : v; }
  }
  // The view's shape (name, root, wants, render) is the scheduler's, which is why the Open tab's views look alike.
  return {
    name: 'openPatch',
    root,
    /** The sweep's progress between two drawings (the session's, not the scheduler's): the bar and the status. */
    showProgress(p) { if (showing) showProgress(p); },
    wants: (r) => r.kind === 'hf' && r.load.status === 'ready',
    render(state, r) {
      // Patching compares next-token logits: an encoder has none to compare (its two prompts can still be compared).
      const enc = r.info.kind === 'encoder';
      for (const id of ['answers', 'btn', 'text', 'out']) $(`#open-patch-${id}`).hidden = enc;
      $('#open-patch-a').required = $('#open-patch-b').required = !enc;
      prefill(r.info, state.open.sample);
      if (enc) { showing = false; return; }
      const s = r.patch;
      const running = s?.status === 'running';
      $('#open-patch-btn').disabled = running;
      $('#open-patch-cancel').hidden = !running;
      const bar = $('#open-patch-progress');
      bar.hidden = !running;
      showing = running;
      if (running) showProgress(s);
      else {
        setText($('#open-patch-status'), !s ? ''
          : s.status === 'cancelled' ? t('open.patchCancelled') : s.status === 'problem' ? t(s.problem.key, s.problem.vars)
            : s.status === 'error' ? s.error.message : t('open.patchDone', { n: s.value.layers * s.value.heads, T: s.value.tokens }));
      }
      if (s?.status !== 'done') { if (!running) { out.innerHTML = ''; drawn = null; } return; }
      if (drawn === s.value && out.dataset.lang === state.lang) return;
      drawn = s.value;
      out.dataset.lang = state.lang;
      const { layers: L, heads: H, recovered: v, answers } = s.value;
      const caption = t('open.patchMap', { a: answers[0], b: answers[1], clean: s.value.clean.toFixed(3), corrupted: s.value.corrupted.toFixed(3) });
      const head = Array.from({ length: H }, (_, h) => `<th scope="col">${escapeHtml(t('head', { n: h + 1 }))}</th>`).join('');
      const rows = Array.from({ length: L }, (_, l) => `<tr><th scope="row">${escapeHtml(t('mv.layer', { n: l + 1 }))}</th>${
        Array.from({ length: H }, (_, h) => `<td data-layer="${l}" data-head="${h}" data-value="${v[l * H + h]}">${v[l * H + h].toFixed(3)}</td>`).join('')}</tr>`).join('');
      out.innerHTML = `<figure class="open-patch-map"><figcaption>${escapeHtml(caption)}</figcaption>${nearWarning(s.value)}<canvas role="img"></canvas>
        <p class="hint">${escapeHtml(t('open.patchScale'))}</p></figure>
        <details><summary>${escapeHtml(t('open.patchNumbers'))}</summary><div class="open-patch-table"><table><thead><tr><td></td>${head}</tr></thead><tbody>${rows}</tbody></table></div></details>`;
      const c = out.querySelector('canvas');
      // Cells large enough to see on a small model, small enough that a 12 × 12 (or wider) one fits a phone.
      const CELL = Math.max(14, Math.min(36, Math.floor(320 / H)));
      drawHeadMap(c, v, L, H, { cell: CELL, left: LEFT, top: TOP, colors: PATCH_COLORS, signed: true });
      c.setAttribute('aria-label', `${caption} ${strongest(v, L, H)}`);
    },
  };
}
