// An Agent App's page in the view host (docs/app-server.md, "Host Bridge v1"): the field-notes
// example, installed and enabled, mounted from the rail; its page reads its notes through the
// bridge, starts an agent task (the scripted fake model), shows the task's events, gets the
// person's approval for the write and reads the artifact back. Messages forged by another frame
// or by the page itself are ignored.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import {
  REPO, EXAMPLES, tempDir, copyService, startDaemon, launchBrowser, openPage, screenshot, waitFor, WIDE, NARROW,
} from './harness.mjs';

const HEARTH = process.env.HEARTH_BIN || path.join(REPO, 'build', 'release', 'bin', 'hearth');
let daemon;
let browser;
let model;
let stateDir;
const work = tempDir();

function call(name, args) {
  return { name, arguments: args };
}

/** The fake model server as a program, on a scenario file; resolves to {url, stop}. */
async function fakeModel(steps) {
  const file = path.join(work, 'scenario.jsonl');
  fs.writeFileSync(file, steps.map((s) => JSON.stringify(s)).join('\n') + '\n');
  const child = spawn('python3', [path.join(REPO, 'tests/fake_model/server.py'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the fake model exited with ${code}`)));
  });
  return { url: first.trim(), stop: () => child.kill('SIGTERM') };
}

before(async () => {
  stateDir = tempDir('hearth-state-');
  const app = (...args) => execFileSync(HEARTH, ['app', ...args, '--state-dir', stateDir], { encoding: 'utf8' });
  app('install', path.join(EXAMPLES, 'apps', 'field-notes'), '--dev');
  app('enable', 'field-notes');
  model = await fakeModel([
    { reply: { content: 'Reading the notes.', tool_calls: [call('lime_storage__query', { sql: 'SELECT text FROM notes ORDER BY id' })] } },
    { expect: { lastRole: 'tool', lastMessageContains: 'Heron' },
      reply: { tool_calls: [call('lime_artifacts__create', {
        type: 'notes-summary', content: { count: 2, topWords: ['heron', 'weir'], firstLines: ['Heron at the weir', 'Otter tracks'] },
      })] } },
    { expect: { lastRole: 'tool' }, reply: { tool_calls: [call('complete', { result: { count: 2, topWords: ['heron', 'weir'] } })] } },
  ]);
  const notes = copyService('notes', work);
  daemon = await startDaemon({ services: [notes], stateDir, args: ['--model-url', model.url, '--model', 'fake'] });
  for (const text of ['Heron at the weir', 'Otter tracks']) {
    const r = await daemon.post('capability/invoke', {
      appId: 'field-notes', capability: 'lime.storage', method: 'query',
      params: { sql: 'INSERT INTO notes (text) VALUES (?)', params: [text] },
    });
    assert.ok(r.result, JSON.stringify(r));
  }
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
  model?.stop();
});

async function appFrame(page) {
  await page.click('#app-list [data-app="field-notes"][data-entry="notes"]');
  await page.waitForSelector('body[data-app=mounted]');
  const handle = await page.waitForSelector('#app-container iframe.app-frame');
  const frame = await handle.contentFrame();
  await frame.waitForSelector('#status:text-matches("Ready")');
  return frame;
}

test('an app page starts a task, shows its events, asks for approval and reads the artifact', async () => {
  const page = await openPage(browser, daemon);
  const frame = await appFrame(page);
  // The page's own data, read through the bridge as its app.
  await frame.waitForSelector('#notes li >> nth=1');
  assert.deepEqual(await frame.$$eval('#notes li', (l) => l.map((e) => e.textContent)), ['Heron at the weir', 'Otter tracks']);
  // The frame is sandboxed with an opaque origin: no token, no way to the daemon.
  const sandbox = await page.$eval('#app-container iframe', (f) => f.getAttribute('sandbox'));
  assert.equal(sandbox, 'allow-scripts allow-forms');
  assert.equal(await frame.evaluate(() => { try { return sessionStorage.length; } catch (e) { return e.name; } }), 'SecurityError');

  await frame.click('#summarise');
  await frame.waitForSelector('.action .approve', { timeout: 20000 });
  assert.match(await frame.textContent('.action'), /lime\.artifacts\.create/);
  await screenshot(page, 'agent-app-approval');
  await frame.click('.action .approve');
  await frame.waitForSelector('#summary-result', { timeout: 20000 });
  assert.equal(await frame.textContent('#summary-result'), '2 notes; most used: heron, weir');
  await frame.waitForSelector('#summary-artifact');
  assert.match(await frame.textContent('#summary-artifact'), /notes-summary .* \(field-notes 0\.1\.0\): \["Heron at the weir","Otter tracks"\]/);
  const events = await frame.$$eval('#events li', (l) => l.map((e) => e.dataset.type));
  for (const type of ['status', 'tool.call', 'action.required', 'completed']) assert.ok(events.includes(type), events.join(','));
  await screenshot(page, 'agent-app-completed');
  assert.deepEqual(page.problems, []);

  // The evidence of the turn is in the app's log: its approval and its result.
  const evidence = JSON.parse(execFileSync(HEARTH, ['app', 'evidence', 'field-notes', '--state-dir', stateDir], { encoding: 'utf8' }));
  const kinds = evidence.entries.map((e) => e.kind);
  for (const kind of ['agent.turn.started', 'agent.action.allowed', 'agent.turn.completed']) assert.ok(kinds.includes(kind), kind);
  const ui = evidence.entries.filter((e) => e.kind === 'capability.invoked' && e.detail.caller === 'ui:notes');
  assert.ok(ui.length >= 2, 'the page\'s own calls name it');
  await page.context().close();
});

test('messages forged by another frame or by the page are ignored', async () => {
  const page = await openPage(browser, daemon);
  const frame = await appFrame(page);
  const before = Number(await page.textContent('#log-ignored-count'));
  const forged = {
    protocol: 'lime.agentApp.bridge', version: 1, type: 'capability:invoke', requestId: 'x', appId: 'field-notes',
    payload: { capability: 'lime.storage', method: 'put', params: { key: 'forged', value: 1 } },
  };
  // From the page's own window, and from a frame of the page's origin that is not the app's.
  await page.evaluate((m) => window.postMessage(m, '*'), forged);
  await page.evaluate(() => {
    const f = document.createElement('iframe');
    f.name = 'intruder';
    document.body.append(f);
  });
  await waitFor(() => page.frame({ name: 'intruder' }), { what: 'the intruding frame' });
  await page.frame({ name: 'intruder' }).evaluate((m) => parent.postMessage(m, '*'), forged);
  // From the app's frame, but not Host Bridge v1 (wrong version), or naming another app.
  await frame.evaluate((m) => {
    parent.postMessage({ ...m, version: 2 }, '*');
    parent.postMessage({ ...m, appId: 'someone-else' }, '*');
  }, forged);
  await waitFor(async () => Number(await page.textContent('#log-ignored-count')) >= before + 4, { what: 'four ignored messages' });
  const r = await daemon.post('capability/invoke', { appId: 'field-notes', capability: 'lime.storage', method: 'get', params: { key: 'forged' } });
  assert.equal(r.result.value, null);
  // The snapshot: who the frame is, the theme, the locale, the workspace and the capabilities.
  const snapshot = await frame.evaluate(() => new Promise((resolve) => {
    window.addEventListener('message', (e) => {
      if (e.data && e.data.requestId === 'snap') resolve(e.data.payload);
    });
    parent.postMessage({ protocol: 'lime.agentApp.bridge', version: 1, type: 'host:getSnapshot', requestId: 'snap', appId: 'field-notes' }, '*');
  }));
  assert.equal(snapshot.appId, 'field-notes');
  assert.equal(snapshot.entryKey, 'notes');
  assert.equal(snapshot.route, '/notes');
  assert.equal(snapshot.runtimeOrigin, 'null');
  assert.ok(['light', 'dark'].includes(snapshot.effectiveThemeMode));
  assert.ok(snapshot.cssVariables['--text'] && snapshot.locale && snapshot.timezone && snapshot.workspaceId);
  const caps = Object.fromEntries(snapshot.capabilities.map((c) => [c.capability, c]));
  assert.equal(caps['lime.storage'].status, 'available');
  assert.equal(caps['lime.artifacts'].status, 'available');
  assert.equal(caps['lime.ui'], undefined);  // not declared by the app
  // A call the app did not declare comes back as host:error with the bridge's reason.
  const refused = await frame.evaluate(() => invoke('lime.secrets', 'get', { key: 'x' }).then(() => null, (e) => ({ code: e.code, stage: e.data && e.data.stage })));
  assert.deepEqual(refused, { code: -32001, stage: 'declared' });
  // The app still works.
  await frame.fill('#text', 'Kingfisher');
  await frame.click('#add button');
  await frame.waitForSelector('#notes li:text-is("Kingfisher")');
  await page.context().close();
});

test('the app page on a narrow screen', async () => {
  const page = await openPage(browser, daemon, { viewport: NARROW });
  await page.selectOption('#service-select', 'app:field-notes/notes');
  await page.waitForSelector('body[data-app=mounted]');
  const frame = await (await page.waitForSelector('#app-container iframe.app-frame')).contentFrame();
  await frame.waitForSelector('#status:text-matches("Ready")');
  await screenshot(page, 'agent-app');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
