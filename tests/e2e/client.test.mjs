// web/lavs-client.js from Node against the real daemon: calls over WebSocket and HTTP, errors
// with their wire codes, subscriptions, readFile, and resubscription after the daemon restarts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { tempDir, copyService, writeService, startDaemon, createLAVSClient, LAVSError, waitFor } from './harness.mjs';

let daemon;
const work = tempDir();
const clients = [];

function client(options) {
  const c = createLAVSClient({ url: daemon.url, token: daemon.token, WebSocket: globalThis.WebSocket, ...options });
  clients.push(c);
  return c;
}

before(async () => {
  const files = writeService(work, 'files', {
    lavs: '1.0', name: 'files', version: '1.0.0',
    endpoints: [{ id: 'ping', method: 'query', handler: { type: 'script', command: 'printf', args: ['%s', '"pong"'] } }],
    permissions: { fileAccess: ['files/*'] },
  }, { 'files/hello.txt': 'héllo\n' });
  fs.writeFileSync(`${files}/files/bytes.bin`, Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x00, 0xff]));
  daemon = await startDaemon({ services: [copyService('todo-manager', work), files] });
});

after(async () => {
  for (const c of clients) c.close();
  await daemon?.stop();
});

test('call, getManifest and errors over WebSocket and HTTP', async () => {
  for (const transport of ['ws', 'http']) {
    const c = client({ service: 'todo-manager', transport });
    assert.equal(c.transport, transport);
    const todo = await c.call('addTodo', { text: `via ${transport}` });
    assert.equal(todo.text, `via ${transport}`);
    assert.ok((await c.call('listTodos')).some((t) => t.id === todo.id));
    assert.equal((await c.getManifest()).name, 'todo-manager');
    const err = await c.call('addTodo', {}).catch((e) => e);
    assert.ok(err instanceof LAVSError && err instanceof Error);
    assert.equal(err.code, -32602);
    assert.equal(err.data.field, 'text');
    const missing = await c.call('noSuchEndpoint').catch((e) => e);
    assert.equal(missing.code, -32601);
  }
  // A wrong token: the daemon's 401 as a transport error.
  const bad = client({ service: 'todo-manager', transport: 'http', token: 'nope' });
  const e = await bad.call('listTodos').catch((x) => x);
  assert.equal(e.code, -32603);
  assert.equal(e.data.status, 401);
});

test('readFile decodes text and base64 contents', async () => {
  const c = client({ service: 'files', transport: 'http' });
  assert.equal(await c.readFile('files/hello.txt'), 'héllo\n');
  assert.equal(await c.readFile('files/bytes.bin'), 'caf\ufffd\u0000\ufffd');
  const denied = await c.readFile('lavs.json').catch((x) => x);
  assert.equal(denied.code, -32001);
});

test('subscribe delivers items until unsubscribed', async () => {
  const c = client({ service: 'todo-manager', transport: 'http' }); // subscribe opens a WebSocket of its own
  const items = [];
  const stop = c.subscribe('todoUpdates', (item) => items.push(item));
  await waitFor(() => items.some((i) => i.type === 'snapshot'), { what: 'the snapshot' });
  const added = await c.call('addTodo', { text: 'pushed' });
  await waitFor(() => items.some((i) => i.type === 'todoAdded' && i.todo.id === added.id), { what: 'the pushed change' });
  const before = (await daemon.mounts()).subscriptions['todo-manager'];
  stop();
  await waitFor(async () => (await daemon.mounts()).subscriptions['todo-manager'] === before - 1, { what: 'the unsubscription' });
  const count = items.length;
  await c.call('addTodo', { text: 'not pushed' });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(items.length, count);
});

test('after the daemon restarts, the client reconnects and subscribes again with the same callback', async () => {
  const tokenFile = daemon.ready.tokenFile;
  const c = client({ service: 'todo-manager', transport: 'ws', token: () => fs.readFileSync(tokenFile, 'utf8').trim(), minDelay: 100, maxDelay: 500 });
  const statuses = [];
  c.onStatus((s) => statuses.push(s.status));
  const items = [];
  c.subscribe('todoUpdates', (item) => items.push(item));
  await waitFor(() => items.length >= 1, { what: 'the first snapshot' });
  const port = daemon.port;
  await daemon.stop();
  daemon = await daemon.restart({ port });
  await waitFor(() => items.filter((i) => i.type === 'snapshot').length >= 2, { timeout: 15000, what: 'a snapshot on the new connection' });
  assert.ok(statuses.includes('offline') && statuses.at(-1) === 'open', statuses.join(' '));
  const added = await c.call('addTodo', { text: 'after restart' });
  await waitFor(() => items.some((i) => i.type === 'todoAdded' && i.todo.id === added.id), { what: 'a change after the restart' });
  assert.equal((await daemon.mounts()).subscriptions['todo-manager'], 1);
});
