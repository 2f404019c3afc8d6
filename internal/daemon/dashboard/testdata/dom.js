// dom.js loads app.js in node with the least of a DOM it needs to build
// elements (no layout, no network), then runs the check script given as the
// second argument; the check prints what the Go test asserts.
'use strict';
const fs = require('fs');
const vm = require('vm');

class Node {
  constructor(tag) { this.tagName = tag; this.children = []; this.attrs = {}; this.className = ''; this.style = {}; }
  append(...xs) { this.children.push(...xs); }
  appendChild(x) { this.children.push(x); return x; }
  setAttribute(k, v) { this.attrs[k] = v; }
  getAttribute(k) { return this.attrs[k]; }
  addEventListener() {}
  get textContent() { return this.children.map(c => (c instanceof Node ? c.textContent : String(c))).join(''); }
  // texts lists the text nodes, in order: a stray one shows as its own entry.
  texts() { return this.children.flatMap(c => (c instanceof Node ? c.texts() : [String(c)])); }
}

const document = {
  createElement: tag => new Node(tag),
  createElementNS: (_, tag) => new Node(tag),
  createTextNode: t => String(t),
  getElementById: () => null,
  querySelector: () => null,
  querySelectorAll: () => [],
  addEventListener() {},
};
const never = () => new Promise(() => {});
const ctx = {
  Node, document, console: { log: console.log, error() {}, warn() {} }, URLSearchParams, Date, Math, JSON, Promise, setTimeout: () => 0, clearTimeout() {},
  setInterval: () => 0, clearInterval() {},
  location: { hash: '', pathname: '/', search: '' },
  localStorage: { getItem: () => null, setItem() {}, removeItem() {} },
  fetch: never,
  navigator: {},
};
ctx.window = ctx;
ctx.window.addEventListener = () => {};
ctx.window.scrollTo = () => {};
vm.createContext(ctx);
const dir = process.argv[2];
for (const f of ['charts.js', 'graph.js', 'app.js']) {
  vm.runInContext(fs.readFileSync(dir + '/' + f, 'utf8'), ctx, { filename: f });
}
vm.runInContext(process.argv[3], ctx, { filename: 'check.js' });
