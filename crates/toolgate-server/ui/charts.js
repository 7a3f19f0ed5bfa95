// The two charts, drawn on canvas with no library: decisions per second
// (stacked allow / hold / escalate / block) and the daemon's check latency (p50,
// p99), over the last 10 minutes of 1-second buckets. Owns the series
// (seeded from /v1/state, extended by each `stats` event), the hover
// read-outs and redrawing on resize, zoom and theme changes.

import { $ } from './dom.js';
import { micros, microsShort, number, time } from './format.js';
import { S, SERIES_SECONDS } from './state.js';
import { renderRates, renderTotals } from './tiles.js';

/** @import { Bucket } from './api.js' */

/** The decisions a bucket counts, in the order they are stacked in totals. */
const KINDS = /** @type {const} */ (['allow', 'hold', 'escalate', 'block']);

/** @typedef {{start: number, end: number}} TimeWindow */
/** @typedef {{max: number, step: number}} Scale */

/**
 * The buckets of GET /v1/state `series`.
 * @param {Bucket[]} series
 */
export function seedSeries(series) {
  for (const b of series) if (b && typeof b.t === 'number') S.series.set(b.t, b);
  pruneSeries();
  queueDraw();
}

/**
 * A `stats` event: the second that just finished.
 * @param {Bucket & {type?: string}} msg
 */
export function onStats(msg) {
  const { type, ...bucket } = msg;
  void type;
  if (typeof bucket.t !== 'number') return;
  S.series.set(bucket.t, bucket);
  if (bucket.t >= S.totalsFrom) {
    for (const k of KINDS) S.totals[k] += bucket[k] || 0;
    renderTotals();
  }
  pruneSeries();
  queueDraw();
}

function pruneSeries() {
  let latest = S.latestT;
  for (const t of S.series.keys()) if (t > latest) latest = t;
  S.latestT = latest;
  for (const t of S.series.keys()) if (t <= latest - SERIES_SECONDS) S.series.delete(t);
  renderRates();
}

/** Redraws both charts at the next animation frame (once however often asked). */
export function queueDraw() {
  if (S.drawQueued) return;
  S.drawQueued = true;
  requestAnimationFrame(() => {
    S.drawQueued = false;
    drawCharts();
  });
}

/** Draws both charts now, if the dashboard is shown. */
export function drawCharts() {
  if ($('app').hidden) return;
  drawDecisionsChart();
  drawLatencyChart();
}

/**
 * @param {string} name a CSS custom property of the page
 * @returns {string}
 */
function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

/**
 * Sizes the backing store to CSS pixels × devicePixelRatio, so lines stay sharp.
 * @param {HTMLCanvasElement} canvas
 * @returns {{ctx: CanvasRenderingContext2D, w: number, h: number}}
 */
function prepareCanvas(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const rect = canvas.getBoundingClientRect();
  const w = Math.max(1, Math.round(rect.width * dpr));
  const ht = Math.max(1, Math.round(rect.height * dpr));
  if (canvas.width !== w || canvas.height !== ht) {
    canvas.width = w;
    canvas.height = ht;
  }
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, rect.width, rect.height);
  return { ctx, w: rect.width, h: rect.height };
}

/**
 * A round axis maximum and step (1, 2, 5 × 10^k) for about 4 gridlines.
 * @param {number} max
 * @returns {Scale}
 */
function niceScale(max) {
  if (!(max > 0)) return { max: 1, step: 1 };
  const rough = max / 4;
  const mag = 10 ** Math.floor(Math.log10(rough));
  const norm = rough / mag;
  const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  return { max: Math.ceil(max / step) * step, step };
}

const PAD = { left: 44, right: 8, top: 8, bottom: 18 };

/**
 * The 600 seconds on the x axis, ending at the newest bucket.
 * @returns {TimeWindow}
 */
function timeWindow() {
  const end = S.latestT || Math.floor(Date.now() / 1000) - 1;
  return { start: end - SERIES_SECONDS + 1, end };
}

/**
 * @param {CanvasRenderingContext2D} ctx
 * @param {number} w
 * @param {number} hgt
 * @param {Scale} scale
 * @param {(v: number) => string} fmt the y axis labels
 * @param {TimeWindow} win
 * @returns {{plotW: number, plotH: number}}
 */
function drawGrid(ctx, w, hgt, scale, fmt, win) {
  const plotW = w - PAD.left - PAD.right;
  const plotH = hgt - PAD.top - PAD.bottom;
  ctx.font = `10px ${cssVar('--sans') || 'sans-serif'}`;
  ctx.fillStyle = cssVar('--muted');
  ctx.strokeStyle = cssVar('--grid');
  ctx.lineWidth = 1;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (let v = 0; v <= scale.max + scale.step / 2; v += scale.step) {
    const y = Math.round(PAD.top + plotH - (v / scale.max) * plotH) + 0.5;
    ctx.beginPath();
    ctx.moveTo(PAD.left, y);
    ctx.lineTo(PAD.left + plotW, y);
    ctx.stroke();
    ctx.fillText(fmt(v), PAD.left - 6, y);
  }
  // Time labels on whole minutes, every two minutes.
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  const firstMinute = Math.ceil(win.start / 60) * 60;
  for (let t = firstMinute; t <= win.end; t += 60) {
    if ((t / 60) % 2 !== 0) continue;
    const x = PAD.left + ((t - win.start + 0.5) / SERIES_SECONDS) * plotW;
    const d = new Date(t * 1000);
    const label = time(d, d).slice(0, 5); // HH:MM
    // Keep the label inside the canvas near the edges.
    const half = ctx.measureText(label).width / 2;
    ctx.fillText(label, Math.min(Math.max(x, PAD.left + half), w - half - 1), PAD.top + plotH + 4);
  }
  return { plotW, plotH };
}

/**
 * @param {CanvasRenderingContext2D} ctx
 * @param {number | null} t the hovered second
 * @param {TimeWindow} win
 * @param {number} plotW
 * @param {number} plotH
 */
function drawHoverLine(ctx, t, win, plotW, plotH) {
  if (t == null || t < win.start || t > win.end) return;
  const x = Math.round(PAD.left + ((t - win.start + 0.5) / SERIES_SECONDS) * plotW) + 0.5;
  ctx.strokeStyle = cssVar('--muted');
  ctx.setLineDash([3, 3]);
  ctx.beginPath();
  ctx.moveTo(x, PAD.top);
  ctx.lineTo(x, PAD.top + plotH);
  ctx.stroke();
  ctx.setLineDash([]);
}

function drawDecisionsChart() {
  const canvas = $('dec-chart', HTMLCanvasElement);
  const { ctx, w, h: hgt } = prepareCanvas(canvas);
  const win = timeWindow();
  let max = 0;
  let sum = { allow: 0, hold: 0, block: 0, escalate: 0 };
  for (let t = win.start; t <= win.end; t++) {
    const b = S.series.get(t);
    if (!b) continue;
    max = Math.max(max, (b.allow || 0) + (b.hold || 0) + (b.block || 0) + (b.escalate || 0));
    for (const k of KINDS) sum[k] += b[k] || 0;
  }
  const scale = niceScale(max);
  const { plotW, plotH } = drawGrid(ctx, w, hgt, scale, (v) => number(v), win);
  const bw = plotW / SERIES_SECONDS;
  const colors = { allow: cssVar('--allow'), hold: cssVar('--hold'), escalate: cssVar('--escalate'), block: cssVar('--block') };
  // Stack bottom-up: allow, hold, escalate, block. One path per colour is
  // much cheaper than a fill per rectangle.
  /** @type {Array<[keyof typeof colors, Array<keyof typeof colors>]>} */
  const stack = [['allow', []], ['hold', ['allow']], ['escalate', ['allow', 'hold']], ['block', ['allow', 'hold', 'escalate']]];
  for (const [k, below] of stack) {
    ctx.beginPath();
    for (let t = win.start; t <= win.end; t++) {
      const b = S.series.get(t);
      const v = b && b[k];
      if (!b || !v) continue;
      const base = below.reduce((s, key) => s + (b[key] || 0), 0);
      const x = PAD.left + (t - win.start) * bw;
      const y0 = PAD.top + plotH - (base / scale.max) * plotH;
      const y1 = PAD.top + plotH - ((base + v) / scale.max) * plotH;
      ctx.rect(x, y1, Math.max(bw - (bw > 3 ? 1 : 0), 1), y0 - y1);
    }
    ctx.fillStyle = colors[k];
    ctx.fill();
  }
  if (max === 0) drawNoData(ctx, w, plotH, 'No decisions in the last 10 minutes');
  drawHoverLine(ctx, S.hover.dec, win, plotW, plotH);

  const readout = $('dec-readout');
  const ht = S.hover.dec;
  if (ht != null) {
    /** @type {Partial<Bucket>} */
    const b = S.series.get(ht) || {};
    readout.textContent = `${time(ht * 1000)}  allow ${b.allow || 0} · hold ${b.hold || 0} · escalate ${b.escalate || 0} · block ${b.block || 0}`;
  } else {
    readout.textContent = `10 min: ${number(sum.allow)} allow · ${number(sum.hold)} hold · ${number(sum.escalate)} escalate · ${number(sum.block)} block`;
  }
}

function drawLatencyChart() {
  const canvas = $('lat-chart', HTMLCanvasElement);
  const { ctx, w, h: hgt } = prepareCanvas(canvas);
  const win = timeWindow();
  let max = 0;
  for (let t = win.start; t <= win.end; t++) {
    const b = S.series.get(t);
    if (b) max = Math.max(max, b.p99_us || 0, b.p50_us || 0);
  }
  const scale = niceScale(max);
  const { plotW, plotH } = drawGrid(ctx, w, hgt, scale, (v) => (v === 0 ? '0' : microsShort(v)), win);
  const bw = plotW / SERIES_SECONDS;
  /** @param {number} v */
  const yOf = (v) => PAD.top + plotH - (v / scale.max) * plotH;
  /** @param {number} t */
  const xOf = (t) => PAD.left + (t - win.start + 0.5) * bw;

  // Seconds without checks have no latency: a point is drawn for every
  // second that had checks, joined to the previous one unless more than
  // a minute lies between (light traffic still reads as a line).
  /**
   * @param {'p50_us' | 'p99_us'} key
   * @param {string} color
   * @param {number} width
   */
  const line = (key, color, width) => {
    /** @type {Array<[number, number]>} */
    const points = [];
    for (let t = win.start; t <= win.end; t++) {
      const b = S.series.get(t);
      const v = b && b[key];
      if (v !== undefined && v > 0) points.push([t, v]);
    }
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    ctx.lineWidth = width;
    ctx.lineJoin = 'round';
    ctx.lineCap = 'round';
    ctx.beginPath();
    points.forEach(([t, v], i) => {
      const joined = i > 0 && t - points[i - 1][0] <= 60;
      if (joined) ctx.lineTo(xOf(t), yOf(v));
      else ctx.moveTo(xOf(t), yOf(v));
    });
    ctx.stroke();
    for (const [t, v] of points) {
      ctx.beginPath();
      ctx.arc(xOf(t), yOf(v), 2.5, 0, 2 * Math.PI);
      ctx.fill();
    }
  };
  line('p99_us', cssVar('--p99'), 2);
  line('p50_us', cssVar('--p50'), 2);
  if (max === 0) drawNoData(ctx, w, plotH, 'No checks in the last 10 minutes');
  ctx.lineWidth = 1;
  drawHoverLine(ctx, S.hover.lat, win, plotW, plotH);

  const readout = $('lat-readout');
  const ht = S.hover.lat;
  if (ht != null) {
    /** @type {Partial<Bucket>} */
    const b = S.series.get(ht) || {};
    readout.textContent = `${time(ht * 1000)}  p50 ${micros(b.p50_us)} · p99 ${micros(b.p99_us)}`;
  } else {
    const last = lastNonEmpty();
    readout.textContent = last ? `last: p50 ${micros(last.p50_us)} · p99 ${micros(last.p99_us)}` : '';
  }
}

/** @returns {Bucket | null} the newest bucket that had checks */
function lastNonEmpty() {
  for (let t = S.latestT; t > S.latestT - SERIES_SECONDS; t--) {
    const b = S.series.get(t);
    if (b && b.p50_us !== undefined && b.p50_us > 0) return b;
  }
  return null;
}

/**
 * @param {CanvasRenderingContext2D} ctx
 * @param {number} w
 * @param {number} plotH
 * @param {string} text
 */
function drawNoData(ctx, w, plotH, text) {
  ctx.fillStyle = cssVar('--faint');
  ctx.font = `12px ${cssVar('--sans') || 'sans-serif'}`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  ctx.fillText(text, PAD.left + (w - PAD.left - PAD.right) / 2, PAD.top + plotH / 2);
}

/**
 * Hovering a chart shows that second's numbers in its header.
 * @param {HTMLCanvasElement} canvas
 * @param {'dec' | 'lat'} key
 */
function bindChartHover(canvas, key) {
  canvas.addEventListener('mousemove', (ev) => {
    const rect = canvas.getBoundingClientRect();
    const plotW = rect.width - PAD.left - PAD.right;
    const x = ev.clientX - rect.left - PAD.left;
    if (x < 0 || x > plotW) {
      S.hover[key] = null;
    } else {
      const win = timeWindow();
      S.hover[key] = win.start + Math.min(SERIES_SECONDS - 1, Math.floor((x / plotW) * SERIES_SECONDS));
    }
    queueDraw();
  });
  canvas.addEventListener('mouseleave', () => {
    S.hover[key] = null;
    queueDraw();
  });
}

/** Redraw on resize and when the pixel ratio changes (zoom, other monitor). */
function watchCanvasSize() {
  if ('ResizeObserver' in window) {
    const ro = new ResizeObserver(() => queueDraw());
    ro.observe($('dec-chart'));
    ro.observe($('lat-chart'));
  }
  window.addEventListener('resize', queueDraw);
  const watchDpr = () => {
    const mq = matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`);
    mq.addEventListener('change', () => {
      queueDraw();
      watchDpr();
    }, { once: true });
  };
  watchDpr();
}

/** Hover read-outs and redrawing on size changes; once, at start. */
export function bindCharts() {
  bindChartHover($('dec-chart', HTMLCanvasElement), 'dec');
  bindChartHover($('lat-chart', HTMLCanvasElement), 'lat');
  watchCanvasSize();
}
