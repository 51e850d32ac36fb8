// The MCP TypeScript SDK's Client and the MCP Inspector CLI against hearth (tests/mcp_clients/run.sh).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';

const modules = process.env.HEARTH_MCP_MODULES;
const hearth = process.env.HEARTH_BIN;
const require = createRequire(join(modules, 'noop.js'));
const { Client } = await import(require.resolve('@modelcontextprotocol/sdk/client/index.js'));
const { StdioClientTransport } = await import(require.resolve('@modelcontextprotocol/sdk/client/stdio.js'));
const { StreamableHTTPClientTransport } = await import(require.resolve('@modelcontextprotocol/sdk/client/streamableHttp.js'));
const { CallToolResultSchema, ResourceUpdatedNotificationSchema } = await import(
  require.resolve('@modelcontextprotocol/sdk/types.js'));
// The Inspector CLI reads its own package.json relative to the working directory: it runs from
// its build folder.
const inspectorDir = join(modules, '@modelcontextprotocol', 'inspector-cli', 'build');

const tmp = mkdtempSync(join(tmpdir(), 'hearth-mcp-clients-'));
const fixture = join(tmp, 'mcp-fixture');
cpSync(process.env.HEARTH_FIXTURE, fixture, { recursive: true });
let daemon;
let url;
let token;

before(async () => {
  daemon = spawn(hearth, ['serve', fixture, '--port', '0', '--state-dir', join(tmp, 'state'),
    '--ready-file', join(tmp, 'ready.json'), '--token-file', join(tmp, 'token'), '--log-level', 'warn',
    '--mcp-progress-interval', '100'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 20000;
  while (!existsSync(join(tmp, 'ready.json'))) {
    if (Date.now() > deadline) throw new Error('hearth did not become ready');
    await new Promise((r) => setTimeout(r, 50));
  }
  url = JSON.parse(readFileSync(join(tmp, 'ready.json'), 'utf8')).url + '/mcp';
  token = readFileSync(join(tmp, 'token'), 'utf8').trim();
});

after(() => {
  daemon?.kill('SIGTERM');
  rmSync(tmp, { recursive: true, force: true });
});

function stdioTransport() {
  return new StdioClientTransport({
    command: hearth,
    args: ['mcp', 'serve', fixture, '--state-dir', join(tmp, 'stdio-state'), '--progress-interval', '100',
      '--log-level', 'warn'],
    stderr: 'inherit',
  });
}

function httpTransport() {
  return new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
}

async function exercise(transport) {
  const client = new Client({ name: 'hearth-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    assert.equal(client.getServerVersion().name, 'hearth');
    assert.ok(client.getServerCapabilities().tools);

    const { tools } = await client.listTools();
    const add = tools.find((t) => t.name === 'add');
    assert.ok(add, 'add is listed');
    assert.deepEqual(add.inputSchema.required, ['a', 'b']);
    assert.equal(tools.find((t) => t.name === 'echo').inputSchema.properties.item.type, 'object');

    // The SDK checks structuredContent against the declared outputSchema.
    const sum = await client.callTool({ name: 'add', arguments: { a: 19, b: 23 } });
    assert.deepEqual(sum.structuredContent, { sum: 42 });
    assert.equal(sum.isError, false);

    // An array input travels as the argument "input" (MCP arguments are objects).
    const total = await client.callTool({ name: 'sum', arguments: { input: [2, 3] } });
    assert.deepEqual(total.structuredContent, { result: 5 });

    const failed = await client.callTool({ name: 'test_error_handling', arguments: {} });
    assert.equal(failed.isError, true);
    assert.match(failed.content[0].text, /intentionally/);

    const progress = [];
    const slow = await client.callTool({ name: 'test_tool_with_progress', arguments: { ms: 600 } },
      CallToolResultSchema, { onprogress: (p) => progress.push(p.progress), resetTimeoutOnProgress: true });
    assert.deepEqual(slow.structuredContent, { waited: 600 });
    assert.ok(progress.length >= 3, `progress notifications: ${progress.length}`);

    const { resources } = await client.listResources();
    const readme = resources.find((r) => r.name === 'docs/readme.md');
    assert.ok(readme, 'the fileAccess file is a resource');
    const read = await client.readResource({ uri: readme.uri });
    assert.match(read.contents[0].text, /MCP fixture/);
    const view = await client.readResource({ uri: 'ui://mcp-fixture/view' });
    assert.equal(view.contents[0].mimeType, 'text/html;profile=mcp-app');

    await client.setLoggingLevel('error');
    assert.deepEqual(await client.ping(), {});

    // Cancelling through the SDK (an AbortSignal): the call rejects, the server goes on.
    const controller = new AbortController();
    const cancelled = client.callTool({ name: 'test_tool_with_progress', arguments: { ms: 3000 } },
      CallToolResultSchema, { signal: controller.signal });
    setTimeout(() => controller.abort('enough'), 200);
    await assert.rejects(cancelled);
    assert.deepEqual((await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } })).structuredContent, { sum: 2 });
  } finally {
    await client.close();
  }
}

test('SDK client over stdio', async () => {
  await exercise(stdioTransport());
});

test('SDK client over Streamable HTTP', async () => {
  const transport = httpTransport();
  await exercise(transport);
});

test('SDK client over HTTP without the token is refused', async () => {
  const client = new Client({ name: 'hearth-test', version: '1.0.0' });
  await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(url))));
});

const run = promisify(execFile);

async function inspector(args) {
  const { stdout } = await run('node', ['index.js', ...args], { cwd: inspectorDir, timeout: 60000 });
  return JSON.parse(stdout);
}

test('SDK client drives a virtual workspace over stdio with its own model', async () => {
  const services = join(tmp, 'workspace-search');
  cpSync(join(process.env.HEARTH_EXAMPLES, 'workspace-search'), services, { recursive: true });
  const client = new Client({ name: 'hearth-test', version: '1.0.0' });
  const updates = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
  await client.connect(new StdioClientTransport({
    command: hearth,
    args: ['mcp', 'serve', services, '--workspace', join(services, 'workspace'), '--state-dir',
      join(tmp, 'ws-state'), '--log-level', 'warn'],
    stderr: 'inherit',
  }));
  try {
    const { resources } = await client.listResources();
    assert.ok(resources.some((r) => r.uri === 'workspace://product-search'));
    const view = await client.readResource({ uri: 'workspace://product-search' });
    assert.match(view.contents[0].text, /VIRTUAL WORKSPACE: product-search/);
    await client.subscribeResource({ uri: 'workspace://product-search' });
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'execute_script'));
    const result = await client.callTool({
      name: 'execute_script',
      arguments: { script: "search_box_state.search_pattern = 'tea'; filter_state.maxPrice = 4;" },
    }, CallToolResultSchema);
    assert.equal(result.isError, false);
    assert.equal(result.structuredContent.committed, true);
    assert.match(result.content[0].text, /Earl grey/);
    const deadline = Date.now() + 10000;
    while (!updates.includes('workspace://product-search') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(updates.includes('workspace://product-search'));
  } finally {
    await client.close();
  }
});
test('Inspector CLI over stdio', async () => {
  const server = [hearth, 'mcp', 'serve', fixture, '--state-dir', join(tmp, 'stdio-state'), '--log-level', 'warn'];
  const list = await inspector([...server, '--method', 'tools/list']);
  assert.ok(list.tools.some((t) => t.name === 'echo'));
  const call = await inspector([...server, '--method', 'tools/call', '--tool-name', 'add', '--tool-arg', 'a=2', 'b=3']);
  assert.deepEqual(call.structuredContent, { sum: 5 });
});

test('Inspector CLI over Streamable HTTP', async () => {
  const auth = ['--header', `Authorization: Bearer ${token}`];
  const list = await inspector([url, ...auth, '--method', 'tools/list']);
  assert.ok(list.tools.some((t) => t.name === 'json_schema_2020_12_tool'));
  const call = await inspector([url, ...auth, '--method', 'tools/call', '--tool-name', 'add', '--tool-arg', 'a=40', 'b=2']);
  assert.deepEqual(call.structuredContent, { sum: 42 });
  const resources = await inspector([url, ...auth, '--method', 'resources/list']);
  assert.ok(resources.resources.some((r) => r.uri === 'ui://mcp-fixture/view'));
});
