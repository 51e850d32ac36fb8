// todo-manager-js: the todo-manager endpoints as JavaScript function handlers. hearth calls each
// exported function as f(input, ctx) in a pooled, jailed SpiderMonkey worker; the result is the
// endpoint's result, a thrown error is a handler error (-32003). Data lives in data/todos.json,
// which the manifest's fileAccess allows; a mutation holds the data folder's lock until it
// returns, so concurrent mutations on other workers never lose a write.
import { readTodos, writeTodos, nextId } from './store.mjs';

export function listTodos(input, ctx) {
  return readTodos(ctx);
}

export function addTodo(input, ctx) {
  const todos = readTodos(ctx);
  const todo = {
    id: nextId(todos),
    text: input.text,
    done: false,
    priority: input.priority ?? 0,
    createdAt: new Date().toISOString(),
  };
  todos.push(todo);
  writeTodos(ctx, todos);
  ctx.publish('todoUpdates', { type: 'todoAdded', todo });
  return todo;
}

export function toggleTodo(input, ctx) {
  const todos = readTodos(ctx);
  const todo = todos.find((t) => t.id === input.id);
  if (!todo) throw new Error(`no todo with id ${input.id}`);
  todo.done = !todo.done;
  writeTodos(ctx, todos);
  ctx.publish('todoUpdates', { type: 'todoUpdated', todo });
  return todo;
}

export function deleteTodo(input, ctx) {
  const todos = readTodos(ctx);
  const next = todos.filter((t) => t.id !== input.id);
  if (next.length === todos.length) throw new Error(`no todo with id ${input.id}`);
  writeTodos(ctx, next);
  ctx.publish('todoUpdates', { type: 'todoDeleted', id: input.id });
  return { deleted: input.id };
}

// The subscription: its result is the first item (a snapshot); the changes that follow are
// published by the mutations above.
export function todoUpdates(input, ctx) {
  return { type: 'snapshot', todos: readTodos(ctx) };
}
