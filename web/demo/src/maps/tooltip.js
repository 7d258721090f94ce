// The one hover tooltip of the page (exact values under the mouse).
import { $ } from '../dom.js';

const tip = () => $('#tooltip');

export function showTip(x, y, html) {
  const el = tip();
  el.innerHTML = html;
  el.hidden = false;
  const r = el.getBoundingClientRect();
  const left = Math.min(window.innerWidth - r.width - 8, x + 14);
  const top = y + 18 + r.height > window.innerHeight ? y - r.height - 10 : y + 18;
  el.style.transform = `translate(${Math.max(4, left)}px, ${Math.max(4, top)}px)`;
}

export const hideTip = () => { tip().hidden = true; };

/** A modal dialog sits in the top layer: the tooltip must live inside it meanwhile. */
export const moveTipInto = (parent) => parent.append(tip());
