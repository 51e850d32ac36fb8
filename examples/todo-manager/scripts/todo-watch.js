// todoUpdates producer: hearth runs it while at least one client is subscribed. It sends the
// current list once ({"type":"snapshot"}), then stays alive; the changes themselves are published
// by the mutations (todo-service.js) through hearth, so every subscriber sees every change
// exactly once. Each line on stdout is one `lavs/data` push.
'use strict';
const store = require('./todo-store');

process.stdout.write(JSON.stringify({ type: 'snapshot', todos: store.read() }) + '\n');
// Keep running until hearth stops the subscription (it kills the process group).
setInterval(() => {}, 1 << 30);
