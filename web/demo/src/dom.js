// Small DOM helpers shared by the views: a query shortcut, translated text, and number formats.
import { t } from './i18n.js';

export const $ = (sel) => document.querySelector(sel);

/** Set an element's i18n key, so that a language switch re-translates it. */
export function setI18n(el, key) {
  el.dataset.i18n = key;
  el.textContent = t(key);
}

/** A legend tick: two decimals, three below 0.1. */
export const fmtTick = (v) => v.toFixed(v >= 0.1 ? 2 : 3);

/** Mouse position in the canvas's own CSS pixels (it may be drawn smaller by max-width: 100%). */
export function canvasPoint(canvas, e) {
  const rect = canvas.getBoundingClientRect();
  const k = (parseFloat(canvas.style.width) || rect.width) / (rect.width || 1);
  return [(e.clientX - rect.left) * k, (e.clientY - rect.top) * k];
}
