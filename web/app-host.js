// Agent App UIs in the host page (docs/app-server.md, "Host Bridge v1"): the enabled apps' page
// entries listed in the rail; the chosen one mounted in a sandboxed frame (app/ui/open), spoken
// to with Host Bridge v1 messages. The page checks every message (the frame's window, the opaque
// origin "null", protocol and version, the mount's app) and ignores the rest (counted in the Log
// tab). capability:invoke goes to the daemon as app/ui/invoke, bound to the mount's app;
// lime.agent calls become App Server requests (agentSession/*) on this page's connection, and
// the task's events reach the frame as host:event. The frame never sees the daemon, its
// transport or the token.
import { addFrameOwner, reportIgnored } from './view-host.js';
import { el, railList } from './kit.js';

const PROTOCOL = 'lime.agentApp.bridge';
const VERSION = 1;
const WORKSPACE = 'default';
// The theme an app page gets: the host's own variables, and short names apps use.
const CSS_VARIABLES = {
  '--bg': '--hearth-surface', '--surface': '--hearth-bg', '--text': '--hearth-fg', '--muted': '--hearth-muted',
  '--border': '--hearth-border', '--accent': '--hearth-accent', '--accent-fg': '--hearth-accent-fg',
  '--danger': '--hearth-danger', '--ok': '--hearth-ok', '--radius': '--hearth-radius', '--font': '--hearth-font',
};

function themeMode() {
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

function cssVariables() {
  const cs = getComputedStyle(document.documentElement);
  const out = {};
  for (const [name, host] of Object.entries(CSS_VARIABLES)) {
    const v = cs.getPropertyValue(host).trim();
    if (v) {
      out[name] = v;
      out[host] = v;
    }
  }
  return out;
}

/** The page's App Server handshake: once per connection, before any agentSession/* request. */
class AppServerLink {
  constructor({ rpc, client }) {
    this.rpc = rpc;
    this.client = client;
    this.ready = null;
    client.on('$open', () => { this.ready = null; });
  }

  ensure() {
    if (!this.ready) {
      this.ready = this.rpc('initialize', { clientInfo: { name: 'hearth-view-host', version: '1' } })
        .then(() => { this.client.socket.notify('initialized', {}); })
        .catch((e) => { this.ready = null; throw e; });
    }
    return this.ready;
  }

  async request(method, params) {
    await this.ensure();
    return this.rpc(method, params);
  }
}

class AppMount {
  constructor({ rpc, link, container, entry, log }) {
    this.rpc = rpc;
    this.link = link;
    this.container = container;
    this.entry = entry;  // {appId, entryKey}
    this.log = log;
    this.opened = null;
    this.frame = null;
    this.sessionId = null;
    this.closed = false;
    this.removeOwner = null;
  }

  async open() {
    const opened = await this.rpc('app/ui/open', {
      appId: this.entry.appId, entryKey: this.entry.entryKey, workspaceId: WORKSPACE,
    });
    if (this.closed) {
      this.rpc('app/ui/close', { mountId: opened.mountId }).catch(() => {});
      return null;
    }
    this.opened = opened;
    const frame = document.createElement('iframe');
    frame.className = 'view-frame app-frame';
    frame.setAttribute('sandbox', 'allow-scripts allow-forms');
    frame.setAttribute('allow', '');
    frame.setAttribute('referrerpolicy', 'no-referrer');
    frame.title = `${opened.displayName}: ${opened.title}`;
    frame.dataset.app = opened.appId;
    frame.dataset.entry = opened.entryKey;
    frame.src = opened.url;
    this.frame = frame;
    this.removeOwner = addFrameOwner(this);
    this.container.append(frame);
    return opened;
  }

  snapshot() {
    const o = this.opened;
    return {
      appId: o.appId,
      entryKey: o.entryKey,
      route: o.route,
      runtimeOrigin: o.runtimeOrigin,
      themeMode: 'system',
      effectiveThemeMode: themeMode(),
      colorSchemeId: 'hearth',
      cssVariables: cssVariables(),
      locale: navigator.language || 'en',
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
      workspaceId: WORKSPACE,
      tenantId: null,
      workspace: { id: WORKSPACE, name: 'Default workspace' },
      capabilities: (o.capabilities || []).map((c) => ({
        capability: c.capability, status: c.status, ...(c.reason ? { reason: c.reason, stage: c.stage } : {}),
      })),
    };
  }

  post(type, extra = {}) {
    if (!this.frame || !this.frame.contentWindow) return;
    // An opaque origin cannot be named: '*', with nothing secret in the message.
    this.frame.contentWindow.postMessage({ protocol: PROTOCOL, version: VERSION, type, appId: this.opened.appId,
      entryKey: this.opened.entryKey, ...extra }, '*');
  }

  ignore(event, reason) {
    reportIgnored({ reason, origin: event.origin, data: event.data, service: `app ${this.entry.appId}` });
  }

  /** A message of this mount's frame (view-host.js checked event.source). */
  onMessage(event) {
    const m = event.data;
    if (this.closed || !this.opened) return this.ignore(event, 'the mount is closed');
    if (event.origin !== 'null') return this.ignore(event, `origin ${event.origin} is not the frame's runtime origin`);
    if (!m || typeof m !== 'object' || m.protocol !== PROTOCOL || m.version !== VERSION) {
      return this.ignore(event, 'not a Host Bridge v1 message');
    }
    if (m.appId !== undefined && m.appId !== this.opened.appId) {
      return this.ignore(event, `it names the app ${m.appId}, not ${this.opened.appId}`);
    }
    switch (m.type) {
      case 'app:ready':
        this.post('host:snapshot', { payload: this.snapshot() });
        this.log('info', `app ${this.opened.appId}: ready`);
        return undefined;
      case 'host:getSnapshot':
        this.post('host:response', { requestId: m.requestId, payload: this.snapshot() });
        return undefined;
      case 'host:toast':
        this.log('info', `app ${this.opened.appId}: ${String(m.payload && m.payload.message)}`);
        this.post('host:response', { requestId: m.requestId, payload: { shown: true } });
        return undefined;
      case 'host:navigate':
        this.post('host:response', { requestId: m.requestId, payload: { route: this.opened.route } });
        return undefined;
      case 'host:openExternal':
      case 'host:download':
        this.post('host:error', { requestId: m.requestId, payload: { code: -32001, message: `${m.type} is not offered by this host` } });
        return undefined;
      case 'capability:invoke':
        this.invoke(m);
        return undefined;
      default:
        return this.ignore(event, `unknown message type ${m.type}`);
    }
  }

  async invoke(m) {
    const p = m.payload && typeof m.payload === 'object' ? m.payload : {};
    const requestId = m.requestId;
    try {
      let result;
      if (p.capability === 'lime.agent') result = await this.agent(p.method, p.params || {});
      else {
        result = await this.rpc('app/ui/invoke', {
          mountId: this.opened.mountId, capability: p.capability, method: p.method, params: p.params || {}, workspaceId: WORKSPACE,
        });
      }
      this.post('host:response', { requestId, payload: result });
    } catch (e) {
      this.log('error', `app ${this.opened.appId}: ${p.capability}.${p.method} refused: ${e.message}`);
      this.post('host:error', { requestId, payload: { code: e.code, message: e.message, data: e.data ?? null } });
    }
  }

  /** lime.agent for the frame: its task session on the App Server, bound to this mount's app. */
  async agent(method, params) {
    const session = async () => {
      if (!this.sessionId) {
        const s = await this.link.request('agentSession/start', {
          appId: this.opened.appId, workspaceId: WORKSPACE, entryKey: this.opened.entryKey,
          businessObjectRef: params.businessObjectRef ?? null,
          idempotencyKey: `${this.opened.mountId}`,
        });
        this.sessionId = s.sessionId;
      }
      return this.sessionId;
    };
    switch (method) {
      case 'startTask': {
        const sessionId = await session();
        const turn = await this.link.request('agentSession/turn/start', {
          sessionId, workspaceId: WORKSPACE, input: params.input ?? '', outputSchema: params.outputSchema,
          attachments: params.attachments, idempotencyKey: params.idempotencyKey, capabilityId: params.capabilityId,
          queuePolicy: params.queuePolicy,
        });
        return { sessionId, turnId: turn.turnId, status: turn.status };
      }
      case 'respond':
        return this.link.request('agentSession/action/respond', {
          sessionId: await session(), workspaceId: WORKSPACE, actionId: params.actionId, decision: params.decision,
          updatedInput: params.updatedInput,
        });
      case 'cancel':
        return this.link.request('agentSession/turn/cancel', { sessionId: await session(), workspaceId: WORKSPACE, turnId: params.turnId });
      case 'read':
        return this.link.request('agentSession/read', { sessionId: await session(), workspaceId: WORKSPACE, afterSeq: params.afterSeq ?? 0 });
      default:
        throw Object.assign(new Error(`lime.agent has no method ${method}`), { code: -32601 });
    }
  }

  /** An agentSession/event of the daemon: to the frame whose session it is. */
  event(params) {
    if (!this.closed && params.sessionId === this.sessionId) this.post('host:event', { payload: params });
  }

  themeChanged() {
    if (this.opened) this.post('theme:update', { payload: { effectiveThemeMode: themeMode(), cssVariables: cssVariables() } });
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    if (this.removeOwner) this.removeOwner();
    if (this.frame) this.frame.remove();
    if (this.opened) this.rpc('app/ui/close', { mountId: this.opened.mountId }).catch(() => {});
  }
}

export class AppsPanel {
  /// rpc(method, params) -> Promise; onSelect(): the page hides what it showed before.
  constructor({ rpc, client, list, section, log, onSelect, onList }) {
    this.rpc = rpc;
    this.client = client;
    this.link = new AppServerLink({ rpc, client });
    this.listEl = list;
    this.section = section;
    this.log = log;
    this.onSelect = onSelect;
    this.onList = onList || (() => {});
    this.apps = [];
    this.selected = null;  // "appId/entryKey"
    this.mount = null;
    client.on('agentSession/event', (params) => {
      this.log('push', `task event #${params.seq} ${params.type}`, params.payload);
      if (this.mount) this.mount.event(params);
    });
    client.on('$close', () => {
      // The daemon ended this connection's app mounts with it.
      if (this.mount) {
        this.mount.close();
        this.mount = null;
      }
    });
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => this.mount && this.mount.themeChanged());
  }

  async load() {
    let apps = [];
    try {
      apps = (await this.rpc('app/ui/entries', {})).apps || [];
    } catch {
      apps = [];
    }
    this.apps = apps;
    this.renderList();
    if (this.selected) {
      const [appId, entryKey] = this.selected.split('/');
      if (apps.some((a) => a.appId === appId)) this.select(appId, entryKey);
      else this.hide();
    }
    return apps;
  }

  renderList() {
    this.onList();
    this.listEl.closest('[data-rail-section]').hidden = this.apps.length === 0;
    railList(this.listEl, this.apps.flatMap((app) => app.entries.map((entry) => ({
      key: `${app.appId}/${entry.key}`,
      data: { app: app.appId, entry: entry.key },
      name: entry.title || entry.key,
      meta: `${app.displayName}${app.dev ? ' · dev' : ''}`,
      current: this.selected === `${app.appId}/${entry.key}`,
      onClick: () => this.select(app.appId, entry.key),
    }))));
  }

  async select(appId, entryKey) {
    this.onSelect();
    if (this.mount) this.mount.close();
    this.selected = `${appId}/${entryKey}`;
    this.renderList();
    const app = this.apps.find((a) => a.appId === appId);
    const entry = app && app.entries.find((e) => e.key === entryKey);
    this.section.hidden = false;
    this.section.textContent = '';
    const head = el('header', 'service-head');
    const row = el('div', 'service-title-row');
    const title = el('h1', undefined, entry ? entry.title : entryKey);
    title.id = 'app-title';
    row.append(title, el('span', 'badge', app ? `${app.displayName} ${app.version}${app.dev ? ' · dev' : ''}` : appId));
    head.append(row, el('p', 'muted', 'An Agent App page: it reaches hearth only through the capability bridge, as its app.'));
    const container = el('div', 'view-container app-container');
    container.id = 'app-container';
    this.section.append(head, container);
    const mount = new AppMount({ rpc: this.rpc, link: this.link, container, entry: { appId, entryKey }, log: this.log });
    this.mount = mount;
    document.body.dataset.app = 'loading';
    try {
      await mount.open();
      document.body.dataset.app = 'mounted';
    } catch (e) {
      document.body.dataset.app = 'failed';
      const notice = el('div', 'banner warn', `The app page could not be opened: ${e.message}`);
      container.append(notice);
    }
  }

  hide() {
    if (this.mount) this.mount.close();
    this.mount = null;
    this.selected = null;
    this.section.hidden = true;
    this.section.textContent = '';
    delete document.body.dataset.app;
    this.renderList();
  }
}
