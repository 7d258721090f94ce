// The choice of what an opened model's maps show (beside the colour map and scale): the attention weights, the
// weights with one key hidden and rows renormalised, or value-weighted α·‖v‖; and the key that the hidden view and
// the sink mass use. While a view is chosen, a mark over every map it draws, and the legend's title, say it is a view
// and not the model. The maps themselves come from research/maps.js through the session.
import { t } from '../i18n.js';
import { $, escapeHtml } from '../dom.js';
import { shownKey } from './maps.js';

/** The mark over a map a view draws (research/maps.js' `view`), in words; '' for the model's weights. */
export const viewMark = (view) => (!view ? ''
  : view.waiting ? t(view.waiting === 'norms' ? 'rs.markWaiting' : 'rs.markComputing')
  : view.shows === 'hidden' ? t('rs.markHidden', { i: view.key, token: view.token }) : t('rs.markValue'));

/** The legend's title for a view, also the exported figure's; '' for the weights (and while the norms are computed). */
export const viewLegend = (view) => (!view || view.waiting ? ''
  : view.shows === 'hidden' ? t('rs.legendHidden', { i: view.key }) : t('rs.legendValue'));

/** @param {{ state: object, invalidate: () => void }} app */
export function createShowsView(app) {
  const o = () => app.state.open;
  const show = $('#open-show'), key = $('#open-key');
  show.addEventListener('change', () => { o().shows = show.value; app.invalidate(); });
  key.addEventListener('change', () => { o().key = Number(key.value); app.invalidate(); });
  const marks = ['#open-mark-grid', '#open-mark-maps', '#open-mark-hv'].map((sel) => $(sel));
  let keysFor = null;

  /**
   * The first map's mark says what the view is, the others and the legend say it short; all hidden for the weights
   * (and in another tab, whose legend this is too).
   */
  function mark(view) {
    const long = viewMark(view), short = viewLegend(view) || long;
    marks.forEach((m, i) => {
      const text = i === 0 ? long : short;
      m.hidden = !text;
      if (m.textContent !== text) m.textContent = text;
      m.classList.toggle('waiting', !!view?.waiting);
    });
    // The legend's title names what the colours are: a view's quantity, marked as a view, instead of "attention weight".
    const title = $('#legend .legend-title');
    const note = viewLegend(view), said = note || t('legend');
    if (title.textContent !== said) title.textContent = said;
    title.classList.toggle('legend-view', !!note);
  }

  return {
    name: 'openShows',
    // No root: drawn for every result, so that leaving the tab takes its marks off the shared legend.
    render(state, r) {
      const on = state.mode === 'open' && r.kind === 'hf' && !r.empty && !r.translation;
      $('#open-shows').hidden = !on;
      if (!on) { mark(null); return; }
      if (show.value !== state.open.shows) show.value = state.open.shows;
      // The key select lists the tokens of the input shown: rebuilt only when they change (at 512 tokens, 512 options).
      const run = r.modelRun;
      if (keysFor !== run.tokens) {
        key.innerHTML = r.cols.map((s, i) => `<option value="${i}">${i}: ${escapeHtml(s)}</option>`).join('');
        keysFor = run.tokens;
      }
      const k = String(shownKey(state.open.key, r.T));
      if (key.value !== k) key.value = k;
      mark(r.view);
    },
  };
}
