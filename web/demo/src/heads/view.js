// The head view section of our models: every head's lines from queries to keys, in the head view every model shares
// (maps/headview.js), with a toggle per head.
import { $ } from '../dom.js';
import { HeadView } from '../maps/headview.js';

export function createHeadsView(app) {
  const hv = new HeadView($('#headview'), {
    onToggle: (off) => { app.state.off = off; app.invalidate(); },
    onSelect: (i) => { app.state.query = i; app.invalidate(); },
  });
  return {
    name: 'heads',
    root: $('#hv-section'),
    wants: (r) => !r.entry && !r.sourceEmpty,
    // A generator: one head's lines per piece (HeadView.update).
    *render(state, r) {
      $('#headview').hidden = !!r.empty;
      if (r.empty) return;
      yield* hv.update({ rows: r.rows, cols: r.cols, weights: r.weights.data, H: r.H, off: state.off.filter((h) => h < r.H), selected: r.qi });
    },
  };
}
