'use strict';

// The job graph: operators laid out left to right by their distance from
// the sources, each coloured by where its busiest subtask's time goes
// (Flink's job graph colours: idle blue, busy red, backpressured grey),
// edges labelled with their partitioning. Clicking a node selects it
// (onSelect), which the job page shows as its subtasks.

const NODE_W = 190, NODE_H = 74, GAP_X = 80, GAP_Y = 26, GRAPH_PAD = 14;

// layers assigns each operator its column: 0 for sources, else one more
// than its furthest input (the graph has no cycles: the daemon refuses
// them).
function layers(ops) {
  const byUid = new Map(ops.map(op => [op.uid, op]));
  const col = new Map();
  const visit = (op, depth) => {
    if (col.has(op.uid)) return col.get(op.uid);
    if (depth > ops.length) return 0; // a cycle cannot happen; do not loop if it did
    let c = 0;
    for (const i of op.inputs || []) {
      const from = byUid.get(i.uid);
      if (from) c = Math.max(c, visit(from, depth + 1) + 1);
    }
    col.set(op.uid, c);
    return c;
  };
  ops.forEach(op => visit(op, 0));
  return col;
}

// layout places the nodes: columns by layers, rows ordered by the mean row
// of their inputs (one barycentre pass), columns centred vertically.
function layout(ops) {
  const col = layers(ops);
  const columns = [];
  for (const op of ops) (columns[col.get(op.uid)] ||= []).push(op);
  const row = new Map();
  columns.forEach((c, ci) => {
    if (ci > 0) {
      const mean = op => {
        const rs = (op.inputs || []).map(i => row.get(i.uid)).filter(r => r != null);
        return rs.length ? rs.reduce((a, b) => a + b, 0) / rs.length : 0;
      };
      c.sort((a, b) => mean(a) - mean(b));
    }
    c.forEach((op, ri) => row.set(op.uid, ri));
  });
  const tallest = Math.max(1, ...columns.map(c => c.length));
  const pos = new Map();
  columns.forEach((c, ci) => {
    const offset = (tallest - c.length) * (NODE_H + GAP_Y) / 2;
    c.forEach((op, ri) => pos.set(op.uid, {
      x: GRAPH_PAD + ci * (NODE_W + GAP_X),
      y: GRAPH_PAD + offset + ri * (NODE_H + GAP_Y),
    }));
  });
  return {
    pos,
    width: GRAPH_PAD * 2 + columns.length * NODE_W + Math.max(0, columns.length - 1) * GAP_X,
    height: GRAPH_PAD * 2 + tallest * NODE_H + (tallest - 1) * GAP_Y,
  };
}

// opStatus names what dominates an operator's time: backpressured, busy or
// idle (nothing before the first figures).
function opStatus(op) {
  const b = op.busyTimeMsPerSecond || 0, bp = op.backPressuredTimeMsPerSecond || 0, i = op.idleTimeMsPerSecond || 0;
  if (!b && !bp && !i) return 'unknown';
  if (bp >= b && bp >= i) return 'backpressured';
  return b >= i ? 'busy' : 'idle';
}

function mix(a, b, t) {
  const p = c => [1, 3, 5].map(k => parseInt(c.slice(k, k + 2), 16));
  const [x, y] = [p(a), p(b)];
  return '#' + x.map((v, k) => Math.round(v + (y[k] - v) * t).toString(16).padStart(2, '0')).join('');
}

// nodeFill is Flink's colouring: from light blue (idle) to red (busy), and
// grey to near black the more the operator is backpressured.
function nodeFill(op) {
  const bp = (op.backPressuredTimeMsPerSecond || 0) / 1000;
  if (opStatus(op) === 'backpressured') return mix('#d5dae0', '#3b4450', bp);
  return mix('#dbe9fb', '#e0483e', (op.busyTimeMsPerSecond || 0) / 1000);
}

const pct = ms => `${Math.round((ms || 0) / 10)}%`;

// jobGraph draws the operators of job; selected is the uid shown with a
// heavier outline.
function jobGraph(job, selected, onSelect) {
  const ops = job.operators || [];
  const { pos, width, height } = layout(ops);
  const active = ACTIVE_STATES.has(job.state);
  const root = svg('svg', { id: 'job-graph', class: 'graph', width, height, viewBox: `0 0 ${width} ${height}`,
    role: 'group', 'aria-label': 'job graph' });
  root.append(svg('defs', {}, svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5,
    markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow-head' }))));
  const edges = svg('g', { class: 'edges' });
  for (const op of ops) {
    const to = pos.get(op.uid);
    for (const i of op.inputs || []) {
      const from = pos.get(i.uid);
      if (!from) continue;
      const x1 = from.x + NODE_W, y1 = from.y + NODE_H / 2, x2 = to.x - 2, y2 = to.y + NODE_H / 2;
      const mx = (x1 + x2) / 2;
      const label = i.sideOutput ? `${i.partitioning} · ${i.sideOutput}` : i.partitioning;
      edges.append(svg('g', { class: 'edge edge-' + token(i.partitioning), 'data-from': i.uid, 'data-to': op.uid, 'data-label': label },
        svg('path', { d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, fill: 'none', 'marker-end': 'url(#arrow)' }),
        svg('text', { x: mx, y: (y1 + y2) / 2 - 5, 'text-anchor': 'middle', class: 'edge-label' }, label)));
    }
  }
  root.append(edges);
  const nodes = svg('g', { class: 'nodes' });
  for (const op of ops) {
    const { x, y } = pos.get(op.uid);
    const status = active ? opStatus(op) : 'unknown';
    const fill = active && status !== 'unknown' ? nodeFill(op) : '#eef1f4';
    const dark = status === 'backpressured' && (op.backPressuredTimeMsPerSecond || 0) > 550 ||
      status === 'busy' && (op.busyTimeMsPerSecond || 0) > 650;
    const select = () => onSelect(op.uid);
    const g = svg('g', { class: `node status-${status}${dark ? ' dark' : ''}${op.uid === selected ? ' selected' : ''}`,
      'data-uid': op.uid, 'data-status': status, transform: `translate(${x},${y})`, tabindex: 0, role: 'button',
      'aria-label': `operator ${op.uid}: show its subtasks`, onclick: select,
      onkeydown: e => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); select(); } } },
    svg('title', {}, `${op.uid} (${op.type}), parallelism ${op.parallelism}\n` +
      `busy ${pct(op.busyTimeMsPerSecond)}, backpressured ${pct(op.backPressuredTimeMsPerSecond)}, idle ${pct(op.idleTimeMsPerSecond)} ` +
      '(the largest over its subtasks)'),
    svg('rect', { width: NODE_W, height: NODE_H, rx: 5, fill, class: 'node-box' }),
    svg('text', { x: 10, y: 18, class: 'node-uid' }, op.uid),
    svg('text', { x: 10, y: 34, class: 'node-type' }, `${op.type} · parallelism ${op.parallelism}`),
    svg('text', { x: 10, y: 50, class: 'node-rates' }, `in ${fmtRate(op.recordsInPerSec)}/s · out ${fmtRate(op.recordsOutPerSec)}/s`),
    svg('text', { x: 10, y: 66, class: 'node-times' }, active
      ? `busy ${pct(op.busyTimeMsPerSecond)} · bp ${pct(op.backPressuredTimeMsPerSecond)} · idle ${pct(op.idleTimeMsPerSecond)}`
      : 'not running'));
    nodes.append(g);
  }
  root.append(nodes);
  return root;
}

function graphLegend() {
  const item = (fill, label) => h('span', { class: 'legend-item' }, swatch(fill), label);
  return h('div', { class: 'legend graph-legend' },
    item(mix('#dbe9fb', '#e0483e', 0), 'idle'),
    item(mix('#dbe9fb', '#e0483e', 0.5), 'half busy'),
    item(mix('#dbe9fb', '#e0483e', 1), 'busy'),
    item(mix('#d5dae0', '#3b4450', 1), 'backpressured'),
    h('span', { class: 'hint' }, 'The largest share over each operator\'s subtasks. Click an operator for its subtasks.'));
}
