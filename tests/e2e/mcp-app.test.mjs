// A service's view served as an MCP App (docs/mcp-server.md, "Views as MCP Apps"): the document
// hearth returns for ui://<service>/view runs in a sandboxed frame of a minimal MCP Apps host page
// (ui/initialize, then tools/call relayed to the daemon's /mcp), the view component gets its LAVS
// client and shows what the tool returned; an answer forged by another frame is ignored.
import assert from 'node:assert/strict';
import path from 'node:path';
import {after, before, test} from 'node:test';

import {copyService, launchBrowser, REPO, screenshot, startDaemon, tempDir, waitFor, WIDE} from './harness.mjs';

let daemon;
let browser;
const work = tempDir();

before(async () => {
  const fixture = copyService(path.join(REPO, 'tests', 'services', 'mcp'), work);
  daemon = await startDaemon({services: [fixture]});
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
});

async function mcp(message) {
  const r = await fetch(`${daemon.url}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${daemon.token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream'
    },
    body: JSON.stringify(message),
  });
  return r.json();
}

const HOST = `<!doctype html><html><body style="font:14px sans-serif">
<h1>MCP Apps test host</h1>
<iframe id="app" sandbox="allow-scripts" style="width:600px;height:120px;border:1px solid #888"></iframe>
<iframe id="other" sandbox="allow-scripts" style="display:none"></iframe>
<script>
  const frame = document.getElementById('app');
  window.seen = [];
  window.addEventListener('message', async (event) => {
    if (event.source !== frame.contentWindow) return;
    const m = event.data;
    window.seen.push(m.method || 'answer');
    if (m.method === 'ui/initialize') {
      frame.contentWindow.postMessage({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2026-01-26',
        hostInfo: { name: 'test-host', version: '1' }, hostCapabilities: {}, hostContext: { theme: 'light' } } }, '*');
      return;
    }
    if (m.method === 'ui/notifications/initialized') { window.initialized = true; return; }
    if (m.id !== undefined) {
      if (m.method === 'tools/call') {
        // Another frame answers first, with the same id: the bridge must only trust its parent.
        document.getElementById('other').srcdoc = '<script>parent.frames[0].postMessage(' +
          JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: '{"sum":999}' }] } }) +
          ', "*")<\\/script>';
        await new Promise((r) => setTimeout(r, 400));
      }
      frame.contentWindow.postMessage(await window.hostCall(m), '*');
    }
  });
</script></body></html>`;

async function runApp(html) {
  const context = await browser.newContext({viewport: WIDE});
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  const calls = [];
  await page.exposeFunction('hostCall', async (message) => {
    calls.push(message.method);
    return mcp(message);
  });
  await page.setContent(HOST);
  await page.evaluate((doc) => {
    document.getElementById('app').srcdoc = doc;
  }, html);
  const app = await waitFor(
      () => page.frames().find(
          (f) => f.parentFrame() === page.mainFrame() && f.url() === 'about:srcdoc'),
      {what: 'the app frame'});
  await app.waitForFunction(
      () => document.body && document.body.textContent.includes('sum'), null, {timeout: 15000});
  await page.waitForTimeout(600);
  return {
    context,
    page,
    app,
    problems,
    calls,
    text: (await app.textContent('mcp-fixture-view')).trim()
  };
}

test('the view document runs as an MCP App and calls tools through the host', async () => {
  const listed = await mcp({jsonrpc: '2.0', id: 1, method: 'tools/list'});
  assert.equal(
      listed.result.tools.find((t) => t.name === 'add')._meta.ui.resourceUri,
      'ui://mcp-fixture/view');
  const read = await mcp(
      {jsonrpc: '2.0', id: 2, method: 'resources/read', params: {uri: 'ui://mcp-fixture/view'}});
  const doc = read.result.contents[0];
  assert.equal(doc.mimeType, 'text/html;profile=mcp-app');

  const {context, page, problems, calls, text} = await runApp(doc.text);
  assert.equal(text, 'sum 5');
  assert.equal(await page.evaluate(() => window.initialized), true);
  assert.deepEqual(calls, ['tools/call']);
  assert.deepEqual(problems, []);
  // The frame holds no token: the host's MCP connection made the call.
  assert.equal(doc.text.includes(daemon.token), false);
  await screenshot(page, 'mcp-app');
  await context.close();
});

test(
    'the forged answer does reach a frame that does not check where answers come from',
    async () => {
      // The guard of the test above: with the bridge's source check taken out, the other frame's
      // answer wins, so the first test would fail if hearth's bridge trusted any frame.
      const read = await mcp({
        jsonrpc: '2.0',
        id: 3,
        method: 'resources/read',
        params: {uri: 'ui://mcp-fixture/view'}
      });
      const unguarded =
          read.result.contents[0].text.replace('if (event.source !== window.parent) return;', '');
      assert.notEqual(unguarded, read.result.contents[0].text);
      const {context, text} = await runApp(unguarded);
      assert.equal(text, 'sum 999');
      await context.close();
    });
