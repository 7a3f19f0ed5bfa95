// Desktop notifications, opt-in per browser: a call that newly waits for a
// person, when this tab is not the one in front. The "Notify me" button.

import { $ } from './dom.js';
import { shownWhole } from './calls.js';
import { toast } from './toasts.js';

/** @import { ApprovalView } from './api.js' */

const NOTIFY_KEY = 'toolgate.notify';
/** @type {Set<string>} approval ids already seen (notified or not) */
const notified = new Set();

/** @returns {boolean} whether this browser asked for notifications and allows them */
function notifyWanted() {
  return localStorage.getItem(NOTIFY_KEY) === 'on' && 'Notification' in window && Notification.permission === 'granted';
}

/** The button's text, state and title; hidden where there are no notifications. */
export function renderNotifyButton() {
  const btn = $('notify-btn');
  if (!('Notification' in window)) {
    btn.hidden = true;
    return;
  }
  const on = notifyWanted();
  btn.textContent = on ? 'Notifications: on' : 'Notify me';
  btn.setAttribute('aria-pressed', String(on));
  btn.title = Notification.permission === 'denied'
    ? 'This browser blocks notifications from this page: allow them in the site settings'
    : on ? 'A desktop notification when a call waits for approval and this tab is not in front (click to turn off)'
      : 'Get a desktop notification when a call waits for approval';
}

/** The button: turns notifications on (asking the browser) or off. */
export async function toggleNotify() {
  if (notifyWanted()) {
    localStorage.setItem(NOTIFY_KEY, 'off');
  } else {
    const answer = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
    localStorage.setItem(NOTIFY_KEY, answer === 'granted' ? 'on' : 'off');
    if (answer !== 'granted') toast('error', 'Notifications are blocked', 'The browser did not allow notifications for this page.', 8000);
  }
  renderNotifyButton();
}

/**
 * Notifies of approvals that were not there before (never on the first
 * load: what was already waiting is on the screen).
 * @param {ApprovalView[]} list
 * @param {boolean} loadedBefore
 */
export function notifyNew(list, loadedBefore) {
  for (const a of list) {
    if (a.state !== 'pending' || notified.has(a.id)) continue;
    notified.add(a.id);
    if (!loadedBefore || !notifyWanted() || document.visibilityState === 'visible' && document.hasFocus()) continue;
    const n = new Notification(`toolgate: ${a.risk || ''} call waits for approval`, {
      body: shownWhole(String(a.summary || '')).slice(0, 200),
      tag: a.id,
    });
    n.onclick = () => {
      window.focus();
      location.hash = `#approval/${a.id}`;
      n.close();
    };
  }
}
