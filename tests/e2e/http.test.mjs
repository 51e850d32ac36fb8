// The view host's HTTP surface, from Node with plain requests: tickets, traversal, Origin: null,
// and the exact security headers of view files and of the page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir, copyService, startDaemon, REPO } from './harness.mjs';

let daemon;
let socket;
const work = tempDir();

before(async () => {
  daemon = await startDaemon({ services: [copyService('todo-manager', work), copyService('notes', work)] });
  socket = daemon.socket();
});

after(async () => {
  await daemon?.stop();
});

const host = () => ({ Host: `127.0.0.1:${daemon.port}` });
const get = (p, headers = {}) => daemon.raw('GET', p, { headers: { ...host(), ...headers } });

function viewCsp(scriptSrc) {
  return [
    "default-src 'none'", `script-src ${scriptSrc}`, "style-src 'self' 'unsafe-inline'", "img-src 'self' data: blob:",
    "font-src 'self'", "media-src 'self'", "connect-src 'none'", "frame-src 'none'", "worker-src 'none'", "object-src 'none'",
    "base-uri 'none'", "form-action 'none'", `frame-ancestors http://127.0.0.1:${daemon.port}`, 'sandbox allow-scripts allow-forms',
  ].join('; ');
}

// docs/view-host.md's list: every feature Chromium knows that a view could ask for, and no other
// (an unknown feature is logged on every response).
const DOC_PERMISSIONS = ['accelerometer', 'autoplay', 'camera', 'clipboard-read', 'clipboard-write', 'display-capture',
  'encrypted-media', 'fullscreen', 'gamepad', 'geolocation', 'gyroscope', 'hid', 'idle-detection', 'magnetometer',
  'microphone', 'midi', 'payment', 'picture-in-picture', 'publickey-credentials-get', 'screen-wake-lock', 'serial', 'usb',
  'xr-spatial-tracking'];

function assertViewHeaders(r, scriptSrc, what) {
  assert.equal(r.headers['content-security-policy'], viewCsp(scriptSrc), what);
  const features = new Set(r.headers['permissions-policy'].split(',').map((f) => f.trim()));
  assert.deepEqual([...features].sort(), DOC_PERMISSIONS.map((f) => `${f}=()`).sort(), `${what}: Permissions-Policy`);
  assert.equal(r.headers['x-content-type-options'], 'nosniff', what);
  assert.equal(r.headers['referrer-policy'], 'no-referrer', what);
  assert.equal(r.headers['cache-control'], 'no-store', what);
  assert.equal(r.headers['access-control-allow-origin'], '*', what);
  assert.equal(r.headers['cross-origin-resource-policy'], 'cross-origin', what);
}

test('view files carry the exact security headers, documents and scripts alike', async () => {
  const opened = await socket.request('view/open', { service: 'todo-manager' });
  const doc = await get(opened.url, { Origin: 'null' });
  assert.equal(doc.status, 200);
  assert.match(doc.headers['content-type'], /^text\/html/);
  assertViewHeaders(doc, "'self'", 'the view document');
  const config = JSON.parse(/<script type="application\/json" id="hearth-view-config">(.*?)<\/script>/.exec(doc.body)[1]);
  assert.deepEqual(config, {
    v: 1, mountId: opened.mountId, service: 'todo-manager', hostOrigin: `http://127.0.0.1:${daemon.port}`,
    component: { type: 'local', module: './todo-view.js' },
  });
  assert.ok(!doc.body.includes(opened.secret) && !doc.body.includes(daemon.token));

  const module = await get(`${opened.url}todo-view.js`, { Origin: 'null' });
  assert.equal(module.status, 200);
  assert.match(module.headers['content-type'], /^text\/javascript/);
  assertViewHeaders(module, "'self'", 'a module of the view');
  const bootstrap = await get(`${opened.url}.hearth/bootstrap.js`, { Origin: 'null' });
  assert.equal(bootstrap.body, fs.readFileSync(path.join(REPO, 'web', 'view-bootstrap.js'), 'utf8'));
  assertViewHeaders(bootstrap, "'self'", 'the bootstrap');

  // A local .html view: its own inline scripts get the response's nonce, which the CSP names.
  const notes = await socket.request('view/open', { service: 'simple-notes' });
  const html = await get(notes.url, { Origin: 'null' });
  const nonce = /'nonce-([0-9a-f]+)'/.exec(html.headers['content-security-policy'])[1];
  assert.ok(nonce.length >= 16);
  assertViewHeaders(html, `'self' 'nonce-${nonce}'`, 'a local .html view');
  assert.ok(html.body.includes(`<script nonce="${nonce}">`));
  assert.ok(html.body.indexOf('id="hearth-view-config"') < html.body.indexOf('<style>'), 'the bootstrap comes first');
  const again = await get(notes.url, { Origin: 'null' });
  assert.notEqual(/'nonce-([0-9a-f]+)'/.exec(again.headers['content-security-policy'])[1], nonce, 'a nonce per response');

  await socket.request('view/close', { mountId: opened.mountId });
  assert.equal((await get(opened.url, { Origin: 'null' })).status, 404);
  assert.equal((await get(`${opened.url}todo-view.js`)).status, 404);
});

test('unknown tickets and paths that leave the view folder are 404', async () => {
  const opened = await socket.request('view/open', { service: 'todo-manager' });
  const ticket = opened.url.split('/')[2];
  const bad = ['0'.repeat(32), 'f'.repeat(32), ticket.slice(0, -1), `${ticket}0`, 'not-a-ticket', ticket.toUpperCase()];
  for (const t of bad) assert.equal((await get(`/views/${t}/`)).status, 404, t);
  assert.equal((await get(`/views/${ticket}`)).status, 404, 'no slash after the ticket');
  for (const p of ['../lavs.json', '%2e%2e/lavs.json', '..%2flavs.json', '%2e%2e%2fscripts%2ftodo-service.js', '../../README.md',
    './../lavs.json', 'x/../../lavs.json', '.hearth/../../lavs.json', '/etc/passwd', '%2fetc%2fpasswd', 'todo-view.js%00.html']) {
    const r = await get(`/views/${ticket}/${p}`);
    assert.equal(r.status, 404, p);
    assert.ok(!r.body.includes('"endpoints"'), p);
  }
  for (const p of ['../README.md', '%2e%2e/README.md', '..%2fREADME.md']) assert.equal((await get(`/ui/${p}`)).status, 404, p);
});

test('Origin: null is refused on /rpc and /ws, and other origins on the page', async () => {
  const post = await daemon.raw('POST', '/rpc', {
    headers: { ...host(), Origin: 'null', Authorization: `Bearer ${daemon.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'lavs/services' }),
  });
  assert.equal(post.status, 403);
  const upgrade = await daemon.raw('GET', `/ws?token=${daemon.token}`, {
    headers: { ...host(), Origin: 'null', Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' },
  });
  assert.equal(upgrade.status, 403);
  // The same requests from the page's own origin are fine.
  const ok = await daemon.raw('POST', '/rpc', {
    headers: { ...host(), Origin: `http://127.0.0.1:${daemon.port}`, Authorization: `Bearer ${daemon.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'lavs/services' }),
  });
  assert.equal(ok.status, 200);
  assert.equal((await get('/ui/', { Origin: 'http://evil.example' })).status, 403);
});

test('the page is served without the token, with its CSP, and holds no secret', async () => {
  const page = await get('/ui/');
  assert.equal(page.status, 200);
  assert.equal(page.headers['content-security-policy'], [
    "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
    `connect-src 'self' ws://127.0.0.1:${daemon.port}`, "frame-src 'self'", "object-src 'none'", "base-uri 'none'",
    "form-action 'none'", "frame-ancestors 'none'",
  ].join('; '));
  assert.equal(page.headers['x-content-type-options'], 'nosniff');
  // No inline script or style in the page: its CSP would refuse them.
  assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/);
  assert.doesNotMatch(page.body, /\sstyle=|<style/);
  for (const file of ['app.js', 'lavs-client.js', 'view-host.js', 'fallback.js', 'endpoints.js', 'schema.js', 'style.css']) {
    const r = await get(`/ui/${file}`);
    assert.equal(r.status, 200, file);
    assert.ok(!r.body.includes(daemon.token), file);
    assert.match(r.headers['content-type'], file.endsWith('.css') ? /^text\/css/ : /^text\/javascript/, file);
  }
  // The page's modules never write HTML.
  for (const file of fs.readdirSync(path.join(REPO, 'web')).filter((f) => f.endsWith('.js'))) {
    const text = fs.readFileSync(path.join(REPO, 'web', file), 'utf8');
    assert.doesNotMatch(text, /\.innerHTML|\.outerHTML\s*=|insertAdjacentHTML|document\.write/, file);
  }
});
