// A `cdn` view component (lavs-spec-v1 4.5): refused with a clear message unless the daemon was
// started with --allow-view-origin for its origin, and then mounted from that origin in the
// sandboxed frame (its export defined as the element). The "CDN" is a local HTTP server on
// another port, answering as public CDNs do (Access-Control-Allow-Origin: *).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  tempDir, writeService, startDaemon, launchBrowser, openPage, selectService, viewFrame, waitFor,
} from './harness.mjs';

const MODULE = `
export class CounterView extends HTMLElement {
  setLAVSClient(client) {
    this.client = client;
    this.textContent = 'loading';
    client.call('count').then((n) => { this.textContent = 'count is ' + n; });
  }
}
`;

let cdn;
let cdnOrigin;
const requests = [];
let browser;
const work = tempDir();

function service() {
  return writeService(work, 'cdn-view', {
    lavs: '1.0',
    name: 'cdn-view',
    version: '1.0.0',
    view: { component: { type: 'cdn', url: `${cdnOrigin}/pkg/counter.js`, exportName: 'CounterView' } },
    endpoints: [
      { id: 'count', method: 'query', handler: { type: 'script', command: 'printf', args: ['%s', '42'] } },
    ],
  });
}

before(async () => {
  cdn = http.createServer((req, res) => {
    requests.push({ url: req.url, origin: req.headers.origin });
    if (req.url !== '/pkg/counter.js') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/javascript', 'Access-Control-Allow-Origin': '*' });
    res.end(MODULE);
  });
  await new Promise((resolve) => cdn.listen(0, '127.0.0.1', resolve));
  cdnOrigin = `http://127.0.0.1:${cdn.address().port}`;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await new Promise((resolve) => cdn.close(resolve));
});

test('a cdn view is refused without --allow-view-origin, and the page says why', async () => {
  const daemon = await startDaemon({ services: [service()] });
  try {
    const page = await openPage(browser, daemon);
    await selectService(page, 'cdn-view');
    await waitFor(async () => (await page.textContent('body')).includes('--allow-view-origin'),
      { what: 'the refusal naming the flag' });
    assert.equal(requests.length, 0, 'nothing was fetched from the CDN');
    await page.context().close();
  } finally {
    await daemon.stop();
  }
});

test('with its origin allowed, the cdn view mounts in the sandbox and calls its service', async () => {
  const daemon = await startDaemon({ services: [service()], args: ['--allow-view-origin', cdnOrigin] });
  try {
    const page = await openPage(browser, daemon);
    await selectService(page, 'cdn-view');
    const frame = await viewFrame(page);
    await waitFor(async () => (await frame.textContent('body')).includes('count is 42'), { what: 'the cdn view rendering' });
    assert.equal(await frame.evaluate(() => self.origin), 'null');
    // The module was fetched by the opaque frame (a CORS request with Origin: null).
    assert.ok(requests.some((r) => r.url === '/pkg/counter.js' && r.origin === 'null'), JSON.stringify(requests));
    // The view still has no network: its CSP allows scripts from the CDN, not connections.
    const blocked = await frame.evaluate(async (origin) => {
      try {
        await fetch(`${origin}/pkg/counter.js`);
        return false;
      } catch {
        return true;
      }
    }, cdnOrigin);
    assert.equal(blocked, true);
    await page.context().close();
  } finally {
    await daemon.stop();
  }
});
