// The todo-manager view in the browser, against the real daemon: the view's own calls, a second
// page's subscription, a CLI call arriving as an agent action, remounting on reload, saved state.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  tempDir, copyService, startDaemon, launchBrowser, openPage, selectService, viewFrame, showTab,
  screenshot, waitFor, WIDE, NARROW,
} from './harness.mjs';

const run = promisify(execFile);
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

const texts = (frame) => frame.$$eval('todo-view li[data-id] .text', (els) => els.map((e) => e.textContent));

async function addInView(frame, text) {
  await frame.fill('todo-view input[name=text]', text);
  await frame.click('todo-view button.add');
  await waitFor(async () => (await texts(frame)).includes(text), { what: `"${text}" in the view` });
}

test('the todo view lists, adds, toggles and deletes, and a second page sees it through its subscription', async () => {
  await daemon.post('lavs/call', { service: 'todo-manager', endpoint: 'addTodo', input: { text: 'there before' } });
  const page = await openPage(browser, daemon);
  await selectService(page, 'todo-manager');
  const frame = await viewFrame(page);
  await waitFor(async () => (await texts(frame)).includes('there before'), { what: 'the listed todo' });

  const other = await openPage(browser, daemon);
  await selectService(other, 'todo-manager');
  const otherFrame = await viewFrame(other);

  await addInView(frame, 'buy milk');
  const stored = await daemon.post('lavs/call', { service: 'todo-manager', endpoint: 'listTodos' });
  const milk = stored.result.find((t) => t.text === 'buy milk');
  assert.ok(milk, 'the view added the todo on the daemon');
  await waitFor(async () => (await texts(otherFrame)).includes('buy milk'), { what: 'the second page to see the added todo' });

  await frame.click(`todo-view li[data-id="${milk.id}"] input[type=checkbox]`);
  await waitFor(async () => {
    const r = await daemon.post('lavs/call', { service: 'todo-manager', endpoint: 'listTodos' });
    return r.result.find((t) => t.id === milk.id)?.done === true;
  }, { what: 'the toggle on the daemon' });
  await waitFor(() => otherFrame.$eval(`todo-view li[data-id="${milk.id}"] input`, (b) => b.checked), { what: 'the second page to see the toggle' });
  await screenshot(page, 'todo-view');

  await frame.click(`todo-view li[data-id="${milk.id}"] button.delete`);
  await waitFor(async () => !(await texts(frame)).includes('buy milk'), { what: 'the deleted todo to leave the view' });
  await waitFor(async () => !(await texts(otherFrame)).includes('buy milk'), { what: 'the second page to see the delete' });
  const after = await daemon.post('lavs/call', { service: 'todo-manager', endpoint: 'listTodos' });
  assert.deepEqual(after.result.map((t) => t.text), ['there before']);
  assert.deepEqual(page.problems.filter((p) => !p.includes('Permissions-Policy')), []);
  await page.context().close();
  await other.context().close();
});

test('a call from the CLI or an HTTP client reaches the view as an agent action', async () => {
  const page = await openPage(browser, daemon);
  await selectService(page, 'todo-manager');
  const frame = await viewFrame(page);
  // Record what the bootstrap hands to the element, keeping the element's own handler.
  await frame.evaluate(() => {
    const el = document.querySelector('todo-view');
    const own = el.onAgentAction.bind(el);
    window.seenActions = [];
    el.onAgentAction = (action) => {
      window.seenActions.push(action);
      return own(action);
    };
  });
  const cli = await run(process.env.HEARTH_BIN, ['call', '--daemon', 'todo-manager', 'addTodo', '{"text":"from the cli"}', '--state-dir', daemon.stateDir]);
  const added = JSON.parse(cli.stdout);
  const first = await waitFor(() => frame.evaluate(() => window.seenActions[0]), { what: 'the CLI agent action' });
  assert.equal(first.endpoint, 'addTodo');
  assert.equal(first.input.text, 'from the cli');
  assert.deepEqual(first.result, added);
  assert.deepEqual(first.actor, { type: 'http', client: 'hearth-cli' });
  assert.equal(typeof first.seq, 'number');
  assert.match(first.at, /Z$/);
  await waitFor(async () => (await texts(frame)).includes('from the cli'), { what: 'the view to show the CLI todo' });

  // On a connection of its own: the daemon takes the client's name from a connection's first request.
  const r = await daemon.raw('POST', '/rpc', {
    headers: { Authorization: `Bearer ${daemon.token}`, 'Content-Type': 'application/json', 'X-Hearth-Client': 'test' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'lavs/call', params: { service: 'todo-manager', endpoint: 'toggleTodo', input: { id: added.id } } }),
  });
  assert.equal(JSON.parse(r.body).result.done, true);
  const second = await waitFor(() => frame.evaluate(() => window.seenActions[1]), { what: 'the HTTP agent action' });
  assert.equal(second.endpoint, 'toggleTodo');
  assert.deepEqual(second.actor, { type: 'http', client: 'test' });
  assert.equal(second.seq, first.seq + 1);
  await waitFor(() => frame.$eval(`todo-view li[data-id="${added.id}"] input`, (b) => b.checked), { what: 'the view to show the toggle' });

  // The view's own mutation is not echoed back to it.
  await addInView(frame, 'my own');
  await new Promise((res) => setTimeout(res, 500));
  assert.equal(await frame.evaluate(() => window.seenActions.length), 2);
  await showTab(page, 'log');
  const log = await page.textContent('#log-list');
  assert.match(log, /agent action #\d+ todo-manager\.addTodo by http \(hearth-cli\)/);
  await page.context().close();
});

test('reloading the view frame remounts it and leaves no extra subscription on the daemon', async () => {
  const page = await openPage(browser, daemon);
  await selectService(page, 'todo-manager');
  let frame = await viewFrame(page);
  await waitFor(() => frame.$('todo-view li'), { what: 'the view list' });
  const mountBefore = await page.getAttribute('iframe.view-frame', 'data-mount-id');
  const before = await waitFor(async () => {
    const m = await daemon.mounts();
    // The only subscriber of the service: earlier tests' pages are closed.
    return m.mounts.find((x) => x.mountId === mountBefore)?.subscriptions === 1 && m.subscriptions['todo-manager'] === 1 ? m : null;
  }, { what: 'the view to subscribe' });

  for (let i = 0; i < 3; i++) {
    const current = await page.getAttribute('iframe.view-frame', 'data-mount-id');
    await frame.evaluate(() => location.reload());
    await page.waitForFunction((old) => {
      const f = document.querySelector('iframe.view-frame');
      return f && f.dataset.mountId !== old && document.body.dataset.view === 'ready';
    }, current);
    frame = await viewFrame(page);
  }
  await waitFor(() => frame.$('todo-view li'), { what: 'the remounted view list' });
  const mountAfter = await page.getAttribute('iframe.view-frame', 'data-mount-id');
  // The new mount's subscription is made once its view is up; then the daemon counts as before.
  await waitFor(async () => (await daemon.mounts()).mounts.find((m) => m.mountId === mountAfter)?.subscriptions === 1,
    { what: 'the remounted view to subscribe' });
  await new Promise((r) => setTimeout(r, 300));
  const afterMounts = await daemon.mounts();
  assert.equal(afterMounts.subscriptions['todo-manager'], before.subscriptions['todo-manager']);
  assert.ok(!afterMounts.mounts.some((m) => m.mountId === mountBefore), 'the old mount is closed');
  assert.equal(afterMounts.mounts.find((m) => m.mountId === mountAfter).subscriptions, 1);
  // The remounted view works.
  await addInView(frame, 'after reload');
  await page.context().close();
});

test('a view keeps its state across a page reload and a daemon restart', async () => {
  let page = await openPage(browser, daemon);
  await selectService(page, 'todo-manager');
  let frame = await viewFrame(page);
  await frame.click('todo-view button[data-filter=done]');
  await waitFor(() => frame.evaluate(() => document.querySelector('todo-view').client.getState()).then((s) => s && s.filter === 'done'), { what: 'the saved filter' });
  await frame.evaluate(() => document.querySelector('todo-view').client.setState({ filter: 'done', note: 'ünïcode ✓', n: [1, 2, 3] }));

  await page.reload();
  await page.waitForSelector('#conn-status[data-status=open]');
  frame = await viewFrame(page);
  assert.equal(await page.$eval('#service-title', (e) => e.textContent), 'todo-manager');
  assert.deepEqual(await frame.evaluate(() => document.querySelector('todo-view').client.getState()), { filter: 'done', note: 'ünïcode ✓', n: [1, 2, 3] });
  await waitFor(() => frame.$eval('todo-view button[data-filter=done]', (b) => b.getAttribute('aria-pressed') === 'true'), { what: 'the view to use its saved filter' });
  await page.context().close();

  await daemon.stop();
  daemon = await daemon.restart();
  page = await openPage(browser, daemon);
  await selectService(page, 'todo-manager');
  frame = await viewFrame(page);
  assert.deepEqual(await frame.evaluate(() => document.querySelector('todo-view').client.getState()), { filter: 'done', note: 'ünïcode ✓', n: [1, 2, 3] });
  // Each service has its own state.
  const r = await daemon.post('lavs/call', { service: 'simple-notes', endpoint: 'getNotes' });
  assert.ok(r.result);
  await page.context().close();
});

test('screenshots of the todo-manager tabs, wide and narrow', async () => {
  for (const viewport of [WIDE, NARROW]) {
    for (const scheme of ['light', 'dark']) {
      const page = await openPage(browser, daemon, { viewport, colorScheme: scheme });
      await selectService(page, 'todo-manager');
      const frame = await viewFrame(page);
      await waitFor(() => frame.$('todo-view li[data-id]'), { what: 'todos' });
      const suffix = scheme === 'dark' ? '-dark' : '';
      await screenshot(page, `tab-view${suffix}`);
      if (scheme === 'light') {
        // The frame is as tall as its content.
        const h = await page.$eval('iframe.view-frame', (f) => f.getBoundingClientRect().height);
        const content = await frame.evaluate(() => document.documentElement.getBoundingClientRect().height);
        assert.ok(Math.abs(h - Math.max(120, Math.ceil(content))) <= 2, `frame ${h} px for ${content} px of content`);
        for (const tab of ['data', 'endpoints', 'log']) {
          await showTab(page, tab);
          if (tab === 'data') await page.waitForSelector('#data-container [data-mode=table] td');
          await screenshot(page, `tab-${tab}`);
        }
      } else {
        const bg = await frame.evaluate(() => getComputedStyle(document.body).backgroundColor);
        const pageBg = await page.evaluate(() => getComputedStyle(document.querySelector('.view-container')).backgroundColor);
        assert.notEqual(bg, 'rgb(255, 255, 255)', 'the dark scheme reached the view');
        assert.ok(pageBg);
      }
      await page.context().close();
    }
  }
});
