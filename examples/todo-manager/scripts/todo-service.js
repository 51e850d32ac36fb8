// todo-manager endpoints: list | add | toggle | delete. Input arrives as JSON on stdin (for
// mutations); the result is printed as JSON on stdout. Failures exit non-zero with a message on
// stderr, which hearth returns as a handler error (-32003).
'use strict';
const fs = require('fs');
const store = require('./todo-store');

function readInput() {
  let text = '';
  try {
    text = fs.readFileSync(0, 'utf8');
  } catch (_) { /* no stdin */ }
  return text.trim() ? JSON.parse(text) : {};
}

function fail(message) {
  process.stderr.write(message + '\n');
  process.exit(1);
}

const action = process.argv[2];
switch (action) {
  case 'list': {
    process.stdout.write(JSON.stringify(store.read()) + '\n');
    break;
  }
  case 'add': {
    const input = readInput();
    let todo;
    store.update((todos) => {
      const id = todos.reduce((max, t) => Math.max(max, t.id), 0) + 1;
      todo = {
        id,
        text: input.text,
        done: false,
        priority: input.priority ?? 0,
        createdAt: new Date().toISOString(),
      };
      todos.push(todo);
      return todos;
    });
    store.publish('todoUpdates', { type: 'todoAdded', todo });
    process.stdout.write(JSON.stringify(todo) + '\n');
    break;
  }
  case 'toggle': {
    const { id } = readInput();
    let todo;
    store.update((todos) => {
      todo = todos.find((t) => t.id === id);
      if (!todo) return undefined;
      todo.done = !todo.done;
      return todos;
    });
    if (!todo) fail(`no todo with id ${id}`);
    store.publish('todoUpdates', { type: 'todoUpdated', todo });
    process.stdout.write(JSON.stringify(todo) + '\n');
    break;
  }
  case 'delete': {
    const { id } = readInput();
    let found = false;
    store.update((todos) => {
      const next = todos.filter((t) => t.id !== id);
      found = next.length !== todos.length;
      return found ? next : undefined;
    });
    if (!found) fail(`no todo with id ${id}`);
    store.publish('todoUpdates', { type: 'todoDeleted', id });
    process.stdout.write(JSON.stringify({ deleted: id }) + '\n');
    break;
  }
  default:
    fail(`unknown action '${action}' (list, add, toggle, delete)`);
}
