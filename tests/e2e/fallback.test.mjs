// The Data tab (lavs-spec-v1 4.5 fallback): table, list and JSON from a service's queries, data
// that looks like HTML staying text, and the fallback taking over from views that fail or hang.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  tempDir, copyService, writeService, startDaemon, launchBrowser, openPage, selectService, viewFrame, showTab,
  screenshot, waitFor, WIDE, NARROW,
} from './harness.mjs';

const XSS = '<img src=x onerror="window.pwned=(window.pwned||0)+1">';
let daemon;
let browser;
const work = tempDir();

const print = (value) => ({ type: 'script', command: 'printf', args: ['%s', JSON.stringify(value)] });

function shapes() {
  return writeService(work, 'shapes', {
    lavs: '1.0',
    name: 'shapes',
    version: '2.1.0',
    description: 'Data of every shape, for the fallback',
    types: {
      Item: {
        type: 'object',
        properties: {
          name: { type: 'string', title: 'Name' },
          count: { type: 'integer' },
          active: { type: 'boolean', title: 'Active?' },
          meta: { type: 'object' },
        },
      },
    },
    endpoints: [
      {
        id: 'items', method: 'query', description: 'Objects: a table',
        handler: print([
          { active: true, name: 'alpha', count: 3, meta: { tags: ['x'] }, extra: 'seen in data' },
          { name: XSS, count: 0, active: false },
        ]),
        schema: { output: { type: 'array', items: { $ref: '#/types/Item' } } },
      },
      { id: 'tags', method: 'query', description: 'Scalars: a list', handler: print(['red', XSS, 'blue']), schema: { output: { type: 'array', items: { type: 'string' } } } },
      { id: 'info', method: 'query', description: 'An object: JSON', handler: print({ version: 2, nested: { ok: true, list: [1, 2], html: XSS } }) },
      {
        id: 'find', method: 'query', description: 'Needs input: not in the Data tab', handler: print([]),
        schema: { input: { type: 'object', properties: { q: { type: 'string', minLength: 1 } }, required: ['q'] } },
      },
      {
        id: 'add', method: 'mutation', handler: print({ ok: true }),
        schema: {
          input: {
            type: 'object',
            properties: { label: { type: 'string' }, size: { type: 'integer' }, urgent: { type: 'boolean' }, kind: { enum: ['a', 'b'] }, extra: { type: 'object' } },
            required: ['label', 'urgent'],
          },
        },
      },
    ],
  });
}

function badView(name, code) {
  return writeService(work, name, {
    lavs: '1.0', name, version: '1.0.0',
    view: { component: { type: 'local', path: 'view.js' }, fallback: 'list' },
    endpoints: [{ id: 'names', method: 'query', handler: print(['ada', 'grace']) }],
  }, { 'view.js': code });
}

before(async () => {
  daemon = await startDaemon({
    services: [
      copyService('todo-manager', work),
      shapes(),
      badView('throws', "throw new Error('this view is broken');\n"),
      badView('hangs', 'await new Promise(() => {});\n'),
      badView('defines-nothing', 'export const x = 1;\n'),
    ],
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
});

test('the Data tab shows a table, a list and a JSON tree from the schemas', async () => {
  const page = await openPage(browser, daemon);
  await selectService(page, 'shapes');
  // No view: the Data tab is the first one shown.
  assert.equal(await page.isHidden('#tab-view'), true);
  await page.waitForSelector('#panel-data:not([hidden]) section[data-endpoint=items][data-mode=table] td');
  const headers = await page.$$eval('#data-container section[data-endpoint=items] th', (ths) => ths.map((t) => t.textContent));
  assert.deepEqual(headers, ['Name', 'count', 'Active?', 'meta', 'extra']);
  const rows = await page.$$eval('#data-container section[data-endpoint=items] tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual(rows[0], ['alpha', '3', '☑', '{"tags":["x"]}', 'seen in data']);
  assert.deepEqual(rows[1], [XSS, '0', '☐', '', '']);

  await page.waitForSelector('#data-container section[data-endpoint=tags][data-mode=list] li');
  assert.deepEqual(await page.$$eval('#data-container section[data-endpoint=tags] li', (lis) => lis.map((l) => l.textContent)), ['red', XSS, 'blue']);

  await page.waitForSelector('#data-container section[data-endpoint=info][data-mode=json] details');
  const json = await page.textContent('#data-container section[data-endpoint=info] .json-tree');
  assert.match(json, /version: 2/);
  assert.match(json, /ok: true/);
  assert.ok(json.includes(JSON.stringify(XSS)), json);
  assert.equal(await page.$('#data-container section[data-endpoint=find]'), null);

  // Data that looks like HTML stays text.
  assert.equal(await page.$$eval('img', (imgs) => imgs.length), 0);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  for (const viewport of [WIDE, NARROW]) {
    await page.setViewportSize(viewport);
    await screenshot(page, 'fallback-shapes');
  }
  await page.context().close();
});

test('the Endpoints tab builds a form from the input schema and shows the result or the error', async () => {
  const page = await openPage(browser, daemon);
  await selectService(page, 'shapes');
  await showTab(page, 'endpoints');
  const card = 'section.endpoint[data-endpoint=add]';
  assert.equal(await page.$eval(`${card} [name=label]`, (e) => e.type), 'text');
  assert.equal(await page.$eval(`${card} [name=size]`, (e) => e.type), 'number');
  assert.equal(await page.$eval(`${card} [name=urgent]`, (e) => e.type), 'checkbox');
  assert.equal(await page.$eval(`${card} [name=kind]`, (e) => e.tagName), 'SELECT');
  assert.equal(await page.$eval(`${card} [name=extra]`, (e) => e.tagName), 'TEXTAREA');
  await page.fill(`${card} [name=label]`, 'box');
  await page.fill(`${card} [name=size]`, '3');
  await page.check(`${card} [name=urgent]`);
  await page.selectOption(`${card} [name=kind]`, { label: 'b' });
  await page.fill(`${card} [name=extra]`, '{"deep":[1]}');
  await page.click(`${card} button[type=submit]`);
  await page.waitForSelector(`${card} .result-ok`);
  assert.match(await page.textContent(`${card} .result-ok`), /ok: true/);

  // The input the handler got: the audit log has the call; the daemon validated it against the schema.
  const find = 'section.endpoint[data-endpoint=find]';
  await page.click(`${find} button[type=submit]`);
  await page.waitForSelector(`${find} .error-box`);
  assert.equal(await page.textContent(`${find} .error-code`), '-32602');
  assert.match(await page.textContent(`${find} .error-data`), /"field": "q"/);
  await screenshot(page, 'endpoints-shapes');
  await page.context().close();
});

test('a todo whose text is HTML stays text in the view and in the fallback', async () => {
  await daemon.post('lavs/call', { service: 'todo-manager', endpoint: 'addTodo', input: { text: XSS } });
  const page = await openPage(browser, daemon);
  await selectService(page, 'todo-manager');
  const frame = await viewFrame(page);
  await waitFor(() => frame.$('todo-view li[data-id] .text'), { what: 'the todo in the view' });
  assert.equal(await frame.textContent('todo-view li[data-id] .text'), XSS);
  assert.equal(await frame.evaluate(() => document.querySelectorAll('img').length), 0);
  await showTab(page, 'data');
  await page.waitForSelector('#data-container section[data-endpoint=listTodos][data-mode=table] td');
  assert.equal(await page.$eval('#data-container section[data-endpoint=listTodos] tbody td:nth-child(2)', (td) => td.textContent), XSS);
  await showTab(page, 'endpoints');
  await page.click('section.endpoint[data-endpoint=listTodos] button[type=submit]');
  await page.waitForSelector('section.endpoint[data-endpoint=listTodos] .result-ok');
  assert.equal(await page.$$eval('img', (imgs) => imgs.length), 0);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.equal(await frame.evaluate(() => window.pwned), undefined);
  await page.context().close();
});

test('a view that throws, defines no element, or never gets ready falls back to the Data tab', async () => {
  for (const [service, reason] of [['throws', /this view is broken/], ['defines-nothing', /no custom element/], ['hangs', /did not become ready within 5 s/]]) {
    const page = await openPage(browser, daemon);
    await selectService(page, service);
    await page.waitForSelector('body[data-view=failed]', { timeout: 10000 });
    await page.waitForSelector('#panel-data:not([hidden])');
    assert.match(await page.textContent('#data-notice'), reason);
    // The manifest asks for a list.
    await page.waitForSelector('#data-container section[data-endpoint=names][data-mode=list] li');
    assert.deepEqual(await page.$$eval('#data-container section[data-endpoint=names] li', (l) => l.map((x) => x.textContent)), ['ada', 'grace']);
    if (service === 'throws') await screenshot(page, 'fallback-broken-view');
    await page.context().close();
  }
});

test('the Data tab follows changes made elsewhere', async () => {
  const page = await openPage(browser, daemon);
  await selectService(page, 'todo-manager');
  await viewFrame(page);
  await showTab(page, 'data');
  await page.waitForSelector('#data-container section[data-endpoint=listTodos] td');
  await daemon.post('lavs/call', { service: 'todo-manager', endpoint: 'addTodo', input: { text: 'added over http' } });
  await waitFor(async () => (await page.textContent('#data-container section[data-endpoint=listTodos] tbody')).includes('added over http'), { what: 'the table to refresh' });
  await page.context().close();
});
