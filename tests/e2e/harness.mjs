// Shared set-up of the browser tests: a real hearth daemon on copies of the services, Debian's
// chromium driven by playwright-core (installed by tests/e2e/run.sh into the cache folder).
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const EXAMPLES = path.join(REPO, 'examples');
export const ARTIFACTS = process.env.HEARTH_E2E_ARTIFACTS || path.join(REPO, 'build', 'e2e-artifacts');
const HEARTH = process.env.HEARTH_BIN || path.join(REPO, 'build', 'release', 'bin', 'hearth');
const CACHE = process.env.HEARTH_E2E_CACHE ||
  path.join(process.env.HEARTH_CACHE_DIR || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'hearth'), 'e2e');

export const { createLAVSClient, RpcSocket, LAVSError } = await import(pathToFileURL(path.join(REPO, 'web', 'lavs-client.js')).href);

export function playwright() {
  return createRequire(path.join(CACHE, 'node_modules/'))('playwright-core');
}

const made = [];
process.on('exit', () => {
  if (process.env.HEARTH_E2E_KEEP) return;
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

/** A temporary folder, removed when the test file's process ends (unless HEARTH_E2E_KEEP is set). */
export function tempDir(prefix = 'hearth-e2e-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/// A TCP port free on 127.0.0.1 right now (for a server a test starts itself).
export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(fn, { timeout = 10000, interval = 50, what = 'condition' } = {}) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await sleep(interval);
  }
}

const DATA_FILES = new Set(['todos.json', '.todos.lock', 'notes.json']);

/** A copy of an example (or of any service folder) under `into`, without its runtime data. */
export function copyService(source, into) {
  const from = path.isAbsolute(source) ? source : path.join(EXAMPLES, source);
  const to = path.join(into, path.basename(from));
  fs.cpSync(from, to, {
    recursive: true,
    filter: (src) => {
      const base = path.basename(src);
      return !DATA_FILES.has(base) && !base.startsWith('contacts.db') && base !== '__pycache__';
    },
  });
  return to;
}

/** Writes a service folder from a manifest and a map of files. */
export function writeService(into, name, manifest, files = {}) {
  const dir = path.join(into, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'lavs.json'), JSON.stringify(manifest, null, 2));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

/**
 * `hearth serve DIRS --port P --ready-file F --state-dir D`; resolves once the ready file is
 * written. stop() ends it; restart() starts it again with the same folders and state.
 */
export async function startDaemon({ services, stateDir = tempDir('hearth-state-'), port = 0, args = [] }) {
  const work = tempDir('hearth-run-');
  const readyFile = path.join(work, 'ready.json');
  const logFile = path.join(work, 'daemon.log');
  const out = fs.openSync(logFile, 'a');
  const child = spawn(HEARTH, ['serve', ...services, '--port', String(port), '--ready-file', readyFile, '--state-dir', stateDir, ...args], {
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  let exited = null;
  const exit = new Promise((resolve) => child.on('exit', (code, signal) => {
    exited = { code, signal };
    resolve(exited);
  }));
  await waitFor(() => {
    if (exited) throw new Error(`hearth serve exited ${JSON.stringify(exited)}: ${fs.readFileSync(logFile, 'utf8')}`);
    return fs.existsSync(readyFile) && fs.readFileSync(readyFile, 'utf8').trim().endsWith('}');
  }, { timeout: 30000, what: 'the ready file' }).catch((e) => {
    child.kill('SIGKILL');
    throw e;
  });
  const ready = JSON.parse(fs.readFileSync(readyFile, 'utf8'));
  const token = fs.readFileSync(ready.tokenFile, 'utf8').trim();
  const sockets = [];
  const daemon = {
    ready,
    token,
    url: ready.url,
    port: ready.port,
    stateDir,
    services,
    logFile,
    pageUrl: `${ready.uiUrl}#token=${token}`,
    /** One JSON-RPC request over HTTP; resolves to the parsed body. */
    async post(method, params = {}, headers = {}) {
      const r = await fetch(ready.rpcUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}`, ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      return r.json();
    },
    /** An HTTP request on a connection of its own: {status, headers, body}. */
    raw(method, urlPath, { headers = {}, body } = {}) {
      return new Promise((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: ready.port, method, path: urlPath, headers, agent: false }, (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        });
        req.on('error', reject);
        if (body !== undefined) req.write(body);
        req.end();
      });
    },
    /** A WebSocket JSON-RPC connection of this test (closed by stop()). */
    socket() {
      const s = new RpcSocket({ url: ready.url, token, WebSocket: globalThis.WebSocket });
      s.connect();
      sockets.push(s);
      return s;
    },
    async mounts() {
      if (!daemon.monitor) daemon.monitor = daemon.socket();
      return daemon.monitor.request('view/mounts', {});
    },
    async stop() {
      for (const s of sockets) s.close();
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
        await exit;
        clearTimeout(timer);
      }
    },
    restart(options = {}) {
      return startDaemon({ services, stateDir, port: options.port ?? 0, args: options.args ?? args });
    },
  };
  return daemon;
}

export async function launchBrowser() {
  const { chromium } = playwright();
  const args = [];
  if (typeof process.getuid === 'function' && process.getuid() === 0) args.push('--no-sandbox');
  return chromium.launch({ executablePath: process.env.HEARTH_CHROMIUM || '/usr/bin/chromium', args });
}

export const WIDE = { width: 1280, height: 800 };
export const NARROW = { width: 390, height: 844 };

/** The host page with the daemon's token, connected. page.problems collects page errors. */
export async function openPage(browser, daemon, { viewport = WIDE, colorScheme = 'light', url } = {}) {
  const context = await browser.newContext({ viewport, colorScheme });
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') page.problems.push(`console: ${m.text()}`);
  });
  await page.goto(url || daemon.pageUrl);
  await page.waitForSelector('#conn-status[data-status=open]', { timeout: 15000 });
  await page.waitForSelector('#service-list [data-service]', { state: 'attached' });
  return page;
}

export async function selectService(page, name) {
  const narrow = page.viewportSize().width < 760;
  if (narrow) await page.selectOption('#service-select', name);
  else await page.click(`#service-list [data-service="${name}"]`);
  await page.waitForSelector(`#service-title:text-is("${name}")`);
}

/** The frame of the mounted view, once it said view/ready. */
export async function viewFrame(page, { timeout = 15000 } = {}) {
  await page.waitForSelector('body[data-view=ready]', { timeout });
  const handle = await page.waitForSelector('#view-container iframe.view-frame');
  const frame = await handle.contentFrame();
  if (!frame) throw new Error('the view frame has no document');
  return frame;
}

export async function showTab(page, tab) {
  await page.click(`.tabs [data-tab=${tab}]`);
  await page.waitForSelector(`#panel-${tab}:not([hidden])`);
}

export async function screenshot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const size = page.viewportSize();
  const file = path.join(ARTIFACTS, `${name}-${size.width}x${size.height}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
