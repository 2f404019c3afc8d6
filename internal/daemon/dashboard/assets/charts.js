'use strict';

// SVG charts for the dashboard: line charts over the daemon's sampled
// history, point charts of checkpoints, and the overview's sparklines.
// Built with createElementNS and text nodes only; colours are attributes,
// never inline styles (the CSP allows none).

const SVG_NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// One colour per operator, by its place in the job.
const PALETTE = ['#1f6fd1', '#d1495b', '#2e8540', '#c06a00', '#7b4fc9', '#00838f', '#8d6e63', '#5f6b78'];
const seriesColor = i => PALETTE[i % PALETTE.length];

// niceMax rounds a chart's top up to 1, 2 or 5 times a power of ten.
function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function clock(ms) {
  const d = new Date(ms);
  const p = n => String(n).padStart(2, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

const CHART_W = 560, CHART_H = 170, PAD_L = 54, PAD_R = 10, PAD_T = 10, PAD_B = 22;

// timeRange is the x axis of the charts: the history's span, at least a
// minute, ending at its newest sample.
function timeRange(times, spanMs) {
  if (!times.length) return null;
  const end = times[times.length - 1];
  const start = Math.max(times[0], end - spanMs);
  return [Math.min(start, end - 60000), end];
}

// chartFrame draws the axes of a chart over [t0, t1] × [0, top] and
// returns the group to draw into and the coordinate functions.
function chartFrame(range, top, fmt) {
  const [t0, t1] = range;
  const w = CHART_W - PAD_L - PAD_R, hgt = CHART_H - PAD_T - PAD_B;
  const x = t => PAD_L + (t1 === t0 ? w : (t - t0) / (t1 - t0) * w);
  const y = v => PAD_T + hgt - Math.min(v, top) / top * hgt;
  const g = svg('g', { class: 'plot' });
  const axes = svg('g', { class: 'axes' });
  for (const f of [0, 0.5, 1]) {
    const yy = y(top * f);
    axes.append(svg('line', { x1: PAD_L, x2: PAD_L + w, y1: yy, y2: yy, class: f ? 'gridline' : 'baseline' }),
      svg('text', { x: PAD_L - 6, y: yy + 4, class: 'tick', 'text-anchor': 'end' }, fmt(top * f)));
  }
  for (const [f, anchor] of [[0, 'start'], [0.5, 'middle'], [1, 'end']]) {
    axes.append(svg('text', { x: PAD_L + f * w, y: CHART_H - 6, class: 'tick', 'text-anchor': anchor },
      clock(t0 + f * (t1 - t0))));
  }
  return { g, axes, x, y };
}

function legend(series) {
  return h('div', { class: 'legend' }, series.map(s =>
    h('span', { class: 'legend-item' }, swatch(s.color), s.name)));
}

// A colour box; SVG, because a style attribute would need 'unsafe-inline'.
const swatch = color => svg('svg', { class: 'swatch', width: 10, height: 10, viewBox: '0 0 10 10' },
  svg('rect', { width: 10, height: 10, rx: 2, fill: color }));

// lineChart draws series of values sampled at times; null values are gaps.
// opts: id, title, spanMs, fmt (tick labels), top (fixed maximum) or the
// largest value.
function lineChart(opts, times, series) {
  const range = timeRange(times, opts.spanMs);
  const fig = h('figure', { class: 'chart', id: opts.id });
  fig.append(h('figcaption', {}, opts.title));
  if (!range || !series.length) {
    fig.append(h('p', { class: 'hint chart-empty' }, opts.empty || 'No samples yet.'));
    return fig;
  }
  const values = series.flatMap(s => s.values.filter(v => v != null));
  const top = opts.top || niceMax(Math.max(0, ...values));
  const { g, axes, x, y } = chartFrame(range, top, opts.fmt || (v => fmtRate(v)));
  let points = 0;
  for (const s of series) {
    let run = [];
    const runs = [];
    s.values.forEach((v, i) => {
      if (v == null || times[i] < range[0]) { if (run.length) runs.push(run); run = []; return; }
      run.push(`${x(times[i]).toFixed(1)},${y(v).toFixed(1)}`);
    });
    if (run.length) runs.push(run);
    for (const r of runs) {
      points += r.length;
      g.append(r.length === 1
        ? svg('circle', { cx: r[0].split(',')[0], cy: r[0].split(',')[1], r: 2, fill: s.color, class: 'point' })
        : svg('polyline', { points: r.join(' '), fill: 'none', stroke: s.color, 'stroke-width': 1.5, class: 'line', 'data-series': s.name }));
    }
  }
  const last = series.map(s => s.values[s.values.length - 1]);
  fig.append(svg('svg', { viewBox: `0 0 ${CHART_W} ${CHART_H}`, class: 'chart-svg', 'data-points': points, role: 'img',
    'aria-label': opts.title }, axes, g,
  svg('title', {}, series.map((s, i) => `${s.name}: ${last[i] == null ? '—' : (opts.fmt || fmtRate)(last[i])}`).join('\n'))));
  if (series.length > 1 || opts.legend) fig.append(legend(series));
  return fig;
}

// pointChart draws checkpoints as points at their trigger time: completed
// ones in the chart's colour, failed ones red on the axis.
function pointChart(opts, times, cps, value) {
  const range = timeRange(times, opts.spanMs);
  const fig = h('figure', { class: 'chart', id: opts.id });
  fig.append(h('figcaption', {}, opts.title));
  const shown = range ? cps.filter(c => c.time >= range[0] && c.time <= range[1] + 1000) : [];
  if (!shown.length) {
    fig.append(h('p', { class: 'hint chart-empty' }, opts.empty));
    return fig;
  }
  const done = shown.filter(c => c.status === 'COMPLETED');
  const top = niceMax(Math.max(0, ...done.map(value)));
  const { g, axes, x, y } = chartFrame([range[0], Math.max(range[1], ...shown.map(c => c.time))], top, opts.fmt);
  for (const c of shown) {
    const ok = c.status === 'COMPLETED';
    g.append(svg('circle', { cx: x(c.time).toFixed(1), cy: (ok ? y(value(c)) : y(0)).toFixed(1), r: ok ? 2.5 : 3.5,
      fill: ok ? opts.color : '#c62f2f', class: ok ? 'point' : 'point failed', 'data-cp-id': c.id },
    svg('title', {}, `${c.kind} ${c.id} ${ok ? opts.fmt(value(c)) : 'FAILED'}`)));
  }
  fig.append(svg('svg', { viewBox: `0 0 ${CHART_W} ${CHART_H}`, class: 'chart-svg', 'data-points': shown.length, role: 'img',
    'aria-label': opts.title }, axes, g));
  return fig;
}

// sparkline is a small line of values, newest on the right, in slots of
// equal width (a young job's line covers the right end only).
function sparkline(values, title, slots = 60) {
  const W = 110, H = 24;
  const top = niceMax(Math.max(0, ...values));
  const step = W / Math.max(1, slots - 1);
  const first = Math.max(0, slots - values.length);
  const pts = values.slice(-slots).map((v, i) => `${((first + i) * step).toFixed(1)},${(H - 2 - v / top * (H - 4)).toFixed(1)}`);
  return svg('svg', { class: 'sparkline', viewBox: `0 0 ${W} ${H}`, width: W, height: H, 'data-points': values.length },
    svg('title', {}, title),
    pts.length > 1 ? svg('polyline', { points: pts.join(' '), fill: 'none', stroke: '#1f6fd1', 'stroke-width': 1.5 })
      : pts.length ? svg('circle', { cx: W - 2, cy: pts[0].split(',')[1], r: 2, fill: '#1f6fd1' }) : null);
}
