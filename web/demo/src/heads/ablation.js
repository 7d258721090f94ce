// Switching heads of the trained language model off: one toggle button per layer and head (from the model's own
// sizes and named heads), what is off, "restore all", and, while heads are off, the prediction and the greedy
// continuation with all heads beside the ones without them. The next-character list above already shows the model
// with the heads off (models/compute.js runs it with `ablate`).
import { t } from '../i18n.js';
import { $, escapeHtml, escapeAttr } from '../dom.js';
import { HEAD_COLORS } from '../maps/colors.js';
import { headName } from './names.js';
import { sortHeads } from '../state.js';
import { showToken } from '../models/trained.js';
import { repeatedPart, copyMarks, copyingHtml } from '../copying/copying.js';
import { percent as pct } from '../percent.js';

const shortName = (x) => t('abl.short', { l: x.layer + 1, h: x.head + 1 });

/** The most likely next token after the last position of `logits` [T, V], with its probability. */
function top1(logits) {
  const [T, V] = logits.shape;
  const x = logits.data.subarray((T - 1) * V, T * V);
  let best = 0, m = -Infinity;
  for (let k = 0; k < V; k++) if (x[k] > m) { m = x[k]; best = k; }
  let z = 0;
  for (let k = 0; k < V; k++) z += Math.exp(x[k] - m);
  return { id: best, p: 1 / z };
}

/** @param {{ state: object, invalidate: () => void, continueChars: number }} app */
export function createAblationView(app) {
  const root = $('#ablation');
  const heads = $('#ablation-heads');
  let current = []; // the heads off in the result last drawn (a hand-edited hash may hold others: not these)
  heads.addEventListener('click', (e) => {
    const b = e.target.closest('[data-layer]');
    if (!b) return;
    const layer = Number(b.dataset.layer), head = Number(b.dataset.head);
    const on = current.some((x) => x.layer === layer && x.head === head);
    app.state.ablate = sortHeads(on ? current.filter((x) => x.layer !== layer || x.head !== head) : [...current, { layer, head }]);
    app.invalidate();
  });
  $('#ablation-restore').addEventListener('click', () => { app.state.ablate = []; app.invalidate(); });
  // One Tab stop for all the toggles (roving tabindex): arrows move along a layer and between layers.
  heads.addEventListener('keydown', (e) => {
    const b = e.target.closest('[data-layer]');
    if (!b) return;
    const rows = [...heads.querySelectorAll('.abl-layer')].map((r) => [...r.querySelectorAll('[data-layer]')]);
    const l = Number(b.dataset.layer), h = Number(b.dataset.head);
    const at = (ll, hh) => rows[ll]?.[Math.min(hh, rows[ll].length - 1)];
    const to = { ArrowLeft: at(l, h - 1), ArrowRight: at(l, h + 1), ArrowUp: at(l - 1, h), ArrowDown: at(l + 1, h), Home: rows[0][0], End: rows.at(-1).at(-1) }[e.key];
    if (!to) return;
    e.preventDefault();
    b.tabIndex = -1;
    to.tabIndex = 0;
    to.focus();
  });

  let built = '';
  let compared = { key: null, html: '' };

  /**
   * One side of the comparison: the next token and the greedy continuation with every head (ablate empty), or without
   * the ones off (whose next token the page's own run already has).
   */
  function side(r, label, ablate, logits) {
    const m = r.model, ids = r.run.ids;
    const room = Math.min(app.continueChars, m.config.maxLen - ids.length);
    const token = (id) => (id === m.vocab.bosId ? t('next.end') : showToken(m.vocab.tokens[id]));
    const opts = ablate.length ? { ablate } : {};
    const next = ablate.length ? r.run.next[0] : top1(logits);
    const text = room > 0 ? m.generate(ids, { maxNewTokens: room, ...opts }).text : '';
    return `<div class="abl-side${ablate.length ? ' off' : ''}"><b>${escapeHtml(label)}</b>`
      + `<span>${t('abl.next')} <code class="abl-next" data-p="${next.p}">${escapeHtml(token(next.id))}</code> ${pct(next.p)}</span>`
      // An empty continuation: the model ends the text here (the q stays, empty, for the tests to read).
      + `<span>${t('abl.continues')} <q class="abl-cont"${text ? '' : ' hidden'}>${escapeHtml(text)}</q>${text ? '' : `<i>${escapeHtml(t('next.end'))}</i>`}</span></div>`;
  }

  return {
    name: 'ablation',
    root,
    wants: (r) => r.kind === 'lm' && !r.entry && !!r.run,
    *render(state, r) {
      current = r.ablated;
      const { numLayers: layers, numHeads: H } = r.model.config;
      const sig = `${layers}x${H}|${t('head', { n: 1 })}|${r.model.namedHeads.map((n) => `${n.layer}/${n.head}/${n.name}`).join(',')}`;
      if (sig !== built) {
        // Each layer is a group named by its label; a button's name is what it shows, plus the head's name if it has one.
        heads.innerHTML = [...Array(layers).keys()].map((l) => `<div class="abl-layer" role="group" aria-labelledby="abl-layer-${l}"><span class="abl-layer-name" id="abl-layer-${l}">${escapeHtml(t('mv.layer', { n: l + 1 }))}</span>`
          + [...Array(H).keys()].map((h) => {
            const named = r.namedMap.get(`${l}/${h}`);
            const title = t('abl.headName', { layer: t('mv.layer', { n: l + 1 }), head: t('head', { n: h + 1 }) }) + (named ? ` (${headName(named)})` : '');
            return `<button type="button" class="chip abl-head${named ? ' named' : ''}" data-layer="${l}" data-head="${h}" aria-pressed="false" tabindex="${l || h ? -1 : 0}" title="${escapeAttr(title)}" style="--head:${HEAD_COLORS[h % HEAD_COLORS.length]}">`
              + `<span class="swatch"></span>${escapeHtml(t('mv.headShort', { n: h + 1 }))}${named ? `<span aria-hidden="true"> ★</span><span class="sr-only"> (${escapeHtml(headName(named))})</span>` : ''}</button>`;
          }).join('') + '</div>').join('');
        built = sig;
      }
      for (const b of heads.querySelectorAll('[data-layer]')) {
        b.setAttribute('aria-pressed', String(current.some((x) => x.layer === Number(b.dataset.layer) && x.head === Number(b.dataset.head))));
      }
      $('#ablation-status').textContent = current.length ? t('abl.off', { list: current.map(shortName).join(', ') }) : t('abl.none');
      $('#ablation-restore').disabled = !current.length;
      const box = $('#ablation-compare');
      box.hidden = !current.length;
      if (!current.length) return;
      // Two forward passes and two continuations: only while heads are off, only when the text or the heads changed.
      const key = `${r.run.ids.join(',')}|${current.map(shortName).join(',')}|${state.lang}`;
      if (compared.key !== key) {
        yield;
        const m = r.model, ids = r.run.ids, withoutLabel = t('abl.without', { list: current.map(shortName).join(', ') });
        const logits = m.forward(ids, { needAttention: false }).logits;
        const all = side(r, t('abl.all'), [], logits);
        yield;
        let html = all + side(r, withoutLabel, current);
        // A text with a repeated part (the Repetition example): what the heads do for copying, position by position.
        const rep = repeatedPart(ids);
        if (rep) {
          yield;
          const off = m.forward(ids, { ablate: current, needAttention: false }).logits;
          const chars = Array.from(ids.slice(rep.start), (id) => m.vocab.tokens[id]);
          html += copyingHtml({ chars, all: copyMarks(ids, logits, rep.start), without: copyMarks(ids, off, rep.start), allLabel: t('abl.all'), withoutLabel });
        }
        compared = { key, html };
      }
      box.innerHTML = compared.html;
    },
  };
}
