// The official A2A JS SDK (@a2a-js/sdk 1.3.0) against hearth (tests/a2a_clients/run.sh): its
// ClientFactory discovers the Agent Card without the token, then calls with the token given
// through the SDK's own authentication hook (createAuthenticatingFetchWithRetry), in A2A 1.0
// (its default; JSON-RPC and HTTP+JSON) and in A2A 0.3 (its legacyCompat layer).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.env.HEARTH_A2A_MODULES;
const hearth = process.env.HEARTH_BIN;
const sdkFile = (path) => pathToFileURL(join(modules, '@a2a-js', 'sdk', 'dist', path)).href;
const { Role, TaskState } = await import(sdkFile('index.js'));
const {
  ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory,
  RestTransportFactory, createAuthenticatingFetchWithRetry,
} = await import(sdkFile('client/index.js'));
const { TaskNotFoundError, TaskNotCancelableError } = await import(sdkFile('errors/index.js'));

const tmp = mkdtempSync(join(tmpdir(), 'hearth-a2a-clients-'));
const fixture = join(tmp, 'mcp-fixture');
cpSync(process.env.HEARTH_FIXTURE, fixture, { recursive: true });
let daemon;
let baseUrl;
let token;

before(async () => {
  daemon = spawn(hearth, ['serve', fixture, '--port', '0', '--state-dir', join(tmp, 'state'),
    '--ready-file', join(tmp, 'ready.json'), '--token-file', join(tmp, 'token'), '--log-level', 'warn'],
  { stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 20000;
  while (!existsSync(join(tmp, 'ready.json'))) {
    if (Date.now() > deadline) throw new Error('hearth did not become ready');
    await new Promise((r) => setTimeout(r, 50));
  }
  baseUrl = JSON.parse(readFileSync(join(tmp, 'ready.json'), 'utf8')).url;
  token = readFileSync(join(tmp, 'token'), 'utf8').trim();
});

after(() => {
  daemon?.kill('SIGTERM');
  rmSync(tmp, { recursive: true, force: true });
});

/// What went over the wire: the card requests' headers, and each call's A2A-Version and
/// JSON-RPC method (or HTTP+JSON path).
function recorder() {
  const seen = { cards: [], calls: [] };
  // The card is fetched with plain fetch: no token.
  seen.cardFetch = async (url, init) => {
    seen.cards.push(new Headers(init?.headers));
    return fetch(url, init);
  };
  const recording = async (url, init) => {
    const headers = new Headers(init?.headers);
    let method = `${init?.method ?? 'GET'} ${new URL(url).pathname}`;
    if (new URL(url).pathname === '/a2a' && init?.body) method = JSON.parse(init.body).method;
    seen.calls.push({ version: headers.get('A2A-Version'), method, auth: headers.has('authorization') });
    return fetch(url, init);
  };
  // The SDK's authentication hook adds the bearer token to every call.
  seen.callFetch = createAuthenticatingFetchWithRetry(recording, {
    headers: async () => ({ Authorization: `Bearer ${token}` }),
    shouldRetryWithHeaders: async () => undefined,
  });
  return seen;
}

function factory(seen, { legacy = false, preferred, cardFetch } = {}) {
  const legacyCompat = legacy ? { enabled: true } : undefined;
  return new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: cardFetch ?? seen.cardFetch, legacyCompat }),
    transports: [new JsonRpcTransportFactory({ fetchImpl: seen.callFetch, legacyCompat }),
      new RestTransportFactory({ fetchImpl: seen.callFetch, legacyCompat })],
    preferredTransports: preferred,
  }));
}

function message(skill, data) {
  return {
    messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER,
    parts: [{ content: { $case: 'data', value: data }, filename: '', mediaType: '' }],
    metadata: { skillId: skill }, extensions: [], referenceTaskIds: [],
  };
}

/// A ListTasksRequest as the SDK's types declare it: every field that has no default given.
function listRequest(fields) {
  return { tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '',
    statusTimestampAfter: undefined, ...fields };
}

async function collect(stream) {
  const events = [];
  for await (const event of stream) events.push(event.payload);
  return events;
}

/// Everything a client does with hearth; `listing`: whether ListTasks exists in its version.
async function exercise(client, { listing }) {
  const card = client.agentCard;
  assert.ok(card.skills.some((s) => s.id === 'add'), 'the card lists the skills');
  assert.equal(card.capabilities.streaming, true);

  // Send: the call's result is the task's artifact.
  const sum = await client.sendMessage({ message: message('add', { a: 20, b: 22 }) });
  assert.equal(sum.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.deepEqual(sum.artifacts[0].parts[0].content, { $case: 'data', value: { sum: 42 } });
  assert.deepEqual(sum.history.map((m) => m.role), [Role.ROLE_USER, Role.ROLE_AGENT]);
  const failed = await client.sendMessage({ message: message('add', { a: 'x' }) });
  assert.equal(failed.status.state, TaskState.TASK_STATE_FAILED);

  // Stream: the task, its artifact, its final status; the stream ends there.
  const events = await collect(client.sendMessageStream({
    message: message('echo', { item: { name: 'x' } }) }));
  assert.equal(events[0].$case, 'task');
  const artifact = events.find((e) => e.$case === 'artifactUpdate');
  assert.deepEqual(artifact.value.artifact.parts[0].content.value, { echoed: { item: { name: 'x' } } });
  assert.equal(events.at(-1).$case, 'statusUpdate');
  assert.equal(events.at(-1).value.status.state, TaskState.TASK_STATE_COMPLETED);

  // Get, with a history limit.
  const got = await client.getTask({ id: sum.id, historyLength: 1 });
  assert.equal(got.id, sum.id);
  assert.equal(got.history.length, 1);
  assert.equal(got.status.state, TaskState.TASK_STATE_COMPLETED);

  // A running task: subscribe to it until it ends.
  const slow = await client.sendMessage({ message: message('test_tool_with_progress', { ms: 800 }),
    configuration: { returnImmediately: true } });
  assert.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(slow.status.state));
  const watched = await collect(client.resubscribeTask({ id: slow.id }));
  assert.equal(watched[0].$case, 'task');
  assert.equal(watched.at(-1).value.status.state, TaskState.TASK_STATE_COMPLETED);

  // Cancel a running task; an ended one cannot be.
  const longer = await client.sendMessage({ message: message('test_tool_with_progress', { ms: 3000 }),
    configuration: { returnImmediately: true } });
  const canceled = await client.cancelTask({ id: longer.id });
  assert.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED);
  await assert.rejects(client.cancelTask({ id: longer.id }),
    (e) => e instanceof TaskNotCancelableError && e.name === 'TaskNotCancelableError');

  // An unknown task.
  await assert.rejects(client.getTask({ id: 'no-such-task' }),
    (e) => e instanceof TaskNotFoundError && e.name === 'TaskNotFoundError');

  if (listing) {
    // List a page at a time, newest first: every task seen once.
    const first = await client.listTasks(listRequest({ pageSize: 2 }));
    assert.equal(first.tasks.length, 2);
    assert.notEqual(first.nextPageToken, '');
    assert.ok(first.totalSize >= 5, `totalSize ${first.totalSize}`);
    assert.equal(first.tasks[0].id, longer.id, 'the latest update first');
    const ids = first.tasks.map((t) => t.id);
    let page = first;
    while (page.nextPageToken) {
      page = await client.listTasks(listRequest({ pageSize: 2, pageToken: page.nextPageToken }));
      ids.push(...page.tasks.map((t) => t.id));
    }
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(ids.length, first.totalSize);
    for (const t of [sum, failed, slow, longer]) assert.ok(ids.includes(t.id), t.id);
    const done = await client.listTasks(listRequest({ status: TaskState.TASK_STATE_CANCELED }));
    assert.ok(done.tasks.every((t) => t.status.state === TaskState.TASK_STATE_CANCELED));
    assert.ok(done.tasks.some((t) => t.id === longer.id));
  } else {
    await assert.rejects(client.listTasks(listRequest({})));
  }
}

function assertCardsWithoutToken(seen) {
  assert.ok(seen.cards.length > 0, 'the card was fetched');
  for (const h of seen.cards) assert.equal(h.has('authorization'), false, 'the card is fetched without the token');
}

test('SDK default (A2A 1.0) over JSON-RPC: card without the token, then every operation', async () => {
  const seen = recorder();
  const client = await factory(seen).createFromUrl(baseUrl);
  assert.equal(client.protocolVersion, '1.0');
  assert.equal(client.transport.protocolName, 'JSONRPC');
  assert.equal(client.agentCard.securitySchemes.bearer.scheme.$case, 'httpAuthSecurityScheme');
  assert.equal(client.agentCard.securitySchemes.bearer.scheme.value.scheme, 'Bearer');
  await exercise(client, { listing: true });
  assertCardsWithoutToken(seen);
  assert.ok(seen.calls.every((c) => c.version === '1.0' && c.auth));
  const methods = new Set(seen.calls.map((c) => c.method));
  for (const m of ['SendMessage', 'SendStreamingMessage', 'GetTask', 'SubscribeToTask', 'CancelTask', 'ListTasks']) {
    assert.ok(methods.has(m), m);
  }
});

test('SDK default (A2A 1.0) over HTTP+JSON', async () => {
  const seen = recorder();
  const client = await factory(seen, { preferred: ['HTTP+JSON'] }).createFromUrl(baseUrl);
  assert.equal(client.protocolVersion, '1.0');
  assert.equal(client.transport.protocolName, 'HTTP+JSON');
  await exercise(client, { listing: true });
  assertCardsWithoutToken(seen);
  assert.ok(seen.calls.every((c) => c.version === '1.0' && c.auth));
  const methods = new Set(seen.calls.map((c) => c.method.replace(/\/tasks\/[^/:?]+/, '/tasks/ID')));
  for (const m of ['POST /a2a/message:send', 'POST /a2a/message:stream', 'GET /a2a/tasks/ID',
    'POST /a2a/tasks/ID:subscribe', 'POST /a2a/tasks/ID:cancel', 'GET /a2a/tasks']) {
    assert.ok(methods.has(m), `${m} in ${[...methods]}`);
  }
});

test('SDK with legacyCompat still prefers the 1.0 interface hearth lists', async () => {
  const seen = recorder();
  const client = await factory(seen, { legacy: true }).createFromUrl(baseUrl);
  assert.equal(client.protocolVersion, '1.0');
  const sum = await client.sendMessage({ message: message('add', { a: 1, b: 2 }) });
  assert.deepEqual(sum.artifacts[0].parts[0].content.value, { sum: 3 });
  assert.deepEqual(seen.calls.map((c) => c.method), ['SendMessage']);
});

test('SDK in A2A 0.3 (legacyCompat) through hearth\'s 0.3 card and JSON-RPC binding', async () => {
  // A 0.3 client asks for the card without A2A-Version and reads its 0.3 fields (url,
  // preferredTransport, protocolVersion). The SDK prefers 1.0 whenever a card lists it (the
  // compat guide: a card with supportedInterfaces is treated as 1.0), so to drive its 0.3
  // transport as it meets a 0.3-only agent, the card is shown without the embedded 1.0 list.
  const seen = recorder();
  const card03 = async (url, init) => {
    const headers = new Headers(init?.headers);
    headers.delete('A2A-Version');
    seen.cards.push(headers);
    const res = await fetch(url, { ...init, headers });
    assert.equal(res.headers.get('vary'), 'A2A-Version');
    const card = await res.json();
    assert.equal(card.protocolVersion, '0.3.0');
    assert.equal(card.url, `${baseUrl}/a2a`);
    assert.deepEqual(card.security, [{ bearer: [] }]);
    assert.ok(card.supportedInterfaces.length > 0, 'hearth embeds the 1.0 interfaces');
    delete card.supportedInterfaces;
    return new Response(JSON.stringify(card), { status: 200, headers: { 'Content-Type': 'application/json' } });
  };
  const client = await factory(seen, { legacy: true, cardFetch: card03 }).createFromUrl(baseUrl);
  assert.equal(client.protocolVersion, '0.3');
  assert.equal(client.agentCard.securitySchemes.bearer.scheme.$case, 'httpAuthSecurityScheme');
  await exercise(client, { listing: false });
  assertCardsWithoutToken(seen);
  assert.ok(seen.calls.every((c) => c.version === '0.3' && c.auth));
  const methods = new Set(seen.calls.map((c) => c.method));
  for (const m of ['message/send', 'message/stream', 'tasks/get', 'tasks/resubscribe', 'tasks/cancel']) {
    assert.ok(methods.has(m), m);
  }
});

test('without the token the card is read but calls are refused', async () => {
  const plain = new ClientFactory();
  const client = await plain.createFromUrl(baseUrl);
  await assert.rejects(client.getTask({ id: 'x' }), /401/);
});
