// The page follows `hearth serve --watch`: lavs/servicesChanged refreshes the list, a changed
// service's view is mounted anew, a removed service leaves the list.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir, copyService, startDaemon, launchBrowser, openPage, selectService, viewFrame, waitFor } from './harness.mjs';

let daemon;
let browser;
const work = tempDir();
let todo;

before(async () => {
  const root = path.join(work, 'services');
  fs.mkdirSync(root);
  todo = copyService('todo-manager', root);
  copyService('notes', root);
  daemon = await startDaemon({ services: [root], args: ['--watch', '--watch-interval', '100'] });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
});

test('a click on a service lands although the list is refreshed between press and release', async () => {
  const page = await openPage(browser, daemon);
  await page.waitForSelector('#service-title:text-is("simple-notes")');
  const target = await page.waitForSelector('#service-list [data-service="todo-manager"]');
  const box = await target.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  // Another service changes while the button is held: the list is refreshed under the pointer.
  const file = path.join(path.dirname(todo), 'notes', 'lavs.json');
  const original = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(original), version: '9.9.9' }, null, 2));
  await page.waitForSelector('#service-list [data-service="simple-notes"] .service-meta:text("v9.9.9")', { timeout: 10000 });
  await page.mouse.up();
  await page.waitForSelector('#service-title:text-is("todo-manager")', { timeout: 5000 });
  assert.ok(await target.evaluate((b) => b.isConnected), 'the unchanged button was kept');
  fs.writeFileSync(file, original);
  await page.waitForSelector('#service-list [data-service="simple-notes"] .service-meta:not(:text("v9.9.9"))', { timeout: 10000 });
  await page.context().close();
});

test('an edited manifest remounts its view; a removed service leaves the list', async () => {
  const page = await openPage(browser, daemon);
  await selectService(page, 'todo-manager');
  await viewFrame(page);
  const firstMount = await page.getAttribute('iframe.view-frame', 'data-mount-id');

  const file = path.join(todo, 'lavs.json');
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
  manifest.description = 'Edited while the page was open';
  fs.writeFileSync(file, JSON.stringify(manifest, null, 2));
  await page.waitForSelector('#service-desc:text("Edited while the page was open")', { timeout: 10000 });
  await page.waitForFunction((old) => {
    const f = document.querySelector('iframe.view-frame');
    return f && f.dataset.mountId !== old && document.body.dataset.view === 'ready';
  }, firstMount, { timeout: 10000 });
  const frame = await viewFrame(page);
  await waitFor(() => frame.$('todo-view .add-row'), { what: 'the remounted view' });
  const mounts = await daemon.mounts();
  assert.ok(!mounts.mounts.some((m) => m.mountId === firstMount), 'the old mount is closed');
  assert.match(await page.textContent('#log-list'), /services changed: .*~todo-manager/);

  fs.rmSync(path.join(path.dirname(todo), 'notes', 'lavs.json'));
  await page.waitForSelector('#service-list [data-service="simple-notes"]', { state: 'detached', timeout: 10000 });
  assert.deepEqual(await page.$$eval('#service-list [data-service]', (b) => b.map((x) => x.dataset.service)), ['todo-manager']);
  await page.context().close();
});

/** A page showing todo-manager's view, then the daemon restarted on the same port (with `args`). */
async function pageAcrossRestart(restartArgs) {
  const page = await openPage(browser, daemon);
  await selectService(page, 'todo-manager');
  await viewFrame(page);
  const port = daemon.port;
  await daemon.stop();
  await page.waitForSelector('#conn-status:not([data-status=open])');
  daemon = await daemon.restart(restartArgs ? { port, args: restartArgs } : { port });
  return page;
}

test('after a daemon restart the page reconnects by itself: the token is kept', async () => {
  const page = await pageAcrossRestart();
  await page.waitForSelector('#conn-status[data-status=open]', { timeout: 20000 });
  await viewFrame(page);
  await page.waitForSelector('#page-notice', { state: 'hidden', timeout: 10000 });
  await page.context().close();
});

test('after a restart with --rotate-token the page says its token is outdated, and the new link works', async () => {
  const page = await pageAcrossRestart(['--rotate-token']);
  // The page's token was the old daemon's: it keeps trying, then says what to do.
  await page.waitForSelector('#page-notice:not([hidden])', { timeout: 20000 });
  assert.match(await page.textContent('#page-notice'), /hearth open/);
  await page.goto(daemon.pageUrl);
  await page.waitForSelector('#conn-status[data-status=open]');
  await viewFrame(page);
  assert.equal(await page.isHidden('#page-notice'), true);
  await page.context().close();
});
