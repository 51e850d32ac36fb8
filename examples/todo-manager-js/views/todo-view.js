// <todo-view>: the todo-manager's view component (lavs-spec-v1 section 7). The host injects a
// LAVSClient with setLAVSClient(); the component lists, adds, toggles and deletes todos and keeps
// itself current through the todoUpdates subscription.
class TodoView extends HTMLElement {
  constructor() {
    super();
    this.todos = [];
    this.client = null;
    this.unsubscribe = null;
  }

  connectedCallback() {
    this.render();
  }

  disconnectedCallback() {
    if (this.unsubscribe) this.unsubscribe();
  }

  setLAVSClient(client) {
    this.client = client;
    this.unsubscribe = client.subscribe('todoUpdates', (event) => this.apply(event));
  }

  apply(event) {
    if (event.type === 'snapshot') this.todos = event.todos;
    if (event.type === 'todoAdded') this.todos = [...this.todos.filter((t) => t.id !== event.todo.id), event.todo];
    if (event.type === 'todoUpdated') this.todos = this.todos.map((t) => (t.id === event.todo.id ? event.todo : t));
    if (event.type === 'todoDeleted') this.todos = this.todos.filter((t) => t.id !== event.id);
    this.render();
  }

  onAgentAction(action) {
    if (action && action.type) this.apply(action);
  }

  render() {
    this.textContent = '';
    const form = document.createElement('form');
    const input = document.createElement('input');
    input.placeholder = 'New todo';
    form.append(input);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      if (input.value.trim() && this.client) await this.client.call('addTodo', { text: input.value.trim() });
      input.value = '';
    });
    const list = document.createElement('ul');
    for (const todo of this.todos) {
      const item = document.createElement('li');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.checked = todo.done;
      box.addEventListener('change', () => this.client.call('toggleTodo', { id: todo.id }));
      const label = document.createElement('span');
      label.textContent = todo.text;  // text, never HTML: todo text is untrusted
      const remove = document.createElement('button');
      remove.textContent = 'delete';
      remove.addEventListener('click', () => this.client.call('deleteTodo', { id: todo.id }));
      item.append(box, label, remove);
      list.append(item);
    }
    this.append(form, list);
  }
}

customElements.define('todo-view', TodoView);
