// The virtual workspaces the daemon serves (docs/workspace.md), in the host page: a list in the
// rail, and for the chosen one its public states as the model sees them (permission, type, what
// a change does, the current value; write-only values stay hidden), kept live through
// workspace/subscribe, with the latest changes of its history. A person can run a script there:
// "Dry run" asks the daemon for the change without committing it (workspace/execute dryRun) and
// shows the diff, "Apply" runs the same script at the version the dry run saw. Every history entry
// shows its diff; a committed script's change can be reverted (workspace/revert, after a
// confirmation). Everything is put in the page as text, never as HTML.
import { el, placeChildren, railList } from './kit.js';

const HISTORY_SHOWN = 12;
const VALUE_SHOWN = 400;

/// A JSON value as one line of text, cut at VALUE_SHOWN characters.
function short(value) {
  const t = value === undefined ? '' : JSON.stringify(value);
  return t.length > VALUE_SHOWN ? `${t.slice(0, VALUE_SHOWN)}…` : t;
}

/// An RFC 6902 patch over {state: value} and its inverse as a list of lines: the path, what it
/// was (from the inverse) and what it becomes. A value the model may not read is left out by the
/// daemon, so it is not shown here either.
export function renderDiff(patch, inverse) {
  const list = el('ul', 'ws-diff');
  const before = new Map();
  for (const op of inverse || []) if ('value' in op) before.set(op.path, op.value);
  if (!patch || patch.length === 0) {
    list.append(el('li', 'muted', 'No change.'));
    return list;
  }
  for (const op of patch) {
    const li = el('li', `ws-diff-op ws-op-${op.op}`);
    li.append(el('code', 'ws-diff-path', op.path.replace(/^\//, '').replaceAll('/', '.') || '(all)'));
    if (before.has(op.path)) li.append(el('code', 'ws-diff-old', `− ${short(before.get(op.path))}`));
    if (op.op === 'remove') li.append(el('code', 'ws-diff-old', 'removed'));
    else if ('value' in op) li.append(el('code', 'ws-diff-new', `+ ${short(op.value)}`));
    else if (op.from) li.append(el('code', 'ws-diff-new', `${op.op} from ${op.from}`));
    list.append(li);
  }
  return list;
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
    this.shown = null; // what render() keeps across renders of the same workspace
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
    this.listEl.closest('[data-rail-section]').hidden = this.workspaces.length === 0;
    railList(this.listEl, this.workspaces.map((w) => ({
      key: w.workspaceId,
      data: { workspace: w.workspaceId },
      name: w.workspaceId,
      meta: `v${w.version} · workspace`,
      current: w.workspaceId === this.selected,
      onClick: () => this.select(w.workspaceId),
    })));
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

  /// Shows the workspace. A live change renders it again: the states are redrawn, while the
  /// script editor and the history entries already shown are kept as they are (an entry never
  /// changes once written), so that an open diff, a revert being confirmed or a press on a
  /// button survives it.
  render(view, entries) {
    const s = this.section;
    let shown = this.shown;
    if (!shown || shown.id !== view.workspace || !s.contains(shown.history)) {
      s.textContent = '';
      shown = { id: view.workspace, head: el('header', 'service-head'), grid: el('div', 'ws-states'), list: el('ol', 'log-list'), items: new Map() };
      shown.list.id = 'workspace-history';
      shown.history = el('section', 'ws-history');
      shown.history.append(el('h2', null, 'Recent changes'), shown.list);
      s.append(shown.head, this.scriptBox(view.workspace, view.version), shown.grid, shown.history);
      this.shown = shown;
    } else {
      this.scriptBox(view.workspace, view.version);
    }

    const row = el('div', 'service-title-row');
    const title = el('h1', null, view.workspace);
    title.id = 'workspace-title';
    const version = el('span', 'badge', `v${view.version}`);
    version.id = 'workspace-version';
    row.append(title, version, el('span', this.subscribed.has(view.workspace) ? 'badge live' : 'badge', this.subscribed.has(view.workspace) ? 'live' : 'not live'));
    shown.head.replaceChildren(row, el('p', 'muted', view.description || ''));

    const cards = [];
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
      cards.push(card);
    }
    shown.grid.replaceChildren(...cards);

    const latest = entries.slice(-HISTORY_SHOWN).reverse();
    const items = new Map();
    for (const e of latest) items.set(e.seq, shown.items.get(e.seq) || this.historyItem(view.workspace, e));
    shown.items = items;
    placeChildren(shown.list, latest.length ? [...items.values()] : [el('li', 'muted', 'No script has run yet.')]);
  }

  historyItem(id, e) {
    const li = el('li', `log-item ws-outcome-${e.outcome}`);
    li.dataset.seq = String(e.seq);
    if (e.version != null) li.dataset.version = String(e.version);
    const what = e.version != null ? `v${e.version}` : '–';
    const reverts = e.reverts != null ? ` · reverts v${e.reverts}` : '';
    li.append(el('span', 'log-kind', e.outcome), el('span', null, ` ${what} · ${e.kind} · ${e.actor} · ${e.patch.length} change(s)${reverts}`));
    if (e.script && e.kind !== 'source') li.append(el('pre', 'ws-script', e.script));
    if (e.error && e.error.message) li.append(el('p', 'ws-error', e.error.message));
    if (e.patch.length > 0) {
      const details = el('details', 'ws-entry-diff');
      details.append(el('summary', null, 'Diff'), renderDiff(e.patch, e.inverse));
      li.append(details);
    }
    // A committed change of a script (or of a revert) can be undone; a source's cannot.
    if (e.outcome === 'committed' && e.version != null && e.kind !== 'source') {
      const actions = el('div', 'ws-entry-actions');
      this.revertButton(id, e, actions);
      li.append(actions);
    }
    return li;
  }

  revertButton(id, e, actions, result) {
    const revert = el('button', 'ghost small', 'Revert…');
    revert.type = 'button';
    revert.dataset.action = 'revert';
    revert.addEventListener('click', () => this.confirmRevert(id, e, actions));
    actions.replaceChildren(revert);
    if (result) actions.append(result);
  }

  confirmRevert(id, e, actions) {
    actions.textContent = '';
    const box = el('div', 'confirm');
    box.dataset.confirm = 'revert';
    box.append(el('p', null, `Undo the change that made v${e.version}? Its inverse is applied as a new change (its side effects run); it is refused if a later change touched the same values.`));
    const yes = el('button', 'primary danger small', `Revert v${e.version}`);
    yes.type = 'button';
    yes.dataset.action = 'confirm-revert';
    const no = el('button', 'ghost small', 'Cancel');
    no.type = 'button';
    const out = el('p', 'ws-revert-result');
    no.addEventListener('click', () => this.revertButton(id, e, actions));
    yes.addEventListener('click', async () => {
      yes.disabled = true;
      try {
        const r = await this.rpc('workspace/revert', { workspaceId: id, version: e.version });
        out.className = 'ws-revert-result ok';
        out.textContent = r.committed ? `Reverted: now v${r.version}.` : 'Nothing to revert.';
        this.revertButton(id, e, actions, out);
        await this.refresh();
      } catch (err) {
        yes.disabled = false;
        out.className = 'ws-revert-result banner error';
        out.textContent = `Not reverted: ${err.message}`;
      }
    });
    box.append(el('div', 'form-actions'), out);
    box.querySelector('.form-actions').append(yes, no);
    actions.append(box);
  }

  /// The script editor of workspace `id`: kept across re-renders (the text stays as typed).
  scriptBox(id, version) {
    if (this.editor && this.editor.id === id) {
      this.editor.version = version;
      return this.editor.root;
    }
    const root = el('section', 'ws-run');
    root.id = 'workspace-run';
    root.append(el('h2', null, 'Run a script'));
    root.append(el('p', 'muted', 'JavaScript run against the states, as the model does: assign to a state to change it, `return` a value to see it. A dry run shows the change first; nothing is committed until you apply it.'));
    const area = el('textarea', 'json ws-script-input');
    area.id = 'workspace-script';
    area.rows = 5;
    area.spellcheck = false;
    area.setAttribute('aria-label', 'Script');
    area.placeholder = "search_box_state.search_pattern = 'tea';";
    const dry = el('button', 'ghost', 'Dry run');
    dry.type = 'button';
    dry.id = 'workspace-dry-run';
    const apply = el('button', 'primary', 'Apply');
    apply.type = 'button';
    apply.id = 'workspace-apply';
    apply.disabled = true;
    apply.title = 'Make a dry run of this script first';
    const actions = el('div', 'form-actions');
    actions.append(dry, apply);
    const result = el('div', 'ws-run-result');
    result.id = 'workspace-run-result';
    root.append(area, actions, result);
    const editor = { id, root, version, checked: null };
    this.editor = editor;
    area.addEventListener('input', () => {
      // A dry run vouches for the text it ran only.
      editor.checked = null;
      apply.disabled = true;
    });
    dry.addEventListener('click', async () => {
      const script = area.value;
      if (!script.trim()) return;
      dry.disabled = true;
      try {
        const r = await this.rpc('workspace/execute', { workspaceId: id, script, dryRun: true });
        this.showRun(result, r, true);
        editor.checked = r.ok ? { script, version: r.version } : null;
        apply.disabled = !r.ok;
      } catch (err) {
        this.showRunError(result, err);
        editor.checked = null;
        apply.disabled = true;
      } finally {
        dry.disabled = false;
      }
    });
    apply.addEventListener('click', async () => {
      const checked = editor.checked;
      if (!checked || checked.script !== area.value) return;
      apply.disabled = true;
      try {
        const r = await this.rpc('workspace/execute', { workspaceId: id, script: checked.script, expectedVersion: checked.version });
        this.showRun(result, r, false);
        editor.checked = null;
        await this.refresh();
      } catch (err) {
        this.showRunError(result, err);
        apply.disabled = false;
      }
    });
    return root;
  }

  showRun(box, r, dry) {
    box.textContent = '';
    box.dataset.outcome = dry ? (r.ok ? 'dry-run' : 'failed') : r.committed ? 'committed' : r.ok ? 'no-change' : 'failed';
    let head;
    if (!r.ok) head = dry ? 'The dry run failed: nothing would change.' : 'The script failed: nothing changed.';
    else if (dry) head = r.patch.length ? `Would change ${r.patch.length} value(s) from v${r.version}. Apply to commit it.` : 'Would change nothing.';
    else head = r.committed ? `Applied: now v${r.version}.` : 'Ran; nothing changed.';
    box.append(el('p', r.ok ? 'result-label' : 'ws-error', head));
    if (r.error && r.error.message) box.append(el('p', 'ws-error', r.error.message));
    if (r.patch) box.append(renderDiff(r.patch, r.inverse));
    for (const fx of r.effects || []) {
      box.append(el('p', 'ws-call', `${fx.status || ''} → ${fx.service}/${fx.endpoint} ${short(fx.input)}`));
    }
    if (r.console && r.console.length) box.append(el('pre', 'ws-script', r.console.map((c) => (typeof c === 'string' ? c : c.message)).join('\n')));
    if (r.output !== undefined && r.output !== null) box.append(el('pre', 'ws-value', JSON.stringify(r.output, null, 2)));
  }

  showRunError(box, err) {
    box.textContent = '';
    box.dataset.outcome = 'error';
    const data = err.data && (err.data.state || err.data.path) ? ` (${[err.data.state, err.data.path].filter(Boolean).join(' ')})` : '';
    box.append(el('div', 'banner error', `${err.code === -32010 ? 'The workspace changed since the dry run: make it again. ' : ''}${err.message}${data}`));
  }
}
