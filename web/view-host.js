// The page side of a view mount (docs/view-host.md): view/open, the sandboxed frame, the hello
// check, the MessagePort and the translation of the frame's requests into view/* methods bound to
// the mount. One window 'message' listener serves every mount; anything it does not accept is
// ignored and reported.
import { decodeFileResult } from './lavs-client.js';

const READY_TIMEOUT_MS = 5000;
// The daemon closes a WebSocket whose message is larger than --max-request-bytes (1 MiB by
// default), which would end every mount of the page: a view's larger request is refused here.
const MAX_REQUEST_CHARS = 1024 * 1024 - 4096;
const MAX_FRAME_HEIGHT = 20000;
const mounts = new Set();
let ignoredListener = () => {};
let listening = false;

function constantTimeEqual(a, b) {
  if (typeof a !== 'string' || typeof b !== 'string' || a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

function describe(data) {
  try {
    const text = JSON.stringify(data);
    return text && text.length > 200 ? `${text.slice(0, 200)}…` : String(text);
  } catch {
    return typeof data;
  }
}

// Frames of other kinds the page mounts (Agent App UIs, web/app-host.js): {frame, onMessage}.
const frameOwners = new Set();

/** Routes the messages of `owner.frame` to `owner.onMessage(event)`; returns the removal. */
export function addFrameOwner(owner) {
  frameOwners.add(owner);
  if (!listening) {
    window.addEventListener('message', onWindowMessage);
    listening = true;
  }
  return () => frameOwners.delete(owner);
}

/** Reports a message a frame owner did not accept (the Log tab counts them). */
export function reportIgnored(detail) {
  ignoredListener({ ...detail, data: describe(detail.data) });
}

function onWindowMessage(event) {
  for (const m of mounts) {
    if (m.frame && event.source === m.frame.contentWindow) {
      m.onHello(event);
      return;
    }
  }
  for (const owner of frameOwners) {
    if (owner.frame && event.source === owner.frame.contentWindow) {
      owner.onMessage(event);
      return;
    }
  }
  ignoredListener({ reason: 'not from a view frame of this page', origin: event.origin, data: describe(event.data) });
}

/** cb({reason, origin, data, service?}) for every message the page ignored. */
export function onIgnoredMessage(cb) {
  ignoredListener = cb;
  if (!listening) {
    window.addEventListener('message', onWindowMessage);
    listening = true;
  }
}

/** A view/agentAction from the daemon, handed to every mount of its service except its author. */
export function dispatchAgentAction(action) {
  for (const m of mounts) {
    if (m.service !== action.service) continue;
    if (action.actor && action.actor.type === 'view' && action.actor.mountId === m.mountId) continue;
    m.sendAgentAction(action);
  }
}

/** lavs/data and lavs/subscriptionEnded for subscriptions made through view/subscribe. */
export function dispatchSubscriptionMessage(method, params) {
  for (const m of mounts) {
    if (m.subscriptions.has(params && params.subscriptionId)) {
      if (method === 'lavs/subscriptionEnded') m.subscriptions.delete(params.subscriptionId);
      m.post({ jsonrpc: '2.0', method, params });
      return true;
    }
  }
  return false;
}

export function sendHostContextToAll(hostContext) {
  for (const m of mounts) m.setHostContext(hostContext);
}

/**
 * A service's view in a sandboxed frame.
 *   rpc(method, params) → Promise      the page's connection to the daemon
 *   events: onReady(), onFailed(message), onLog(level, text), onRemount()
 */
export class ViewMount {
  constructor({ rpc, service, container, hostContext, events }) {
    this.rpc = rpc;
    this.service = service;
    this.container = container;
    this.hostContext = hostContext;
    this.events = events;
    this.mountId = null;
    this.secret = null;
    this.frame = null;
    this.port = null;
    this.loads = 0;
    this.helloSeen = false;
    this.ready = false;
    this.failed = false;
    this.closed = false;
    this.subscriptions = new Set();
    this.readyTimer = null;
    this.opened = null;
  }

  async open() {
    const opened = await this.rpc('view/open', { service: this.service });
    if (this.closed) {
      this.rpc('view/close', { mountId: opened.mountId }).catch(() => {});
      return null;
    }
    this.opened = opened;
    this.mountId = opened.mountId;
    this.secret = opened.secret;
    this.theme = opened.theme && typeof opened.theme === 'object' ? opened.theme : {};
    mounts.add(this);
    this.createFrame(opened.url);
    return opened;
  }

  createFrame(url) {
    const frame = document.createElement('iframe');
    frame.className = 'view-frame';
    frame.setAttribute('sandbox', 'allow-scripts allow-forms');
    frame.setAttribute('allow', '');
    frame.setAttribute('referrerpolicy', 'no-referrer');
    frame.title = `${this.service} view`;
    frame.dataset.mountId = this.mountId;
    frame.addEventListener('load', () => this.onLoad());
    frame.src = `${url}#secret=${this.secret}`;
    this.frame = frame;
    this.container.textContent = '';
    this.container.append(frame);
    this.readyTimer = setTimeout(() => {
      if (!this.ready && !this.failed && !this.closed) this.fail(`the view did not become ready within ${READY_TIMEOUT_MS / 1000} s`);
    }, READY_TIMEOUT_MS);
  }

  onLoad() {
    this.loads += 1;
    if (this.loads === 1 || this.closed) return;
    // A second load: the frame reloaded or navigated. Its port is gone; mount again.
    this.events.onLog('info', `${this.service}: the view frame loaded again; mounting it anew`);
    this.events.onRemount();
  }

  onHello(event) {
    const data = event.data;
    const reject = (reason) => ignoredListener({ reason, origin: event.origin, data: describe(data), service: this.service });
    if (event.origin !== 'null') return reject('origin is not the opaque origin of a view');
    if (!data || typeof data !== 'object' || data.hearthView !== 'hello' || data.v !== 1) return reject('not a hello');
    if (data.mountId !== this.mountId) return reject('hello for another mount');
    if (!constantTimeEqual(data.secret, this.secret)) return reject('hello with a wrong secret');
    if (this.helloSeen) return reject('second hello of this frame');
    this.helloSeen = true;
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.port.onmessage = (e) => this.onPortMessage(e.data);
    this.port.start();
    event.source.postMessage(
      { hearthView: 'welcome', v: 1, mountId: this.mountId, hostContext: this.currentHostContext() },
      '*',
      [channel.port2],
    );
  }

  currentHostContext() {
    const ctx = this.hostContext();
    return { theme: ctx.theme, cssVariables: { ...ctx.cssVariables, ...this.theme } };
  }

  setHostContext() {
    this.post({ jsonrpc: '2.0', method: 'view/hostContext', params: this.currentHostContext() });
  }

  post(message) {
    if (this.port && !this.closed) this.port.postMessage(message);
  }

  sendAgentAction(action) {
    const { service, ...rest } = action;
    this.post({ jsonrpc: '2.0', method: 'view/agentAction', params: rest });
  }

  fail(message) {
    if (this.failed || this.closed) return;
    this.failed = true;
    clearTimeout(this.readyTimer);
    this.events.onFailed(message);
  }

  async onPortMessage(msg) {
    if (this.closed) return;
    if (!msg || typeof msg !== 'object' || typeof msg.method !== 'string') {
      this.events.onLog('warn', `${this.service}: a message on the view port that is not a request was ignored`);
      return;
    }
    const { method } = msg;
    const params = msg.params && typeof msg.params === 'object' ? msg.params : {};
    const isRequest = msg.id !== undefined && msg.id !== null;
    if (!isRequest) {
      switch (method) {
        case 'view/ready':
          if (!this.ready && !this.failed) {
            this.ready = true;
            clearTimeout(this.readyTimer);
            this.events.onReady(params);
          }
          break;
        case 'view/failed':
          this.fail(typeof params.message === 'string' ? params.message : 'the view failed');
          break;
        case 'view/size': {
          const h = Number(params.height);
          if (Number.isFinite(h) && h >= 0 && this.frame) this.frame.style.height = `${Math.min(MAX_FRAME_HEIGHT, Math.max(120, Math.ceil(h)))}px`;
          break;
        }
        case 'view/log':
          this.events.onLog(['error', 'warn', 'info', 'debug'].includes(params.level) ? params.level : 'info', `${this.service} view: ${String(params.message).slice(0, 4000)}`);
          break;
        default:
          this.events.onLog('warn', `${this.service}: unknown notification ${method.slice(0, 64)} from the view`);
      }
      return;
    }
    const reply = (body) => this.post({ jsonrpc: '2.0', id: msg.id, ...body });
    let size = 0;
    try {
      size = JSON.stringify(params).length;
    } catch {
      size = Infinity;
    }
    if (size > MAX_REQUEST_CHARS) {
      this.events.onLog('warn', `${this.service}: a ${method.slice(0, 64)} request of the view was too large (${size} characters)`);
      reply({ error: { code: -32600, message: 'Invalid request: too large for the page to send', data: { limit: MAX_REQUEST_CHARS, size } } });
      return;
    }
    try {
      const result = await this.forward(method, params);
      reply({ result });
    } catch (e) {
      reply({ error: { code: typeof e.code === 'number' ? e.code : -32603, message: e.message || String(e), data: e.data } });
    }
  }

  /** The frame's request as the view/* method of this mount: a view reaches its own service only. */
  async forward(method, params) {
    const mountId = this.mountId;
    const withInput = (p) => (params.input === undefined ? p : { ...p, input: params.input });
    switch (method) {
      case 'lavs/call': {
        const result = await this.rpc('view/call', withInput({ mountId, endpoint: params.endpoint }));
        this.events.onCall && this.events.onCall(params.endpoint, params.input, result);
        return result;
      }
      case 'lavs/subscribe': {
        const r = await this.rpc('view/subscribe', withInput({ mountId, endpoint: params.endpoint }));
        if (this.closed) return r;
        this.subscriptions.add(r.subscriptionId);
        return r;
      }
      case 'lavs/unsubscribe': {
        if (!this.subscriptions.has(params.subscriptionId)) {
          const e = new Error('Invalid params: no such subscription of this view');
          e.code = -32602;
          e.data = { field: 'subscriptionId' };
          throw e;
        }
        this.subscriptions.delete(params.subscriptionId);
        return this.rpc('view/unsubscribe', { mountId, subscriptionId: params.subscriptionId });
      }
      case 'lavs/manifest':
        return this.rpc('view/manifest', { mountId });
      case 'lavs/readFile':
        return decodeFileResult(await this.rpc('view/readFile', { mountId, path: params.path }));
      case 'view/getState':
        return (await this.rpc('view/getState', { mountId })).state;
      case 'view/setState':
        return this.rpc('view/setState', { mountId, state: params.state === undefined ? null : params.state });
      default: {
        const e = new Error(`Method not found: ${String(method).slice(0, 64)}`);
        e.code = -32601;
        e.data = { method };
        throw e;
      }
    }
  }

  /** Ends the mount: its frame goes, the daemon ends its subscriptions (view/close). */
  close({ tellDaemon = true } = {}) {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.readyTimer);
    mounts.delete(this);
    if (this.port) this.port.close();
    this.port = null;
    if (this.frame) this.frame.remove();
    this.frame = null;
    if (tellDaemon && this.mountId) this.rpc('view/close', { mountId: this.mountId }).catch(() => {});
  }
}
