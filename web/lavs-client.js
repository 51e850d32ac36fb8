// LAVSClient for hearth (lavs-spec-v1 7.2) over HTTP (POST /rpc) or WebSocket (/ws), for a page
// of your own or a Node script. Plain ES module, no dependencies. See docs/lavs-client.md.
//
//   import { createLAVSClient } from 'http://127.0.0.1:5555/ui/lavs-client.js';
//   const client = createLAVSClient({ url: 'http://127.0.0.1:5555', token, service: 'todo-manager' });
//   const todos = await client.call('listTodos');
//   const stop = client.subscribe('todoUpdates', (item) => console.log(item));

/** A JSON-RPC error as the daemon sent it: `code`, `message` and `data` kept as on the wire. */
export class LAVSError extends Error {
  constructor(code, message, data) {
    super(message);
    this.name = 'LAVSError';
    this.code = code;
    this.data = data;
  }
}

/** Transport failures (connection lost, bad HTTP status) use the JSON-RPC internal error code. */
export const TRANSPORT_ERROR = -32603;

function errorFrom(wire) {
  if (wire && typeof wire === 'object') {
    return new LAVSError(
      typeof wire.code === 'number' ? wire.code : TRANSPORT_ERROR,
      typeof wire.message === 'string' ? wire.message : 'error',
      wire.data,
    );
  }
  return new LAVSError(TRANSPORT_ERROR, String(wire));
}

function transportError(message, cause) {
  return new LAVSError(TRANSPORT_ERROR, message, { transport: true, cause: cause ? String(cause) : undefined });
}

/** `{encoding, content}` from lavs/readFile (or view/readFile) as text. */
export function decodeFileResult(file) {
  if (!file || typeof file !== 'object') return file;
  if (file.encoding === 'base64') {
    const binary = atob(file.content);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return new TextDecoder().decode(bytes);
  }
  return file.content;
}

/** http(s)://host:port[/...] → ws(s)://host:port/ws */
function wsUrlOf(url) {
  const u = new URL(url);
  u.protocol = u.protocol === 'https:' ? 'wss:' : u.protocol === 'http:' ? 'ws:' : u.protocol;
  if (u.pathname === '/' || u.pathname === '' || u.pathname === '/rpc' || u.pathname.startsWith('/ui')) u.pathname = '/ws';
  u.hash = '';
  return u;
}

function httpUrlOf(url) {
  const u = new URL(url);
  u.protocol = u.protocol === 'wss:' ? 'https:' : u.protocol === 'ws:' ? 'http:' : u.protocol;
  u.pathname = '/rpc';
  u.search = '';
  u.hash = '';
  return u.toString();
}

/**
 * One JSON-RPC WebSocket with automatic reconnection (exponential backoff with jitter). Requests
 * made while it is (re)connecting wait for the connection; requests in flight when it drops fail
 * with a transport LAVSError. Notifications go to the listeners added with on(method, cb).
 */
export class RpcSocket {
  constructor({ url, token, WebSocket: WS = globalThis.WebSocket, minDelay = 250, maxDelay = 10000, requestTimeout = 0, connectTimeout = 5000 } = {}) {
    if (typeof WS !== 'function') {
      throw new LAVSError(TRANSPORT_ERROR, 'no WebSocket implementation: pass the WebSocket option (Node 20: the "ws" package)');
    }
    this.baseUrl = url;
    this.token = token;
    this.url = this.urlWith(typeof token === 'function' ? null : token);
    this.WS = WS;
    this.minDelay = minDelay;
    this.maxDelay = maxDelay;
    this.connectTimeout = connectTimeout;
    this.requestTimeout = requestTimeout;
    this.nextId = 1;
    this.pending = new Map();
    this.waiting = [];
    this.listeners = new Map();
    this.status = 'idle';
    this.attempt = 0;
    this.opens = 0;
    this.closed = false;
    this.ws = null;
    this.timer = null;
  }

  urlWith(token) {
    const u = wsUrlOf(this.baseUrl);
    if (token) u.searchParams.set('token', token);
    return u.toString();
  }

  /** cb(params, message) for each notification `method` ('*': every notification). */
  on(method, cb) {
    if (!this.listeners.has(method)) this.listeners.set(method, new Set());
    this.listeners.get(method).add(cb);
    return () => this.listeners.get(method)?.delete(cb);
  }

  emit(method, params, message) {
    for (const key of [method, '*']) {
      for (const cb of this.listeners.get(key) || []) {
        try {
          cb(params, message);
        } catch (e) {
          setTimeout(() => { throw e; });
        }
      }
    }
  }

  setStatus(status, detail) {
    this.status = status;
    this.emit('$status', { status, attempt: this.attempt, detail });
  }

  connect() {
    if (this.closed || this.ws || this.starting) return;
    this.setStatus(this.opens === 0 ? 'connecting' : 'reconnecting');
    if (typeof this.token === 'function') {
      // A token read anew for every connection (a daemon started with --rotate-token has a new one).
      this.starting = true;
      Promise.resolve()
        .then(() => this.token())
        .then(
          (t) => {
            this.starting = false;
            this.open(this.urlWith(t));
          },
          (e) => {
            this.starting = false;
            this.scheduleReconnect(`no token: ${e && e.message ? e.message : e}`);
          },
        );
      return;
    }
    this.open(this.url);
  }

  open(url) {
    if (this.closed || this.ws) return;
    let ws;
    try {
      ws = new this.WS(url);
    } catch (e) {
      this.scheduleReconnect(String(e));
      return;
    }
    this.ws = ws;
    // A connection that neither opens nor fails (accepted by a daemon that was stopping, a
    // half-open network path) is given up and tried again, rather than waited on for ever.
    const connecting = this.connectTimeout > 0 ? setTimeout(() => {
      if (this.ws !== ws || ws.readyState !== 0) return;
      this.ws = null;
      try { ws.close(); } catch { /* already closing */ }
      this.scheduleReconnect(`no answer within ${this.connectTimeout} ms`);
    }, this.connectTimeout) : null;
    ws.onopen = () => {
      clearTimeout(connecting);
      if (this.ws !== ws) return;
      this.attempt = 0;
      this.opens += 1;
      this.setStatus('open');
      this.emit('$open', { reconnected: this.opens > 1 });
      const waiting = this.waiting;
      this.waiting = [];
      for (const w of waiting) w.send();
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      let msg;
      try {
        msg = JSON.parse(typeof event.data === 'string' ? event.data : String(event.data));
      } catch {
        return;
      }
      for (const m of Array.isArray(msg) ? msg : [msg]) this.receive(m);
    };
    ws.onclose = (event) => {
      clearTimeout(connecting);
      if (this.ws !== ws) return;
      this.ws = null;
      const err = transportError(`connection closed (${event && event.code})`);
      for (const [, p] of this.pending) p.reject(err);
      this.pending.clear();
      this.emit('$close', { code: event && event.code, everOpened: this.opens > 0 });
      if (this.closed) {
        this.setStatus('closed');
      } else {
        this.scheduleReconnect(`closed ${event && event.code}`);
      }
    };
    ws.onerror = () => {};
  }

  scheduleReconnect(detail) {
    this.ws = null;
    const delay = Math.min(this.maxDelay, this.minDelay * 2 ** this.attempt) * (0.75 + Math.random() * 0.5);
    this.attempt += 1;
    this.setStatus('offline', { detail, retryInMs: Math.round(delay) });
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  /** Reconnect now (a user's click), cancelling the backoff wait. */
  retryNow() {
    if (this.closed || this.ws) return;
    clearTimeout(this.timer);
    this.connect();
  }

  receive(msg) {
    if (!msg || typeof msg !== 'object') return;
    if (typeof msg.method === 'string' && msg.id === undefined) {
      this.emit(msg.method, msg.params, msg);
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.error) p.reject(errorFrom(msg.error));
    else p.resolve(msg.result);
  }

  /** Sends a notification (no answer) when the connection is open; false otherwise. */
  notify(method, params) {
    if (this.closed || !this.ws || this.ws.readyState !== 1) return false;
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', method, params: params ?? {} }));
    return true;
  }

  request(method, params) {
    if (this.closed) return Promise.reject(transportError('client closed'));
    return new Promise((resolve, reject) => {
      const send = () => {
        const id = this.nextId++;
        const entry = { resolve, reject, timer: null };
        if (this.requestTimeout > 0) {
          entry.timer = setTimeout(() => {
            this.pending.delete(id);
            reject(new LAVSError(-32002, `no answer to ${method} within ${this.requestTimeout} ms`));
          }, this.requestTimeout);
        }
        this.pending.set(id, entry);
        try {
          this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params: params ?? {} }));
        } catch (e) {
          this.pending.delete(id);
          reject(transportError('send failed', e));
        }
      };
      if (this.ws && this.status === 'open') send();
      else {
        this.waiting.push({ send, reject });
        this.connect();
      }
    });
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    const err = transportError('client closed');
    for (const w of this.waiting.splice(0)) w.reject(err);
    for (const [, p] of this.pending) p.reject(err);
    this.pending.clear();
    if (this.ws) this.ws.close(1000);
    else this.setStatus('closed');
  }
}

/**
 * createLAVSClient({ url, token, service, transport: 'ws' | 'http', WebSocket?, fetch? })
 *   url        the daemon (http://127.0.0.1:PORT; a ws:// URL or the page's own URL work too)
 *   token      the daemon's token (its token file, or the page's sessionStorage `hearth.token`),
 *              or a function returning it (read again for every connection)
 *   service    the service name; may be left out when the daemon serves one service
 *   transport  'ws' (default where a WebSocket exists) or 'http'; subscribe always uses a WebSocket
 */
export function createLAVSClient(options = {}) {
  const {
    url = globalThis.location ? globalThis.location.origin : undefined,
    token,
    service,
    WebSocket: WS = globalThis.WebSocket,
    fetch: fetchImpl = globalThis.fetch,
    clientName,
    minDelay,
    maxDelay,
    connectTimeout,
  } = options;
  if (!url) throw new TypeError('createLAVSClient: url is required');
  const transport = options.transport || (typeof WS === 'function' ? 'ws' : 'http');
  const withService = (params) => (service === undefined ? params : { service, ...params });

  let socket = null;
  const subscriptions = new Map(); // local id -> {endpoint, input, callback, onEnd, serverId}
  const byServerId = new Map();
  let nextLocal = 1;

  function ensureSocket() {
    if (socket) return socket;
    socket = new RpcSocket({ url, token, WebSocket: WS, minDelay, maxDelay, connectTimeout });
    socket.on('lavs/data', (params) => {
      const sub = byServerId.get(params && params.subscriptionId);
      if (sub) sub.callback(params.data);
    });
    socket.on('lavs/subscriptionEnded', (params) => {
      const sub = byServerId.get(params && params.subscriptionId);
      if (!sub) return;
      byServerId.delete(sub.serverId);
      sub.serverId = null;
      if (params.reason === 'reloaded') {
        // The service was reloaded and the endpoint still exists: follow the new definition.
        resubscribe(sub);
        return;
      }
      subscriptions.delete(sub.localId);
      if (sub.onEnd) sub.onEnd(params);
    });
    socket.on('$close', () => {
      // The daemon ended this connection's subscriptions with it.
      for (const sub of subscriptions.values()) {
        if (sub.serverId) {
          byServerId.delete(sub.serverId);
          sub.serverId = null;
          sub.lost = true;
        }
      }
    });
    socket.on('$open', () => {
      // A new connection: make the lost subscriptions again, items to the same callbacks.
      for (const sub of subscriptions.values()) {
        if (!sub.lost) continue;
        sub.lost = false;
        resubscribe(sub);
      }
    });
    socket.connect();
    return socket;
  }

  function resubscribe(sub) {
    const params = { endpoint: sub.endpoint };
    if (sub.input !== undefined) params.input = sub.input;
    if (sub.service !== undefined) params.service = sub.service;
    const started = socket.request('lavs/subscribe', params);
    sub.ready = started.then(
      (r) => {
        if (!subscriptions.has(sub.localId)) {
          // Unsubscribed while the request was in flight.
          socket.request('lavs/unsubscribe', { subscriptionId: r.subscriptionId }).catch(() => {});
          return;
        }
        sub.serverId = r.subscriptionId;
        byServerId.set(r.subscriptionId, sub);
      },
      (err) => {
        if (err.data && err.data.transport && subscriptions.has(sub.localId)) {
          sub.lost = true; // the next connection tries again
          if (socket.status === 'open') {
            sub.lost = false;
            resubscribe(sub);
          }
          return;
        }
        subscriptions.delete(sub.localId);
        if (sub.onError) sub.onError(err);
        else if (sub.onEnd) sub.onEnd({ reason: 'error', error: { code: err.code, message: err.message, data: err.data } });
      },
    );
    return sub.ready;
  }

  async function httpRequest(method, params) {
    if (typeof fetchImpl !== 'function') throw transportError('no fetch implementation');
    const headers = { 'Content-Type': 'application/json' };
    const bearer = typeof token === 'function' ? await token() : token;
    if (bearer) headers.Authorization = `Bearer ${bearer}`;
    if (clientName) headers['X-Hearth-Client'] = clientName;
    let response;
    try {
      response = await fetchImpl(httpUrlOf(url), {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
    } catch (e) {
      throw transportError('request failed', e);
    }
    const text = await response.text();
    let msg = null;
    try {
      msg = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    if (!msg || typeof msg !== 'object' || msg.jsonrpc !== '2.0' || (!('result' in msg) && !msg.error)) {
      // Not a JSON-RPC answer: an HTTP refusal (401 without the right token, 403 for a foreign origin...).
      const detail = msg && typeof msg.error === 'string' ? msg.error : text.slice(0, 200);
      throw new LAVSError(TRANSPORT_ERROR, `HTTP ${response.status}: ${detail}`, { transport: true, status: response.status });
    }
    if (msg.error) throw errorFrom(msg.error);
    return msg.result;
  }

  function rpc(method, params = {}) {
    if (transport === 'http') return httpRequest(method, params);
    return ensureSocket().request(method, params);
  }

  const client = {
    transport,
    service,
    /** Any JSON-RPC method of the daemon (lavs/services, ...), answered as is. */
    rpc,
    call(endpoint, input) {
      const params = { endpoint };
      if (input !== undefined) params.input = input;
      return rpc('lavs/call', withService(params));
    },
    /**
     * subscribe(endpoint, callback, input?) → unsubscribe(). `input` may also be an options
     * object {input, onEnd(params), onError(err), service}. Survives reconnections: a new subscription is made on the
     * new connection and its items go to the same callback.
     */
    subscribe(endpoint, callback, inputOrOptions) {
      const isOptions = inputOrOptions && typeof inputOrOptions === 'object' &&
        ['input', 'onEnd', 'onError', 'service'].some((k) => k in inputOrOptions);
      const opts = isOptions ? inputOrOptions : { input: inputOrOptions };
      const sub = {
        localId: nextLocal++, endpoint, input: opts.input, callback, onEnd: opts.onEnd, onError: opts.onError,
        service: opts.service !== undefined ? opts.service : service, serverId: null,
      };
      subscriptions.set(sub.localId, sub);
      ensureSocket();
      resubscribe(sub);
      return () => {
        if (!subscriptions.delete(sub.localId)) return;
        if (sub.serverId) {
          byServerId.delete(sub.serverId);
          socket.request('lavs/unsubscribe', { subscriptionId: sub.serverId }).catch(() => {});
          sub.serverId = null;
        }
      };
    },
    getManifest() {
      return rpc('lavs/manifest', withService({}));
    },
    async readFile(path) {
      return decodeFileResult(await rpc('lavs/readFile', withService({ path })));
    },
    /** cb(params, message) for a notification of the WebSocket ('lavs/servicesChanged', ...). */
    on(method, cb) {
      return ensureSocket().on(method, cb);
    },
    /** cb({status}) on 'connecting' | 'open' | 'reconnecting' | 'offline' | 'closed'. */
    onStatus(cb) {
      return ensureSocket().on('$status', cb);
    },
    get socket() {
      return ensureSocket();
    },
    close() {
      subscriptions.clear();
      byServerId.clear();
      if (socket) socket.close();
    },
  };
  return client;
}

export default createLAVSClient;
