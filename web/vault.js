// The vault panel (docs/a2s.md, "Vault"): the names of the stored variables, their scopes and the
// trust grants of global variables. A value can be set (a write-only field, cleared once sent)
// and a variable deleted (after a confirmation); values are never asked for nor shown: vault/list
// answers names and metadata only.
import { el, button, panelHead, absentCard, isMissingMethod, confirmBox } from './kit.js';

export function formatTime(t) {
  if (t === undefined || t === null) return '–';
  let d;
  if (typeof t === 'number') d = new Date(t < 1e12 ? t * 1000 : t);
  else d = new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  return d.toLocaleString([], { hour12: false });
}

export class VaultPanel {
  /// rpc(method, params) -> Promise; domains() -> the registry's domains (for the scope field).
  constructor({ rpc, section, domains, onChange }) {
    this.rpc = rpc;
    this.section = section;
    this.domains = domains || (() => []);
    this.onChange = onChange || (() => {});
    this.entries = [];
    this.grants = [];
    this.available = null; // null: not asked yet
    this.seq = 0;
  }

  /// Reads the names (never the values); false when the daemon has no vault.
  async load() {
    try {
      const r = await this.rpc('vault/list', {});
      this.entries = r.entries || [];
      this.grants = r.grants || [];
      this.available = true;
      this.error = null;
    } catch (e) {
      this.entries = [];
      this.grants = [];
      this.available = !isMissingMethod(e);
      this.error = this.available ? e : null;
    }
    return this.available;
  }

  summary() {
    if (this.available === false) return 'not enabled';
    return `${this.entries.length} variable${this.entries.length === 1 ? '' : 's'} · ${this.grants.length} grant${this.grants.length === 1 ? '' : 's'}`;
  }

  async show() {
    const seq = ++this.seq;
    await this.load();
    if (seq !== this.seq) return;
    this.render();
    this.onChange();
  }

  render() {
    const s = this.section;
    s.textContent = '';
    s.append(panelHead('Vault', 'Secrets and settings the registry’s services use (API keys, tokens), stored encrypted in the daemon’s state dir. Values are write-only here: this page never reads one back.'));
    if (this.available === false) {
      s.append(absentCard('This daemon has no vault',
        'The vault comes with the registry of web services. Start the daemon with a registry folder to use it:',
        'hearth serve [SERVICES...] --registry DIR'));
      return;
    }
    if (this.error) s.append(el('div', 'banner error', `Could not list the vault: ${this.error.message}`));
    s.append(this.entriesCard(), this.setCard(), this.grantsCard());
  }

  entriesCard() {
    const card = el('section', 'card');
    card.append(el('h2', null, 'Variables'));
    const wrap = el('div', 'table-wrap');
    const table = el('table', 'data-table');
    table.id = 'vault-entries';
    const head = el('tr');
    for (const h of ['Variable', 'Scope', 'Updated', 'Expires', 'Size', '']) head.append(el('th', null, h));
    table.append(el('thead'), el('tbody'));
    table.tHead.append(head);
    for (const e of this.entries) {
      const tr = el('tr');
      tr.dataset.variable = e.variable;
      const act = el('td', 'row-actions');
      const del = button('Delete…', 'ghost small', { action: 'delete' });
      del.addEventListener('click', () => confirmBox(act, {
        name: 'delete',
        question: `Delete ${e.variable}? A service that needs it asks for it again.`,
        yes: 'Delete',
        onYes: async () => {
          await this.rpc('vault/delete', { variable: e.variable });
          await this.show();
        },
        onCancel: () => this.render(),
      }));
      act.append(del);
      tr.append(el('td', 'mono', e.variable), el('td', null, e.scope === 'global' ? 'global' : `service ${e.scope}`),
        el('td', null, formatTime(e.updatedAt)), el('td', null, e.expiresAt ? formatTime(e.expiresAt) : 'never'),
        el('td', 'num', `${e.size} B`), act);
      table.tBodies[0].append(tr);
    }
    wrap.append(table);
    if (this.entries.length === 0) wrap.append(el('p', 'empty', 'The vault is empty.'));
    card.append(wrap);
    return card;
  }

  setCard() {
    const card = el('section', 'card');
    card.append(el('h2', null, 'Set a variable'));
    card.append(el('p', 'muted', 'Scope: a service’s domain (its variables) or global (shared, read by a domain only with a trust grant). The value is sent once and cleared from this page.'));
    const form = el('form', 'endpoint-form');
    form.id = 'vault-set';
    form.autocomplete = 'off';
    const field = (label, input, hint) => {
      const f = el('div', 'field');
      const l = el('label', null, label);
      l.htmlFor = input.id;
      f.append(l, input);
      if (hint) f.append(el('small', 'muted', hint));
      return f;
    };
    const scope = el('input');
    scope.id = 'vault-scope';
    scope.required = true;
    scope.placeholder = 'api.example.com or global';
    scope.setAttribute('list', 'vault-scopes');
    const list = el('datalist');
    list.id = 'vault-scopes';
    for (const d of new Set(['global', ...this.domains()])) list.append(new Option(d));
    const name = el('input');
    name.id = 'vault-name';
    name.required = true;
    name.placeholder = 'API_KEY';
    name.pattern = '[A-Za-z_][A-Za-z0-9_]*';
    const value = el('input');
    value.type = 'password';
    value.id = 'vault-value';
    value.required = true;
    value.autocomplete = 'new-password';
    value.placeholder = 'write-only';
    const expires = el('input');
    expires.type = 'number';
    expires.id = 'vault-expires';
    expires.min = '1';
    expires.placeholder = 'never';
    const actions = el('div', 'form-actions');
    const submit = el('button', 'primary', 'Set');
    submit.type = 'submit';
    submit.id = 'vault-set-submit';
    const out = el('p', 'confirm-result');
    out.id = 'vault-set-result';
    actions.append(submit);
    form.append(field('Scope', scope), list, field('Name', name), field('Value', value, 'Never shown again'),
      field('Expires in (seconds)', expires, 'Optional'), actions);
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const params = { scope: scope.value.trim(), name: name.value.trim(), value: value.value };
      if (expires.value) params.expiresIn = Number(expires.value);
      // The value leaves the page once: the field is cleared whatever the answer.
      value.value = '';
      submit.disabled = true;
      try {
        const r = await this.rpc('vault/set', params);
        out.className = 'confirm-result ok';
        out.textContent = `Stored ${r.variable}.`;
        await this.load();
        const keep = out.textContent;
        this.render();
        this.onChange();
        const again = this.section.querySelector('#vault-set-result');
        again.className = 'confirm-result ok';
        again.textContent = keep;
      } catch (e) {
        out.className = 'confirm-result banner error';
        out.textContent = `Not stored: ${e.message}`;
      } finally {
        submit.disabled = false;
      }
    });
    card.append(form, out);
    return card;
  }

  grantsCard() {
    const card = el('section', 'card');
    card.append(el('h2', null, 'Trust grants'));
    card.append(el('p', 'muted', 'A domain may read a global variable only when it is trusted with it.'));
    const wrap = el('div', 'table-wrap');
    const table = el('table', 'data-table');
    table.id = 'vault-grants';
    table.append(el('thead'), el('tbody'));
    const head = el('tr');
    for (const h of ['Domain', 'Variable', 'Granted', '']) head.append(el('th', null, h));
    table.tHead.append(head);
    for (const g of this.grants) {
      const tr = el('tr');
      tr.dataset.grant = `${g.domain} ${g.name}`;
      const act = el('td', 'row-actions');
      const revoke = button('Revoke', 'ghost small', { action: 'revoke' });
      revoke.addEventListener('click', async () => {
        revoke.disabled = true;
        try {
          await this.rpc('vault/revoke', { domain: g.domain, names: [g.name] });
        } finally {
          await this.show();
        }
      });
      act.append(revoke);
      tr.append(el('td', 'mono', g.domain), el('td', 'mono', `global::${g.name}`), el('td', null, formatTime(g.grantedAt)), act);
      table.tBodies[0].append(tr);
    }
    wrap.append(table);
    if (this.grants.length === 0) wrap.append(el('p', 'empty', 'No domain is trusted with a global variable.'));
    card.append(wrap);

    const form = el('form', 'inline-form');
    form.id = 'vault-trust';
    const domain = el('input');
    domain.id = 'vault-trust-domain';
    domain.required = true;
    domain.placeholder = 'domain';
    domain.setAttribute('aria-label', 'Domain to trust');
    domain.setAttribute('list', 'vault-scopes');
    const names = el('input');
    names.id = 'vault-trust-names';
    names.required = true;
    names.placeholder = 'global names, comma-separated';
    names.setAttribute('aria-label', 'Global variable names');
    const submit = el('button', 'ghost', 'Trust');
    submit.type = 'submit';
    const out = el('p', 'confirm-result');
    form.append(domain, names, submit);
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const list = names.value.split(',').map((n) => n.trim()).filter(Boolean);
      try {
        await this.rpc('vault/trust', { domain: domain.value.trim(), names: list });
        await this.show();
      } catch (e) {
        out.className = 'confirm-result banner error';
        out.textContent = `Not trusted: ${e.message}`;
      }
    });
    card.append(form, out);
    return card;
  }
}
