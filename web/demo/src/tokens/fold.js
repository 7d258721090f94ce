// The fold of a strip of token chips: offered above FOLD_FROM chips only, its words saying what a click will do.
// One owner for the included models' strip (tokens/view.js) and an opened model's (open/frame.js).
import { t } from '../i18n.js';

/** Above this many chips the strip can be folded away (its rows then scroll inside it; the maps have a scrubber). */
export const FOLD_FROM = 64;

/**
 * Wires `toggle` (a button with aria-controls naming `strip`) to fold `strip`; returns update(), to call whenever the
 * chips change. Folded stays folded while the reader types; a short input shows its chips and no button.
 */
export function createChipFold(strip, toggle) {
  let folded = false;
  function update() {
    const n = strip.querySelectorAll('.tok').length;
    toggle.hidden = n <= FOLD_FROM;
    strip.hidden = folded && !toggle.hidden;
    toggle.setAttribute('aria-expanded', String(!strip.hidden));
    const words = t(strip.hidden ? 'tok.show' : 'tok.hide', { n });
    if (toggle.textContent !== words) toggle.textContent = words;
  }
  toggle.addEventListener('click', () => { folded = !folded; update(); });
  return update;
}
