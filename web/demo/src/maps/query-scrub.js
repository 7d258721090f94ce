// The query scrubber beside the maps (index.html's #query-pick, in the shared .map-tools): a long input's query
// without scrolling back to its chip, and arrow keys on it. One view for every model, so it always moves the query of
// the model shown: the included model's (state.query) or the opened one's (state.open.query), never the hidden one's.
import { $ } from '../dom.js';

/** @param {{ state: object, invalidate: () => void }} app */
export function createQueryScrubView(app) {
  const pick = $('#query-pick'), range = $('#query-range');
  range.addEventListener('input', (e) => {
    const i = Number(e.target.value);
    if (app.state.mode === 'open') app.state.open.query = i;
    else app.state.query = i;
    app.invalidate();
  });
  return {
    name: 'queryScrub',
    // Drawn at the selected row; not while decoding, where the step is the query (the decoder's controls).
    render(state, r) {
      pick.hidden = !!r.entry || !!r.empty || state.mode === 's2s' || !(r.L > 1);
      if (pick.hidden) return;
      range.max = String(r.L - 1);
      range.value = String(r.qi);
      const said = `${r.rows[r.qi]} ${r.qi}`;
      range.setAttribute('aria-valuetext', said);
      $('#query-out').textContent = said;
    },
  };
}
