// Every example's view, one of each component kind, mounted by the real daemon in Chromium:
// notes (local .html), contacts (inline), todo-manager-js (npm), bookshelf (local .js).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import {
  tempDir, copyService, freePort, startDaemon, launchBrowser, openPage, selectService, viewFrame, screenshot, waitFor,
  EXAMPLES, WIDE, NARROW,
} from './harness.mjs';

let daemon;
let browser;
let catalog;
const work = tempDir();

before(async () => {
  // The bookshelf's catalogue on a free port, the copy's manifest pointed at it.
  const port = await freePort();
  catalog = spawn('python3', [path.join(EXAMPLES, 'bookshelf', 'catalog', 'server.py'), '--port', String(port)], { stdio: 'ignore' });
  await waitFor(() => new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1', () => { c.end(); resolve(true); });
    c.on('error', () => resolve(false));
  }), { what: 'the catalogue' });
  const bookshelf = copyService('bookshelf', work);
  const manifest = path.join(bookshelf, 'lavs.json');
  fs.writeFileSync(manifest, fs.readFileSync(manifest, 'utf8').replaceAll('127.0.0.1:8765', `127.0.0.1:${port}`));
  daemon = await startDaemon({
    services: ['notes', 'contacts', 'todo-manager-js', 'todo-manager'].map((n) => copyService(n, work)).concat([bookshelf]),
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
  catalog?.kill();
});

test('every service of the examples says it has a view', async () => {
  const r = await daemon.post('lavs/services');
  const views = Object.fromEntries(r.result.services.map((s) => [s.name, s.hasView]));
  assert.deepEqual(views, { bookshelf: true, 'contact-manager': true, 'simple-notes': true, 'todo-manager': true, 'todo-manager-js': true });
});

test('notes: a local .html view reads the file and saves a note', async () => {
  const page = await openPage(browser, daemon);
  await selectService(page, 'simple-notes');
  const frame = await viewFrame(page);
  await waitFor(async () => (await frame.textContent('notes-view ol')).includes('Welcome to simple-notes.'), { what: 'the notes' });
  await frame.fill('notes-view textarea', 'written in the view');
  await frame.click('notes-view button.save');
  await waitFor(async () => (await frame.textContent('notes-view ol')).includes('written in the view'), { what: 'the saved note' });
  const r = await daemon.post('lavs/call', { service: 'simple-notes', endpoint: 'getNotes' });
  assert.match(r.result, /written in the view/);
  for (const viewport of [WIDE, NARROW]) {
    await page.setViewportSize(viewport);
    await screenshot(page, 'example-notes');
  }
  await page.context().close();
});

test('contacts: an inline view searches, adds and deletes', async () => {
  const page = await openPage(browser, daemon);
  await selectService(page, 'contact-manager');
  const frame = await viewFrame(page);
  await waitFor(() => frame.$('contact-list li[data-id]'), { what: 'contacts' });
  const before = await frame.$$eval('contact-list li[data-id]', (l) => l.length);
  await frame.fill('contact-list input[name=name]', 'Katherine Johnson');
  await frame.fill('contact-list input[name=email]', 'kj@example.org');
  await frame.click('contact-list button.add');
  await waitFor(async () => (await frame.$$eval('contact-list li[data-id]', (l) => l.length)) === before + 1, { what: 'the added contact' });
  await frame.fill('contact-list input[name=query]', 'Katherine');
  await waitFor(async () => (await frame.$$eval('contact-list li[data-id]', (l) => l.length)) === 1, { what: 'the search' });
  for (const viewport of [WIDE, NARROW]) {
    await page.setViewportSize(viewport);
    await screenshot(page, 'example-contacts');
  }
  await frame.click('contact-list li[data-id] button');
  await waitFor(async () => (await frame.$$eval('contact-list li[data-id]', (l) => l.length)) === 0, { what: 'the delete' });
  const r = await daemon.post('lavs/call', { service: 'contact-manager', endpoint: 'searchContacts', input: { query: 'Katherine' } });
  assert.deepEqual(r.result, []);
  await page.context().close();
});

test('todo-manager-js: an npm view, its default export mounted under a name of the bootstrap', async () => {
  const page = await openPage(browser, daemon);
  await selectService(page, 'todo-manager-js');
  const frame = await viewFrame(page);
  await frame.waitForSelector('lavs-view-todo-list-view input[name=text]');
  await frame.fill('lavs-view-todo-list-view input[name=text]', 'from the npm view');
  await frame.press('lavs-view-todo-list-view input[name=text]', 'Enter');
  await frame.waitForSelector('lavs-view-todo-list-view li[data-id] .todo');
  await frame.click('lavs-view-todo-list-view li[data-id] .todo');
  await waitFor(async () => {
    const r = await daemon.post('lavs/call', { service: 'todo-manager-js', endpoint: 'listTodos' });
    return r.result.length === 1 && r.result[0].text === 'from the npm view' && r.result[0].done === true;
  }, { what: 'the npm view\'s add and toggle on the daemon' });
  for (const viewport of [WIDE, NARROW]) {
    await page.setViewportSize(viewport);
    await screenshot(page, 'example-todo-manager-js');
  }
  await page.context().close();
});

test('bookshelf: a local .js view searches the catalogue and adds a reading note', async () => {
  const page = await openPage(browser, daemon);
  await selectService(page, 'bookshelf');
  const frame = await viewFrame(page);
  await waitFor(async () => (await frame.$$eval('book-shelf .book', (b) => b.length)) === 5, { what: 'the catalogue' });
  await frame.fill('book-shelf input[name=q]', 'Butler');
  await waitFor(async () => (await frame.$$eval('book-shelf .book', (b) => b.length)) === 2, { what: 'the search' });
  await frame.click('book-shelf .book >> text=Kindred');
  await frame.waitForSelector('book-shelf h3:text("Kindred")');
  await frame.fill('book-shelf textarea[name=note]', 'Dana travels back in time.');
  await frame.click('book-shelf button.add-note');
  await waitFor(async () => (await frame.textContent('book-shelf .note')).includes('Dana travels'), { what: 'the note' });
  for (const viewport of [WIDE, NARROW]) {
    await page.setViewportSize(viewport);
    await screenshot(page, 'example-bookshelf');
  }
  await page.context().close();
});
