// data/todos.json, read and written whole through ctx (checked against fileAccess by hearth and
// by the jail).
const FILE = 'data/todos.json';

export function readTodos(ctx) {
  try {
    const todos = JSON.parse(ctx.readFile(FILE));
    return Array.isArray(todos) ? todos : [];
  } catch (e) {
    if (e.code === 'ENOENT') return [];
    throw e;
  }
}

export function writeTodos(ctx, todos) {
  ctx.writeFile(FILE, JSON.stringify(todos, null, 2) + '\n');
}

export function nextId(todos) {
  return todos.reduce((max, t) => Math.max(max, t.id), 0) + 1;
}
