// Shared storage for the todo-manager scripts: data/todos.json, read whole, written atomically
// (temporary file + rename) under a lock folder so that concurrent mutations never lose a write.
'use strict';
const fs = require('fs');
const path = require('path');

const DATA_DIR = path.join(__dirname, '..', 'data');
const FILE = path.join(DATA_DIR, 'todos.json');
const LOCK = path.join(DATA_DIR, '.todos.lock');

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function read() {
  try {
    const todos = JSON.parse(fs.readFileSync(FILE, 'utf8'));
    return Array.isArray(todos) ? todos : [];
  } catch (e) {
    if (e.code === 'ENOENT') return [];
    throw e;
  }
}

function write(todos) {
  fs.mkdirSync(DATA_DIR, { recursive: true });
  const tmp = `${FILE}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(todos, null, 2) + '\n');
  fs.renameSync(tmp, FILE);
}

// Runs fn(todos) under the lock; fn returns the new list (or undefined to leave it as is).
function update(fn) {
  fs.mkdirSync(DATA_DIR, { recursive: true });
  const deadline = Date.now() + 10000;
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      // A lock older than 10 s belongs to a process that was killed: take it over.
      try {
        if (Date.now() - fs.statSync(LOCK).mtimeMs > 10000) fs.rmdirSync(LOCK);
      } catch (_) { /* gone meanwhile */ }
      if (Date.now() > deadline) throw new Error('todo store is locked');
      sleep(5);
    }
  }
  try {
    const todos = read();
    const next = fn(todos);
    if (next !== undefined) write(next);
  } finally {
    fs.rmdirSync(LOCK);
  }
}

// Tells hearth to push `data` to the subscribers of `subscription` (see docs/protocol.md,
// "Publishing from handlers"): one JSON line on the file descriptor named by LAVS_PUBLISH_FD.
function publish(subscription, data) {
  const fd = Number(process.env.LAVS_PUBLISH_FD);
  if (!Number.isInteger(fd) || fd < 0) return;
  try {
    fs.writeSync(fd, JSON.stringify({ subscription, data }) + '\n');
  } catch (_) { /* not run by hearth */ }
}

module.exports = { read, update, publish };
