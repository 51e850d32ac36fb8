// The Data tab (lavs-spec-v1 4.5 `fallback`): every query endpoint that needs no input, called and
// shown as a table, a list or a JSON tree. Data is only ever put in the page as text.
import { resolveSchema, mainType, outputSchemaOf, needsNoInput } from './schema.js';

const MODES = new Set(['table', 'list', 'json']);

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function compact(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

/** Which display an endpoint's data gets: the manifest's choice when it fits the data, else one
 *  inferred from the output schema, else from the data itself. */
export function chooseMode(configured, outputSchema, data, manifest) {
  const fits = (mode) => {
    if (mode === 'json') return true;
    if (!Array.isArray(data)) return false;
    if (mode === 'list') return true;
    return data.length === 0 ? schemaSaysObjects(outputSchema, manifest) : data.every(isPlainObject);
  };
  if (MODES.has(configured) && fits(configured)) return configured;
  const fromSchema = inferFromSchema(outputSchema, manifest);
  if (fromSchema && fits(fromSchema)) return fromSchema;
  if (Array.isArray(data)) return data.length > 0 && data.every(isPlainObject) ? 'table' : 'list';
  return 'json';
}

function schemaSaysObjects(outputSchema, manifest) {
  const s = resolveSchema(outputSchema, manifest);
  if (mainType(s) !== 'array') return false;
  return mainType(resolveSchema(s.items, manifest)) === 'object';
}

export function inferFromSchema(outputSchema, manifest) {
  const s = resolveSchema(outputSchema, manifest);
  const t = mainType(s);
  if (t === 'array') {
    const items = resolveSchema(s.items, manifest);
    return mainType(items) === 'object' ? 'table' : 'list';
  }
  if (t) return 'json';
  return null;
}

/** Table columns: the item schema's properties in declared order, then keys seen in the data. */
export function columnsOf(itemSchema, rows) {
  const cols = [];
  const seen = new Set();
  const props = itemSchema && isPlainObject(itemSchema.properties) ? itemSchema.properties : {};
  for (const key of Object.keys(props)) {
    cols.push({ key, title: (props[key] && props[key].title) || key, schema: props[key] || {} });
    seen.add(key);
  }
  for (const row of rows) {
    if (!isPlainObject(row)) continue;
    for (const key of Object.keys(row)) {
      if (!seen.has(key)) {
        seen.add(key);
        cols.push({ key, title: key, schema: {} });
      }
    }
  }
  return cols;
}

function cellText(value, schema) {
  if (value === undefined || value === null) return '';
  if (typeof value === 'boolean') return value ? '☑' : '☐';
  if (typeof value === 'object') return compact(value);
  if (schema && schema.format === 'date-time' && typeof value === 'string') {
    const d = new Date(value);
    if (!Number.isNaN(d.getTime())) return d.toLocaleString();
  }
  return String(value);
}

export function renderTable(rows, itemSchema) {
  const cols = columnsOf(itemSchema, rows);
  const wrap = el('div', 'table-wrap');
  const table = el('table', 'data-table');
  const thead = el('thead');
  const hr = el('tr');
  for (const c of cols) {
    const th = el('th', null, c.title);
    th.scope = 'col';
    th.dataset.key = c.key;
    hr.append(th);
  }
  thead.append(hr);
  const tbody = el('tbody');
  for (const row of rows) {
    const tr = el('tr');
    for (const c of cols) {
      const v = isPlainObject(row) ? row[c.key] : undefined;
      const td = el('td', typeof v === 'boolean' ? 'bool' : typeof v === 'number' ? 'num' : null, cellText(v, c.schema));
      if (typeof v === 'object' && v !== null) td.classList.add('nested');
      tr.append(td);
    }
    tbody.append(tr);
  }
  table.append(thead, tbody);
  wrap.append(table);
  if (rows.length === 0) wrap.append(el('p', 'empty', 'No rows.'));
  return wrap;
}

export function renderList(items) {
  const ul = el('ul', 'data-list');
  for (const item of items) {
    let text;
    if (isPlainObject(item)) {
      text = Object.entries(item)
        .map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? compact(v) : typeof v === 'boolean' ? (v ? '☑' : '☐') : String(v)}`)
        .join(' · ');
    } else if (typeof item === 'object' && item !== null) {
      text = compact(item);
    } else {
      text = typeof item === 'boolean' ? (item ? '☑' : '☐') : String(item);
    }
    ul.append(el('li', null, text));
  }
  if (items.length === 0) ul.append(el('li', 'empty', 'Empty list.'));
  return ul;
}

function scalarNode(value) {
  const cls = value === null ? 'j-null' : `j-${typeof value}`;
  return el('span', cls, typeof value === 'string' ? JSON.stringify(value) : String(value));
}

function treeNode(key, value, depth) {
  if (value !== null && typeof value === 'object') {
    const details = el('details', 'j-node');
    if (depth < 2) details.open = true;
    const summary = el('summary');
    if (key !== null) summary.append(el('span', 'j-key', key), document.createTextNode(': '));
    const n = Array.isArray(value) ? value.length : Object.keys(value).length;
    summary.append(el('span', 'j-meta', Array.isArray(value) ? `[${n}]` : `{${n}}`));
    details.append(summary);
    const body = el('div', 'j-children');
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
    for (const [k, v] of entries) body.append(treeNode(k, v, depth + 1));
    details.append(body);
    return details;
  }
  const row = el('div', 'j-leaf');
  if (key !== null) row.append(el('span', 'j-key', key), document.createTextNode(': '));
  row.append(scalarNode(value));
  return row;
}

export function renderJson(value) {
  const box = el('div', 'json-tree');
  if (typeof value === 'string' && value.includes('\n')) {
    box.append(el('pre', 'j-text', value));
  } else {
    box.append(treeNode(null, value, 0));
  }
  return box;
}

export function renderData(mode, data, outputSchema, manifest) {
  if (mode === 'table') {
    const s = resolveSchema(outputSchema, manifest);
    const items = s && mainType(s) === 'array' ? resolveSchema(s.items, manifest) : null;
    return renderTable(data, items);
  }
  if (mode === 'list') return renderList(data);
  return renderJson(data);
}

/** Shows an error object: its code, message and data. */
export function renderError(err) {
  const box = el('div', 'error-box');
  const head = el('div', 'error-head');
  head.append(el('span', 'error-code', err && err.code !== undefined ? err.code : 'error'), el('span', 'error-message', err && err.message ? err.message : String(err)));
  box.append(head);
  if (err && err.data !== undefined) box.append(el('pre', 'error-data', JSON.stringify(err.data, null, 2)));
  return box;
}

/**
 * The Data tab of one service.
 *   call(endpoint, input) → Promise   subscribe(endpoint, cb) → unsubscribe (optional)
 */
export class FallbackPanel {
  constructor({ container, manifest, mode, call, subscribe, log }) {
    this.container = container;
    this.manifest = manifest || {};
    this.mode = mode || (this.manifest.view && this.manifest.view.fallback) || null;
    this.call = call;
    this.log = log || (() => {});
    this.sections = [];
    this.unsubscribers = [];
    this.timer = null;
    this.disposed = false;
    this.build();
    if (subscribe) {
      for (const ep of this.manifest.endpoints || []) {
        if (ep.method === 'subscription' && needsNoInput(ep, this.manifest)) {
          this.unsubscribers.push(subscribe(ep.id, () => this.scheduleRefresh()));
        }
      }
    }
  }

  build() {
    this.container.textContent = '';
    const queries = (this.manifest.endpoints || []).filter((ep) => ep.method === 'query' && needsNoInput(ep, this.manifest));
    if (queries.length === 0) {
      this.container.append(el('p', 'empty', 'This service has no query that needs no input: use the Endpoints tab.'));
      return;
    }
    for (const ep of queries) {
      const section = el('section', 'data-section');
      section.dataset.endpoint = ep.id;
      const head = el('header', 'data-head');
      const title = el('h3', null, ep.id);
      const meta = el('span', 'data-mode');
      const refresh = el('button', 'ghost small', 'Refresh');
      refresh.type = 'button';
      refresh.addEventListener('click', () => this.load(entry));
      head.append(title, meta, refresh);
      section.append(head);
      if (ep.description) section.append(el('p', 'muted', ep.description));
      const body = el('div', 'data-body');
      body.append(el('p', 'muted', 'Loading…'));
      section.append(body);
      this.container.append(section);
      const entry = { ep, section, body, meta, seq: 0 };
      this.sections.push(entry);
    }
    this.refresh();
  }

  refresh() {
    return Promise.all(this.sections.map((s) => this.load(s)));
  }

  scheduleRefresh() {
    if (this.disposed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), 150);
  }

  async load(entry) {
    const seq = ++entry.seq;
    let data;
    let error = null;
    try {
      data = await this.call(entry.ep.id);
    } catch (e) {
      error = e;
    }
    if (this.disposed || seq !== entry.seq) return;
    entry.body.textContent = '';
    if (error) {
      entry.meta.textContent = 'error';
      entry.section.dataset.mode = 'error';
      entry.body.append(renderError(error));
      return;
    }
    const out = outputSchemaOf(entry.ep, this.manifest);
    const mode = chooseMode(this.mode, out, data, this.manifest);
    entry.meta.textContent = mode;
    entry.section.dataset.mode = mode;
    entry.body.append(renderData(mode, data, out, this.manifest));
  }

  dispose() {
    this.disposed = true;
    clearTimeout(this.timer);
    for (const u of this.unsubscribers) {
      try {
        u();
      } catch {
        /* already gone */
      }
    }
    this.unsubscribers = [];
  }
}
