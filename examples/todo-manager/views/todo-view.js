// <todo-view>: the todo-manager's view component, in the shape of lavs-spec-v1 7.3. hearth mounts
// it in a sandboxed frame and hands it a LAVSClient (setLAVSClient): it lists the todos, adds,
// toggles and deletes them, follows the todoUpdates subscription, and reloads the list when an
// agent (or anyone else) changes the todos (onAgentAction). The chosen filter is kept with
// setState, so it survives a reload. Todo text is untrusted: it only ever goes in as text. No
// <form>: Add is a click or Enter handled here, so the view also works in a frame sandboxed with
// allow-scripts only (an MCP host's, ui://todo-manager/view).
const STYLE = `
  todo-view { display: block; max-width: 720px; }
  todo-view .add-row { display: flex; gap: 8px; margin-bottom: 12px; }
  todo-view input[name=text] { flex: 1; min-width: 0; padding: 8px 10px; font: inherit; color: inherit;
    border: 1px solid var(--hearth-border, #ccc); border-radius: 6px; background: var(--hearth-bg, transparent); }
  todo-view button { font: inherit; cursor: pointer; border-radius: 6px; padding: 6px 12px;
    border: 1px solid var(--hearth-border, #ccc); background: var(--hearth-surface, transparent); color: inherit; }
  todo-view button.add { background: var(--hearth-accent, #c2410c); color: var(--hearth-accent-fg, #fff); border-color: transparent; font-weight: 600; }
  todo-view .bar { display: flex; align-items: center; gap: 6px; margin-bottom: 8px; color: var(--hearth-muted, #666); font-size: 13px; }
  todo-view .bar .count { margin-right: auto; }
  todo-view .bar button { padding: 2px 10px; font-size: 12.5px; }
  todo-view .bar button[aria-pressed=true] { border-color: var(--hearth-accent, #c2410c); color: var(--hearth-accent, #c2410c); }
  todo-view ul { list-style: none; margin: 0; padding: 0; border: 1px solid var(--hearth-border, #ddd); border-radius: 8px; }
  todo-view li { display: flex; align-items: center; gap: 10px; padding: 8px 12px; border-bottom: 1px solid var(--hearth-border, #ddd); }
  todo-view li:last-child { border-bottom: 0; }
  todo-view li .text { flex: 1; overflow-wrap: anywhere; }
  todo-view li.done .text { text-decoration: line-through; color: var(--hearth-muted, #777); }
  todo-view li input { width: 17px; height: 17px; accent-color: var(--hearth-accent, #c2410c); }
  todo-view li .delete { padding: 2px 8px; font-size: 12px; color: var(--hearth-danger, #b42318); }
  todo-view .empty { padding: 14px 12px; color: var(--hearth-muted, #777); }
  todo-view .error { color: var(--hearth-danger, #b42318); margin: 8px 0 0; }
`;

class TodoView extends HTMLElement {
  constructor() {
    super();
    this.client = null;
    this.todos = [];
    this.filter = 'all';
    this.error = '';
    this.unsubscribe = null;
  }

  connectedCallback() {
    this.render();
  }

  disconnectedCallback() {
    if (this.unsubscribe) this.unsubscribe();
    this.unsubscribe = null;
  }

  setLAVSClient(client) {
    this.client = client;
    return this.init();
  }

  async init() {
    const saved = await this.client.getState?.().catch(() => null);
    if (saved && ['all', 'open', 'done'].includes(saved.filter)) this.filter = saved.filter;
    this.todos = await this.client.call('listTodos');
    this.unsubscribe = this.client.subscribe('todoUpdates', (event) => this.handleUpdate(event));
    this.render();
  }

  handleUpdate(event) {
    if (!event || typeof event !== 'object') return;
    if (event.type === 'snapshot' && Array.isArray(event.todos)) this.todos = event.todos;
    if (event.type === 'todoAdded' || event.type === 'todoUpdated') this.upsert(event.todo);
    if (event.type === 'todoDeleted') this.todos = this.todos.filter((t) => t.id !== event.id);
    this.render();
  }

  upsert(todo) {
    if (!todo || typeof todo !== 'object') return;
    const i = this.todos.findIndex((t) => t.id === todo.id);
    if (i >= 0) this.todos[i] = todo;
    else this.todos.push(todo);
  }

  async run(action) {
    this.error = '';
    try {
      await action();
    } catch (e) {
      this.error = `${e.message}${e.code !== undefined ? ` (${e.code})` : ''}`;
    }
    this.render();
  }

  addTodo(text) {
    return this.run(async () => this.upsert(await this.client.call('addTodo', { text, priority: 1 })));
  }

  toggleTodo(id) {
    return this.run(async () => this.upsert(await this.client.call('toggleTodo', { id })));
  }

  deleteTodo(id) {
    return this.run(async () => {
      await this.client.call('deleteTodo', { id });
      this.todos = this.todos.filter((t) => t.id !== id);
    });
  }

  setFilter(filter) {
    this.filter = filter;
    this.render();
    if (this.client && this.client.setState) this.client.setState({ filter }).catch(() => {});
  }

  // Someone else changed the todos (an agent, the CLI, another page): read them again.
  async onAgentAction(action) {
    this.lastAction = action;
    if (!this.client) return;
    this.todos = await this.client.call('listTodos');
    this.render();
  }

  render() {
    const el = (tag, props = {}, ...children) => {
      const e = Object.assign(document.createElement(tag), props);
      e.append(...children);
      return e;
    };
    const focused = this.querySelector('input[name=text]');
    const draft = focused ? focused.value : '';
    const hadFocus = focused && document.activeElement === focused;
    this.textContent = '';
    this.append(el('style', { textContent: STYLE }));

    const input = el('input', { name: 'text', placeholder: 'What needs doing?', autocomplete: 'off', value: draft });
    input.setAttribute('aria-label', 'New todo');
    const add = el('button', { type: 'button', className: 'add', textContent: 'Add' });
    const addRow = el('div', { className: 'add-row' }, input, add);
    const submit = () => {
      const text = input.value.trim();
      if (!text || !this.client) return;
      input.value = '';
      this.addTodo(text);
    };
    add.addEventListener('click', submit);
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.isComposing) {
        e.preventDefault();
        submit();
      }
    });

    const open = this.todos.filter((t) => !t.done).length;
    const bar = el('div', { className: 'bar' }, el('span', { className: 'count', textContent: `${open} open · ${this.todos.length} in all` }));
    for (const f of ['all', 'open', 'done']) {
      const b = el('button', { type: 'button', textContent: f });
      b.dataset.filter = f;
      b.setAttribute('aria-pressed', String(this.filter === f));
      b.addEventListener('click', () => this.setFilter(f));
      bar.append(b);
    }

    const shown = this.todos.filter((t) => this.filter === 'all' || (this.filter === 'done') === Boolean(t.done));
    const list = el('ul');
    for (const todo of shown) {
      const box = el('input', { type: 'checkbox', checked: Boolean(todo.done) });
      box.setAttribute('aria-label', 'done');
      box.addEventListener('change', () => this.toggleTodo(todo.id));
      const remove = el('button', { type: 'button', className: 'delete', textContent: 'Delete' });
      remove.addEventListener('click', () => this.deleteTodo(todo.id));
      const item = el('li', { className: todo.done ? 'done' : '' }, box, el('span', { className: 'text', textContent: String(todo.text) }), remove);
      item.dataset.id = String(todo.id);
      list.append(item);
    }
    if (shown.length === 0) list.append(el('li', { className: 'empty', textContent: this.client ? 'Nothing here.' : 'Loading…' }));

    this.append(addRow, bar, list);
    if (this.error) this.append(el('p', { className: 'error', textContent: this.error }));
    if (hadFocus) input.focus();
  }
}

customElements.define('todo-view', TodoView);
