// Toasts: short notices in the corner (policy reloads and rejections,
// notification errors). The same key again bumps a counter on the toast
// already shown instead of stacking copies; at most five are shown.

import { $, h } from './dom.js';

/**
 * @typedef {Object} Toast
 * @property {HTMLElement} el
 * @property {number} count
 * @property {number} timer
 * @property {HTMLElement} titleEl
 * @property {number} ttl ms; 0 stays until dismissed
 */

/** @type {Map<string, Toast>} */
const toastsByKey = new Map();

/**
 * Shows a toast. The same key again (a burst of identical events) bumps a
 * counter on the toast already shown instead of stacking copies.
 * @param {'ok' | 'info' | 'error'} kind
 * @param {string} title
 * @param {string} text
 * @param {number} ttl ms; 0 stays until dismissed
 * @param {string} [key]
 */
export function toast(kind, title, text, ttl, key) {
  const known = key && toastsByKey.get(key);
  if (known && known.el.isConnected) {
    known.count += 1;
    known.titleEl.textContent = `${title} (×${known.count})`;
    armToast(known);
    return;
  }
  const close = h('button', { type: 'button', class: 'toast-close', 'aria-label': 'Dismiss' }, '×');
  const titleEl = h('div', { class: 'toast-title' }, title);
  const el = h('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status', dataset: { key: key || '' } },
    titleEl, close, text ? h('div', { class: 'toast-body' }, text) : null);
  /** @type {Toast} */
  const entry = { el, count: 1, timer: 0, titleEl, ttl };
  if (key) toastsByKey.set(key, entry);
  close.addEventListener('click', () => removeToast(key, el));
  const box = $('toasts');
  box.append(el);
  while (box.children.length > 5) {
    const first = /** @type {HTMLElement} */ (box.firstElementChild);
    removeToast(first.dataset.key, first);
  }
  armToast(entry);
}

/** @param {Toast} entry */
function armToast(entry) {
  clearTimeout(entry.timer);
  if (entry.ttl > 0) entry.timer = setTimeout(() => removeToast(null, entry.el), entry.ttl);
}

/**
 * @param {string | null | undefined} key
 * @param {HTMLElement} el
 */
function removeToast(key, el) {
  el.remove();
  const known = key ? toastsByKey.get(key) : undefined;
  if (key && known && known.el === el) toastsByKey.delete(key);
}

/**
 * Removes the toasts whose key starts with prefix.
 * @param {string} prefix
 */
export function dismissToasts(prefix) {
  for (const [key, entry] of [...toastsByKey]) {
    if (key.startsWith(prefix)) {
      entry.el.remove();
      toastsByKey.delete(key);
    }
  }
}

/** Removes every toast (signing out). */
export function clearToasts() {
  $('toasts').replaceChildren();
  toastsByKey.clear();
}
