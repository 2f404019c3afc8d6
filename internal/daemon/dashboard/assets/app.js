'use strict';

// flinkgo dashboard: a hash-routed page that polls the daemon's JSON API and
// re-renders the current view. All DOM is built with createElement and text
// nodes, never innerHTML: job names, error texts and paths come from user
// specs and failing code.

const REFRESH_MS = 2000;
const GET_TIMEOUT_MS = 10000;
// The states in which a job can still be savepointed, stopped or canceled.
const ACTIVE_STATES = new Set(['CREATED', 'RUNNING', 'RESTARTING', 'FAILING']);
const STATE_ORDER = ['RUNNING', 'CREATED', 'RESTARTING', 'FAILING', 'CANCELLING',
  'SUSPENDED', 'FINISHED', 'CANCELED', 'FAILED'];
const DASH = '—';

const CANCEL_TEXT = 'Cancel stops the job now without a savepoint. Output after the last ' +
  'completed checkpoint is not committed, and a restore reprocesses everything since the ' +
  'last checkpoint or savepoint. Use “Stop with savepoint” to pause safely.';
const STOP_TEXT = "Takes a savepoint, commits the sinks' output and finishes the job. " +
  "Restore it later with flinkgo run -s <path> and the job's spec file.";

// ---------------------------------------------------------------- DOM helpers

const $ = id => document.getElementById(id);

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

const code = (text, cls) => h('code', { class: cls }, text);

// A path that wraps only after a slash; <wbr> adds no text, so textContent
// stays the exact path.
function pathCode(path, cls) {
  const parts = String(path).split(/(?<=\/)/);
  return h('code', { class: cls ? cls + ' path' : 'path' }, parts.map((p, i) => i ? [h('wbr'), p] : p));
}
// The daemon's own messages quote commands in `backticks`.
const withCode = s => String(s).split('`').map((part, i) => i % 2 ? code(part) : part);
const link = (href, text, cls) => h('a', { href, class: cls }, text);

// A class name derived from server data; classList rejects spaces.
const token = s => String(s || 'unknown').replace(/[^A-Za-z0-9_-]/g, '-');

function stateBadge(state, id) {
  return h('span', { id, class: 'state state-' + token(state) }, state || '?');
}

// Header labels ending in a space are numeric columns (right-aligned).
function table(attrs, heads, rows, emptyContent) {
  const head = h('tr', {}, heads.map(c => h('th', { class: c.endsWith(' ') ? 'num' : null }, c.trim())));
  const body = rows.length ? rows
    : h('tr', { class: 'empty' }, h('td', { colspan: heads.length }, emptyContent));
  return h('table', attrs, h('thead', {}, head), h('tbody', {}, body));
}
const num = v => h('td', { class: 'num' }, v);

// Label/value pairs; falsy entries are skipped so callers can use `cond && [..]`.
function infoList(attrs, pairs) {
  return h('dl', Object.assign({ class: 'info' }, attrs),
    pairs.filter(Boolean).map(([k, v]) => h('div', { class: 'pair' }, h('dt', {}, k), h('dd', {}, v))));
}

function section(title, ...body) {
  return h('section', { class: 'card' }, h('h2', {}, title), body);
}

// ----------------------------------------------------------------- formatting

function isTime(iso) {
  const t = iso ? Date.parse(iso) : NaN;
  // Go marshals an unset time.Time as year 1.
  return !isNaN(t) && new Date(t).getUTCFullYear() > 1;
}

function fmtTime(iso) {
  if (!isTime(iso)) return DASH;
  const d = new Date(iso);
  const p = n => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
    `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

// "1h 2m 3s": the `parts` most significant units, zeros kept after the first.
function fmtSpan(ms, parts = 3) {
  let s = Math.max(0, Math.floor((ms || 0) / 1000));
  const out = [];
  for (const [u, n] of [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]]) {
    const q = Math.floor(s / n);
    s -= q * n;
    if ((q || out.length || n === 1) && out.length < parts) out.push(q + u);
  }
  return out.join(' ');
}

const fmtAgo = iso => isTime(iso) ? fmtSpan(Date.now() - Date.parse(iso), 1) + ' ago' : DASH;

function fmtMs(ms) {
  if (ms == null) return DASH;
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return fmtSpan(ms);
}

// CheckpointConfig and RestartConfig hold Go time.Durations, which marshal as
// integer nanoseconds; accept a pre-formatted string too.
function fmtGoDuration(v) {
  if (typeof v === 'string') return v || '0s';
  if (!v) return '0s';
  if (v < 1e9) return `${+(v / 1e6).toFixed(3)}ms`;
  let s = v / 1e9;
  const hrs = Math.floor(s / 3600); s -= hrs * 3600;
  const min = Math.floor(s / 60); s -= min * 60;
  return [hrs && hrs + 'h', min && min + 'm', s && +s.toFixed(3) + 's'].filter(Boolean).join(' ');
}

const isZeroDuration = v => !v || v === '0s' || v === '0';
// Durations come from the API in milliseconds (fields ending in Ms).
const fmtMsDuration = ms => fmtGoDuration((ms || 0) * 1e6);

function fmtRate(v) {
  if (v == null) return DASH;
  if (v < 1000) return v.toFixed(1);
  if (v < 1e6) return (v / 1e3).toFixed(1) + 'k';
  return (v / 1e6).toFixed(1) + 'M';
}

const fmtCount = n => n == null ? DASH : Number(n).toLocaleString('en-US');

function fmtBytes(n) {
  if (n == null) return DASH;
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(1)} ${units[i]}`;
}

const shortId = id => String(id || '').slice(0, 8);
const jobHref = id => '#/jobs/' + encodeURIComponent(id);
const jobUrl = id => '/v1/jobs/' + encodeURIComponent(id);
const inspectHref = path => '#/savepoints/inspect?path=' + encodeURIComponent(path);

// Quote only paths a shell would split.
function shellWord(s) {
  return /^[A-Za-z0-9_\-./:=@%+,]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
}
// The daemon writes the restore command (restoreCommand of its answers:
// "flinkgo run -s <path> <the job's spec file>"); this is only the fallback
// of an answer without one.
const runLine = (path, command) => command || `flinkgo run -s ${shellWord(path)} JOB.yaml`;

// ------------------------------------------------------------------------ API

class NetError extends Error {}
class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let session = { loggedIn: false };

// The anti-CSRF token lives in this origin's localStorage, put there by the
// login page. Unlike the cookie, which the browser also sends to other
// servers on the same host at other ports, storage is per origin (port
// included), so nothing else on this machine can read it.
const CSRF_KEY = 'flinkgo.csrf';
function csrfToken() {
  try { return localStorage.getItem(CSRF_KEY) || ''; } catch (e) { return ''; }
}

async function request(method, url, body) {
  const opts = { method, credentials: 'same-origin', cache: 'no-store',
    headers: { Accept: 'application/json', 'X-Flinkgo-CSRF': csrfToken() } };
  let timer = 0;
  if (method === 'GET') {
    const ac = new AbortController();
    timer = setTimeout(() => ac.abort(), GET_TIMEOUT_MS);
    opts.signal = ac.signal;
  } else {
    // Savepoints can take long, so state-changing requests have no timeout.
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body || {});
  }
  let res, text;
  try {
    res = await fetch(url, opts);
    text = await res.text();
  } catch (e) {
    throw new NetError(e.name === 'AbortError' ? 'no answer within 10 s' : e.message);
  } finally {
    clearTimeout(timer);
  }
  let data = null, parsed = !text;
  try { data = text ? JSON.parse(text) : null; parsed = true; } catch (e) { /* reported below */ }
  if (!res.ok) {
    const err = data && data.error;
    throw new ApiError(res.status, err && err.code || '',
      err && err.message || `${res.status} ${res.statusText || 'error'}`.trim());
  }
  if (!parsed) throw new ApiError(res.status, 'invalid', `${url} did not answer JSON`);
  return data;
}

const getJSON = url => request('GET', url);
const postJSON = (url, body) => request('POST', url, body);

async function loadSession() {
  try {
    session = (await getJSON('/v1/ui/session')) || { loggedIn: false };
  } catch (e) {
    if (e instanceof NetError) throw e;
    session = { loggedIn: false };
  }
}

// --------------------------------------------------------------------- router

function decode(s) {
  try { return decodeURIComponent(s); } catch (e) { return s; }
}

function parseRoute() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const i = raw.indexOf('?');
  const path = i < 0 ? raw : raw.slice(0, i);
  const q = new URLSearchParams(i < 0 ? '' : raw.slice(i + 1));
  let m;
  if (path === '/' || path === '') return { name: 'overview', view: overviewView };
  if ((m = /^\/jobs\/([^/]+)(\/checkpoints)?\/?$/.exec(path))) {
    return { name: 'job', id: decode(m[1]), tab: m[2] ? 'checkpoints' : 'overview', view: jobView };
  }
  if (path === '/savepoints' || path === '/savepoints/') return { name: 'savepoints', view: savepointsView };
  if (path === '/savepoints/inspect') return { name: 'inspect', path: q.get('path') || '', view: inspectView };
  return { name: 'unknown', view: unknownView };
}

function routeKey(r) { return [r.name, r.id, r.tab, r.path].join('|'); }

// ------------------------------------------------------------ refresh & paint

let timer = 0;
let generation = 0;
let current = null;          // builds the current view's DOM from the last data
let shownKey = '';           // route whose data the view shows
let deferred = false;        // a paint waits for the user to finish a gesture
let pointerDown = false;

async function refresh() {
  clearTimeout(timer);
  const gen = ++generation;
  try {
    await update(gen);
  } catch (e) {
    console.error(e); // a bug must not stop the polling
  }
  if (gen === generation) timer = setTimeout(refresh, REFRESH_MS);
}

async function update(gen) {
  const route = parseRoute();
  let build = null;
  try {
    const [, data] = await Promise.all([loadSession(), route.view.load(route)]);
    if (gen !== generation) return;
    build = () => route.view.render(route, data);
    setConnError(null);
  } catch (e) {
    if (gen !== generation) return;
    if (e instanceof NetError) {
      setConnError(e.message);
      // Keep showing the last data of this page; a different page has none.
      if (shownKey !== routeKey(route)) build = () => h('p', { class: 'loading' }, 'Waiting for the daemon…');
    } else {
      setConnError(null);
      build = () => errorView(e);
    }
  }
  renderLogin();
  markNav(route);
  if (build) {
    current = build;
    shownKey = routeKey(route);
    paint();
  }
}

// Replacing the DOM under a pressed mouse button swallows the click, and
// replacing selected text loses the selection (the copy buttons' fallback
// relies on it), so such paints wait until the gesture ends.
function userBusy() {
  if (pointerDown) return true;
  const sel = window.getSelection();
  return !!(sel && !sel.isCollapsed && sel.rangeCount &&
    $('view').contains(sel.getRangeAt(0).commonAncestorContainer));
}

function paint(force) {
  if (!current) return;
  if (!force && userBusy()) { deferred = true; return; }
  deferred = false;
  const view = $('view');
  const focused = view.contains(document.activeElement) ? document.activeElement.id : '';
  let node;
  try {
    node = current();
  } catch (e) {
    console.error(e);
    node = errorView(new ApiError(0, 'render', 'cannot show this page: ' + e.message));
  }
  // A scrolled pane keeps its place; one scrolled to its end stays there.
  const scrolls = new Map([...view.querySelectorAll('[data-keep-scroll][id]')].map(el =>
    [el.id, { top: el.scrollTop, atEnd: el.scrollTop + el.clientHeight >= el.scrollHeight - 4 }]));
  view.replaceChildren(node);
  for (const el of view.querySelectorAll('[data-keep-scroll][id]')) {
    const was = scrolls.get(el.id);
    el.scrollTop = !was || was.atEnd ? el.scrollHeight : was.top;
  }
  if (focused && $(focused)) $(focused).focus();
}

document.addEventListener('pointerdown', () => { pointerDown = true; }, true);
function gestureEnded() {
  pointerDown = false;
  // After this task, so that the click following pointerup reaches its target.
  if (deferred) setTimeout(paint, 0);
}
document.addEventListener('pointerup', gestureEnded, true);
document.addEventListener('pointercancel', gestureEnded, true);
window.addEventListener('blur', gestureEnded);
document.addEventListener('selectionchange', () => { if (deferred && !userBusy()) paint(); });

function setConnError(msg) {
  let el = $('conn-error');
  if (msg == null) { if (el) el.remove(); return; }
  if (!el) {
    el = h('div', { id: 'conn-error', class: 'banner', role: 'alert' });
    $('view').before(el);
  }
  el.textContent = `cannot reach the daemon: ${msg} (retrying)`;
}

function flash(msg) {
  const el = h('div', { class: 'banner flash', role: 'alert' }, msg);
  $('view').before(el);
  setTimeout(() => el.remove(), 6000);
}

function markNav(route) {
  const onJobs = route.name === 'overview' || route.name === 'job';
  const onSavepoints = route.name === 'savepoints' || route.name === 'inspect';
  $('nav-overview').classList.toggle('active', onJobs);
  $('nav-savepoints').classList.toggle('active', onSavepoints);
  if (route.name !== 'job') document.title = 'flinkgo';
}

let loginShown = null;
function renderLogin() {
  if (loginShown === !!session.loggedIn) return; // keep the button under the mouse
  loginShown = !!session.loggedIn;
  const el = $('login-state');
  el.classList.toggle('logged-in', loginShown);
  if (loginShown) {
    el.title = 'This browser may take savepoints, stop and cancel jobs.';
    el.replaceChildren(h('span', { class: 'login-text' }, 'logged in'),
      h('button', { id: 'logout', type: 'button', class: 'link-button', onclick: logout }, 'log out'));
  } else {
    el.title = "Read-only. Run `flinkgo ui` on the daemon's machine to get a one-time login link.";
    el.replaceChildren('read-only');
  }
}

async function logout() {
  try {
    await postJSON('/v1/ui/logout', {});
  } catch (e) {
    flash('log out failed: ' + e.message);
  }
  try { localStorage.removeItem(CSRF_KEY); } catch (e) { /* nothing kept */ }
  refresh();
}

// ------------------------------------------------------------- copy & confirm

let copied = { key: '', label: '', until: 0 };

function copyButton(text, attrs) {
  const key = (attrs && attrs.id) || text;
  const label = copied.key === key && Date.now() < copied.until ? copied.label : 'copy';
  return h('button', Object.assign({ type: 'button', class: 'copy', title: 'Copy to the clipboard',
    onclick: e => copyText(text, key, e.currentTarget) }, attrs), label);
}

// The label is set on the button directly rather than by a repaint, which
// would replace the text the fallback just selected.
async function copyText(text, key, btn) {
  let label = 'copied';
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {
    // No clipboard API outside secure contexts (plain http on a LAN address)
    // or without focus: select the text so that Ctrl+C copies it.
    const el = [...$('view').querySelectorAll('code')].find(c => c.textContent === text);
    const sel = window.getSelection();
    label = 'copy failed';
    if (el) {
      sel.selectAllChildren(el);
      let ok = false;
      try { ok = document.execCommand('copy'); } catch (e2) { /* the selection stays */ }
      if (ok) sel.removeAllRanges();
      label = ok ? 'copied' : 'selected: press Ctrl+C';
    }
  }
  copied = { key, label, until: Date.now() + 2000 };
  btn.textContent = label;
  setTimeout(paint, 2100);
}

let confirmOpen = false;

// Resolves true when the user confirms. The modal lives outside #view so the
// periodic repaint leaves it alone.
function confirmDialog({ title, text, ok, cancel, danger }) {
  if (confirmOpen) return Promise.resolve(false);
  confirmOpen = true;
  const box = $('confirm'), okBtn = $('confirm-ok'), cancelBtn = $('confirm-cancel');
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  okBtn.textContent = ok;
  okBtn.classList.toggle('danger', !!danger);
  cancelBtn.textContent = cancel || 'Back';
  box.hidden = false;
  cancelBtn.focus();
  return new Promise(resolve => {
    const ac = new AbortController();
    const done = v => {
      ac.abort();
      box.hidden = true;
      confirmOpen = false;
      resolve(v);
    };
    const opt = { signal: ac.signal };
    okBtn.addEventListener('click', () => done(true), opt);
    cancelBtn.addEventListener('click', () => done(false), opt);
    box.addEventListener('click', e => { if (e.target === box) done(false); }, opt);
    document.addEventListener('keydown', e => { if (e.key === 'Escape') done(false); }, opt);
  });
}

// -------------------------------------------------------------- job actions

// The last action's outcome, kept across repaints of the job's page.
let action = null; // {jobId, busy, status: 'pending'|'ok'|'error', content: () => nodes}

function setAction(a) {
  action = a;
  paint(true);
}

// done(r) renders the answer; statusOf(r) is 'ok' or 'warn' (its colour).
async function runAction(jobId, pending, call, done, statusOf = () => 'ok') {
  setAction({ jobId, busy: true, status: 'pending', content: () => [pending] });
  try {
    const r = (await call()) || {};
    setAction({ jobId, busy: false, status: statusOf(r), content: () => done(r) });
  } catch (e) {
    setAction({ jobId, busy: false, status: 'error', content: () => [e.message] });
  }
  refresh();
}

function savepointResult(r, prefix) {
  return [
    h('div', {}, prefix, 'Savepoint written: ', pathCode(r.path, 'savepoint-path'), ' ', copyButton(r.path)),
    h('div', { class: 'restore-hint' }, 'Restore with ', pathCode(runLine(r.path, r.restoreCommand), 'run-line')),
  ];
}

function triggerSavepoint(job) {
  return runAction(job.id, 'Taking savepoint…',
    () => postJSON(jobUrl(job.id) + '/savepoints', {}),
    r => savepointResult(r, ''));
}

async function stopJob(job) {
  const ok = await confirmDialog({
    title: `Stop “${job.name || job.id}” with a savepoint?`, text: STOP_TEXT,
    ok: 'Stop with savepoint', cancel: 'Back',
  });
  if (!ok) return;
  await runAction(job.id, 'Stopping with a savepoint…',
    () => postJSON(jobUrl(job.id) + '/stop', {}),
    r => savepointResult(r, 'Job stopped. '));
}

async function cancelJob(job) {
  const ok = await confirmDialog({
    title: `Cancel “${job.name || job.id}”?`, text: CANCEL_TEXT,
    ok: 'Cancel job', cancel: 'Keep running', danger: true,
  });
  if (!ok) return;
  await runAction(job.id, 'Canceling…',
    () => postJSON(jobUrl(job.id) + '/cancel', {}),
    r => [
      h('div', {}, r.state === 'CANCELED' || !r.state ? 'Job canceled.' : `Job is ${r.state}.`),
      r.warning && h('div', { class: 'warning-text' }, withCode(r.warning)),
      r.resumeFrom && h('div', { class: 'restore-hint' }, 'Restore with ', pathCode(runLine(r.resumeFrom, r.restoreCommand), 'run-line')),
    ],
    r => r.warning ? 'warn' : 'ok');
}

// ---------------------------------------------------------------------- views

function errorView(e) {
  const what = e.status === 404 ? 'Not found' : e.status ? `Error ${e.status}` : 'Error';
  return h('div', { class: 'page' },
    h('div', { class: 'error-box page-error' }, h('strong', {}, what + ': '), e.message),
    h('p', {}, link('#/', '← back to the overview')));
}

const unknownView = {
  load: async () => null,
  render: () => h('p', {}, 'There is no such page. ', link('#/', 'Go to the overview.')),
};

// Overview ---------------------------------------------------------------------

const overviewView = {
  load: () => getJSON('/v1/overview'),
  render: (route, ov) => {
    const q = overviewQuery();
    return h('div', { class: 'page overview' },
      stateCounts(ov.states || {}, q),
      section('Needs attention', attentionList(ov.attention || [])),
      section('Jobs', jobsTable(ov.jobs || [], q)));
  },
};

// The overview's filter and order live in the URL (#/?state=RUNNING&sort=
// uptime&dir=desc), so a reload or a shared link keeps them; changing them
// replaces the URL without a navigation.
function overviewQuery() {
  const raw = location.hash.replace(/^#/, '');
  const q = new URLSearchParams(raw.includes('?') ? raw.slice(raw.indexOf('?') + 1) : '');
  const sort = JOB_COLUMNS.some(c => c.key === q.get('sort')) ? q.get('sort') : 'submitted';
  return { state: q.get('state') || '', sort, dir: q.get('dir') === 'asc' ? 'asc' : q.get('dir') === 'desc' ? 'desc' : null };
}

function setOverviewQuery(q) {
  const p = new URLSearchParams();
  if (q.state) p.set('state', q.state);
  if (q.sort && q.sort !== 'submitted') p.set('sort', q.sort);
  if (q.dir) p.set('dir', q.dir);
  const qs = p.toString();
  history.replaceState(null, '', '#/' + (qs ? '?' + qs : ''));
  paint(true);
}

const stateRank = s => (STATE_ORDER.indexOf(s) + 1) || 99;

// The state counts filter the jobs: a click shows only that state, another
// click (or "all") shows all again.
function stateCounts(states, q) {
  const entries = Object.entries(states).filter(([, n]) => n > 0).sort((a, b) => stateRank(a[0]) - stateRank(b[0]));
  const total = entries.reduce((t, [, n]) => t + n, 0);
  const pick = state => () => setOverviewQuery(Object.assign({}, q, { state: q.state === state ? '' : state }));
  return h('div', { id: 'state-counts', class: 'state-counts', role: 'group', 'aria-label': 'filter jobs by state' },
    h('button', { type: 'button', id: 'filter-all', class: q.state ? 'count-item total' : 'count-item total active',
      'aria-pressed': String(!q.state), onclick: pick('') }, h('b', {}, total), total === 1 ? ' job' : ' jobs'),
    entries.map(([s, n]) => h('button', { type: 'button', class: q.state === s ? 'count-item active' : 'count-item',
      'data-state': s, 'aria-pressed': String(q.state === s), title: `show only ${s} jobs`, onclick: pick(s) },
    stateBadge(s), h('b', { class: 'count' }, n))));
}

function attentionList(items) {
  const ul = h('ul', { id: 'attention', class: 'attention' });
  if (!items.length) ul.append(h('li', { class: 'empty' }, 'Nothing needs attention'));
  for (const a of items) {
    ul.append(h('li', { class: 'attention-item ' + token(a.severity) },
      h('span', { class: 'severity' }, a.severity),
      a.jobId ? link(jobHref(a.jobId), a.jobName || shortId(a.jobId), 'attention-job')
        : h('span', { class: 'attention-job' }, a.jobName),
      h('span', { class: 'message' }, a.message),
      isTime(a.time) && h('time', { class: 'ago', title: fmtTime(a.time) }, fmtAgo(a.time))));
  }
  return ul;
}

function lastCheckpoint(cp) {
  if (!cp) return DASH;
  if (!isTime(cp.triggerTime)) return `#${cp.id} · ${fmtMs(cp.durationMs)}`;
  const end = Date.parse(cp.triggerTime) + (cp.durationMs || 0);
  return `#${cp.id} · ${fmtSpan(Date.now() - end, 1)} ago · ${fmtMs(cp.durationMs)}`;
}

// The jobs table's columns; key and value make a column sortable (first
// click: the column's natural order, dir).
const JOB_COLUMNS = [
  { label: 'Name', key: 'name', value: j => (j.name || j.id).toLowerCase(), dir: 'asc' },
  { label: 'ID' },
  { label: 'State', key: 'state', value: j => stateRank(j.state), dir: 'asc' },
  { label: 'Uptime ', key: 'uptime', value: j => j.uptimeMs, dir: 'desc' },
  { label: 'Records in/s ', key: 'in', value: j => j.recordsInPerSec, dir: 'desc' },
  { label: 'Records out/s ', key: 'out', value: j => j.recordsOutPerSec, dir: 'desc' },
  { label: 'Last 5 min' },
  { label: 'Last checkpoint' },
  { label: 'Restarts ', key: 'restarts', value: j => j.restarts, dir: 'desc' },
  { label: 'Submitted', key: 'submitted', value: j => Date.parse(j.submitTime) || 0, dir: 'desc' },
];

function sortJobs(jobs, q) {
  const col = JOB_COLUMNS.find(c => c.key === q.sort);
  const dir = q.dir || col.dir;
  const sign = dir === 'asc' ? 1 : -1;
  const submitted = j => Date.parse(j.submitTime) || 0;
  return jobs.slice().sort((a, b) => {
    const x = col.value(a), y = col.value(b);
    return (x < y ? -sign : x > y ? sign : 0) || submitted(b) - submitted(a);
  });
}

function jobsHead(q) {
  const col = JOB_COLUMNS.find(c => c.key === q.sort);
  const dir = q.dir || col.dir;
  return h('tr', {}, JOB_COLUMNS.map(c => {
    const numeric = c.label.endsWith(' ');
    if (!c.key) return h('th', { class: numeric ? 'num' : null }, c.label.trim());
    const on = c.key === q.sort;
    const next = on ? (dir === 'asc' ? 'desc' : 'asc') : c.dir;
    return h('th', { class: numeric ? 'num' : null, 'aria-sort': on ? (dir === 'asc' ? 'ascending' : 'descending') : null },
      h('button', { type: 'button', class: on ? 'sort active' : 'sort', 'data-sort': c.key,
        title: `sort by ${c.label.trim().toLowerCase()}`,
        onclick: () => setOverviewQuery(Object.assign({}, q, { sort: c.key, dir: next === c.dir ? null : next })) },
      c.label.trim(), on ? (dir === 'asc' ? ' ▲' : ' ▼') : ''));
  }));
}

function jobsTable(jobs, q) {
  const shown = sortJobs(jobs.filter(j => !q.state || j.state === q.state), q);
  const rows = shown.map(j => h('tr', { 'data-job-id': j.id },
    h('td', { class: 'name' }, link(jobHref(j.id), j.name || j.id, 'job-link')),
    h('td', { class: 'id' }, h('code', { title: j.id }, shortId(j.id))),
    h('td', {}, stateBadge(j.state)),
    num(fmtSpan(j.uptimeMs)),
    num(fmtRate(j.recordsInPerSec)),
    num(fmtRate(j.recordsOutPerSec)),
    h('td', { class: 'spark' }, sparkline(j.sparkline || [], 'records in per second over the last 5 minutes, a point per 5 s')),
    h('td', { class: 'last-cp', title: j.failedCheckpoints ? `${j.failedCheckpoints} failed checkpoint(s)` : null },
      lastCheckpoint(j.lastCheckpoint)),
    num(j.restarts),
    h('td', { class: 'time', title: fmtAgo(j.submitTime) }, fmtTime(j.submitTime))));
  const empty = q.state && jobs.length
    ? [`No ${q.state} jobs. `, h('button', { type: 'button', class: 'link-button inline', onclick: () => setOverviewQuery(Object.assign({}, q, { state: '' })) }, 'Show all')]
    : ['No jobs. Submit one with ', code('flinkgo run job.yaml'), '.'];
  const body = rows.length ? rows : h('tr', { class: 'empty' }, h('td', { colspan: JOB_COLUMNS.length }, empty));
  return h('table', { id: 'jobs', class: 'grid' }, h('thead', {}, jobsHead(q)), h('tbody', {}, body));
}

// Job page ---------------------------------------------------------------------

const jobView = {
  async load(route) {
    if (route.tab !== 'checkpoints') {
      const [job, hs, logs, ex] = await Promise.all([getJSON(jobUrl(route.id)), loadHistory(route.id),
        getJSON(jobUrl(route.id) + '/logs?lines=' + OUTPUT_LINES), getJSON(jobUrl(route.id) + '/exceptions')]);
      return { job, hs, logs, ex };
    }
    const [job, cps] = await Promise.all([getJSON(jobUrl(route.id)), getJSON(jobUrl(route.id) + '/checkpoints')]);
    return { job, cps };
  },
  render(route, { job, cps, hs, logs, ex }) {
    document.title = `flinkgo · ${job.name || job.id}`;
    return h('div', { class: 'page job' },
      jobHeader(job),
      jobActions(job),
      jobError(job),
      jobTabs(job, route.tab),
      route.tab === 'checkpoints' ? checkpointsTab(job, cps) : [operatorsTab(job, hs, logs), exceptionsSection(ex)]);
  },
};

// History --------------------------------------------------------------------

// The job page keeps the daemon's sampled history of the job it shows and
// asks only for the samples after the newest it has.
let hist = null;

function newHistory(jobId) {
  return { jobId, spanMs: 15 * 60 * 1000, times: [], in: [], out: [], ops: new Map(), cps: [], cpIds: new Set() };
}

async function loadHistory(id) {
  if (!hist || hist.jobId !== id) hist = newHistory(id);
  const hs = hist;
  const since = hs.times.length ? hs.times[hs.times.length - 1] : 0;
  const d = await getJSON(jobUrl(id) + '/history' + (since ? '?since=' + since : ''));
  if (hist === hs) mergeHistory(hs, d);
  return hs;
}

const OP_SERIES = [['recordsInPerSec', 'in'], ['recordsOutPerSec', 'out'], ['busyTimeMsPerSecond', 'busy'],
  ['backPressuredTimeMsPerSecond', 'bp'], ['idleTimeMsPerSecond', 'idle'], ['watermarkLagMs', 'lag']];

function mergeHistory(hs, d) {
  hs.spanMs = d.spanMs || hs.spanMs;
  const had = hs.times.length, n = (d.times || []).length;
  hs.times.push(...(d.times || []));
  hs.in.push(...(d.recordsInPerSec || []));
  hs.out.push(...(d.recordsOutPerSec || []));
  for (const o of d.operators || []) {
    let s = hs.ops.get(o.uid);
    if (!s) {
      s = { eventTime: false };
      for (const [, k] of OP_SERIES) s[k] = new Array(had).fill(null);
      hs.ops.set(o.uid, s);
    }
    for (const [field, k] of OP_SERIES) s[k].push(...(o[field] || new Array(n).fill(null)));
    s.eventTime = s.eventTime || !!o.watermarkLagMs;
  }
  for (const c of d.checkpoints || []) {
    if (!hs.cpIds.has(c.id)) { hs.cpIds.add(c.id); hs.cps.push(c); }
  }
  // Keep the span the daemon keeps.
  const cutoff = hs.times.length ? hs.times[hs.times.length - 1] - hs.spanMs : 0;
  let drop = 0;
  while (drop < hs.times.length && hs.times[drop] < cutoff) drop++;
  if (drop) {
    for (const a of [hs.times, hs.in, hs.out]) a.splice(0, drop);
    for (const s of hs.ops.values()) for (const [, k] of OP_SERIES) s[k].splice(0, drop);
  }
  const old = hs.cps.filter(c => c.time < cutoff);
  if (old.length) {
    hs.cps = hs.cps.filter(c => c.time >= cutoff);
    for (const c of old) hs.cpIds.delete(c.id);
  }
}

function jobHeader(job) {
  const end = isTime(job.endTime) ? Date.parse(job.endTime) : Date.now();
  return h('section', { class: 'job-header' },
    h('div', { class: 'title-row' },
      h('h1', { class: 'job-name' }, job.name || '(unnamed job)'),
      stateBadge(job.state, 'job-state')),
    h('div', { class: 'id-row' }, h('span', { class: 'label' }, 'Job ID'),
      h('code', { id: 'job-id' }, job.id), copyButton(job.id, { id: 'copy-id' })),
    infoList({ class: 'info inline' }, [
      ['Submitted', fmtTime(job.submitTime)],
      ['Uptime', isTime(job.submitTime) ? fmtSpan(end - Date.parse(job.submitTime)) : DASH],
      isTime(job.endTime) && ['Ended', fmtTime(job.endTime)],
      ['Restarts', fmtCount(job.restarts)],
      job.file && ['File', code(job.file)],
      job.restoredFrom && ['Restored from', pathCode(job.restoredFrom)],
      ['Restore point', job.restorePoint
        ? [pathCode(job.restorePoint), job.restorePointId ? ` (#${job.restorePointId})` : '']
        : 'none yet'],
    ]));
}

function jobActions(job) {
  const mine = action && action.jobId === job.id ? action : null;
  const active = ACTIVE_STATES.has(job.state);
  const enabled = session.loggedIn && active && !(mine && mine.busy);
  const btn = (id, label, fn, cls) => h('button', { id, type: 'button', class: cls,
    disabled: !enabled, onclick: () => fn(job) }, label);
  return h('section', { class: 'actions' },
    h('div', { class: 'buttons' },
      btn('btn-savepoint', 'Trigger savepoint', triggerSavepoint),
      btn('btn-stop', 'Stop with savepoint', stopJob),
      btn('btn-cancel', 'Cancel job', cancelJob, 'danger')),
    !session.loggedIn && h('p', { id: 'readonly-hint', class: 'hint' },
      'Read-only: run ', code('flinkgo ui'), " on the daemon's machine to get a login link."),
    session.loggedIn && !active && h('p', { class: 'hint' }, `The job is ${job.state}; there is nothing to stop.`),
    h('div', { id: 'action-result', class: mine ? 'action-result is-' + mine.status : 'action-result', role: 'status' },
      mine ? mine.content() : null));
}

function jobError(job) {
  if (!job.error) return null;
  return h('section', { id: 'job-error', class: 'error-box' },
    h('div', { class: 'error-head' }, h('strong', {}, 'Last error'),
      isTime(job.errorTime) && h('time', { class: 'error-time' },
        ` · ${fmtTime(job.errorTime)} (${fmtAgo(job.errorTime)})`)),
    h('pre', { class: 'error-text' }, job.error),
    job.rootCause && job.rootCause !== job.error && [
      h('div', { class: 'error-head' }, h('strong', {}, `Root cause (the first of ${job.consecutiveFailures} failures)`),
        isTime(job.rootCauseTime) && h('time', { class: 'error-time' },
          ` · ${fmtTime(job.rootCauseTime)} (${fmtAgo(job.rootCauseTime)})`)),
      h('pre', { class: 'error-text root-cause' }, job.rootCause)]);
}

// exceptionsSection lists the job's last failures (GET .../exceptions), the
// newest first, as Flink's exception history does; nothing for a job that
// never failed.
function exceptionsSection(ex) {
  const entries = (ex && ex.entries) || [];
  if (!entries.length) return null;
  return section('Exception history',
    h('p', { class: 'hint' }, ex.truncated ? `The last ${entries.length} failures, newest first; older ones were dropped.`
      : 'Every failure, newest first.'),
    h('ol', { id: 'exceptions', class: 'exceptions' }, entries.map(e => h('li', { class: 'exception' },
      h('div', { class: 'error-head' }, h('strong', {}, `Attempt ${e.attempt}`),
        isTime(e.time) && h('time', { class: 'error-time' }, ` · ${fmtTime(e.time)} (${fmtAgo(e.time)})`)),
      h('pre', { class: 'error-text' }, e.exception)))));
}

function jobTabs(job, tab) {
  const t = (id, href, label, on) => h('a', { id, href, class: on ? 'tab active' : 'tab' }, label);
  return h('nav', { class: 'tabs' },
    t('tab-overview', jobHref(job.id), 'Overview', tab !== 'checkpoints'),
    t('tab-checkpoints', jobHref(job.id) + '/checkpoints', 'Checkpoints', tab === 'checkpoints'));
}

const OUTPUT_LINES = 100;

// The operator whose subtasks the page shows (a click in the graph).
let selectedOp = { jobId: '', uid: '' };

function selectOperator(jobId, uid) {
  selectedOp = { jobId, uid: selectedOp.jobId === jobId && selectedOp.uid === uid ? '' : uid };
  paint(true);
}

function operatorsTab(job, hs, logs) {
  const selected = selectedOp.jobId === job.id ? selectedOp.uid : '';
  const c = job.checkpoints;
  const rows = (job.operators || []).map(op => h('tr', { 'data-uid': op.uid },
    h('td', { class: 'uid' }, code(op.uid)),
    h('td', { class: 'type' }, op.type),
    num(op.parallelism),
    num(fmtCount(op.recordsIn)),
    num(fmtCount(op.recordsOut)),
    num(fmtRate(op.recordsInPerSec)),
    num(fmtRate(op.recordsOutPerSec)),
    h('td', { class: 'times', title: 'the largest share over the subtasks, over the last second' },
      ACTIVE_STATES.has(job.state) ? fmtShares(op) : DASH),
    h('td', { class: 'watermark' }, fmtWatermark(op.outputWatermark, op.watermarkLagMs, wmRate(hs, job.id, op.uid))),
    h('td', { class: 'metrics' }, Object.keys(op.metrics || {}).sort().map(k =>
      h('span', { class: 'metric' }, `${k}=${fmtCount(op.metrics[k])}`))),
    h('td', { class: 'inputs' }, (op.inputs || []).map(i =>
      h('span', { class: 'input' }, i.sideOutput ? `${i.uid}.${i.sideOutput}` : i.uid,
        i.partitioning ? h('small', {}, ` (${i.partitioning})`) : null)))));
  const cpOff = isZeroDuration((job.checkpointing || {}).intervalMs) && !(c && c.triggered);
  return h('div', { class: 'tab-body' },
    cpOff ? h('p', { class: 'summary-line' }, 'Periodic checkpointing is off for this job.')
      : c && h('p', { class: 'summary-line' },
        `Checkpoints: ${c.completed} completed, ${c.failed} failed, ${c.inProgress} in progress · latest `,
        lastCheckpoint(job.latestCheckpoint), ' · ', link(jobHref(job.id) + '/checkpoints', 'details')),
    section('Job graph',
      h('div', { class: 'graph-wrap' }, jobGraph(job, selected, uid => selectOperator(job.id, uid))),
      graphLegend(),
      subtasksPanel(job, selected)),
    hs && chartsSection(job, hs),
    section('Operators',
      table({ id: 'operators', class: 'grid' },
        ['UID', 'Type', 'Parallelism ', 'Records in ', 'Records out ', 'In/s ', 'Out/s ', 'Busy · BP · Idle', 'Watermark (behind the clock)', 'Metrics', 'Reads from'],
        rows, 'No operators reported yet.')),
    logs && h('div', { class: 'columns' }, outputSection(job, logs), eventsSection(logs)));
}

// timesBar shows a subtask's busy, backpressured and idle shares.
function timesBar(t) {
  const W = 90;
  const parts = [[t.busyTimeMsPerSecond, '#e0483e'], [t.backPressuredTimeMsPerSecond, '#3b4450'], [t.idleTimeMsPerSecond, '#a9c8f0']];
  let x = 0;
  return svg('svg', { class: 'times-bar', width: W, height: 10, viewBox: `0 0 ${W} 10` },
    parts.map(([ms, fill]) => {
      const w = (ms || 0) / 1000 * W;
      const r = svg('rect', { x: x.toFixed(1), y: 0, width: w.toFixed(1), height: 10, fill });
      x += w;
      return r;
    }));
}

const fmtShares = t => `${Math.round((t.busyTimeMsPerSecond || 0) / 10)}% · ${Math.round((t.backPressuredTimeMsPerSecond || 0) / 10)}% · ` +
  `${Math.round((t.idleTimeMsPerSecond || 0) / 10)}%`;

function subtasksPanel(job, uid) {
  const op = (job.operators || []).find(o => o.uid === uid);
  if (!op) return h('p', { id: 'subtasks-hint', class: 'hint' }, 'Click an operator to see its subtasks.');
  const subs = op.subtasks || [];
  const wm = s => s.outputWatermark == null && s.inputWatermark == null ? DASH
    : fmtWatermark(s.outputWatermark ?? s.inputWatermark, s.watermarkLagMs);
  const rows = subs.map(s => h('tr', { 'data-subtask': s.index },
    num(s.index),
    num(fmtCount(s.recordsIn)),
    num(fmtCount(s.recordsOut)),
    num(fmtRate(s.recordsInPerSec)),
    num(fmtRate(s.recordsOutPerSec)),
    h('td', { class: 'times' }, timesBar(s), ' ', fmtShares(s)),
    h('td', { class: 'watermark' }, wm(s))));
  return h('div', { id: 'subtasks', 'data-uid': op.uid },
    h('h3', {}, `Subtasks of ${op.uid} (${op.type})`),
    table({ class: 'grid' }, ['Subtask ', 'Records in ', 'Records out ', 'In/s ', 'Out/s ', 'Busy · Backpressured · Idle (last second)', 'Watermark (behind the clock)'],
      rows, ACTIVE_STATES.has(job.state) ? 'The subtasks are starting.' : `The job is ${job.state}: no subtask runs.`));
}

function chartsSection(job, hs) {
  const ops = job.operators || [];
  const opts = (id, title, extra) => Object.assign({ id, title, spanMs: hs.spanMs }, extra);
  const per = (key, only) => ops.map((op, i) => ({ op, i })).filter(({ op }) => !only || only(op))
    .map(({ op, i }) => ({ name: op.uid, color: seriesColor(i), values: (hs.ops.get(op.uid) || {})[key] || [] }));
  const ms = v => `${Math.round(v)}`;
  const charts = [
    lineChart(opts('chart-job-rates', 'Job: records per second', { legend: true }), hs.times, [
      { name: 'in (at the sources)', color: PALETTE[0], values: hs.in },
      { name: 'out (at the sinks)', color: PALETTE[2], values: hs.out }]),
    lineChart(opts('chart-op-in', 'Records in per second, by operator', { legend: true }), hs.times, per('in')),
    lineChart(opts('chart-op-out', 'Records out per second, by operator', { legend: true }), hs.times, per('out')),
    lineChart(opts('chart-backpressure', 'Backpressured, ms per second (largest subtask)', { top: 1000, fmt: ms, legend: true }), hs.times, per('bp')),
    lineChart(opts('chart-busy', 'Busy, ms per second (largest subtask)', { top: 1000, fmt: ms, legend: true }), hs.times, per('busy')),
    pointChart(opts('chart-cp-duration', 'Checkpoint duration', { color: PALETTE[4], fmt: v => fmtMs(Math.round(v)),
      empty: 'No checkpoint finished in these 15 minutes.' }), hs.times, hs.cps, c => c.durationMs),
    pointChart(opts('chart-cp-size', 'Checkpoint size', { color: PALETTE[5], fmt: v => fmtBytes(Math.round(v)),
      empty: 'No checkpoint finished in these 15 minutes.' }), hs.times, hs.cps, c => c.size),
  ];
  const eventTime = ops.filter(op => (hs.ops.get(op.uid) || {}).eventTime);
  if (eventTime.length) {
    charts.push(lineChart(opts('chart-wm-lag', 'Watermark lag behind the clock', { fmt: v => fmtDurationMs(Math.round(v)), legend: true }),
      hs.times, per('lag', op => (hs.ops.get(op.uid) || {}).eventTime)));
  }
  // An ended job's charts are the last 15 minutes of its run, kept in its
  // directory across daemon restarts (none when it ended before its
  // daemon's last sample, or ran on another daemon of an HA cluster).
  const ended = !ACTIVE_STATES.has(job.state);
  const hint = !ended ? 'Sampled by the daemon once a second, whether or not a page is open.'
    : hs.times.length ? 'The last 15 minutes of the run, sampled once a second by the daemon that ran it up to its end.'
      : 'No samples of this run were kept (it ended as its daemon stopped, or ran on another daemon of the cluster).';
  return section(ended ? 'The last 15 minutes of the run' : 'The last 15 minutes', h('p', { id: 'charts-hint', class: 'hint' }, hint),
    h('div', { id: 'charts', class: 'charts' }, charts));
}

function outputSection(job, logs) {
  const lines = logs.output || [];
  return section('Print output',
    lines.length ? h('pre', { id: 'output', class: 'output', 'data-keep-scroll': '' }, lines.join('\n'))
      : h('p', { id: 'output', class: 'hint' }, 'Nothing printed yet. A print sink writes here (the job\'s job.out); ',
        code('flinkgo logs -f ' + shortId(job.id)), ' follows it in a terminal.'),
    lines.length > 0 && h('p', { class: 'hint' }, `The last ${lines.length} lines; `, code('flinkgo logs -f ' + shortId(job.id)), ' follows them.'));
}

function eventsSection(logs) {
  const events = (logs.events || []).slice().reverse();
  const ul = h('ul', { id: 'events', class: 'events' });
  if (!events.length) ul.append(h('li', { class: 'empty' }, 'No events yet.'));
  for (const e of events) {
    ul.append(h('li', { class: 'event ' + token(e.severity), 'data-kind': e.kind },
      h('time', { class: 'ago', title: fmtTime(e.time) }, fmtTime(e.time).slice(11)),
      h('span', { class: 'severity' }, e.kind),
      h('span', { class: 'message' }, e.message)));
  }
  return section('Events', ul);
}

// HISTORICAL_LAG_MS is the lag behind the clock past which event time is
// taken for historical (a replay, a backfill): its size then says how old
// the data is, not how late the job is, and the watermark's progress is
// what tells whether the job keeps up.
const HISTORICAL_LAG_MS = 3600 * 1000;

// fmtWatermark shows an operator's output watermark and its lag behind the
// clock: "-" before the first, "end" after the final one. A lag of
// historical event time is said to be one, with how fast the watermark
// advances (rate, event-time ms per ms of the clock; null: unknown).
function fmtWatermark(w, lagMs, rate) {
  if (w === undefined || w === null) return '-';
  if (w >= 9.2e18) return 'end';
  const t = new Date(w).toISOString().replace('T', ' ').replace('Z', '');
  if (lagMs === undefined || lagMs === null) return t;
  if (lagMs < HISTORICAL_LAG_MS) return `${t} (${fmtDurationMs(lagMs)})`;
  return `${t} (historical event time, ${fmtDurationMs(lagMs)} behind the clock${fmtProgress(rate)})`;
}

// fmtProgress says how fast a watermark advances relative to the clock.
function fmtProgress(rate) {
  if (rate === null || rate === undefined) return '';
  if (rate <= 0.001) return '; not advancing';
  const x = rate >= 10 ? Math.round(rate) : rate.toFixed(1);
  return `; advancing ${x}× as fast as the clock`;
}

// wmRate is how fast operator uid's output watermark advanced over the
// last 10 samples of job id's history, in event-time ms per ms of the
// clock (1: in step with it), from the lag: null without two samples.
function wmRate(hs, id, uid) {
  const s = hs && hs.jobId === id && hs.ops.get(uid);
  if (!s) return null;
  const lag = s.lag;
  let j = lag.length - 1;
  while (j >= 0 && lag[j] === null) j--;
  let i = Math.max(0, j - 10);
  while (i < j && lag[i] === null) i++;
  if (j <= i || hs.times[j] <= hs.times[i]) return null;
  return Math.max(0, 1 - (lag[j] - lag[i]) / (hs.times[j] - hs.times[i]));
}

function fmtDurationMs(ms) {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 120000) return `${(ms / 1000).toFixed(1)}s`;
  if (ms < 7200000) return `${Math.round(ms / 60000)}m`;
  if (ms < 172800000) return `${Math.round(ms / 3600000)}h`;
  return `${Math.round(ms / 86400000)}d`;
}

// Checkpoints tab ----------------------------------------------------------------

function checkpointsTab(job, cps) {
  return h('div', { class: 'tab-body' },
    cpCounts(cps.counts || {}),
    section('Latest', cpLatest(cps.latest || {})),
    h('div', { class: 'columns' },
      section('Summary of completed checkpoints', cpSummary(cps.summary || {}, (cps.counts || {}).completed)),
      section('Configuration', cpConfig(job))),
    section('History', cpHistory(cps.history || [])));
}

function cpCounts(c) {
  const stat = (key, label) => h('div', { class: c[key] ? 'stat nonzero' : 'stat', 'data-key': key },
    h('div', { class: 'stat-value' }, fmtCount(c[key] || 0)), h('div', { class: 'stat-label' }, label));
  return h('div', { id: 'cp-counts', class: 'stats' },
    stat('triggered', 'Triggered'), stat('inProgress', 'In progress'), stat('completed', 'Completed'),
    stat('failed', 'Failed'), stat('restored', 'Restored'));
}

function cpLine(cp, withReason) {
  if (!cp) return 'none';
  return [
    h('b', {}, `#${cp.id}`), ` · ${cp.kind} · ${fmtTime(cp.triggerTime)} (${fmtAgo(cp.triggerTime)})`,
    cp.status === 'COMPLETED' ? ` · ${fmtMs(cp.durationMs)} · ${fmtBytes(cp.size)}` : '',
    cp.path && [' · ', pathCode(cp.path)],
    withReason && cp.failureReason && h('div', { class: 'failure' }, cp.failureReason),
  ];
}

function cpLatest(l) {
  const row = (key, label, content) => h('tr', { 'data-key': key }, h('th', {}, label), h('td', {}, content));
  const r = l.restored;
  return h('table', { id: 'cp-latest', class: 'kv' }, h('tbody', {},
    row('completed', 'Latest completed', cpLine(l.completed)),
    row('savepoint', 'Latest savepoint', cpLine(l.savepoint)),
    row('failed', 'Latest failed', cpLine(l.failed, true)),
    row('restored', 'Latest restore', r
      ? [h('b', {}, `#${r.id}`), ` · ${r.kind} · ${fmtTime(r.restoreTime)} · `, pathCode(r.path)]
      : 'none')));
}

// Like Flink's web.checkpoints.history, the page shows the newest entries;
// the daemon keeps up to 100 (flinkgo checkpoints -o json lists them all).
const HISTORY_SHOWN = 20;
let historyShowAll = false;

function cpHistory(history) {
  const shown = historyShowAll ? history : history.slice(0, HISTORY_SHOWN);
  const rows = shown.map(cp => {
    const pending = cp.status === 'IN_PROGRESS';
    return h('tr', { 'data-cp-id': cp.id, class: cp.discarded ? 'discarded' : null },
      num(cp.id),
      h('td', { class: 'kind' }, cp.kind),
      h('td', { class: 'status' }, h('span', { class: 'cp-status status-' + token(cp.status) }, cp.status)),
      h('td', { class: 'time', title: fmtAgo(cp.triggerTime) }, fmtTime(cp.triggerTime)),
      num(pending && !cp.durationMs ? '…' : fmtMs(cp.durationMs)),
      num(pending && !cp.size ? '…' : cp.status === 'FAILED' && !cp.size ? DASH : fmtBytes(cp.size)),
      h('td', { class: 'path' }, cp.path && pathCode(cp.path),
        cp.discarded && h('span', { class: 'tag', title: 'its files were deleted; it cannot be restored' }, 'discarded')),
      h('td', { class: 'failure' }, cp.failureReason || ''));
  });
  const grid = table({ id: 'cp-history', class: 'grid' },
    ['ID ', 'Kind', 'Status', 'Triggered', 'Duration ', 'Size ', 'Path', 'Failure reason'],
    rows, 'No checkpoints yet.');
  if (history.length <= HISTORY_SHOWN) return grid;
  const toggle = h('button', { id: 'history-toggle', class: 'copy', type: 'button' },
    historyShowAll ? `show the newest ${HISTORY_SHOWN}` : `show all ${history.length}`);
  toggle.addEventListener('click', () => { historyShowAll = !historyShowAll; paint(true); });
  return h('div', {}, grid, h('p', { class: 'hint' },
    `${shown.length} of ${history.length} shown · `, toggle));
}

function cpSummary(s, completed) {
  const cols = ['min', 'median', 'max', 'avg'];
  const row = (key, label, stat, fmt) => h('tr', { 'data-key': key }, h('th', {}, label),
    cols.map(c => num(completed && stat ? fmt(stat[c]) : DASH)));
  return table({ id: 'cp-summary', class: 'grid' }, ['', 'Min ', 'Median ', 'Max ', 'Avg '], [
    row('duration', 'End-to-end duration', s.durationMs, fmtMs),
    row('size', 'Checkpointed size', s.size, fmtBytes),
  ]);
}

const RESTART_FIELDS = [
  ['attempts', 'Attempts'], ['delayMs', 'Delay', fmtMsDuration], ['initialBackoffMs', 'Initial backoff', fmtMsDuration],
  ['maxBackoffMs', 'Max backoff', fmtMsDuration], ['multiplier', 'Multiplier'], ['jitter', 'Jitter'],
  ['resetThresholdMs', 'Reset threshold', fmtMsDuration], ['maxFailures', 'Max failures'],
  ['intervalMs', 'Failure-rate interval', fmtMsDuration],
];

function cpConfig(job) {
  const c = job.checkpointing || {};
  const r = job.restartStrategy || {};
  const kv = (key, label, value) => h('tr', { 'data-key': key }, h('th', {}, label), h('td', {}, value));
  const unlimited = r.type === 'exponential-delay' && (!r.attempts || r.attempts >= 2147483647);
  const restartRows = RESTART_FIELDS.filter(([k]) => r[k] != null).map(([k, label, fmt]) =>
    kv(k, label, k === 'attempts' && unlimited ? 'unlimited' : fmt ? fmt(r[k]) : String(r[k])));
  if (unlimited && r.attempts == null) restartRows.unshift(kv('attempts', 'Attempts', 'unlimited'));
  return h('div', { id: 'cp-config' },
    h('h3', {}, 'Checkpointing'),
    h('table', { class: 'kv', 'data-section': 'checkpointing' }, h('tbody', {},
      kv('interval', 'Interval', isZeroDuration(c.intervalMs) ? 'off (no periodic checkpoints)' : fmtMsDuration(c.intervalMs)),
      kv('mode', 'Mode', c.mode || DASH),
      kv('timeout', 'Timeout', fmtMsDuration(c.timeoutMs)),
      kv('minPause', 'Min pause', fmtMsDuration(c.minPauseMs)),
      kv('maxConcurrent', 'Max concurrent', c.maxConcurrent ?? DASH),
      kv('tolerableFailures', 'Tolerable failures', c.tolerableFailures ?? DASH),
      kv('externalized', 'Externalized', c.externalized || DASH),
      kv('retained', 'Retained', c.retained ?? DASH))),
    h('h3', {}, 'Restart strategy'),
    h('table', { class: 'kv', 'data-section': 'restart' }, h('tbody', {},
      kv('type', 'Type', r.type || DASH), restartRows)));
}

// Savepoints -------------------------------------------------------------------

function completeBadge(e) {
  return e.complete ? h('span', { class: 'ok' }, 'complete')
    : h('span', { class: 'bad' }, 'problem', e.problem && h('span', { class: 'problem' }, ': ' + e.problem));
}

function runLineWithCopy(path, command) {
  const line = runLine(path, command);
  return h('span', { class: 'run' }, pathCode(line, 'run-line'), ' ', copyButton(line));
}

// An incomplete savepoint (no _metadata: a crash left it, or its stop was
// abandoned) cannot be restored or inspected: offer its removal instead.
function disposeLineWithCopy(path) {
  const line = `flinkgo savepoint dispose --force ${shellWord(path)}`;
  return h('span', { class: 'dispose' }, pathCode(line, 'dispose-line'), ' ', copyButton(line));
}

function savepointActions(e) {
  if (e.jobId) return [h('td', {}, link(inspectHref(e.path), 'inspect', 'inspect-link')), h('td', { class: 'restore' }, runLineWithCopy(e.path, e.restoreCommand))];
  if (e.problem === 'in progress') return [h('td', {}, DASH), h('td', {}, DASH)];
  return [h('td', {}, DASH), h('td', { class: 'restore' }, disposeLineWithCopy(e.path))];
}

const savepointsView = {
  load: () => getJSON('/v1/savepoints'),
  render: (route, list) => h('div', { class: 'page savepoints' },
    section('Savepoints', savepointsTable(list || []))),
};

function savepointsTable(list) {
  const rows = list.map(e => h('tr', { 'data-path': e.path },
    h('td', { class: 'time', title: fmtAgo(e.time) }, fmtTime(e.time)),
    h('td', { class: 'job' }, e.jobId ? link(jobHref(e.jobId), e.jobName || shortId(e.jobId), 'job-link') : e.jobName || DASH),
    num(e.checkpointId),
    h('td', { class: 'kind' }, e.kind || 'incomplete'),
    num(fmtBytes(e.size)),
    h('td', { class: 'complete' }, completeBadge(e)),
    ...savepointActions(e)));
  return table({ id: 'savepoints', class: 'grid' },
    ['Time', 'Job', 'Checkpoint ', 'Kind', 'Size ', 'Status', '', 'Restore'],
    rows, ['No savepoints yet. Take one with ', code('flinkgo savepoint <job-id>'), " or from a job's page."]);
}

// A savepoint does not change once written, so it is read once per visit
// rather than re-verified on every refresh.
let inspectCache = { path: null, data: null };

const inspectView = {
  async load(route) {
    if (!route.path) throw new ApiError(400, 'invalid', 'no savepoint path given');
    if (inspectCache.path !== route.path) {
      const data = await getJSON('/v1/savepoints/inspect?path=' + encodeURIComponent(route.path));
      inspectCache = { path: route.path, data };
    }
    return inspectCache.data;
  },
  render: (route, d) => h('div', { class: 'page' },
    h('p', { class: 'crumbs' }, link('#/savepoints', '← Savepoints')),
    h('section', { id: 'inspect', class: 'card' },
      h('h2', {}, 'Savepoint'),
      infoList({}, [
        ['Path', [pathCode(d.path, 'savepoint-path'), ' ', copyButton(d.path)]],
        ['Job', d.jobId ? [link(jobHref(d.jobId), d.jobName || d.jobId, 'job-link'), ' ', code(shortId(d.jobId))] : d.jobName || DASH],
        ['Kind', d.kind],
        ['Checkpoint ID', d.checkpointId],
        ['Time', `${fmtTime(d.time)} (${fmtAgo(d.time)})`],
        ['Size', fmtBytes(d.size)],
        ['Max parallelism', d.maxParallelism],
        ['Status', completeBadge(d)],
        d.specFingerprint && ['Spec fingerprint', code(d.specFingerprint)],
        ['Restore', runLineWithCopy(d.path, d.restoreCommand)],
      ]),
      h('h3', {}, 'Operator state'),
      table({ id: 'inspect-operators', class: 'grid' }, ['UID', 'Type', 'Parallelism ', 'Bytes ', 'Keys '],
        (d.operators || []).map(op => h('tr', { 'data-uid': op.uid },
          h('td', { class: 'uid' }, code(op.uid)), h('td', {}, op.type), num(op.parallelism),
          num(fmtBytes(op.bytes)), num(op.keys ? fmtCount(op.keys) : DASH))),
        'No operator state.'),
      h('h3', {}, 'Job spec'),
      d.spec ? h('pre', { class: 'spec' }, d.spec) : h('p', { class: 'hint' }, 'The savepoint stores no spec.'))),
};

// ----------------------------------------------------------------------- boot

window.addEventListener('hashchange', () => {
  window.scrollTo(0, 0);
  refresh();
});
refresh();
