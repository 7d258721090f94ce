// Small DOM helpers shared by the views: a query shortcut, translated text, and number formats.
import { t } from './i18n.js';

export const $ = (sel) => document.querySelector(sel);

/** Set an element's i18n key, so that a language switch re-translates it. */
export function setI18n(el, key) {
  el.dataset.i18n = key;
  el.textContent = t(key);
}

/**
 * Set `el`'s text unless it already reads so: setting the same text still replaces the node, and the browser lays
 * out and paints the page around it again (a status line drawn on every state change).
 */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** A legend tick: two decimals, three below 0.1. */
export const fmtTick = (v) => v.toFixed(v >= 0.1 ? 2 : 3);

/** Mouse position in the canvas's own CSS pixels (it may be drawn smaller by max-width: 100%). */
export function canvasPoint(canvas, e) {
  const rect = canvas.getBoundingClientRect();
  const k = (parseFloat(canvas.style.width) || rect.width) / (rect.width || 1);
  return [(e.clientX - rect.left) * k, (e.clientY - rect.top) * k];
}

/**
 * Make `root`'s children equal to `html`, touching only what differs: nodes equal to their new version stay (and so
 * cost the browser no style or layout), elements with the same tag and attributes are patched inside, anything else is
 * replaced. Typing one character then changes a few token chips, not all of them.
 */
export function morph(root, html) {
  const next = document.createElement(root.tagName);
  next.innerHTML = html;
  patchChildren(root, next);
}

const sameAttributes = (a, b) => a.attributes.length === b.attributes.length && [...a.attributes].every((x) => b.getAttribute(x.name) === x.value);

function patchChildren(from, to) {
  const old = [...from.childNodes], now = [...to.childNodes];
  now.forEach((y, i) => {
    const x = old[i];
    if (!x) from.append(y);
    else if (x.isEqualNode(y)) return;
    else if (x.nodeType === 1 && y.nodeType === 1 && x.tagName === y.tagName && sameAttributes(x, y)) patchChildren(x, y);
    else x.replaceWith(y);
  });
  for (let i = now.length; i < old.length; i++) old[i].remove();
}

/** Text for innerHTML, and for attribute values. */
export const escapeHtml = (s) => String(s).replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]);
export const escapeAttr = (s) => escapeHtml(s).replace(/"/g, '&quot;');

/** Saves `blob` as a download named `name` (the object URL is revoked once the browser has taken it). */
export function download(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

/**
 * A region whose content scrolls is a Tab stop, so that the arrow keys can scroll it; one whose content fits is not:
 * a stop that does nothing is one more key press on the way to the next control. Watches the region's own size (a
 * phone turned, a window resized); returns the check, to run again when its content changes, with `disconnect()` for
 * a region that is replaced. A region with the focus keeps its stop until the focus leaves.
 */
export function tabStopWhileScrolling(el) {
  const check = () => {
    if (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1) el.tabIndex = 0;
    else if (document.activeElement !== el) el.removeAttribute('tabindex');
  };
  const watch = typeof ResizeObserver === 'function' ? new ResizeObserver(check) : null;
  watch?.observe(el);
  check.disconnect = () => watch?.disconnect();
  return check;
}
