// hearth view bootstrap: the first script of every view frame (/views/<ticket>/.hearth/bootstrap.js).
// It takes the handshake secret out of the URL fragment, says hello to the host page, receives a
// MessagePort, builds the LAVSClient (lavs-spec-v1 7.2) over it and mounts the view component.
// The contract with the page is docs/view-host.md. A classic script: it runs before the view.
(function () {
  'use strict';

  // -- configuration and secret -----------------------------------------------------------------
  var configElement = document.getElementById('hearth-view-config');
  var config = null;
  try {
    config = JSON.parse(configElement ? configElement.textContent : 'null');
  } catch (e) {
    config = null;
  }
  var secret = null;
  var hash = location.hash || '';
  var match = /(?:^#|&)secret=([0-9A-Za-z_-]+)/.exec(hash);
  if (match) secret = match[1];
  if (hash) {
    try {
      history.replaceState(null, '', location.pathname + location.search);
    } catch (e) {
      /* the secret is single use anyway */
    }
  }
  if (!config || config.v !== 1 || typeof config.mountId !== 'string' || !config.component) {
    console.error('hearth: this document has no valid view configuration');
    return;
  }
  var component = config.component;

  // -- a base style so that views match the page (views may override it) ------------------------
  var baseStyle = document.createElement('style');
  baseStyle.textContent =
    ':root{color-scheme:var(--hearth-color-scheme,light dark);}' +
    'html,body{margin:0;}' +
    'body{padding:12px 16px;background:var(--hearth-surface,var(--hearth-bg,Canvas));color:var(--hearth-fg,CanvasText);' +
    'font:var(--hearth-font-size,14px)/1.45 var(--hearth-font,system-ui,sans-serif);}';
  (document.head || document.documentElement).prepend(baseStyle);

  // -- the port ------------------------------------------------------------------------------------
  var port = null;
  var nextId = 1;
  var pending = new Map();
  var subscriptions = new Map(); // subscriptionId -> callback
  var queued = []; // messages sent before the port arrived
  var agentActionTargets = [];
  var agentActionBacklog = [];
  var mounted = false;
  var failed = false;

  function LAVSError(code, message, data) {
    var e = new Error(message);
    e.name = 'LAVSError';
    e.code = code;
    e.data = data;
    return e;
  }

  function post(message) {
    if (port) port.postMessage(message);
    else queued.push(message);
  }

  function notify(method, params) {
    post({ jsonrpc: '2.0', method: method, params: params || {} });
  }

  function request(method, params) {
    return new Promise(function (resolve, reject) {
      var id = nextId++;
      pending.set(id, { resolve: resolve, reject: reject });
      post({ jsonrpc: '2.0', id: id, method: method, params: params || {} });
    });
  }

  function log(level, message) {
    notify('view/log', { level: level, message: String(message).slice(0, 4000) });
  }

  function onPortMessage(event) {
    var msg = event.data;
    if (!msg || typeof msg !== 'object') return;
    if (msg.id !== undefined && msg.id !== null && !msg.method) {
      var p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (msg.error) p.reject(LAVSError(msg.error.code, msg.error.message, msg.error.data));
      else p.resolve(msg.result);
      return;
    }
    var params = msg.params || {};
    switch (msg.method) {
      case 'lavs/data': {
        var cb = subscriptions.get(params.subscriptionId);
        if (cb) {
          try {
            cb(params.data);
          } catch (e) {
            log('error', 'subscription callback: ' + (e && e.stack ? e.stack : e));
          }
        }
        break;
      }
      case 'lavs/subscriptionEnded':
        subscriptions.delete(params.subscriptionId);
        break;
      case 'view/agentAction':
        deliverAgentAction(params);
        break;
      case 'view/hostContext':
        applyHostContext(params);
        break;
      default:
        break;
    }
  }

  // -- the LAVSClient (lavs-spec-v1 7.2) -----------------------------------------------------------
  var client = Object.freeze({
    call: function (endpoint, input) {
      return request('lavs/call', input === undefined ? { endpoint: endpoint } : { endpoint: endpoint, input: input });
    },
    subscribe: function (endpoint, callback, input) {
      var active = true;
      var id = null;
      request('lavs/subscribe', input === undefined ? { endpoint: endpoint } : { endpoint: endpoint, input: input }).then(
        function (r) {
          id = r.subscriptionId;
          if (active) subscriptions.set(id, callback);
          else request('lavs/unsubscribe', { subscriptionId: id }).catch(function () {});
        },
        function (e) {
          log('error', 'subscribe ' + endpoint + ': ' + e.message);
        },
      );
      return function unsubscribe() {
        if (!active) return;
        active = false;
        if (id !== null) {
          subscriptions.delete(id);
          request('lavs/unsubscribe', { subscriptionId: id }).catch(function () {});
        }
      };
    },
    getManifest: function () {
      return request('lavs/manifest', {});
    },
    readFile: function (path) {
      return request('lavs/readFile', { path: path });
    },
    getState: function () {
      return request('view/getState', {});
    },
    setState: function (state) {
      return request('view/setState', { state: state });
    },
  });

  // -- host context --------------------------------------------------------------------------------
  function applyHostContext(ctx) {
    if (!ctx || typeof ctx !== 'object') return;
    var root = document.documentElement;
    if (ctx.theme === 'light' || ctx.theme === 'dark') {
      root.style.setProperty('color-scheme', ctx.theme);
      root.style.setProperty('--hearth-color-scheme', ctx.theme);
      root.setAttribute('data-hearth-theme', ctx.theme);
    }
    var vars = ctx.cssVariables;
    if (vars && typeof vars === 'object') {
      Object.keys(vars).forEach(function (name) {
        if (/^--[A-Za-z0-9_-]+$/.test(name) && typeof vars[name] === 'string') root.style.setProperty(name, vars[name]);
      });
    }
  }

  // -- size ----------------------------------------------------------------------------------------
  var lastHeight = -1;
  var sizeScheduled = false;
  function reportSize() {
    sizeScheduled = false;
    var root = document.documentElement;
    var height = Math.ceil(Math.max(root.getBoundingClientRect().height, document.body ? document.body.getBoundingClientRect().height : 0));
    if (height !== lastHeight) {
      lastHeight = height;
      notify('view/size', { height: height });
    }
  }
  function watchSize() {
    if (typeof ResizeObserver !== 'function') return;
    var ro = new ResizeObserver(function () {
      if (!sizeScheduled) {
        sizeScheduled = true;
        requestAnimationFrame(reportSize);
      }
    });
    ro.observe(document.documentElement);
    if (document.body) ro.observe(document.body);
  }

  // -- agent actions -------------------------------------------------------------------------------
  function deliverAgentAction(action) {
    if (!mounted) {
      agentActionBacklog.push(action);
      return;
    }
    agentActionTargets.forEach(function (el) {
      if (typeof el.onAgentAction === 'function') {
        try {
          var r = el.onAgentAction(action);
          if (r && typeof r.catch === 'function') {
            r.catch(function (e) {
              log('error', 'onAgentAction: ' + (e && e.message ? e.message : e));
            });
          }
        } catch (e) {
          log('error', 'onAgentAction: ' + (e && e.stack ? e.stack : e));
        }
      }
    });
    window.dispatchEvent(new CustomEvent('lavs-agent-action', { detail: action }));
  }

  // -- mounting ------------------------------------------------------------------------------------
  function fail(message) {
    if (failed) return;
    failed = true;
    notify('view/failed', { message: String(message).slice(0, 4000) });
  }

  function kebab(name) {
    var s = String(name || 'default')
      .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '');
    return 'lavs-view-' + (s || 'default');
  }

  function isElementClass(value) {
    return typeof value === 'function' && (value === HTMLElement || value.prototype instanceof HTMLElement);
  }

  function nameOf(cls, defined) {
    if (typeof customElements.getName === 'function') {
      var n = customElements.getName(cls);
      if (n) return n;
    }
    for (var i = 0; i < defined.length; i++) if (defined[i].cls === cls) return defined[i].name;
    return null;
  }

  function giveClient(el) {
    if (typeof el.setLAVSClient !== 'function') return;
    var r = el.setLAVSClient(client);
    if (r && typeof r.catch === 'function') {
      r.catch(function (e) {
        log('error', 'setLAVSClient: ' + (e && e.message ? e.message : e));
      });
    }
  }

  function finishMount(targets) {
    agentActionTargets = targets;
    mounted = true;
    watchSize();
    reportSize();
    notify('view/ready', { elements: targets.map(function (el) { return el.localName; }) });
    var backlog = agentActionBacklog;
    agentActionBacklog = [];
    backlog.forEach(deliverAgentAction);
  }

  function mountModule() {
    var defined = [];
    var registry = window.customElements;
    var originalDefine = registry.define;
    registry.define = function (name, cls, options) {
      defined.push({ name: name, cls: cls });
      return originalDefine.call(registry, name, cls, options);
    };
    // Resolved against the document: a relative module (./view.js) is the view folder's file,
    // not one next to this script.
    var url = new URL(component.module, document.baseURI).href;
    import(url)
      .then(function (mod) {
        registry.define = originalDefine;
        var name = null;
        if (component.exportName) {
          var exported = mod[component.exportName];
          if (!isElementClass(exported)) {
            throw new Error('the module has no export "' + component.exportName + '" that is a custom element class');
          }
          name = nameOf(exported, defined);
          if (!name) {
            name = kebab(component.exportName);
            originalDefine.call(registry, name, exported);
          }
        } else if (defined.length > 0) {
          name = defined[0].name;
        } else if (isElementClass(mod.default)) {
          name = nameOf(mod.default, defined);
          if (!name) {
            name = kebab(mod.default.name);
            originalDefine.call(registry, name, mod.default);
          }
        }
        if (!name) throw new Error('the view module defined no custom element and exports none');
        var el = document.createElement(name);
        document.body.appendChild(el);
        giveClient(el);
        finishMount([el]);
      })
      .catch(function (e) {
        registry.define = originalDefine;
        log('error', 'mounting the view failed: ' + (e && e.stack ? e.stack : e));
        fail(e && e.message ? e.message : e);
      });
  }

  function mountHtml() {
    var run = function () {
      try {
        var targets = Array.prototype.filter.call(document.querySelectorAll('*'), function (el) {
          return typeof el.setLAVSClient === 'function' || typeof el.onAgentAction === 'function';
        });
        targets.forEach(giveClient);
        window.lavsClient = client;
        window.dispatchEvent(new CustomEvent('lavs-client', { detail: client }));
        finishMount(targets);
      } catch (e) {
        log('error', 'mounting the view failed: ' + (e && e.stack ? e.stack : e));
        fail(e && e.message ? e.message : e);
      }
    };
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run, { once: true });
    else run();
  }

  function mount() {
    if (component.html) mountHtml();
    else if (typeof component.module === 'string' && component.module) {
      if (document.body) mountModule();
      else document.addEventListener('DOMContentLoaded', mountModule, { once: true });
    } else fail('the view configuration names no module');
  }

  // Errors of the view's own code go to the page's log.
  window.addEventListener('error', function (event) {
    log('error', (event.message || 'error') + (event.filename ? ' (' + event.filename + ':' + event.lineno + ')' : ''));
  });
  window.addEventListener('unhandledrejection', function (event) {
    var r = event.reason;
    log('error', 'unhandled rejection: ' + (r && r.message ? r.message : r));
  });
  document.addEventListener('securitypolicyviolation', function (event) {
    log('warn', 'blocked by the view policy: ' + event.violatedDirective + ' ' + (event.blockedURI || ''));
  });

  // -- the handshake -------------------------------------------------------------------------------
  if (!secret || window.parent === window) {
    console.error('hearth: open this view from the hearth page (no handshake secret)');
    return;
  }
  function onWelcome(event) {
    var data = event.data;
    if (event.source !== window.parent || !data || data.hearthView !== 'welcome' || data.mountId !== config.mountId) return;
    var p = event.ports && event.ports[0];
    if (!p) return;
    window.removeEventListener('message', onWelcome);
    port = p;
    port.onmessage = onPortMessage;
    port.start();
    var q = queued;
    queued = [];
    q.forEach(function (m) {
      port.postMessage(m);
    });
    applyHostContext(data.hostContext);
    mount();
  }
  window.addEventListener('message', onWelcome);
  window.parent.postMessage({ hearthView: 'hello', v: 1, mountId: config.mountId, secret: secret }, config.hostOrigin);
  secret = null;
})();
