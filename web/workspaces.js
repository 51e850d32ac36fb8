// The virtual workspaces the daemon serves (docs/workspace.md), in the host page: a list in the
// rail, and for the chosen one its public states as the model sees them (permission, type, what
// a change does, the current value; write-only values stay hidden), kept live through
// workspace/subscribe, with the latest changes of its history. Everything is put in the page as
// text, never as HTML.

const HISTORY_SHOWN = 12;

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

export class WorkspacesPanel {
  /// rpc(method, params) -> Promise; onSelect(): the page hides what it showed before.
  constructor({ rpc, client, list, section, onSelect, log, onList }) {
    this.rpc = rpc;
    this.client = client;
    this.listEl = list;
    this.section = section;
    this.onSelect = onSelect;
    this.log = log;
    this.onList = onList || (() => {});
    this.workspaces = [];
    this.selected = null;
    this.seq = 0;
    this.subscribed = new Set();
    client.on('workspace/changed', (params) => {
      this.log('push', `workspace ${params.workspaceId} v${params.version}: ${params.changed.join(', ') || 'no public state'} (${params.actor})`);
      if (params.workspaceId === this.selected) this.refresh();
      const item = this.workspaces.find((w) => w.workspaceId === params.workspaceId);
      if (item) {
        item.version = params.version;
        this.renderList();
      }
    });
    client.on('$open', () => this.subscribed.clear());
  }

  /// Lists the workspaces (an empty list hides the rail's section).
  async load() {
    let list = [];
    try {
      list = (await this.rpc('workspace/list', {})).workspaces || [];
    } catch (e) {
      list = [];
    }
    this.workspaces = list;
    this.renderList();
    if (this.selected && !list.some((w) => w.workspaceId === this.selected)) this.hide();
    if (this.selected) this.select(this.selected);
    return list;
  }

  renderList() {
    this.onList();
    const ul = this.listEl;
    ul.textContent = '';
    ul.closest('[data-rail-section]').hidden = this.workspaces.length === 0;
    for (const w of this.workspaces) {
      const li = el('li');
      const b = el('button', 'service-item');
      b.type = 'button';
      b.dataset.workspace = w.workspaceId;
      if (w.workspaceId === this.selected) b.setAttribute('aria-current', 'true');
      b.append(el('span', 'service-name', w.workspaceId), el('span', 'service-meta', `v${w.version} · workspace`));
      b.addEventListener('click', () => this.select(w.workspaceId));
      li.append(b);
      ul.append(li);
    }
  }

  hide() {
    this.selected = null;
    this.section.hidden = true;
    this.renderList();
  }

  async select(id) {
    if (this.selected !== id) this.onSelect();
    this.selected = id;
    this.section.hidden = false;
    this.renderList();
    if (!this.subscribed.has(id)) {
      try {
        await this.rpc('workspace/subscribe', { workspaceId: id });
        this.subscribed.add(id);
      } catch (e) {
        // Shown as not live; the page still shows the state as of now.
      }
    }
    await this.refresh();
  }

  async refresh() {
    const id = this.selected;
    if (!id) return;
    const seq = ++this.seq;
    let view;
    let history;
    try {
      [view, history] = await Promise.all([
        this.rpc('workspace/render', { workspaceId: id, format: 'json', guide: true }),
        this.rpc('workspace/history', { workspaceId: id, limit: 500 }),
      ]);
    } catch (e) {
      if (seq === this.seq) this.renderError(e);
      return;
    }
    if (seq !== this.seq || id !== this.selected) return;
    this.render(view.view, history.entries || []);
  }

  renderError(e) {
    this.section.textContent = '';
    this.section.append(el('div', 'banner error', `Could not read the workspace: ${e.message}`));
  }

  render(view, entries) {
    const s = this.section;
    s.textContent = '';
    const head = el('header', 'service-head');
    const row = el('div', 'service-title-row');
    const title = el('h1', null, view.workspace);
    title.id = 'workspace-title';
    const version = el('span', 'badge', `v${view.version}`);
    version.id = 'workspace-version';
    row.append(title, version, el('span', this.subscribed.has(view.workspace) ? 'badge live' : 'badge', this.subscribed.has(view.workspace) ? 'live' : 'not live'));
    head.append(row, el('p', 'muted', view.description || ''));
    s.append(head);

    const grid = el('div', 'ws-states');
    for (const st of view.states) {
      const card = el('article', 'ws-state');
      card.dataset.state = st.name;
      const top = el('div', 'ws-state-head');
      top.append(el('h2', null, st.name), el('span', `badge perm-${st.permission}`, st.permission));
      if (st.source) top.append(el('span', 'badge', st.source.live ? 'live source' : 'source'));
      card.append(top, el('code', 'ws-type', st.type));
      if (st.description) card.append(el('p', 'muted', st.description));
      if (st.sideEffects) {
        const fx = el('p', 'ws-effects', st.sideEffects.description || '');
        for (const c of st.sideEffects.calls || []) {
          fx.append(el('span', 'ws-call', ` → ${c.service}/${c.endpoint}${c.assign ? ` ⇒ ${c.assign}` : ''}${c.reversible ? '' : ' (irreversible)'}`));
        }
        card.append(fx);
      }
      if (st.writeOnly) {
        card.append(el('p', 'ws-value ws-hidden', 'write-only: the model assigns it and cannot read it back'));
      } else if (st.elided) {
        card.append(el('p', 'ws-value ws-hidden', `too large to show (${st.elided.chars} characters)`));
      } else {
        card.append(el('pre', 'ws-value', JSON.stringify(st.value, null, 2)));
      }
      grid.append(card);
    }
    s.append(grid);

    const hist = el('section', 'ws-history');
    hist.append(el('h2', null, 'Recent changes'));
    const ol = el('ol', 'log-list');
    ol.id = 'workspace-history';
    const shown = entries.slice(-HISTORY_SHOWN).reverse();
    if (shown.length === 0) ol.append(el('li', 'muted', 'No script has run yet.'));
    for (const e of shown) {
      const li = el('li', `log-item ws-outcome-${e.outcome}`);
      const what = e.version != null ? `v${e.version}` : '–';
      li.append(el('span', 'log-kind', e.outcome), el('span', null, ` ${what} · ${e.kind} · ${e.actor} · ${e.patch.length} change(s)`));
      if (e.script && e.kind !== 'source') li.append(el('pre', 'ws-script', e.script));
      if (e.error && e.error.message) li.append(el('p', 'ws-error', e.error.message));
      ol.append(li);
    }
    hist.append(ol);
    s.append(hist);
  }
}
