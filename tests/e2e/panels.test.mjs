// The page a person acts from: a workspace script made as a dry run, applied, its diff in the
// history and reverted; the registry searched, a capability's needs shown and run after a
// confirmation that shows the request (against the example weather service on a local port);
// vault variables set and deleted without their values ever reaching the page; the client
// configurations of this daemon; the daemon's panels of a daemon without a registry; and the
// banner when the daemon stops (not running) or comes back with another token (refused).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  REPO, tempDir, copyService, startDaemon, launchBrowser, openPage, screenshot, waitFor, freePort, WIDE, NARROW,
} from './harness.mjs';

const HEARTH = process.env.HEARTH_BIN || path.join(REPO, 'build', 'release', 'bin', 'hearth');
const SECRET = 'demo-weather-key';
const OTHER_SECRET = 'zz-never-shown-0451';

let daemon;
let browser;
let servers;
let weatherPort;
const work = tempDir();

before(async () => {
  const ports = [await freePort(), await freePort(), await freePort()];
  weatherPort = ports[0];
  servers = spawn('/usr/bin/python3', [path.join(REPO, 'examples/registry/servers/example_services.py'), '--ports', ports.join(',')],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise((resolve) => servers.stderr.once('data', resolve)); // it says it listens
  const registry = path.join(work, 'registry');
  fs.mkdirSync(registry);
  const weather = path.join(registry, 'weather.yaml');
  fs.writeFileSync(weather, fs.readFileSync(path.join(REPO, 'examples/registry/weather.yaml'), 'utf8').replaceAll('localhost:8741', `localhost:${weatherPort}`));
  execFileSync(HEARTH, ['registry', 'seal', weather], { stdio: 'ignore' });
  const example = copyService('workspace-search', work);
  daemon = await startDaemon({
    services: [example],
    args: ['--workspace', path.join(example, 'workspace'), '--registry', registry, '--local-domain', `localhost:${weatherPort}`],
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
  servers?.kill();
});

async function searchPattern() {
  const r = await daemon.post('workspace/state', { workspaceId: 'product-search', name: 'search_box_state' });
  return r.result.value.search_pattern;
}

async function openPanel(page, name) {
  if (page.viewportSize().width < 760) await page.selectOption('#service-select', `panel:${name}`);
  else await page.click(`#daemon-list [data-panel=${name}]`);
  await page.waitForSelector(`#${name}:not([hidden]) .service-head`);
}

test('a workspace script: dry run, apply, the diff in the history, revert', async () => {
  const page = await openPage(browser, daemon);
  await page.click('#workspace-list [data-workspace="product-search"]');
  await page.waitForSelector('#workspace-title:text-is("product-search")');
  const before = await searchPattern();
  assert.equal(await page.isDisabled('#workspace-apply'), true, 'no apply before a dry run');

  await page.fill('#workspace-script', "search_box_state.search_pattern = 'tea'; return 'ok';");
  await page.click('#workspace-dry-run');
  await page.waitForSelector('#workspace-run-result[data-outcome=dry-run]');
  const preview = await page.textContent('#workspace-run-result');
  assert.match(preview, /Would change 1 value/);
  assert.match(preview, /search_box_state\.search_pattern/);
  assert.match(preview, /− ""/);
  assert.match(preview, /\+ "tea"/);
  assert.match(preview, /would run → product-catalog\/searchProducts/);
  assert.equal(await searchPattern(), before, 'a dry run commits nothing');
  await screenshot(page, 'panels-workspace-dry-run');

  // Editing the script takes the dry run's approval away.
  await page.type('#workspace-script', ' ');
  assert.equal(await page.isDisabled('#workspace-apply'), true);
  await page.click('#workspace-dry-run');
  await page.waitForSelector('#workspace-apply:not([disabled])');
  await page.click('#workspace-apply');
  await page.waitForSelector('#workspace-run-result[data-outcome=committed]');
  assert.equal(await searchPattern(), 'tea');
  const version = Number((await page.textContent('#workspace-run-result')).match(/now v(\d+)/)[1]);

  const entry = `#workspace-history li[data-version="${version}"]`;
  await page.waitForSelector(entry);
  await page.click(`${entry} details summary`);
  assert.match(await page.textContent(`${entry} .ws-diff`), /search_box_state\.search_pattern− ""\+ "tea"/);
  await page.click(`${entry} [data-action=revert]`);
  await page.waitForSelector(`${entry} [data-confirm=revert]`);
  assert.match(await page.textContent(`${entry} [data-confirm=revert]`), new RegExp(`Undo the change that made v${version}`));
  for (const viewport of [WIDE, NARROW]) {
    await page.setViewportSize(viewport);
    await screenshot(page, 'panels-workspace-revert');
  }
  await page.setViewportSize(WIDE);
  assert.equal(await searchPattern(), 'tea', 'nothing is reverted before the confirmation');
  await page.click(`${entry} [data-action=confirm-revert]`);
  await waitFor(async () => (await searchPattern()) === before, { what: 'the reverted value' });
  await waitFor(async () => (await page.textContent('#workspace-history')).includes(`reverts v${version}`), { what: 'the revert in the history' });
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('a script that breaks a state’s schema shows why in the dry run, and cannot be applied', async () => {
  const page = await openPage(browser, daemon, { colorScheme: 'dark' });
  await page.click('#workspace-list [data-workspace="product-search"]');
  await page.fill('#workspace-script', 'filter_state.maxPrice = -1;');
  await page.click('#workspace-dry-run');
  await page.waitForSelector('#workspace-run-result[data-outcome=error], #workspace-run-result[data-outcome=failed]');
  assert.match(await page.textContent('#workspace-run-result'), /minimum/);
  assert.equal(await page.isDisabled('#workspace-apply'), true);
  await page.fill('#workspace-script', "search_box_state.search_pattern = 'coffee';");
  await page.click('#workspace-dry-run');
  await page.waitForSelector('#workspace-run-result[data-outcome=dry-run]');
  await screenshot(page, 'panels-workspace-dark');
  await page.context().close();
});

test('the vault: set and delete variables; a value never reaches the page', async () => {
  const page = await openPage(browser, daemon);
  await openPanel(page, 'vault');
  assert.match(await page.textContent('#vault'), /The vault is empty/);
  for (const [name, value] of [['API_KEY', SECRET], ['SPARE', OTHER_SECRET]]) {
    await page.fill('#vault-scope', `localhost:${weatherPort}`);
    await page.fill('#vault-name', name);
    await page.fill('#vault-value', value);
    await page.click('#vault-set-submit');
    await page.waitForSelector(`#vault-entries tr[data-variable="localhost:${weatherPort}::${name}"]`);
    assert.equal(await page.inputValue('#vault-value'), '');
  }
  assert.match(await page.textContent('#vault-set-result'), /Stored localhost:\d+::SPARE/);
  // The rail counts them.
  assert.match(await page.textContent('#daemon-list [data-panel=vault]'), /2 variables/);
  await screenshot(page, 'panels-vault');

  const spare = `#vault-entries tr[data-variable="localhost:${weatherPort}::SPARE"]`;
  await page.click(`${spare} [data-action=delete]`);
  await page.waitForSelector(`${spare} [data-confirm=delete]`);
  assert.match(await page.textContent(`${spare} [data-confirm=delete]`), /Delete localhost:\d+::SPARE\?/);
  await page.click(`${spare} [data-action=cancel]`);
  await page.waitForSelector(`${spare} [data-action=delete]`);
  await page.click(`${spare} [data-action=delete]`);
  await page.click(`${spare} [data-action=confirm-delete]`);
  await page.waitForSelector(spare, { state: 'detached' });
  const list = await daemon.post('vault/list', {});
  assert.deepEqual(list.result.entries.map((e) => e.name), ['API_KEY']);

  // A trust grant, listed and revoked.
  await page.fill('#vault-trust-domain', `localhost:${weatherPort}`);
  await page.fill('#vault-trust-names', 'HOME_CITY');
  await page.click('#vault-trust button[type=submit]');
  await page.waitForSelector(`#vault-grants tr[data-grant="localhost:${weatherPort} HOME_CITY"]`);
  await page.click('#vault-grants [data-action=revoke]');
  await page.waitForSelector('#vault-grants tr[data-grant]', { state: 'detached' });

  const html = await page.content();
  assert.ok(!html.includes(SECRET) && !html.includes(OTHER_SECRET), 'no vault value in the page');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('the registry: search, a capability’s needs, and a run confirmed after seeing the request', async () => {
  await daemon.post('vault/set', { scope: `localhost:${weatherPort}`, name: 'API_KEY', value: SECRET });
  const page = await openPage(browser, daemon);
  await openPanel(page, 'registry');
  assert.match(await page.textContent('#registry-results'), /All 1 service/);
  await page.fill('#registry-query', 'weather forecast for a date');
  await page.click('#registry-search button[type=submit]');
  await page.waitForSelector('#registry-results :text("match")');
  await page.click('#registry-results [data-capability="Forecast Weather"]');
  await page.waitForSelector('#registry-capability-title:text-is("Forecast Weather")');
  const needs = await page.textContent('#registry-variables');
  assert.match(needs, new RegExp(`localhost:${weatherPort}::API_KEY\\s*in the vault`));
  assert.match(await page.textContent('#registry-variables tr[data-variable=DATE]'), /this call/);

  // A value the definition refuses is an error of the review, nothing is sent.
  await page.fill('#registry-var-DATE', 'tomorrow');
  await page.click('#registry-review');
  await page.waitForSelector('#registry-run-result .banner.error');
  assert.match(await page.textContent('#registry-run-result'), /DATE/);

  await page.fill('#registry-var-DATE', '2026-12-01');
  await page.fill('#registry-var-LAT', '47.6');
  await page.click('#registry-review');
  await page.waitForSelector('[data-confirm=execute]');
  const request = await page.textContent('#registry-request');
  assert.match(request, new RegExp(`GET http://localhost:${weatherPort}/v1/forecast\\?date=2026-12-01&lat=47.6`));
  assert.match(request, /Authorization: Bearer \[redacted:localhost:\d+::API_KEY\]/);
  for (const viewport of [WIDE, NARROW]) {
    await page.setViewportSize(viewport);
    await screenshot(page, 'panels-registry-confirm');
  }
  await page.setViewportSize(WIDE);
  await page.click('[data-action=confirm-execute]');
  await page.waitForSelector('#registry-response');
  assert.match(await page.textContent('#registry-run-result'), /OK · HTTP 200/);
  assert.match(await page.textContent('#registry-response'), /"date": "2026-12-01"/);
  await screenshot(page, 'panels-registry-result');
  assert.ok(!(await page.content()).includes(SECRET), 'the vault value never reaches the page');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('a capability whose vault variable is missing says so, and leads to the vault', async () => {
  await daemon.post('vault/delete', { variable: `localhost:${weatherPort}::API_KEY` });
  const page = await openPage(browser, daemon, { colorScheme: 'dark' });
  await openPanel(page, 'registry');
  await page.click('#registry-results [data-capability="Forecast Weather"]');
  await page.waitForSelector('#registry-variables tr[data-variable=API_KEY] .vault-missing');
  await page.fill('#registry-var-DATE', '2026-12-01');
  await page.click('#registry-review');
  await page.waitForSelector('#registry-run-result .needs-input');
  assert.match(await page.textContent('#registry-run-result'), /API_KEY is not in the vault/);
  await screenshot(page, 'panels-registry-needs-input-dark');
  await page.click('#registry-variables [data-action=set-in-vault]');
  await page.waitForSelector('#vault:not([hidden]) #vault-set');
  assert.equal(await page.inputValue('#vault-scope'), `localhost:${weatherPort}`);
  assert.equal(await page.inputValue('#vault-name'), 'API_KEY');
  await screenshot(page, 'panels-vault-dark');
  await page.context().close();
});

test('connect a client: this daemon’s MCP configurations, the token masked until shown', async () => {
  const page = await openPage(browser, daemon);
  await openPanel(page, 'connect');
  const text = await page.textContent('#connect');
  assert.ok(text.includes(`http://127.0.0.1:${daemon.port}/mcp`));
  assert.match(text, /npx @modelcontextprotocol\/inspector --cli http:\/\/127\.0\.0\.1:\d+\/mcp --transport http --method tools\/list --header "Authorization: Bearer ••/);
  assert.doesNotMatch(text, /inspector-cli/);
  assert.match(text, /"args": \[\s*"mcp",\s*"serve"/);
  assert.ok(!(await page.content()).includes(daemon.token), 'the token is masked');
  await screenshot(page, 'panels-connect');

  await page.click('#connect [data-client=vscode] [data-action=copy]');
  await page.waitForSelector('#connect [data-client=vscode] [data-copied=true]');

  // The VS Code configuration, once the token is shown, reaches the daemon's MCP endpoint.
  await page.click('#connect-reveal');
  const shown = JSON.parse(await page.textContent('#connect [data-client=vscode] pre'));
  const server = shown.servers.hearth;
  assert.equal(server.type, 'http');
  const r = await fetch(server.url, {
    method: 'POST',
    headers: { ...server.headers, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } }),
  });
  assert.equal(r.status, 200);
  assert.match(await r.text(), /"protocolVersion"/);
  assert.ok((await page.textContent('#connect')).includes(`Bearer ${daemon.token}`));
  await page.setViewportSize(NARROW);
  await screenshot(page, 'panels-connect');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('a daemon without a registry lists its panels and says how to add one', async () => {
  const small = await startDaemon({ services: [copyService('notes', tempDir())] });
  try {
    const page = await openPage(browser, small);
    await waitFor(async () => /no web services/.test(await page.textContent('#daemon-list [data-panel=registry]')), { what: 'an empty registry' });
    await openPanel(page, 'registry');
    assert.match(await page.textContent('#registry'), /No web services.*--registry DIR/s);
    assert.equal(await page.$('#registry-search'), null);
    await screenshot(page, 'panels-registry-absent');
    // The vault is the daemon's own: there, and empty.
    await openPanel(page, 'vault');
    assert.match(await page.textContent('#vault'), /The vault is empty/);
    // Choosing a service hides the panel.
    await page.click('#service-list [data-service="simple-notes"]');
    await page.waitForSelector('#service-title:text-is("simple-notes")');
    assert.equal(await page.isHidden('#vault'), true);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  } finally {
    await small.stop();
  }
});

test('the banner: the daemon not running, then back with another token', async () => {
  const page = await openPage(browser, daemon);
  const port = daemon.port;
  await daemon.stop();
  await page.waitForSelector('body[data-offline=down]', { timeout: 20000 });
  const down = await page.textContent('#page-notice');
  assert.match(down, /The daemon is not running/);
  assert.match(down, /hearth serve/);
  assert.match(down, /keeps trying/);
  await screenshot(page, 'panels-offline');
  // A daemon on the same port with another state dir has another token: refused, not "down".
  daemon = await startDaemon({ services: daemon.services, port });
  await page.waitForSelector('body[data-offline=auth]', { timeout: 20000 });
  const refused = await page.textContent('#page-notice');
  assert.match(refused, /refused this page’s token/);
  assert.match(refused, /hearth open/);
  await screenshot(page, 'panels-offline-token');
  await page.goto(daemon.pageUrl);
  await page.waitForSelector('#conn-status[data-status=open]');
  assert.equal(await page.isHidden('#page-notice'), true);
  await page.context().close();
});
