// The Endpoints tab: one form per endpoint, generated from its input schema (string, number,
// integer, boolean and enum fields; a JSON text area for anything else), with the result or the
// error (code, message, data) shown under it.
import { resolveSchema, mainType, inputSchemaOf } from './schema.js';
import { renderError, renderJson } from './fallback.js';

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

let uid = 0;

/** A field for one property; returns {node, read()} where read() → {set, value} or throws. */
function fieldFor(name, schema, required, manifest) {
  const s = resolveSchema(schema, manifest) || {};
  const t = Array.isArray(s.enum) ? 'enum' : mainType(s);
  const id = `f${++uid}`;
  const row = el('div', 'field');
  row.dataset.field = name;
  const label = el('label', null, name);
  label.htmlFor = id;
  if (required) label.append(el('span', 'req', ' *'));
  const hint = s.description ? el('small', 'muted', s.description) : null;
  let input;
  let read;
  const text = (v) => (v === undefined ? '' : String(v));
  if (t === 'enum') {
    input = el('select');
    if (!required) input.append(new Option('(not set)', ''));
    s.enum.forEach((v, i) => input.append(new Option(typeof v === 'string' ? v : JSON.stringify(v), String(i))));
    if (s.default !== undefined) {
      const i = s.enum.findIndex((v) => JSON.stringify(v) === JSON.stringify(s.default));
      if (i >= 0) input.value = String(i);
    }
    read = () => (input.value === '' ? { set: false } : { set: true, value: s.enum[Number(input.value)] });
  } else if (t === 'boolean') {
    if (required) {
      input = el('input');
      input.type = 'checkbox';
      input.checked = s.default === true;
      read = () => ({ set: true, value: input.checked });
    } else {
      input = el('select');
      input.append(new Option('(not set)', ''), new Option('true', 'true'), new Option('false', 'false'));
      if (typeof s.default === 'boolean') input.value = String(s.default);
      read = () => (input.value === '' ? { set: false } : { set: true, value: input.value === 'true' });
    }
  } else if (t === 'number' || t === 'integer') {
    input = el('input');
    input.type = 'number';
    input.step = t === 'integer' ? '1' : 'any';
    if (typeof s.minimum === 'number') input.min = String(s.minimum);
    if (typeof s.maximum === 'number') input.max = String(s.maximum);
    input.value = text(s.default);
    read = () => {
      if (input.value.trim() === '') return { set: false };
      const n = Number(input.value);
      if (!Number.isFinite(n)) throw new Error(`${name}: not a number`);
      return { set: true, value: n };
    };
  } else if (t === 'string') {
    const long = s.maxLength === undefined || s.maxLength > 200;
    input = el(long && /note|body|content|description/i.test(name) ? 'textarea' : 'input');
    if (input.tagName === 'INPUT') input.type = 'text';
    else input.rows = 3;
    input.value = text(s.default);
    read = () => (input.value === '' && !required ? { set: false } : { set: true, value: input.value });
  } else {
    input = el('textarea', 'json');
    input.rows = 3;
    input.placeholder = 'JSON';
    input.spellcheck = false;
    if (s.default !== undefined) input.value = JSON.stringify(s.default);
    read = () => {
      if (input.value.trim() === '') return { set: false };
      try {
        return { set: true, value: JSON.parse(input.value) };
      } catch (e) {
        throw new Error(`${name}: not valid JSON (${e.message})`);
      }
    };
  }
  input.id = id;
  input.name = name;
  row.append(label, input);
  if (hint) row.append(hint);
  return { node: row, read };
}

/** The form of one endpoint. run(input) → Promise of the result; subscribe(input, onItem) → stop. */
function endpointCard(ep, manifest, { run, subscribe }) {
  const card = el('section', 'endpoint');
  card.dataset.endpoint = ep.id;
  const head = el('header', 'endpoint-head');
  head.append(el('h3', null, ep.id), el('span', `badge method-${ep.method}`, ep.method));
  card.append(head);
  if (ep.description) card.append(el('p', 'muted', ep.description));

  const form = el('form', 'endpoint-form');
  form.noValidate = true;
  const schema = inputSchemaOf(ep, manifest);
  const fields = [];
  let whole = null;
  if (schema && mainType(schema) === 'object' && schema.properties && Object.keys(schema.properties).length > 0) {
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    for (const [name, prop] of Object.entries(schema.properties)) {
      const f = fieldFor(name, prop, required.has(name), manifest);
      fields.push({ name, ...f });
      form.append(f.node);
    }
  } else if (schema) {
    whole = fieldFor('input', schema, false, manifest);
    form.append(whole.node);
  }
  const actions = el('div', 'form-actions');
  const submit = el('button', 'primary', ep.method === 'subscription' ? 'Subscribe' : ep.method === 'mutation' ? 'Run' : 'Call');
  submit.type = 'submit';
  actions.append(submit);
  form.append(actions);
  card.append(form);
  const out = el('div', 'endpoint-result');
  out.setAttribute('aria-live', 'polite');
  card.append(out);

  let stop = null;
  const readInput = () => {
    if (whole) {
      const r = whole.read();
      return r.set ? r.value : undefined;
    }
    if (!schema && fields.length === 0) return undefined;
    const input = {};
    for (const f of fields) {
      const r = f.read();
      if (r.set) input[f.name] = r.value;
    }
    return input;
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    out.textContent = '';
    let input;
    try {
      input = readInput();
    } catch (e) {
      out.append(renderError({ code: 'form', message: e.message }));
      return;
    }
    if (ep.method === 'subscription') {
      if (stop) {
        stop();
        stop = null;
        submit.textContent = 'Subscribe';
        out.append(el('p', 'muted', 'Unsubscribed.'));
        return;
      }
      const items = el('ol', 'stream');
      out.append(items);
      submit.textContent = 'Unsubscribe';
      stop = subscribe(ep.id, input, (data) => {
        const li = el('li');
        li.append(renderJson(data));
        items.prepend(li);
        while (items.children.length > 20) items.lastElementChild.remove();
      }, (err) => {
        out.append(renderError(err));
        stop = null;
        submit.textContent = 'Subscribe';
      });
      return;
    }
    submit.disabled = true;
    const started = performance.now();
    try {
      const result = await run(ep.id, input);
      const ok = el('div', 'result-ok');
      ok.append(el('span', 'result-label', `Result · ${Math.round(performance.now() - started)} ms`));
      ok.append(renderJson(result));
      out.append(ok);
    } catch (e) {
      out.append(renderError(e));
    } finally {
      submit.disabled = false;
    }
  });
  return { card, dispose: () => stop && stop() };
}

export class EndpointsPanel {
  constructor({ container, manifest, run, subscribe }) {
    this.container = container;
    this.cards = [];
    container.textContent = '';
    const eps = (manifest && manifest.endpoints) || [];
    if (eps.length === 0) container.append(el('p', 'empty', 'No endpoints.'));
    for (const ep of eps) {
      const c = endpointCard(ep, manifest, { run, subscribe });
      this.cards.push(c);
      container.append(c.card);
    }
  }

  dispose() {
    for (const c of this.cards) c.dispose();
  }
}
