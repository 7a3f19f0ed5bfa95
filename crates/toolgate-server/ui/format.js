// One way to write times, durations and numbers across the control UI:
// 24-hour local clock times (HH:MM:SS today, YYYY-MM-DD HH:MM:SS before),
// durations as "42s", "3m 5s", "2h 10m", "1d 4h 0m", countdowns as m:ss,
// counts with the browser's digit grouping and latencies in µs, ms or s.

/** @param {number} n */
const pad2 = (n) => String(n).padStart(2, '0');

/**
 * A duration in milliseconds, in words a person reads at a glance.
 * @param {number} ms
 * @returns {string}
 */
export function duration(ms) {
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
 * @param {number|string|Date|null|undefined} ts
 * @param {Date} [now]
 * @returns {string}
 */
export function time(ts, now = new Date()) {
  const d = ts instanceof Date ? ts : new Date(/** @type {number|string} */ (ts));
  if (isNaN(d.getTime())) return String(ts ?? '');
  const clock = `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
  if (d.toDateString() === now.toDateString()) return clock;
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${clock}`;
}

/**
 * How long ago `ts` was: "42s ago".
 * @param {number|string|Date} ts
 * @returns {string}
 */
export function ago(ts) {
  const t = new Date(ts).getTime();
  if (isNaN(t)) return '';
  return `${duration(Date.now() - t)} ago`;
}

/**
 * m:ss (or h:mm:ss) for countdowns.
 * @param {number} ms
 * @returns {string}
 */
export function clock(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return hh > 0 ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

const numFmt = new Intl.NumberFormat();

/**
 * A count with digit grouping, or "–" when it is not a number.
 * @param {unknown} n
 * @returns {string}
 */
export const number = (n) => (typeof n === 'number' && isFinite(n) ? numFmt.format(n) : '–');

/**
 * A latency in µs for a reading: "850 µs", "1.25 ms", "2.00 s"; "–" for none.
 * @param {number|undefined} us
 * @returns {string}
 */
export function micros(us) {
  if (!(us !== undefined && us > 0)) return '–';
  if (us < 1000) return `${Math.round(us)} µs`;
  if (us < 1e6) return `${(us / 1000).toFixed(us < 1e4 ? 2 : 1)} ms`;
  return `${(us / 1e6).toFixed(2)} s`;
}

/**
 * A latency in µs for an axis label: "850µs", "1.5ms", "2s".
 * @param {number} us
 * @returns {string}
 */
export function microsShort(us) {
  if (us < 1000) return `${Math.round(us)}µs`;
  if (us < 1e6) return `${+(us / 1000).toFixed(1)}ms`;
  return `${+(us / 1e6).toFixed(1)}s`;
}
