// One way to write times and durations across the control UI: 24-hour
// local clock times (HH:MM:SS today, YYYY-MM-DD HH:MM:SS before), and
// durations as "42s", "3m 5s", "2h 10m", "1d 4h 0m".
'use strict';

(function () {
  const pad2 = (n) => String(n).padStart(2, '0');

  /**
   * A duration in milliseconds, in words a person reads at a glance.
   * @param {number} ms
   * @returns {string}
   */
  function duration(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    const d = Math.floor(s / 86400);
    const hh = Math.floor((s % 86400) / 3600);
    const mm = Math.floor((s % 3600) / 60);
    if (d > 0) return `${d}d ${hh}h ${mm}m`;
    if (hh > 0) return `${hh}h ${mm}m`;
    if (mm > 0) return `${mm}m ${s % 60}s`;
    return `${s}s`;
  }

  /**
   * A point in time (Unix ms, an RFC 3339 string or a Date) as a 24-hour
   * local time: the clock alone today, the date too before today. Anything
   * unreadable comes back as its own text.
   * @param {number|string|Date} ts
   * @param {Date} [now]
   * @returns {string}
   */
  function time(ts, now = new Date()) {
    const d = ts instanceof Date ? ts : new Date(ts);
    if (isNaN(d)) return String(ts ?? '');
    const clock = `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
    if (d.toDateString() === now.toDateString()) return clock;
    return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${clock}`;
  }

  /**
   * How long ago `ts` was: "42s ago".
   * @param {number|string|Date} ts
   * @returns {string}
   */
  function ago(ts) {
    const t = new Date(ts).getTime();
    if (isNaN(t)) return '';
    return `${duration(Date.now() - t)} ago`;
  }

  window.toolgateFormat = { duration, time, ago };
})();
