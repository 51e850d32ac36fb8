// hearth's host page (/ui/): the services of the daemon, and for the chosen one its view (in a
// sandboxed frame, docs/view-host.md), its data, a form per endpoint and a log. Everything the
// daemon or a view sends is put in the page as text, never as HTML.
import { createLAVSClient } from './lavs-client.js';
import { FallbackPanel } from './fallback.js';
import { EndpointsPanel } from './endpoints.js';
import { WorkspacesPanel } from './workspaces.js';
import { AppsPanel } from './app-host.js';
import { RegistryPanel } from './registry.js';
import { VaultPanel } from './vault.js';
import { ConnectPanel } from './connect.js';
import { railList } from './kit.js';
import {
  ViewMount,
  onIgnoredMessage,
  dispatchAgentAction,
  dispatchSubscriptionMessage,
  sendHostContextToAll,
} from './view-host.js';

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = 'hearth.token';
const SERVICE_KEY = 'hearth.service';
const LOG_MAX = 500;
const HOST_CSS_VARIABLES = [
  '--hearth-bg', '--hearth-surface', '--hearth-fg', '--hearth-muted', '--hearth-border',
  '--hearth-accent', '--hearth-accent-fg', '--hearth-danger', '--hearth-ok', '--hearth-radius',
  '--hearth-font', '--hearth-mono', '--hearth-font-size',
];

const state = {
  client: null,
  services: [],
  selected: null,
  manifest: null,
  tab: 'view',
  mount: null,
  fallback: null,
  endpoints: null,
  viewStatus: 'none', // none | loading | ready | failed
  selectSeq: 0,
  counts: { ignored: 0, call: 0, push: 0 },
  everOpened: false,
  failedAttempts: 0,
  workspaces: null,
  apps: null,
  token: null,
  panels: null, // {registry, vault, connect}: the daemon's own panels
  panel: null, // the one shown, if any
  probeSeq: 0,
};

const PANEL_TITLES = { registry: 'Registry', vault: 'Vault', connect: 'Connect a client' };

// -- token --------------------------------------------------------------------------------------

function takeToken() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fromUrl = fragment.get('token');
  if (fromUrl) {
    sessionStorage.setItem(TOKEN_KEY, fromUrl);
    fragment.delete('token');
  }
  const service = fragment.get('service');
  if (service) sessionStorage.setItem(SERVICE_KEY, service);
  // The token never stays in the address bar or the history.
  history.replaceState(null, '', location.pathname + location.search);
  return sessionStorage.getItem(TOKEN_KEY);
}

// -- log ----------------------------------------------------------------------------------------

function log(kind, text, detail) {
  if (kind in state.counts) {
    state.counts[kind] += 1;
    $(`log-${kind === 'ignored' ? 'ignored' : kind}-count`).textContent = String(state.counts[kind]);
  }
  const list = $('log-list');
  const li = document.createElement('li');
  li.className = `log-${kind}`;
  li.dataset.kind = kind;
  const time = document.createElement('time');
  const now = new Date();
  time.dateTime = now.toISOString();
  time.textContent = now.toLocaleTimeString([], { hour12: false });
  const tag = document.createElement('span');
  tag.className = 'log-kind';
  tag.textContent = kind;
  const body = document.createElement('span');
  body.className = 'log-text';
  body.textContent = text;
  li.append(time, tag, body);
  if (detail !== undefined) {
    const pre = document.createElement('pre');
    pre.className = 'log-detail';
    pre.textContent = typeof detail === 'string' ? detail : JSON.stringify(detail);
    li.append(pre);
  }
  list.prepend(li);
  while (list.children.length > LOG_MAX) list.lastElementChild.remove();
  if ((kind === 'ignored' || kind === 'error') && state.tab !== 'log') {
    // Unread problems, shown on the Log tab until it is opened.
    const badge = $('log-badge');
    badge.dataset.unread = String((Number(badge.dataset.unread) || 0) + 1);
    badge.textContent = badge.dataset.unread;
    badge.hidden = false;
  }
}

// -- connection ---------------------------------------------------------------------------------

function rpc(method, params) {
  const started = performance.now();
  const what = params && params.endpoint ? `${method} ${params.endpoint}` : method;
  return state.client.rpc(method, params).then(
    (result) => {
      if (method !== 'view/mounts') log('call', `${what} ✓ ${Math.round(performance.now() - started)} ms`);
      return result;
    },
    (err) => {
      log('call', `${what} ✗ ${err.code} ${err.message}`, err.data);
      throw err;
    },
  );
}

function showStatus({ status, detail }) {
  const el = $('conn-status');
  el.dataset.status = status;
  const text = {
    connecting: 'connecting…',
    open: 'connected',
    reconnecting: 'reconnecting…',
    offline: detail && detail.retryInMs ? `offline · retry in ${Math.max(1, Math.round(detail.retryInMs / 1000))} s` : 'offline',
    closed: 'closed',
  }[status] || status;
  el.querySelector('.status-text').textContent = text;
  el.title = status === 'offline' ? 'Not connected to the daemon; click to retry now' : 'Connection to the daemon';
}

function connect(token) {
  const client = createLAVSClient({ url: location.origin, token, transport: 'ws' });
  state.client = client;
  client.onStatus((s) => {
    showStatus(s);
    if (s.status === 'open') state.failedAttempts = 0;
    if (s.status === 'offline') {
      state.failedAttempts += 1;
      explainOffline(token);
    }
  });
  client.on('$open', () => {
    state.probeSeq += 1; // a probe still under way says nothing any more
    document.body.dataset.offline = '';
    state.everOpened = true;
    state.failedAttempts = 0;
    notice(null);
    loadServices({ reconnected: true });
  });
  client.on('$close', () => {
    // The daemon ended this connection's mounts with it.
    if (state.mount) {
      state.mount.close({ tellDaemon: false });
      state.mount = null;
      setViewNotice('The connection to the daemon was lost; the view comes back when it does.');
    }
  });
  client.on('view/agentAction', (action) => {
    log('push', `agent action #${action.seq} ${action.service}.${action.endpoint} by ${actorText(action.actor)}`, action.input);
    dispatchAgentAction(action);
    if (action.service === state.selected && state.fallback) state.fallback.scheduleRefresh();
  });
  client.on('lavs/data', (params) => {
    const viewSub = dispatchSubscriptionMessage('lavs/data', params);
    log('push', `data for ${viewSub ? 'the view’s ' : ''}subscription ${params.subscriptionId}`);
  });
  client.on('lavs/subscriptionEnded', (params) => {
    dispatchSubscriptionMessage('lavs/subscriptionEnded', params);
    log('push', `subscription ${params.subscriptionId} ended: ${params.reason}`, params.error);
  });
  client.on('lavs/servicesChanged', (params) => {
    log('push', `services changed: +${(params.added || []).join(', ') || '–'} ~${(params.changed || []).join(', ') || '–'} −${(params.removed || []).join(', ') || '–'}`);
    loadServices({ changed: params.changed || [], removed: params.removed || [] });
  });
  state.workspaces = new WorkspacesPanel({
    rpc,
    client,
    list: $('workspace-list'),
    section: $('workspace'),
    log,
    onList: () => renderServiceList(),
    onSelect: () => {
      // A workspace takes the main area: the service or app shown before is closed.
      if (state.apps && state.apps.selected) state.apps.hide();
      hidePanel();
      closeService();
      state.selected = null;
      renderServiceList();
      $('service').hidden = true;
      $('empty').hidden = true;
    },
  });
  state.apps = new AppsPanel({
    rpc,
    client,
    list: $('app-list'),
    section: $('app'),
    log,
    onList: () => renderServiceList(),
    onSelect: () => {
      // An app page takes the main area: the service or workspace shown before is closed.
      if (state.workspaces && state.workspaces.selected) state.workspaces.hide();
      hidePanel();
      closeService();
      state.selected = null;
      renderServiceList();
      $('service').hidden = true;
      $('empty').hidden = true;
    },
  });
  state.panels = {
    registry: new RegistryPanel({ rpc, section: $('registry'), openVault: (scope, name) => openVaultFor(scope, name) }),
    vault: new VaultPanel({ rpc, section: $('vault'), domains: () => state.panels.registry.domains(), onChange: () => renderDaemonList() }),
    connect: new ConnectPanel({ section: $('connect'), token }),
  };
  renderDaemonList();
  $('conn-status').addEventListener('click', () => client.socket.retryNow());
  client.socket.connect();
}

function actorText(actor) {
  if (!actor) return 'someone';
  if (actor.type === 'view') return `view ${actor.mountId}`;
  return actor.client ? `${actor.type} (${actor.client})` : actor.type;
}

function notice(text, kind = 'info') {
  const el = $('page-notice');
  el.hidden = !text;
  el.className = `banner ${kind}`;
  el.textContent = text || '';
}

/// Why the WebSocket failed, asked of the daemon over HTTP with the same token: no answer at all
/// (connection refused) is a daemon that is not running; 401 is a token it does not accept (it
/// was restarted with a new one); anything else is another problem, shown as it is.
async function explainOffline(token) {
  const seq = ++state.probeSeq;
  let reason;
  let status = 0;
  try {
    const r = await fetch('/rpc', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'lavs/services', params: {} }),
      cache: 'no-store',
    });
    status = r.status;
    reason = r.status === 401 ? 'auth' : r.ok ? 'other' : 'http';
  } catch (e) {
    reason = 'down';
  }
  if (seq !== state.probeSeq || (state.client && state.client.socket.status === 'open')) return;
  document.body.dataset.offline = reason;
  if (reason === 'down') {
    notice(`The daemon is not running (nothing answers at ${location.host}). Start it with \`hearth serve SERVICES... --port ${location.port || 80}\`, or run \`hearth open\` to find a running one. This page keeps trying to reconnect.`, 'error');
  } else if (reason === 'auth') {
    notice('The daemon refused this page’s token: it was restarted with a new one or the token was rotated. Reopen the link that `hearth open` prints (or the one `hearth serve` printed when it started).', 'error');
  } else if (state.failedAttempts >= 2) {
    notice(`The daemon answers (HTTP ${status}) but refuses this page’s WebSocket. This page keeps trying; the Log tab has the details of each call.`, 'error');
  }
}

// -- the daemon's panels (registry, vault, connect) ----------------------------------------------

function renderDaemonList() {
  const panels = Object.entries(state.panels || {});
  railList($('daemon-list'), panels.map(([name, panel]) => ({
    key: name,
    data: { panel: name },
    name: PANEL_TITLES[name],
    meta: panel.available === false ? 'not enabled' : panel.available === null ? '…' : panel.summary(),
    absent: panel.available === false || (panel.empty && panel.empty()),
    current: state.panel === name,
    onClick: () => selectPanel(name),
  })));
}

function hidePanel() {
  if (!state.panel) return;
  $(state.panel).hidden = true;
  state.panel = null;
  renderDaemonList();
  renderServiceList();
}

async function selectPanel(name) {
  if (state.workspaces && state.workspaces.selected) state.workspaces.hide();
  if (state.apps && state.apps.selected) state.apps.hide();
  closeService();
  state.selected = null;
  $('service').hidden = true;
  $('empty').hidden = true;
  if (state.panel && state.panel !== name) $(state.panel).hidden = true;
  state.panel = name;
  $(name).hidden = false;
  renderServiceList();
  renderDaemonList();
  await state.panels[name].show();
  renderDaemonList();
}

async function openVaultFor(scope, name) {
  await selectPanel('vault');
  $('vault-scope').value = scope;
  $('vault-name').value = name;
  $('vault-value').focus();
}

async function loadDaemonPanels() {
  await Promise.all([state.panels.registry.load(), state.panels.vault.load()]);
  renderDaemonList();
  renderServiceList();
}

// -- services -----------------------------------------------------------------------------------

async function loadServices({ changed = [], removed = [], reconnected = false } = {}) {
  let list;
  try {
    list = (await rpc('lavs/services', {})).services || [];
  } catch (e) {
    notice(`Could not list the services: ${e.message}`, 'error');
    return;
  }
  state.services = list.slice().sort((a, b) => a.name.localeCompare(b.name));
  renderServiceList();
  const workspaces = await state.workspaces.load();
  await state.apps.load();
  await loadDaemonPanels();
  // A workspace, an app page or a panel is shown: the services stay listed.
  if (state.panel) {
    if (reconnected) await state.panels[state.panel].show();
    return;
  }
  if (state.workspaces.selected || state.apps.selected) return;
  if (state.services.length === 0 && workspaces.length > 0) {
    await state.workspaces.select(workspaces[0].workspaceId);
    return;
  }
  $('empty').hidden = state.services.length > 0;
  $('service').hidden = state.services.length === 0;
  const names = new Set(state.services.map((s) => s.name));
  let want = state.selected;
  if (!want || !names.has(want) || removed.includes(want)) {
    const remembered = sessionStorage.getItem(SERVICE_KEY);
    want = remembered && names.has(remembered) ? remembered : state.services[0] && state.services[0].name;
  }
  if (!want) {
    closeService();
    state.selected = null;
    return;
  }
  if (want !== state.selected || changed.includes(want) || reconnected || !state.manifest) {
    await selectService(want, { keepTab: want === state.selected });
  }
}

function renderServiceList() {
  railList($('service-list'), state.services.map((s) => ({
    key: s.name,
    data: { service: s.name },
    name: s.name,
    meta: `v${s.version} · ${(s.endpoints || []).length} endpoints`,
    badge: s.hasView ? 'view' : null,
    current: s.name === state.selected,
    onClick: () => selectService(s.name),
  })));
  const options = [];
  for (const s of state.services) {
    options.push([s.name + (s.hasView ? ' ▣' : ''), s.name, s.name === state.selected]);
  }
  // On narrow screens the select stands for the rail: the workspaces are in it too.
  for (const w of state.workspaces ? state.workspaces.workspaces : []) {
    options.push([`${w.workspaceId} (workspace)`, `workspace:${w.workspaceId}`, state.workspaces.selected === w.workspaceId]);
  }
  for (const a of state.apps ? state.apps.apps : []) {
    for (const e of a.entries) {
      const key = `${a.appId}/${e.key}`;
      options.push([`${e.title || e.key} (${a.displayName})`, `app:${key}`, state.apps.selected === key]);
    }
  }
  for (const name of Object.keys(state.panels || {})) {
    options.push([`${PANEL_TITLES[name]} (daemon)`, `panel:${name}`, state.panel === name]);
  }
  // Like the rail's buttons, an open select is rebuilt only when its choices changed.
  const select = $('service-select');
  const same = select.options.length === options.length &&
    options.every(([label, value], i) => select.options[i].text === label && select.options[i].value === value);
  if (!same) {
    select.textContent = '';
    for (const [label, value] of options) select.append(new Option(label, value));
  }
  options.forEach(([, , selected], i) => {
    select.options[i].selected = selected;
  });
}

function closeService() {
  if (state.mount) state.mount.close();
  state.mount = null;
  if (state.fallback) state.fallback.dispose();
  state.fallback = null;
  if (state.endpoints) state.endpoints.dispose();
  state.endpoints = null;
}

async function selectService(name, { keepTab = false } = {}) {
  const seq = ++state.selectSeq;
  hidePanel();
  if (state.workspaces && state.workspaces.selected) state.workspaces.hide();
  if (state.apps && state.apps.selected) state.apps.hide();
  $('service').hidden = false;
  closeService();
  state.viewStatus = 'none';
  document.body.dataset.view = 'none';
  state.selected = name;
  sessionStorage.setItem(SERVICE_KEY, name);
  renderServiceList();
  const info = state.services.find((s) => s.name === name) || { name };
  $('service-title').textContent = info.name;
  $('service-version').textContent = info.version ? `v${info.version}` : '';
  $('service-desc').textContent = info.description || '';
  $('view-container').textContent = '';
  $('data-container').textContent = '';
  $('endpoints-container').textContent = '';
  setViewNotice(null);
  setDataNotice(null);
  $('tab-view').hidden = !info.hasView;
  let manifest;
  try {
    manifest = await rpc('lavs/manifest', { service: name });
  } catch (e) {
    if (seq !== state.selectSeq) return;
    notice(`Could not read the manifest of ${name}: ${e.message}`, 'error');
    return;
  }
  if (seq !== state.selectSeq) return;
  state.manifest = manifest;
  state.endpoints = new EndpointsPanel({
    container: $('endpoints-container'),
    manifest,
    run: async (endpoint, input) => {
      const params = { service: name, endpoint };
      if (input !== undefined) params.input = input;
      const result = await rpc('lavs/call', params);
      if (state.fallback && state.selected === name) state.fallback.scheduleRefresh();
      return result;
    },
    subscribe: (endpoint, input, onItem, onError) =>
      state.client.subscribe(endpoint, onItem, { service: name, input, onError, onEnd: (p) => p.error && onError(p.error) }),
  });
  const tab = keepTab && (state.tab !== 'view' || info.hasView) ? state.tab : info.hasView ? 'view' : 'data';
  showTab(tab);
  if (info.hasView) mountView(name, seq);
}

// -- tabs ---------------------------------------------------------------------------------------

function showTab(tab) {
  state.tab = tab;
  for (const b of document.querySelectorAll('.tabs [role=tab]')) {
    const on = b.dataset.tab === tab;
    b.setAttribute('aria-selected', String(on));
    b.tabIndex = on ? 0 : -1;
    $(b.getAttribute('aria-controls')).hidden = !on;
  }
  if (tab === 'data') ensureFallback();
  if (tab === 'log') {
    const badge = $('log-badge');
    badge.hidden = true;
    badge.dataset.unread = '0';
  }
}

function ensureFallback() {
  if (state.fallback || !state.manifest) return;
  const service = state.selected;
  state.fallback = new FallbackPanel({
    container: $('data-container'),
    manifest: state.manifest,
    call: (endpoint) => rpc('lavs/call', { service, endpoint }),
    subscribe: (endpoint, cb) => state.client.subscribe(endpoint, cb, { service }),
    log: (level, text) => log(level === 'error' ? 'error' : 'info', text),
  });
}

function setViewNotice(text) {
  const el = $('view-notice');
  el.hidden = !text;
  el.textContent = text || '';
}

function setDataNotice(text) {
  const el = $('data-notice');
  el.hidden = !text;
  el.textContent = text || '';
}

// -- the view -----------------------------------------------------------------------------------

function hostContext() {
  const cs = getComputedStyle(document.documentElement);
  const cssVariables = {};
  for (const name of HOST_CSS_VARIABLES) {
    const v = cs.getPropertyValue(name).trim();
    if (v) cssVariables[name] = v;
  }
  return { theme: matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light', cssVariables };
}

function mountView(service, seq) {
  state.viewStatus = 'loading';
  document.body.dataset.view = 'loading';
  const loading = document.createElement('p');
  loading.className = 'muted loading';
  loading.textContent = 'Loading the view…';
  $('view-container').append(loading);
  const mount = new ViewMount({
    rpc,
    service,
    container: $('view-container'),
    hostContext,
    events: {
      onReady: () => {
        state.viewStatus = 'ready';
        document.body.dataset.view = 'ready';
        log('info', `${service}: view ready`);
      },
      onFailed: (message) => {
        state.viewStatus = 'failed';
        document.body.dataset.view = 'failed';
        log('error', `${service}: the view failed: ${message}`);
        const text = `The view of ${service} could not be shown (${message}). Its data is shown instead.`;
        setViewNotice(text);
        setDataNotice(text);
        if (mount.frame) mount.frame.hidden = true;
        if (state.mount === mount && state.tab === 'view') showTab('data');
        else ensureFallback();
      },
      onLog: (level, text) => log(level === 'error' || level === 'warn' ? 'error' : 'view', text),
      onRemount: () => {
        if (state.mount !== mount) return;
        mount.close();
        state.mount = null;
        mountView(service, state.selectSeq);
      },
      onCall: () => {
        if (state.fallback && state.selected === service) state.fallback.scheduleRefresh();
      },
    },
  });
  state.mount = mount;
  mount.open().catch((e) => {
    if (state.mount !== mount || seq !== state.selectSeq) return;
    mount.fail(e.data && e.data.reason === 'no view component' ? 'the service has no view component' : `${e.code} ${e.message}`);
  });
}

// -- start --------------------------------------------------------------------------------------

function start() {
  onIgnoredMessage(({ reason, origin, data, service }) => {
    log('ignored', `ignored a message from ${origin || 'unknown origin'}${service ? ` at the ${service} view` : ''}: ${reason}`, data);
  });
  for (const b of document.querySelectorAll('.tabs [role=tab]')) {
    b.addEventListener('click', () => showTab(b.dataset.tab));
    b.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
      const tabs = [...document.querySelectorAll('.tabs [role=tab]')].filter((t) => !t.hidden);
      const i = tabs.indexOf(b) + (e.key === 'ArrowRight' ? 1 : -1);
      const next = tabs[(i + tabs.length) % tabs.length];
      next.focus();
      showTab(next.dataset.tab);
    });
  }
  $('service-select').addEventListener('change', (e) => {
    const value = e.target.value;
    if (value.startsWith('workspace:')) state.workspaces.select(value.slice('workspace:'.length));
    else if (value.startsWith('panel:')) selectPanel(value.slice('panel:'.length));
    else if (value.startsWith('app:')) {
      const [appId, entryKey] = value.slice('app:'.length).split('/');
      state.apps.select(appId, entryKey);
    } else selectService(value);
  });
  $('log-clear').addEventListener('click', () => {
    $('log-list').textContent = '';
  });
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => sendHostContextToAll());

  // A new link opened in this tab (a restarted daemon's) changes only the fragment: start again.
  window.addEventListener('hashchange', () => {
    if (new URLSearchParams(location.hash.slice(1)).get('token')) {
      takeToken();
      location.reload();
    }
  });
  const token = takeToken();
  if (!token) {
    document.body.dataset.state = 'no-token';
    $('no-token').hidden = false;
    $('service').hidden = true;
    showStatus({ status: 'closed' });
    $('conn-status').querySelector('.status-text').textContent = 'no token';
    return;
  }
  connect(token);
}

start();
