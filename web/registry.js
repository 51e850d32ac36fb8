// The registry panel (docs/a2s.md): the web-service definitions the daemon loaded, a search over
// their capabilities (registry/search), a capability's details (registry/get) with the variables
// it needs and whether the vault holds them (vault/list: names only), and execution in two steps:
// "Review" makes a dry run (registry/execute dryRun) and shows the request that would be sent, vault
// values redacted by the daemon; only "Send" then makes the call. Everything is put in the page as
// text, never as HTML.
import { el, button, panelHead, absentCard, isMissingMethod, confirmBox } from './kit.js';

function json(v) {
  return JSON.stringify(v, null, 2);
}

/// The variables a capability names, with where each value comes from.
export function capabilityVariables(definition, capability) {
  const out = [];
  const add = (vars, kind) => {
    for (const [name, v] of Object.entries(vars || {})) {
      const storage = v.storage || (kind === 'temp' ? 'temporary' : 'service');
      let variable = null;
      if (storage === 'service') variable = `${definition.domain}::${name}`;
      else if (storage === 'global') variable = `global::${name}`;
      out.push({ name, kind, storage, variable, required: v.optional !== true && v.default === undefined, def: v });
    }
  };
  add(capability.inputVariables, 'input');
  add(capability.tempVariables, 'temp');
  return out;
}

export class RegistryPanel {
  constructor({ rpc, section, openVault }) {
    this.rpc = rpc;
    this.section = section;
    this.openVault = openVault || (() => {});
    this.services = [];
    this.failures = [];
    this.available = null;
    this.query = '';
    this.results = null;
    this.detail = null; // {service, capability}
    this.seq = 0;
  }

  async load() {
    try {
      const r = await this.rpc('registry/list', {});
      this.services = r.services || [];
      this.failures = r.failures || [];
      this.available = true;
      this.error = null;
    } catch (e) {
      this.services = [];
      this.failures = [];
      this.available = !isMissingMethod(e);
      this.error = this.available ? e : null;
    }
    return this.available;
  }

  domains() {
    return this.services.map((s) => s.domain);
  }

  /// No definition loaded and none refused: the daemon has no registry folder (or an empty one).
  empty() {
    return this.available === true && this.services.length === 0 && this.failures.length === 0;
  }

  summary() {
    if (this.available === false) return 'not enabled';
    if (this.empty()) return 'no web services';
    return `${this.services.length} web service${this.services.length === 1 ? '' : 's'}`;
  }

  async show() {
    const seq = ++this.seq;
    await this.load();
    if (seq !== this.seq) return;
    this.render();
  }

  render() {
    const s = this.section;
    s.textContent = '';
    s.append(panelHead('Registry', 'Web services (A2S definitions) the daemon can call for agents: search their capabilities, see what each needs, and run one after checking the request it sends.'));
    if (this.available === false) {
      s.append(absentCard('This daemon has no registry',
        'Start the daemon with a folder of service definitions (YAML); a service on this machine also needs --local-domain:',
        'hearth serve [SERVICES...] --registry DIR [--local-domain HOST:PORT]'));
      return;
    }
    if (this.error) s.append(el('div', 'banner error', `Could not list the registry: ${this.error.message}`));
    if (this.empty()) {
      s.append(absentCard('No web services',
        'The daemon has no service definitions: it was started without a registry folder, or the folder has none yet (a file added later is loaded as it appears). Start it with a folder of definitions (YAML); a service on this machine also needs --local-domain:',
        'hearth serve [SERVICES...] --registry DIR [--local-domain HOST:PORT]'));
      return;
    }
    for (const f of this.failures) {
      s.append(el('div', 'banner warn', `${f.file} did not load: ${(f.problems || []).map((p) => (typeof p === 'string' ? p : p.message || JSON.stringify(p))).join('; ')}`));
    }
    const cols = el('div', 'registry-cols');
    const left = el('div', 'registry-left');
    const form = el('form', 'inline-form');
    form.id = 'registry-search';
    form.setAttribute('role', 'search');
    const input = el('input');
    input.type = 'search';
    input.id = 'registry-query';
    input.placeholder = 'What do you want to do? (weather forecast, book a hotel…)';
    input.setAttribute('aria-label', 'Search the registry');
    input.maxLength = 4096; // registry/search reads at most 4,096 bytes; past that it says so
    input.value = this.query;
    const go = el('button', 'primary', 'Search');
    go.type = 'submit';
    form.append(input, go);
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.search(input.value.trim());
    });
    const results = el('div', 'registry-results');
    results.id = 'registry-results';
    left.append(form, results);
    const detail = el('div', 'registry-detail');
    detail.id = 'registry-detail';
    cols.append(left, detail);
    s.append(cols);
    this.renderResults(results);
    if (this.detail) this.showDetail(this.detail.service, this.detail.capability);
    else detail.append(el('p', 'empty card', 'Choose a capability to see what it needs and to run it.'));
  }

  async search(query) {
    this.query = query;
    if (!query) {
      this.results = null;
    } else {
      try {
        this.results = (await this.rpc('registry/search', { query, limit: 10 })).services || [];
      } catch (e) {
        this.results = { error: e };
      }
    }
    const box = this.section.querySelector('#registry-results');
    if (box) this.renderResults(box);
  }

  renderResults(box) {
    box.textContent = '';
    if (this.results && this.results.error) {
      box.append(el('div', 'banner error', `Search failed: ${this.results.error.message}`));
      return;
    }
    const searching = Array.isArray(this.results);
    const list = searching ? this.results : this.services.map((s) => ({ ...s, relevant_capabilities: s.capabilities.map((name) => ({ name })) }));
    box.append(el('p', 'muted small-note', searching ? `${list.length} service(s) match “${this.query}”.` : `All ${list.length} service(s).`));
    if (list.length === 0 && !searching) box.append(el('p', 'empty', 'The registry folder has no definitions yet.'));
    for (const svc of list) {
      const card = el('section', 'card registry-service');
      card.dataset.service = svc.name;
      const head = el('div', 'card-head');
      head.append(el('h2', null, svc.name), el('span', 'badge', svc.domain));
      if (svc.relevance_score !== undefined) head.append(el('span', 'badge', `relevance ${svc.relevance_score.toFixed(2)}`));
      card.append(head);
      if (svc.description) card.append(el('p', 'muted', svc.description));
      const ul = el('ul', 'service-list');
      for (const cap of svc.relevant_capabilities || []) {
        const li = el('li');
        const b = button('', 'service-item', { capability: cap.name });
        b.dataset.service = svc.name;
        if (this.detail && this.detail.service === svc.name && this.detail.capability === cap.name) b.setAttribute('aria-current', 'true');
        b.append(el('span', 'service-name', cap.name), el('span', 'service-meta', cap.description || 'capability'));
        b.addEventListener('click', () => {
          this.detail = { service: svc.name, capability: cap.name };
          for (const other of box.querySelectorAll('[data-capability]')) other.removeAttribute('aria-current');
          b.setAttribute('aria-current', 'true');
          this.showDetail(svc.name, cap.name);
        });
        li.append(b);
        ul.append(li);
      }
      card.append(ul);
      box.append(card);
    }
  }

  async showDetail(service, capName) {
    const box = this.section.querySelector('#registry-detail');
    if (!box) return;
    const seq = ++this.seq;
    let got;
    let vault = { entries: [], grants: [] };
    try {
      got = await this.rpc('registry/get', { service });
      vault = await this.rpc('vault/list', {}).catch(() => vault);
    } catch (e) {
      if (seq !== this.seq) return;
      box.textContent = '';
      box.append(el('div', 'banner error', `Could not read ${service}: ${e.message}`));
      return;
    }
    if (seq !== this.seq) return;
    const definition = got.definition;
    const cap = (definition.capabilities || []).find((c) => c.name === capName);
    box.textContent = '';
    if (!cap) {
      box.append(el('div', 'banner error', `${service} has no capability ${capName} any more.`));
      return;
    }
    const card = el('section', 'card capability');
    card.dataset.capability = cap.name;
    const head = el('div', 'card-head');
    const title = el('h2', null, cap.name);
    title.id = 'registry-capability-title';
    head.append(title, el('span', 'badge', `${definition.serviceName} ${definition.version || ''}`.trim()));
    card.append(head);
    if (cap.description) card.append(el('p', 'muted', cap.description));
    const facts = el('p', 'capability-facts');
    facts.append(el('span', null, 'Sent only to '), el('code', null, definition.domain));
    if (cap.requiredScopes && cap.requiredScopes.length) facts.append(el('span', null, ` · scopes ${cap.requiredScopes.join(', ')}`));
    facts.append(el('span', null, ` · from ${got.source}`));
    card.append(facts);

    const stored = new Set((vault.entries || []).map((e) => e.variable));
    const trusted = new Set((vault.grants || []).filter((g) => g.domain === definition.domain).map((g) => g.name));
    const vars = capabilityVariables(definition, cap);
    card.append(el('h3', null, 'What it needs'));
    const wrap = el('div', 'table-wrap');
    const table = el('table', 'data-table');
    table.id = 'registry-variables';
    table.append(el('thead'), el('tbody'));
    const hr = el('tr');
    for (const h of ['Variable', 'Type', 'Comes from', 'Description']) hr.append(el('th', null, h));
    table.tHead.append(hr);
    for (const v of vars) {
      const tr = el('tr');
      tr.dataset.variable = v.name;
      const type = `${v.def.type || 'string'}${v.def.format ? ` (${v.def.format})` : ''}${v.required ? '' : ', optional'}`;
      const from = el('td');
      if (v.variable) {
        const has = stored.has(v.variable);
        const state = el('span', has ? 'badge vault-set' : 'badge vault-missing', has ? 'in the vault' : 'not in the vault');
        from.append(el('code', null, v.variable), el('span', null, ' '), state);
        if (v.storage === 'global' && has && !trusted.has(v.name)) from.append(el('span', 'badge vault-missing', `${definition.domain} not trusted`));
        if (!has) {
          const set = button('Set…', 'ghost small', { action: 'set-in-vault' });
          set.addEventListener('click', () => this.openVault(v.storage === 'global' ? 'global' : definition.domain, v.name));
          from.append(el('span', null, ' '), set);
        }
      } else {
        from.textContent = v.def.default !== undefined ? `this call (default ${JSON.stringify(v.def.default)})` : 'this call';
      }
      tr.append(el('td', 'mono', v.name), el('td', null, type), from, el('td', null, v.def.description || ''));
      table.tBodies[0].append(tr);
    }
    wrap.append(table);
    if (vars.length === 0) wrap.append(el('p', 'empty', 'No variables.'));
    card.append(wrap);
    if (cap.request) {
      const d = el('details', 'capability-template');
      d.append(el('summary', null, 'Request template'), el('pre', 'ws-value', cap.request));
      card.append(d);
    }
    card.append(this.executeForm(definition, cap, vars));
    box.append(card);
  }

  executeForm(definition, cap, vars) {
    const section = el('section', 'capability-run');
    section.append(el('h3', null, 'Run it'));
    const form = el('form', 'endpoint-form');
    form.id = 'registry-execute';
    form.autocomplete = 'off';
    const inputs = [];
    // The values a call gives: the temporary variables. Vault variables come from the vault.
    for (const v of vars.filter((x) => x.kind === 'temp')) {
      const f = el('div', 'field');
      const label = el('label', null, v.name);
      if (v.required) label.append(el('span', 'req', ' *'));
      const input = el('input');
      input.id = `registry-var-${v.name}`;
      input.dataset.variable = v.name;
      label.htmlFor = input.id;
      if (v.def.format === 'date') input.placeholder = 'YYYY-MM-DD';
      else if (v.def.default !== undefined) input.placeholder = String(v.def.default);
      f.append(label, input);
      if (v.def.description) f.append(el('small', 'muted', v.def.description));
      inputs.push(input);
      form.append(f);
    }
    const actions = el('div', 'form-actions');
    const review = el('button', 'primary', 'Review the request…');
    review.type = 'submit';
    review.id = 'registry-review';
    actions.append(review);
    form.append(actions);
    const out = el('div', 'registry-run-result');
    out.id = 'registry-run-result';
    const variables = () => {
      const o = {};
      for (const i of inputs) if (i.value.trim() !== '') o[i.dataset.variable] = i.value.trim();
      return o;
    };
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const params = { service: definition.serviceName, capability: cap.name, variables: variables() };
      review.disabled = true;
      try {
        const preview = await this.rpc('registry/execute', { ...params, dryRun: true });
        this.showPreview(out, params, preview, definition);
      } catch (e) {
        out.textContent = '';
        out.append(el('div', 'banner error', `${e.message}${e.data && e.data.variable ? ` (${e.data.variable})` : ''}`));
      } finally {
        review.disabled = false;
      }
    });
    section.append(form, out);
    return section;
  }

  showPreview(out, params, preview, definition) {
    out.textContent = '';
    if (preview.status === 'needs_input') {
      const box = el('div', 'banner warn needs-input');
      box.append(el('p', null, 'It cannot run yet; it needs:'));
      const ul = el('ul');
      for (const m of preview.missing || []) {
        const li = el('li');
        li.append(el('code', null, m.variable || m.name), el('span', null, ` ${m.reason === 'untrusted' ? `is global and ${definition.domain} is not trusted with it (${m.trust || 'vault trust'})` : m.variable ? 'is not in the vault: set it in the Vault panel' : 'has no value: fill it in above'}`));
        ul.append(li);
      }
      box.append(ul);
      out.append(box);
      return;
    }
    const request = preview.request || {};
    const details = el('div', 'request-preview');
    const line = el('pre', 'ws-value');
    line.id = 'registry-request';
    const headers = Object.entries(request.headers || {}).map(([k, v]) => `${k}: ${v}`).join('\n');
    const body = request.body === undefined || request.body === null || request.body === '' ? '' : `\n\n${typeof request.body === 'string' ? request.body : json(request.body)}`;
    line.textContent = `${request.method} ${request.url}\n${headers}${body}`;
    details.append(line);
    if (preview.authenticationFirst && preview.authenticationFirst.length) {
      details.append(el('p', 'muted', `First it fetches ${preview.authenticationFirst.map((a) => (typeof a === 'string' ? a : a.name || JSON.stringify(a))).join(', ')} from ${definition.domain}.`));
    }
    details.append(el('p', 'muted', 'Vault values are shown as [redacted:…]: the daemon puts them in when it sends.'));
    confirmBox(out, {
      name: 'execute',
      question: `Send this request to ${definition.domain}?`,
      details,
      yes: 'Send',
      onCancel: () => {
        out.textContent = '';
      },
      onYes: async () => {
        const r = await this.rpc('registry/execute', params);
        this.showResult(out, r);
      },
    });
  }

  showResult(out, r) {
    out.textContent = '';
    const box = el('div', r.status === 'ok' ? 'result-ok' : 'error-box');
    box.dataset.status = r.status;
    const head = r.status === 'ok' ? `OK · HTTP ${r.httpStatus}` : `${r.status}${r.httpStatus ? ` · HTTP ${r.httpStatus}` : ''}`;
    box.append(el('span', r.status === 'ok' ? 'result-label' : 'error-head', head));
    if (r.error) box.append(el('p', null, [r.error.resolution, r.error.pattern].filter(Boolean).join(' · ') || json(r.error)));
    if (r.retryAfter) box.append(el('p', null, `Retry after ${r.retryAfter} s.`));
    if (r.validation && r.validation.valid === false) {
      box.append(el('p', 'ws-error', `The answer does not match ${r.validation.schema}: ${(r.validation.violations || []).map((v) => v.message).join('; ')}`));
    }
    if (r.body !== undefined) {
      const pre = el('pre', 'ws-value', typeof r.body === 'string' ? r.body : json(r.body));
      pre.id = 'registry-response';
      box.append(pre);
    }
    if (r.outputs && Object.keys(r.outputs).length) box.append(el('pre', 'ws-value', json(r.outputs)));
    if (r.stored && r.stored.length) box.append(el('p', 'muted', `Stored in the vault: ${r.stored.join(', ')}`));
    out.append(box);
  }
}
