// The examples' views as MCP Apps under the official host side, unchanged: the MCP SDK's Client
// reads ui://<service>/view through hearth's /mcp, and @modelcontextprotocol/ext-apps' AppBridge
// renders it in an iframe sandboxed `allow-scripts` only, under the CSP the specification has a
// host build (tests/e2e/mcp-apps-host.js). For each view: the handshake, the host's own requests
// (ping, ui/resource-teardown, an unknown method) answered well before a 5 s limit, a theme
// change applied, size reports, and the view's tool calls and resource reads through the host,
// checked on the daemon. Every ui:// that tools/list and resources/list name can be read.
// Packages (pinned) come from HEARTH_E2E_MCP_APPS_MODULES, installed by tests/e2e/run.sh.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { copyService, EXAMPLES, freePort, launchBrowser, REPO, screenshot, startDaemon, tempDir, waitFor, writeService } from './harness.mjs';

const MODULES = process.env.HEARTH_E2E_MCP_APPS_MODULES;
const VIEWPORT = { width: 800, height: 860 };

let daemon;
let browser;
let catalog;
let hostServer;
let hostOrigin;
const work = tempDir();

// AppBridge, PostMessageTransport, Client and StreamableHTTPClientTransport as one browser module.
async function bundleSdk() {
  if (!MODULES) throw new Error('HEARTH_E2E_MCP_APPS_MODULES is not set: run this file through tests/e2e/run.sh');
  const esbuild = createRequire(path.join(MODULES, 'esbuild', 'package.json'))('esbuild');
  const out = await esbuild.build({
    stdin: {
      contents: "export { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';\n" +
        "export { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';\n",
      resolveDir: path.dirname(MODULES),
      loader: 'js',
    },
    bundle: true, format: 'esm', platform: 'browser', write: false, logLevel: 'error',
  });
  return out.outputFiles[0].text;
}

const HOST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>MCP Apps host (hearth e2e)</title><link rel="icon" href="data:,">
<style>
  body { margin: 0; padding: 18px 24px; font: 14px/1.45 system-ui, sans-serif; background: #f3f0e8; color: #2a2520; }
  body[data-theme=dark] { background: #0b0e1a; color: #dfe3ee; }
  header { font-weight: 600; margin-bottom: 4px; }
  .meta { opacity: .7; font-size: 12.5px; margin: 0 0 14px; }
  #views iframe { display: block; width: 720px; height: 160px; border: 0; }
  #views iframe.bordered { border: 1px solid #c8c1b2; border-radius: 12px; }
  body[data-theme=dark] #views iframe.bordered { border-color: #2c3350; }
</style></head>
<body data-theme="light">
<header>An MCP Apps host</header>
<p class="meta">@modelcontextprotocol/ext-apps 2.0.4 AppBridge · MCP SDK Client over /mcp · iframe sandbox="allow-scripts" · the spec's CSP</p>
<div id="views"></div>
<script type="module" src="/host.js"></script>
</body></html>`;

before(async () => {
  const sdk = await bundleSdk();
  const hostScript = fs.readFileSync(path.join(REPO, 'tests', 'e2e', 'mcp-apps-host.js'), 'utf8');
  hostServer = http.createServer((req, res) => {
    const files = { '/': ['text/html', HOST_PAGE], '/host.js': ['text/javascript', hostScript], '/sdk.js': ['text/javascript', sdk] };
    const file = files[new URL(req.url, 'http://x').pathname];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': file[0], 'Cache-Control': 'no-store' }).end(file[1]);
  });
  await new Promise((resolve) => hostServer.listen(0, '127.0.0.1', resolve));
  hostOrigin = `http://127.0.0.1:${hostServer.address().port}`;

  // The bookshelf's catalogue on a free port, the copy's manifest pointed at it.
  const port = await freePort();
  catalog = spawn('python3', [path.join(EXAMPLES, 'bookshelf', 'catalog', 'server.py'), '--port', String(port)], { stdio: 'ignore' });
  await waitFor(() => new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1', () => {
      c.end();
      resolve(true);
    });
    c.on('error', () => resolve(false));
  }), { what: 'the catalogue' });
  const bookshelf = copyService('bookshelf', work);
  const manifest = path.join(bookshelf, 'lavs.json');
  fs.writeFileSync(manifest, fs.readFileSync(manifest, 'utf8').replaceAll('127.0.0.1:8765', `127.0.0.1:${port}`));

  // An npm view whose modules use the forms the bundler rewrites.
  const probe = writeService(work, 'bundle-probe', {
    lavs: '1.0',
    name: 'bundle-probe',
    version: '1.0.0',
    endpoints: [{
      id: 'sum',
      method: 'query',
      handler: { type: 'function', module: 'handlers.mjs', function: 'sum' },
      schema: { input: { type: 'array', items: { type: 'number' } }, output: { type: 'number' } },
    }],
    view: { component: { type: 'npm', package: 'probe-view', version: '^1.0.0' } },
  }, {
    'handlers.mjs': 'export function sum(input) { return input.reduce((a, b) => a + b, 0); }\n',
    'node_modules/probe-view/package.json': JSON.stringify({ name: 'probe-view', version: '1.0.0', type: 'module', exports: { '.': { browser: './src/index.js' } } }),
    'node_modules/probe-view/src/index.js': [
      "import * as util from './util.js';",
      "import greet, { twice as double, pattern } from './lib/greet.js';",
      "export * from './lib/consts.js';",
      "import { LIMIT, MAX } from './lib/consts.js';",
      "const awaited = await Promise.resolve('awaited');",
      '// export default class Decoy {}',
      "const decoy = 'import x from \"./nowhere.js\"';",
      'export default class extends HTMLElement {',
      '  async setLAVSClient(client) {',
      "    const sum = await client.call('sum', [1, 2, 3]);",
      "    this.textContent = [greet('probe'), double(21), util.name, util.later(), pattern.test('a/b\"c'), LIMIT, MAX, awaited,",
      "      `${ { x: `${1 + 1}` }.x }`, sum, decoy.length > 0].join('|');",
      '  }',
      '}',
    ].join('\n'),
    'node_modules/probe-view/src/util.js': "export const name = 'util';\nexport function later() { return value; }\nlet value = 'hoisted';\n",
    'node_modules/probe-view/src/lib/greet.js': "export default function (who) { return 'hi ' + who; }\nexport const twice = (n) => n * 2, pattern = /a\\/b\"c/;\n",
    'node_modules/probe-view/src/lib/consts.js': 'export const LIMIT = 10;\nexport { LIMIT as MAX };\n',
  });

  daemon = await startDaemon({
    services: ['notes', 'contacts', 'todo-manager', 'todo-manager-js'].map((n) => copyService(n, work)).concat([bookshelf, probe]),
    args: ['--allow-origin', hostOrigin],
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
  catalog?.kill();
  hostServer?.close();
});

async function openHost() {
  const context = await browser.newContext({ viewport: VIEWPORT });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  await page.goto(`${hostOrigin}/`);
  await page.waitForFunction(() => window.hostReady === true);
  await page.evaluate(([url, token]) => window.host.connect(url, token), [`${daemon.url}/mcp`, daemon.token]);
  return { context, page, problems };
}

async function lists(page) {
  return page.evaluate(() => window.host.lists());
}

test('every ui:// that tools/list and resources/list name can be read, the npm views bundled', async () => {
  const { context, page, problems } = await openHost();
  const { tools, resources } = await lists(page);
  const named = new Set();
  for (const t of tools) {
    if (t._meta?.ui?.resourceUri) named.add(t._meta.ui.resourceUri);
  }
  for (const r of resources) {
    if (r.uri.startsWith('ui://')) {
      named.add(r.uri);
      assert.equal(r.mimeType, 'text/html;profile=mcp-app');
    }
  }
  assert.deepEqual([...named].sort(), [
    'ui://bookshelf/view', 'ui://bundle-probe/view', 'ui://contact-manager/view', 'ui://simple-notes/view',
    'ui://todo-manager-js/view', 'ui://todo-manager/view',
  ]);
  for (const uri of named) {
    const read = await page.evaluate((u) => window.host.read(u), uri);
    assert.equal(read.error, undefined, `${uri}: ${JSON.stringify(read.error)}`);
    assert.equal(read.mimeType, 'text/html;profile=mcp-app', uri);
    assert.ok(read.size > 1000, uri);
  }
  assert.deepEqual(problems, []);
  await context.close();
});

// Mounts the view of `service` as the view of its tool `endpoint`; returns the view's frame.
async function mount(page, service, endpoint) {
  const { tools } = await lists(page);
  const tool = tools.find((t) => t.name === `${service}.${endpoint}`);
  assert.ok(tool, `no tool ${service}.${endpoint}`);
  const uri = tool._meta.ui.resourceUri;
  const app = await page.evaluate(([u, t]) => window.host.mount(u, t), [uri, tool]);
  assert.equal(app.appVersion.name, service);
  const frame = await (await page.waitForSelector('#views iframe')).contentFrame();
  assert.equal(await page.getAttribute('#views iframe', 'sandbox'), 'allow-scripts');
  return { frame, tool, app };
}

// What every view must do under the bridge, before and after its own interaction.
async function hostProtocol(page, frame, name, selector) {
  assert.deepEqual(await page.evaluate(() => window.host.ask('ping')), { result: {} }, `${name}: ping`);
  const unknown = await page.evaluate(() => window.host.ask('hearth-e2e/unknown', { x: 1 }));
  assert.equal(unknown.error?.code, -32601, `${name}: an unknown request: ${JSON.stringify(unknown)}`);
  // Light, with the host's colours, and a size reported.
  await frame.waitForFunction(() => document.documentElement.dataset.theme === 'light' &&
    getComputedStyle(document.body).backgroundColor === 'rgb(255, 250, 240)');
  await waitFor(() => page.evaluate(() => window.host.sizes.some((s) => s.height > 40 && s.width > 0)), { what: `${name}: a size report` });
  await screenshot(page, `mcp-bridge-${name}-light`);
  await page.evaluate(() => window.host.setTheme('dark'));
  await frame.waitForFunction(() => document.documentElement.dataset.theme === 'dark' &&
    getComputedStyle(document.documentElement).colorScheme === 'dark' &&
    getComputedStyle(document.body).backgroundColor === 'rgb(20, 24, 40)' &&
    getComputedStyle(document.body).color === 'rgb(230, 232, 240)', null, { timeout: 5000 });
  await frame.waitForSelector(selector);
  await screenshot(page, `mcp-bridge-${name}-dark`);
  await page.evaluate(() => window.host.setTheme('light'));
  await frame.waitForFunction(() => document.documentElement.dataset.theme === 'light');
}

async function teardown(page, frame, name, selector) {
  const answer = await page.evaluate(() => window.host.ask('ui/resource-teardown', { reason: 'the test is done' }));
  assert.deepEqual(answer, { result: {} }, `${name}: teardown`);
  // The view cleaned up before it answered: its element has left the document.
  assert.equal(await frame.$(selector), null, `${name}: the view was not taken down`);
}

async function call(service, endpoint, input) {
  const r = await daemon.post('lavs/call', input === undefined ? { service, endpoint } : { service, endpoint, input });
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  return r.result;
}

test('notes: saved under allow-scripts alone, through the host', async () => {
  const { context, page, problems } = await openHost();
  const { frame } = await mount(page, 'simple-notes', 'saveNote');
  await waitFor(async () => (await frame.textContent('notes-view ol')).includes('Welcome to simple-notes.'), { what: 'the notes, read through the host' });
  await hostProtocol(page, frame, 'notes', 'notes-view');
  await frame.fill('notes-view textarea', 'saved through an MCP host');
  await frame.click('notes-view button.save');
  await waitFor(async () => (await frame.textContent('notes-view ol')).includes('saved through an MCP host'), { what: 'the saved note in the view' });
  assert.match(await call('simple-notes', 'getNotes'), /saved through an MCP host/);
  // Enter saves as well.
  await frame.fill('notes-view textarea', 'and with Enter');
  await frame.press('notes-view textarea', 'Enter');
  await waitFor(async () => /and with Enter/.test(await call('simple-notes', 'getNotes')), { what: 'the note saved with Enter' });
  const log = await page.evaluate(() => window.host.log);
  assert.ok(log.some(([m, d]) => m === 'tools/call' && d === 'simple-notes.saveNote'), JSON.stringify(log));
  assert.ok(log.some(([m, d]) => m === 'resources/read' && d.startsWith('file://') && d.endsWith('/notes.txt')), JSON.stringify(log));
  // A note the host's model saved, shown to the view as the tool's result: it reads the file again.
  const args = { NOTE: 'written by the agent' };
  const result = await page.evaluate(([a]) => window.host.callTool('simple-notes.saveNote', a), [args]);
  await page.evaluate(([a, r]) => window.host.toolResult(a, r), [args, result]);
  await waitFor(async () => (await frame.textContent('notes-view ol')).includes('written by the agent'), { what: 'the agent\'s note in the view' });
  await screenshot(page, 'mcp-bridge-notes-saved');
  await teardown(page, frame, 'notes', 'notes-view');
  assert.deepEqual(problems, []);
  await context.close();
});

test('contacts: an inline view adds with Enter and deletes', async () => {
  const { context, page, problems } = await openHost();
  const { frame } = await mount(page, 'contact-manager', 'addContact');
  await waitFor(() => frame.$('contact-list li[data-id]'), { what: 'contacts' });
  await hostProtocol(page, frame, 'contacts', 'contact-list');
  await frame.fill('contact-list input[name=name]', 'Katherine Johnson');
  await frame.fill('contact-list input[name=email]', 'kj@example.org');
  await frame.press('contact-list input[name=email]', 'Enter');
  await waitFor(async () => (await call('contact-manager', 'searchContacts', { query: 'Katherine' })).length === 1, { what: 'the added contact' });
  await frame.fill('contact-list input[name=query]', 'Katherine');
  await waitFor(async () => (await frame.$$eval('contact-list li[data-id]', (l) => l.length)) === 1, { what: 'the search' });
  await frame.click('contact-list li[data-id] button');
  await waitFor(async () => (await call('contact-manager', 'searchContacts', { query: 'Katherine' })).length === 0, { what: 'the delete' });
  await teardown(page, frame, 'contacts', 'contact-list');
  assert.deepEqual(problems, []);
  await context.close();
});

test('todo-manager: a local module view adds, toggles, and reloads on the host\'s tool result', async () => {
  const { context, page, problems } = await openHost();
  const { frame } = await mount(page, 'todo-manager', 'addTodo');
  await frame.waitForSelector('todo-view input[name=text]');
  await hostProtocol(page, frame, 'todo-manager', 'todo-view');
  await frame.fill('todo-view input[name=text]', 'from the view');
  await frame.press('todo-view input[name=text]', 'Enter');
  await frame.waitForSelector('todo-view li[data-id] .text:text("from the view")');
  const todos = await call('todo-manager', 'listTodos');
  const mine = todos.find((t) => t.text === 'from the view');
  assert.ok(mine);
  await frame.click(`todo-view li[data-id="${mine.id}"] input[type=checkbox]`);
  await waitFor(async () => (await call('todo-manager', 'listTodos')).find((t) => t.id === mine.id).done === true, { what: 'the toggle' });
  const args = { text: 'from the agent', priority: 2 };
  const result = await page.evaluate(([a]) => window.host.callTool('todo-manager.addTodo', a), [args]);
  assert.equal(result.isError, false);
  await page.evaluate(([a, r]) => window.host.toolResult(a, r), [args, result]);
  await frame.waitForSelector('todo-view li[data-id] .text:text("from the agent")');
  await screenshot(page, 'mcp-bridge-todo-manager-agent');
  await teardown(page, frame, 'todo-manager', 'todo-view');
  assert.deepEqual(problems, []);
  await context.close();
});

test('todo-manager-js: the npm view, bundled, adds with Enter and toggles', async () => {
  const { context, page, problems } = await openHost();
  const { frame } = await mount(page, 'todo-manager-js', 'listTodos');
  await frame.waitForSelector('lavs-view-todo-list-view input[name=text]');
  await hostProtocol(page, frame, 'todo-manager-js', 'lavs-view-todo-list-view');
  await frame.fill('lavs-view-todo-list-view input[name=text]', 'from the npm view');
  await frame.press('lavs-view-todo-list-view input[name=text]', 'Enter');
  await frame.waitForSelector('lavs-view-todo-list-view li[data-id] .todo');
  await frame.click('lavs-view-todo-list-view li[data-id] .todo');
  await waitFor(async () => {
    const r = await call('todo-manager-js', 'listTodos');
    return r.length === 1 && r[0].text === 'from the npm view' && r[0].done === true;
  }, { what: 'the npm view\'s add and toggle on the daemon' });
  await screenshot(page, 'mcp-bridge-todo-manager-js-done');
  await teardown(page, frame, 'todo-manager-js', 'lavs-view-todo-list-view');
  assert.deepEqual(problems, []);
  await context.close();
});

test('bookshelf: searches the catalogue and adds a reading note', async () => {
  const { context, page, problems } = await openHost();
  const { frame } = await mount(page, 'bookshelf', 'searchBooks');
  await waitFor(async () => (await frame.$$eval('book-shelf .book', (b) => b.length)) === 5, { what: 'the catalogue' });
  await hostProtocol(page, frame, 'bookshelf', 'book-shelf');
  await frame.fill('book-shelf input[name=q]', 'Butler');
  await waitFor(async () => (await frame.$$eval('book-shelf .book', (b) => b.length)) === 2, { what: 'the search' });
  await frame.click('book-shelf .book >> text=Kindred');
  await frame.waitForSelector('book-shelf h3:text("Kindred")');
  await frame.fill('book-shelf textarea[name=note]', 'Dana travels back in time.');
  await frame.click('book-shelf button.add-note');
  await waitFor(async () => (await frame.textContent('book-shelf .note')).includes('Dana travels'), { what: 'the note' });
  const book = (await call('bookshelf', 'searchBooks', { q: 'Kindred' }))[0];
  const notes = await call('bookshelf', 'listNotes', { bookId: book.id });
  assert.ok(notes.notes.some((n) => n.text === 'Dana travels back in time.'), JSON.stringify(notes));
  await screenshot(page, 'mcp-bridge-bookshelf-note');
  await teardown(page, frame, 'bookshelf', 'book-shelf');
  assert.deepEqual(problems, []);
  await context.close();
});

test('an npm view with every import and export form runs bundled', async () => {
  const { context, page, problems } = await openHost();
  const { frame } = await mount(page, 'bundle-probe', 'sum');
  await frame.waitForFunction(() => document.querySelector('lavs-view-default')?.textContent.includes('|'), null, { timeout: 10000 });
  assert.equal(await frame.textContent('lavs-view-default'), 'hi probe|42|util|hoisted|true|10|10|awaited|2|6|true');
  const log = await page.evaluate(() => window.host.log);
  assert.deepEqual(log, [['tools/call', 'bundle-probe.sum']]);
  await teardown(page, frame, 'bundle-probe', 'lavs-view-default');
  assert.deepEqual(problems, []);
  await context.close();
});
