// What a view frame cannot do, observed from inside it in Chromium, and the page's refusal of
// forged handshakes from the frame itself, another frame and a popup.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  tempDir, copyService, startDaemon, launchBrowser, openPage, selectService, viewFrame, showTab, waitFor, sleep,
  screenshot, WIDE, NARROW,
} from './harness.mjs';

let daemon;
let browser;
const work = tempDir();

before(async () => {
  daemon = await startDaemon({ services: [copyService('todo-manager', work), copyService('notes', work)] });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
});

const ignoredCount = async (page) => Number(await page.textContent('#log-ignored-count'));

test('the view frame has an opaque origin, no storage, no parent, no network and no token', async () => {
  const page = await openPage(browser, daemon);
  await selectService(page, 'todo-manager');
  const frame = await viewFrame(page);
  const facts = await frame.evaluate(async (port) => {
    const attempt = (fn) => {
      try {
        const v = fn();
        return { ok: true, value: v === undefined ? 'undefined' : v === null ? 'null' : String(v).slice(0, 100) };
      } catch (e) {
        return { ok: false, name: e.name };
      }
    };
    const violations = [];
    document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective));
    let fetchResult;
    try {
      await fetch('/rpc', { method: 'POST', body: '{}' });
      fetchResult = 'answered';
    } catch (e) {
      fetchResult = `rejected ${e.name}`;
    }
    const ws = await new Promise((resolve) => {
      try {
        const s = new WebSocket(`ws://127.0.0.1:${port}/ws`);
        s.onopen = () => resolve('open');
        s.onerror = () => resolve('error');
        setTimeout(() => resolve('timeout'), 3000);
      } catch (e) {
        resolve(`threw ${e.name}`);
      }
    });
    await new Promise((r) => setTimeout(r, 100));
    return {
      origin: self.origin,
      parentDocument: attempt(() => parent.document.title),
      parentLocation: attempt(() => parent.location.href),
      cookie: attempt(() => document.cookie),
      localStorage: attempt(() => localStorage.length),
      sessionStorage: attempt(() => sessionStorage.length),
      indexedDB: attempt(() => indexedDB.open('x') && 'opened'),
      fetchResult,
      ws,
      violations,
      href: location.href,
      hash: location.hash,
      html: document.documentElement.outerHTML,
      config: document.getElementById('hearth-view-config').textContent,
      names: Object.getOwnPropertyNames(window).join(' '),
    };
  }, daemon.port);
  assert.equal(facts.origin, 'null');
  assert.equal(facts.parentDocument.ok, false);
  assert.equal(facts.parentDocument.name, 'SecurityError');
  assert.equal(facts.parentLocation.ok, false);
  assert.ok(!facts.cookie.ok || facts.cookie.value === '', `document.cookie: ${JSON.stringify(facts.cookie)}`);
  assert.equal(facts.localStorage.ok, false);
  assert.equal(facts.sessionStorage.ok, false);
  assert.ok(!facts.indexedDB.ok, 'indexedDB');
  assert.match(facts.fetchResult, /^rejected/);
  assert.notEqual(facts.ws, 'open');
  assert.ok(facts.violations.includes('connect-src'), `violations: ${facts.violations}`);
  // The daemon's token is nowhere in the frame; the handshake secret left its URL.
  for (const where of ['href', 'html', 'config', 'names']) assert.ok(!facts[where].includes(daemon.token), `token in ${where}`);
  assert.equal(facts.hash, '');
  const src = await page.$eval('iframe.view-frame', (f) => f.src);
  const secret = new URL(src).hash.replace('#secret=', '');
  assert.ok(secret.length >= 32);
  assert.ok(!facts.href.includes(secret) && !facts.html.includes(secret), 'the secret stays out of the frame once used');
  assert.equal(await page.getAttribute('iframe.view-frame', 'sandbox'), 'allow-scripts allow-forms');
  // The page keeps the token out of its address and history.
  assert.ok(!page.url().includes(daemon.token));
  assert.equal(await page.evaluate(() => sessionStorage.getItem('hearth.token')), daemon.token);
  await page.context().close();
});

test('a view reaches its own service only', async () => {
  const page = await openPage(browser, daemon);
  await selectService(page, 'todo-manager');
  const frame = await viewFrame(page);
  const outcome = await frame.evaluate(async () => {
    const client = document.querySelector('todo-view').client;
    const own = await client.call('listTodos');
    const manifest = await client.getManifest();
    let other;
    try {
      other = { result: await client.call('getNotes') };
    } catch (e) {
      other = { code: e.code, message: e.message, data: e.data, isError: e instanceof Error };
    }
    let file;
    try {
      file = { result: await client.readFile('../notes/notes.txt') };
    } catch (e) {
      file = { code: e.code };
    }
    let huge;
    try {
      huge = { result: await client.call('addTodo', { text: 'x'.repeat(2 * 1024 * 1024) }) };
    } catch (e) {
      huge = { code: e.code };
    }
    const after = await client.call('listTodos');
    return { own: Array.isArray(own), name: manifest.name, other, file, huge, stillConnected: Array.isArray(after) };
  });
  // A request too large for the page's connection is refused by the page; the connection lives on.
  assert.equal(outcome.huge.code, -32600);
  assert.equal(outcome.stillConnected, true);
  assert.equal(await page.getAttribute('#conn-status', 'data-status'), 'open');
  assert.equal(outcome.own, true);
  assert.equal(outcome.name, 'todo-manager');
  // simple-notes has getNotes and is served by the same daemon: the view still cannot reach it.
  assert.equal(outcome.other.isError, true);
  assert.equal(outcome.other.code, -32601);
  assert.equal(outcome.other.data.endpoint, 'getNotes');
  assert.ok(outcome.file.code === -32001 || outcome.file.code === -32602, `readFile outside: ${JSON.stringify(outcome.file)}`);
  await page.context().close();
});

test('forged hellos are ignored and counted: wrong secret, another frame, a popup, JSON-RPC on the window', async () => {
  const page = await openPage(browser, daemon);
  await selectService(page, 'todo-manager');
  const frame = await viewFrame(page);
  const mountsBefore = (await daemon.mounts()).mounts.length;
  const before = await ignoredCount(page);
  const src = await page.$eval('iframe.view-frame', (f) => f.src);
  const mountId = await page.getAttribute('iframe.view-frame', 'data-mount-id');
  const secret = new URL(src).hash.replace('#secret=', '');

  // 1. The view itself says hello again with a wrong secret, and then posts JSON-RPC to the page.
  await frame.evaluate((id) => {
    parent.postMessage({ hearthView: 'hello', v: 1, mountId: id, secret: '0'.repeat(32) }, '*');
    parent.postMessage({ jsonrpc: '2.0', id: 1, method: 'lavs/call', params: { endpoint: 'deleteTodo', input: { id: 1 } } }, '*');
  }, mountId);
  await waitFor(async () => (await ignoredCount(page)) >= before + 2, { what: 'two ignored messages' });

  // 2. Another frame loads the same view with the right secret: its hello comes from the wrong window.
  await page.evaluate((url) => {
    const f = document.createElement('iframe');
    f.id = 'intruder';
    f.setAttribute('sandbox', 'allow-scripts');
    f.src = url;
    document.body.append(f);
  }, src);
  await waitFor(async () => (await ignoredCount(page)) >= before + 3, { what: 'the other frame\'s hello to be ignored' });
  const intruder = await (await page.$('#intruder')).contentFrame();

  // 3. Other windows. A popup of the view's URL has no opener at all (the page's
  // Cross-Origin-Opener-Policy); a popup of the page's own origin can post, and is ignored.
  const [viewPopup] = await Promise.all([
    page.context().waitForEvent('page'),
    page.evaluate((url) => { window.open(url.replace(/#.*/, ''), 'view-popup'); }, src),
  ]);
  await viewPopup.waitForLoadState('domcontentloaded');
  assert.equal(await viewPopup.evaluate(() => window.opener === null), true);
  await viewPopup.close();
  const [popup] = await Promise.all([
    page.context().waitForEvent('page'),
    page.evaluate(() => { window.open('/ui/lavs-client.js', 'popup'); }),
  ]);
  await popup.waitForLoadState('domcontentloaded');
  await popup.evaluate(({ id, s }) => opener.postMessage({ hearthView: 'hello', v: 1, mountId: id, secret: s }, '*'), { id: mountId, s: secret });
  await waitFor(async () => (await ignoredCount(page)) >= before + 4, { what: 'the popup\'s hello to be ignored' });

  await sleep(500);
  assert.equal(await ignoredCount(page), before + 4, 'exactly the forged messages were counted');
  // No port was handed: the other frame mounted nothing, the daemon holds no extra mount.
  assert.equal(await intruder.evaluate(() => document.body.children.length), 0);
  assert.equal((await daemon.mounts()).mounts.length, mountsBefore);
  // The todo the JSON-RPC message asked to delete is not touched, and the real view still works.
  const list = await frame.evaluate(() => document.querySelector('todo-view').client.call('listTodos'));
  assert.ok(Array.isArray(list));
  await showTab(page, 'log');
  const log = await page.textContent('#log-list');
  assert.match(log, /wrong secret/);
  assert.match(log, /not a hello/);
  assert.match(log, /not from a view frame of this page/);
  await popup.close();
  await page.context().close();
});

test('a frame whose first hello has a wrong secret gets no port and the page falls back', async () => {
  const context = await browser.newContext();
  // Before any script of the frame runs, its URL fragment holds a wrong secret.
  await context.addInitScript(() => {
    if (location.pathname.startsWith('/views/') && location.hash.startsWith('#secret=')) {
      history.replaceState(null, '', `${location.pathname}#secret=${'0'.repeat(32)}`);
    }
  });
  const page = await context.newPage();
  await page.goto(daemon.pageUrl);
  await page.waitForSelector('#conn-status[data-status=open]');
  await selectService(page, 'todo-manager');
  await page.waitForSelector('body[data-view=failed]', { timeout: 10000 });
  assert.match(await page.textContent('#data-notice'), /did not become ready/);
  const frame = await (await page.$('iframe.view-frame')).contentFrame();
  assert.equal(await frame.evaluate(() => document.querySelector('todo-view')), null);
  // (simple-notes, shown first, has a view too: its hello was refused the same way.)
  assert.ok((await ignoredCount(page)) >= 1);
  await showTab(page, 'log');
  assert.match(await page.textContent('#log-list'), /at the todo-manager view: hello with a wrong secret/);
  await context.close();
});

test('the page without a token says where to get one and opens no connection', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const sockets = [];
  page.on('websocket', (ws) => sockets.push(ws.url()));
  await page.goto(daemon.ready.uiUrl);
  await page.waitForSelector('#no-token:not([hidden])');
  assert.match(await page.textContent('#no-token'), /hearth serve/);
  assert.match(await page.textContent('#no-token'), /hearth open/);
  await sleep(300);
  assert.deepEqual(sockets, []);
  for (const viewport of [WIDE, NARROW]) {
    await page.setViewportSize(viewport);
    await screenshot(page, 'no-token');
  }
  await context.close();
});
