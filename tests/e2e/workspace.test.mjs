// The view host shows a virtual workspace's states live (docs/workspace.md): the workspace-search
// example served with its product-catalog service; a script run over JSON-RPC changes the page
// without a reload; write-only values never appear; the history lists the change.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  tempDir, copyService, startDaemon, launchBrowser, openPage, screenshot, waitFor, WIDE, NARROW,
} from './harness.mjs';

let daemon;
let browser;
const work = tempDir();

before(async () => {
  const example = copyService('workspace-search', work);
  daemon = await startDaemon({ services: [example], args: ['--workspace', path.join(example, 'workspace')] });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
});

test('a workspace is listed and its states are shown as the model sees them', async () => {
  const page = await openPage(browser, daemon);
  await page.click('#workspace-list [data-workspace="product-search"]');
  await page.waitForSelector('#workspace-title:text-is("product-search")');
  assert.equal(await page.isHidden('#service'), true);
  const states = await page.$$eval('#workspace [data-state]', (l) => l.map((e) => e.dataset.state));
  assert.deepEqual(states.sort(), ['categories', 'filter_state', 'recommendation', 'search_box_state', 'search_results']);
  const box = await page.textContent('#workspace [data-state=search_box_state]');
  assert.match(box, /search_pattern: string \(≤300\)/);
  assert.match(box, /product-catalog\/searchProducts/);
  assert.match(await page.textContent('#workspace [data-state=categories]'), /"coffee"/);
  assert.match(await page.textContent('#workspace [data-state=recommendation]'), /write-only/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('a change made elsewhere shows up live, with its history', async () => {
  const page = await openPage(browser, daemon);
  await page.click('#workspace-list [data-workspace="product-search"]');
  await page.waitForSelector('#workspace .badge.live');
  const r = await daemon.post('workspace/execute', {
    workspaceId: 'product-search',
    script: "search_box_state.search_pattern = 'tea'; filter_state.maxPrice = 4; recommendation = {productId: 10, reason: 'a calm secret'};",
  });
  assert.equal(r.result.committed, true, JSON.stringify(r));
  await waitFor(async () => (await page.textContent('#workspace [data-state=search_results]')).includes('Chamomile'),
    { what: 'the new results' });
  assert.match(await page.textContent('#workspace-version'), new RegExp(`v${r.result.version}`));
  const history = await page.textContent('#workspace-history');
  assert.match(history, /committed/);
  assert.match(history, /search_pattern = 'tea'/);
  assert.doesNotMatch(await page.textContent('#workspace [data-state=recommendation]'), /a calm secret/);
  // A failed script is listed too, with its reason.
  await daemon.post('workspace/execute', { workspaceId: 'product-search', script: 'filter_state.maxPrice = -1;' });
  await page.click('#workspace-list [data-workspace="product-search"]');
  await waitFor(async () => (await page.textContent('#workspace-history')).includes('minimum'), { what: 'the failure' });
  for (const viewport of [WIDE, NARROW]) {
    await page.setViewportSize(viewport);
    await screenshot(page, 'workspace');
  }
  // Choosing a service again hides the workspace.
  await page.setViewportSize(WIDE);
  await page.click('#service-list [data-service="product-catalog"]');
  await page.waitForSelector('#service-title:text-is("product-catalog")');
  assert.equal(await page.isHidden('#workspace'), true);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('a revert being confirmed and an open diff survive a change made elsewhere', async () => {
  const page = await openPage(browser, daemon);
  await page.click('#workspace-list [data-workspace="product-search"]');
  await page.waitForSelector('#workspace .badge.live');
  const first = await daemon.post('workspace/execute', { workspaceId: 'product-search', script: "search_box_state.search_pattern = 'coffee';" });
  assert.equal(first.result.committed, true, JSON.stringify(first));
  const entry = `#workspace-history [data-version="${first.result.version}"]`;
  await page.click(`${entry} .ws-entry-diff summary`);
  await page.click(`${entry} [data-action=revert]`);
  const yes = await page.waitForSelector(`${entry} [data-action=confirm-revert]`);
  // Another change arrives while the person reads the confirmation: the workspace is shown again.
  const second = await daemon.post('workspace/execute', { workspaceId: 'product-search', script: "recommendation = {productId: 3, reason: 'meanwhile'};" });
  assert.equal(second.result.committed, true, JSON.stringify(second));
  await page.waitForSelector(`#workspace-history [data-version="${second.result.version}"]`);
  assert.equal(await yes.evaluate((b) => b.isConnected), true, 'the confirmation is the same');
  assert.equal(await page.$eval(`${entry} .ws-entry-diff`, (d) => d.open), true, 'the open diff stays open');
  await yes.click();
  await waitFor(async () => (await page.textContent('#workspace-history')).includes(`reverts v${first.result.version}`),
    { what: 'the revert in the history' });
  assert.match(await page.textContent(entry), /Reverted: now v/);
  assert.equal(await page.isVisible(`${entry} [data-action=revert]`), true, 'the entry offers its revert again');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
