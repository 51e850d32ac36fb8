// hearth's MCP Apps bridge: the first script of every ui://<service>/view document
// (docs/mcp-server.md, "Views as MCP Apps"). On one side it speaks MCP Apps (spec 2026-01-26) to
// the host window: ui/initialize, then requests over postMessage, answers to the host's own
// requests (ping, ui/resource-teardown; anything else -32601), the host's notifications (context,
// tool input and result, cancellation) and size reports. On the other it gives the view component
// the LAVS client of lavs-spec-v1 7.2 and mounts it as hearth's view host does. It needs nothing
// but `allow-scripts`: no forms, no storage, no same origin, no navigation, no popups. A classic
// script, compiled into hearth (src/mcpserver/CMakeLists.txt); its configuration is the JSON of
// #hearth-mcp-app.
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('hearth-mcp-app').textContent);
  var PROTOCOL_VERSION = '2026-01-26';
  // How long a view's onTeardown may hold the answer to ui/resource-teardown.
  var TEARDOWN_GRACE_MS = 2000;

  var pending = new Map();
  var nextId = 1;
  var hostContext = {};
  var hostCapabilities = {};
  var toolInput = null;
  var tornDown = false;
  var mounted = [];
  var stopPolls = new Set();
  var savedState = null;
  var documentLang = document.documentElement.getAttribute('lang');

  function send(message) {
    window.parent.postMessage(message, '*');
  }
  function notify(method, params) {
    send({ jsonrpc: '2.0', method: method, params: params || {} });
  }
  function request(method, params) {
    return new Promise(function (resolve, reject) {
      var id = nextId++;
      pending.set(id, { resolve: resolve, reject: reject });
      send({ jsonrpc: '2.0', id: id, method: method, params: params || {} });
    });
  }
  function answer(id, result) {
    send({ jsonrpc: '2.0', id: id, result: result });
  }
  function answerError(id, code, message) {
    send({ jsonrpc: '2.0', id: id, error: { code: code, message: message } });
  }
  function emit(name, detail) {
    window.dispatchEvent(new CustomEvent(name, { detail: detail }));
  }
  function log(level, message) {
    if (hostCapabilities.logging) {
      notify('notifications/message', { level: level, logger: config.service, data: String(message).slice(0, 4000) });
    }
  }

  function LAVSError(code, message, data) {
    var e = new Error(message);
    e.name = 'LAVSError';
    if (code !== undefined) e.code = code;
    if (data !== undefined) e.data = data;
    return e;
  }

  // -- a base style, so that a view looks as it does in hearth's page, in the host's colours -----
  // hearth's variables (docs/view-host.md) from the MCP Apps standard ones when the host gives
  // them, else hearth's own light and dark values.
  var baseStyle = document.createElement('style');
  baseStyle.textContent =
    ':root{color-scheme:light dark;' +
    '--hearth-surface:var(--color-background-primary,light-dark(#ffffff,#171c23));' +
    '--hearth-bg:var(--color-background-secondary,light-dark(#f6f7f9,#0f1318));' +
    '--hearth-fg:var(--color-text-primary,light-dark(#1c2330,#e6e9ee));' +
    '--hearth-muted:var(--color-text-secondary,light-dark(#5f6b7a,#9aa5b4));' +
    '--hearth-border:var(--color-border-primary,light-dark(#dde1e7,#2a313b));' +
    '--hearth-accent:light-dark(#c2410c,#fb923c);--hearth-accent-fg:light-dark(#ffffff,#1a0f05);' +
    '--hearth-danger:var(--color-text-danger,light-dark(#b42318,#f97066));' +
    '--hearth-ok:var(--color-text-success,light-dark(#15803d,#4ade80));' +
    '--hearth-radius:var(--border-radius-md,8px);' +
    '--hearth-font:var(--font-sans,system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif);' +
    '--hearth-mono:var(--font-mono,ui-monospace,"DejaVu Sans Mono",Menlo,monospace);' +
    '--hearth-font-size:var(--font-text-md-size,14px);}' +
    'html,body{margin:0;}' +
    'body{padding:calc(12px + var(--hearth-inset-top,0px)) calc(16px + var(--hearth-inset-right,0px)) ' +
    'calc(12px + var(--hearth-inset-bottom,0px)) calc(16px + var(--hearth-inset-left,0px));' +
    'background:var(--hearth-surface);color:var(--hearth-fg);' +
    'font:var(--hearth-font-size)/1.45 var(--hearth-font);}';
  (document.head || document.documentElement).prepend(baseStyle);

  // -- the host context ------------------------------------------------------------------------------
  function applyHostContext(ctx) {
    var root = document.documentElement;
    if (ctx.theme === 'light' || ctx.theme === 'dark') {
      root.setAttribute('data-theme', ctx.theme);
      root.setAttribute('data-hearth-theme', ctx.theme);
      root.style.colorScheme = ctx.theme;
      root.style.setProperty('--hearth-color-scheme', ctx.theme);
    }
    var styles = ctx.styles && typeof ctx.styles === 'object' ? ctx.styles : {};
    var vars = styles.variables;
    if (vars && typeof vars === 'object') {
      Object.keys(vars).forEach(function (name) {
        if (!/^--[A-Za-z0-9_-]+$/.test(name)) return;
        if (typeof vars[name] === 'string') root.style.setProperty(name, vars[name]);
        else if (vars[name] === undefined || vars[name] === null) root.style.removeProperty(name);
      });
    }
    if (styles.css && typeof styles.css.fonts === 'string') {
      var fonts = document.getElementById('__mcp-host-fonts');
      if (!fonts) {
        fonts = document.createElement('style');
        fonts.id = '__mcp-host-fonts';
        (document.head || root).appendChild(fonts);
      }
      fonts.textContent = styles.css.fonts;
    }
    if (typeof ctx.displayMode === 'string') root.setAttribute('data-display-mode', ctx.displayMode);
    var dims = ctx.containerDimensions;
    if (dims && typeof dims === 'object') {
      // Fixed: fill the container. Flexible: the content decides, up to the maximum.
      var fixedHeight = typeof dims.height === 'number';
      root.style.height = fixedHeight ? '100vh' : '';
      root.style.maxHeight = !fixedHeight && typeof dims.maxHeight === 'number' ? dims.maxHeight + 'px' : '';
      root.style.overflowY = fixedHeight || typeof dims.maxHeight === 'number' ? 'auto' : '';
      var fixedWidth = typeof dims.width === 'number';
      root.style.width = fixedWidth ? '100vw' : '';
      root.style.maxWidth = !fixedWidth && typeof dims.maxWidth === 'number' ? dims.maxWidth + 'px' : '';
    }
    var insets = ctx.safeAreaInsets;
    if (insets && typeof insets === 'object') {
      ['top', 'right', 'bottom', 'left'].forEach(function (side) {
        if (typeof insets[side] === 'number') root.style.setProperty('--hearth-inset-' + side, insets[side] + 'px');
      });
    }
    if (typeof ctx.locale === 'string' && !documentLang) root.setAttribute('lang', ctx.locale);
  }

  function mergeHostContext(change) {
    if (!change || typeof change !== 'object') return;
    var merged = {};
    Object.keys(hostContext).forEach(function (k) {
      merged[k] = hostContext[k];
    });
    Object.keys(change).forEach(function (k) {
      merged[k] = change[k];
    });
    hostContext = merged;
    applyHostContext(hostContext);
    emit('mcp-host-context', hostContext);
  }

  // -- size ------------------------------------------------------------------------------------------
  // What the content needs (the document's height as if unconstrained) and the frame's width, sent
  // when either changes: hosts with flexible dimensions size the frame by it.
  var lastSize = null;
  var sizeScheduled = false;
  function reportSize() {
    sizeScheduled = false;
    if (tornDown) return;
    var root = document.documentElement;
    var height = root.style.height;
    root.style.height = 'max-content';
    var h = Math.ceil(root.getBoundingClientRect().height);
    root.style.height = height;
    var w = Math.ceil(window.innerWidth);
    if (lastSize && lastSize.width === w && lastSize.height === h) return;
    lastSize = { width: w, height: h };
    notify('ui/notifications/size-changed', lastSize);
  }
  function watchSize() {
    var schedule = function () {
      if (sizeScheduled) return;
      sizeScheduled = true;
      requestAnimationFrame(reportSize);
    };
    if (typeof ResizeObserver === 'function') {
      var observer = new ResizeObserver(schedule);
      observer.observe(document.documentElement);
      if (document.body) observer.observe(document.body);
      else document.addEventListener('DOMContentLoaded', function () { observer.observe(document.body); }, { once: true });
    }
    schedule();
  }

  // -- the handshake ---------------------------------------------------------------------------------
  var ready = request('ui/initialize', {
    protocolVersion: PROTOCOL_VERSION,
    appCapabilities: { availableDisplayModes: ['inline', 'fullscreen'] },
    appInfo: { name: config.service, version: config.version }
  }).then(function (r) {
    r = r || {};
    hostCapabilities = r.hostCapabilities && typeof r.hostCapabilities === 'object' ? r.hostCapabilities : {};
    mergeHostContext(r.hostContext || {});
    notify('ui/notifications/initialized', {});
    watchSize();
    return r;
  });
  ready.catch(function (e) {
    console.error('hearth: the host did not answer ui/initialize: ' + (e && e.message ? e.message : e));
  });

  // -- the host's requests and notifications ---------------------------------------------------------
  function onRequest(m) {
    switch (m.method) {
      case 'ping':
        answer(m.id, {});
        return;
      case 'ui/resource-teardown':
        teardown(m.params && m.params.reason).then(
          function () {
            answer(m.id, {});
          },
          function (e) {
            answerError(m.id, -32000, 'Teardown error: ' + (e && e.message ? e.message : e));
          }
        );
        return;
      default:
        answerError(m.id, -32601, 'Method not found: ' + m.method);
    }
  }

  function onNotification(m) {
    var params = m.params && typeof m.params === 'object' ? m.params : {};
    switch (m.method) {
      case 'ui/notifications/host-context-changed':
        mergeHostContext(params);
        break;
      case 'ui/notifications/tool-input':
        toolInput = params.arguments && typeof params.arguments === 'object' ? params.arguments : {};
        emit('mcp-tool-input', params);
        break;
      case 'ui/notifications/tool-input-partial':
        emit('mcp-tool-input-partial', params);
        break;
      case 'ui/notifications/tool-result':
        emit('mcp-tool-result', params);
        onToolResult(params);
        break;
      case 'ui/notifications/tool-cancelled':
        toolInput = null;
        emit('mcp-tool-cancelled', params);
        break;
      default:
        break; // list_changed and anything newer: nothing to do
    }
  }

  window.addEventListener('message', function (event) {
    if (event.source !== window.parent) return;
    var m = event.data;
    if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') return;
    if (typeof m.method === 'string') {
      if (m.id !== undefined && m.id !== null) onRequest(m);
      else onNotification(m);
      return;
    }
    if (m.id === undefined) return;
    var p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error) p.reject(LAVSError(m.error.code, m.error.message || 'the host refused the request', m.error.data));
    else p.resolve(m.result);
  });

  // -- tool results the host shows this view ---------------------------------------------------------
  // The view's own endpoint for the tool the host called (hostContext.toolInfo), if any.
  function hostToolEndpoint() {
    var info = hostContext.toolInfo;
    var name = info && info.tool && info.tool.name;
    if (typeof name !== 'string') return null;
    var found = null;
    Object.keys(config.tools).forEach(function (endpoint) {
      if (config.tools[endpoint].name === name) found = endpoint;
    });
    return found;
  }

  // A mutation the host made (or a tool it does not name) is told to the view as an agent action,
  // as hearth's view host tells it: the view reloads what it shows.
  function onToolResult(result) {
    if (!result || result.isError) return;
    var endpoint = hostToolEndpoint();
    if (endpoint && !config.tools[endpoint].mutation) return;
    var value;
    try {
      value = valueOf(result);
    } catch (e) {
      value = undefined;
    }
    var input = toolInput;
    if (endpoint && config.tools[endpoint].wrapInput && input) input = input.input;
    deliverAgentAction({
      endpoint: endpoint,
      input: input,
      result: value,
      actor: { type: 'mcp-host' },
      at: new Date().toISOString()
    });
  }

  function deliverAgentAction(action) {
    mounted.forEach(function (el) {
      if (typeof el.onAgentAction !== 'function') return;
      try {
        var r = el.onAgentAction(action);
        if (r && typeof r.catch === 'function') {
          r.catch(function (e) {
            log('error', 'onAgentAction: ' + (e && e.message ? e.message : e));
          });
        }
      } catch (e) {
        log('error', 'onAgentAction: ' + (e && e.message ? e.message : e));
      }
    });
    emit('lavs-agent-action', action);
  }

  // -- teardown --------------------------------------------------------------------------------------
  // The view gets to clean up before the answer: each element's onTeardown (awaited, for at most
  // TEARDOWN_GRACE_MS), then the elements leave the document (their disconnectedCallback) and the
  // subscription reads stop. Calls made after it are refused.
  function teardown(reason) {
    if (tornDown) return Promise.resolve();
    var hooks = mounted.map(function (el) {
      if (typeof el.onTeardown !== 'function') return null;
      try {
        return Promise.resolve(el.onTeardown(reason));
      } catch (e) {
        return Promise.reject(e);
      }
    }).filter(Boolean);
    emit('mcp-teardown', { reason: reason });
    var grace = new Promise(function (resolve) {
      setTimeout(resolve, TEARDOWN_GRACE_MS);
    });
    var settled = Promise.all(hooks.map(function (p) {
      return p.catch(function (e) {
        log('error', 'onTeardown: ' + (e && e.message ? e.message : e));
      });
    }));
    return Promise.race([settled, grace]).then(function () {
      tornDown = true;
      stopPolls.forEach(function (stop) {
        stop();
      });
      stopPolls.clear();
      mounted.forEach(function (el) {
        if (el.isConnected) el.remove();
      });
    });
  }

  // -- the LAVS client (lavs-spec-v1 7.2) --------------------------------------------------------------
  // A tool's result: its text block holds the endpoint's value as JSON (structuredContent may wrap
  // it as {result}); an error result carries the LAVS error under _meta["hearth/error"].
  function valueOf(r) {
    if (!r) throw new Error('no result');
    var text = r.content && r.content[0] && r.content[0].text;
    if (r.isError) {
      var e = r._meta && r._meta['hearth/error'];
      if (e && typeof e === 'object') throw LAVSError(e.code, e.message || text || 'the tool failed', e.data);
      throw LAVSError(undefined, text || 'the tool failed');
    }
    return text === undefined ? r.structuredContent : JSON.parse(text);
  }

  function usable() {
    if (tornDown) return Promise.reject(LAVSError(undefined, 'the view was torn down'));
    return ready;
  }

  function fileUri(path) {
    return config.dir + '/' + String(path).split('/').map(encodeURIComponent).join('/');
  }

  var client = Object.freeze({
    call: function (endpoint, input) {
      var tool = config.tools[endpoint];
      if (!tool) return Promise.reject(LAVSError(-32602, 'no endpoint ' + endpoint + ' in ' + config.service));
      var args = input === undefined || input === null ? {} : input;
      if (tool.wrapInput) args = { input: input };
      return usable()
        .then(function () {
          return request('tools/call', { name: tool.name, arguments: args });
        })
        .then(valueOf);
    },
    subscribe: function (endpoint, callback) {
      var uri = config.subscriptions[endpoint];
      if (!uri) throw LAVSError(-32602, 'no subscription ' + endpoint + ' in ' + config.service);
      // MCP Apps give a view no resource notifications: the latest item is read now and then
      // (it is there when the host subscribed to the resource).
      var stopped = false;
      var last = null;
      var timer = null;
      function poll() {
        if (stopped) return;
        usable()
          .then(function () {
            return request('resources/read', { uri: uri });
          })
          .then(function (r) {
            var text = r && r.contents && r.contents[0] && r.contents[0].text;
            if (!stopped && text && text !== 'null' && text !== last) {
              last = text;
              callback(JSON.parse(text));
            }
          })
          .catch(function () {})
          .then(function () {
            if (!stopped) timer = setTimeout(poll, 2000);
          });
      }
      function stop() {
        stopped = true;
        if (timer !== null) clearTimeout(timer);
        stopPolls.delete(stop);
      }
      stopPolls.add(stop);
      poll();
      return stop;
    },
    getManifest: function () {
      return Promise.resolve(config.manifest);
    },
    readFile: function (path) {
      return usable()
        .then(function () {
          return request('resources/read', { uri: fileUri(path) });
        })
        .then(function (r) {
          var c = r && r.contents && r.contents[0];
          if (!c) throw LAVSError(-32002, 'no such file: ' + path);
          return c.text !== undefined ? c.text : atob(c.blob);
        });
    },
    // Kept for the document's life: MCP Apps have no saved view state.
    getState: function () {
      return Promise.resolve(savedState);
    },
    setState: function (state) {
      savedState = state === undefined ? null : JSON.parse(JSON.stringify(state));
      return Promise.resolve({ saved: true });
    },
    getHostContext: function () {
      return hostContext;
    },
    getToolInput: function () {
      return toolInput;
    }
  });

  // -- mounting, as hearth's view host does (docs/view-host.md, step 5) ----------------------------
  var registry = window.customElements;
  var originalDefine = registry.define;
  var defined = [];
  registry.define = function (name, cls, options) {
    defined.push({ name: name, cls: cls });
    return originalDefine.call(registry, name, cls, options);
  };

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
  function nameOf(cls) {
    if (typeof registry.getName === 'function') {
      var n = registry.getName(cls);
      if (n) return n;
    }
    for (var i = 0; i < defined.length; i++) if (defined[i].cls === cls) return defined[i].name;
    return null;
  }
  function giveClient(el) {
    if (typeof el.setLAVSClient !== 'function') return;
    try {
      var r = el.setLAVSClient(client);
      if (r && typeof r.catch === 'function') {
        r.catch(function (e) {
          log('error', 'setLAVSClient: ' + (e && e.message ? e.message : e));
        });
      }
    } catch (e) {
      log('error', 'setLAVSClient: ' + (e && e.message ? e.message : e));
    }
  }
  function failed(e) {
    registry.define = originalDefine;
    var message = 'hearth: the view could not be mounted: ' + (e && e.message ? e.message : e);
    console.error(message);
    log('error', message);
  }

  // A module component: its namespace (a promise), the element class taken as the view host takes
  // it: exportName, else the first element the module defined, else a default export class.
  function mountModule(namespace, exportName) {
    return Promise.resolve(namespace)
      .then(function (mod) {
        registry.define = originalDefine;
        var name = null;
        if (exportName) {
          var exported = mod[exportName];
          if (!isElementClass(exported)) throw new Error('the module has no export "' + exportName + '" that is a custom element class');
          name = nameOf(exported);
          if (!name) {
            name = kebab(exportName);
            originalDefine.call(registry, name, exported);
          }
        } else if (defined.length > 0) {
          name = defined[0].name;
        } else if (isElementClass(mod.default)) {
          name = nameOf(mod.default);
          if (!name) {
            name = kebab(mod.default.name);
            originalDefine.call(registry, name, mod.default);
          }
        }
        if (!name) throw new Error('the view module defined no custom element and exports none');
        var el = document.createElement(name);
        document.body.appendChild(el);
        mounted = [el];
        giveClient(el);
      })
      .catch(failed);
  }

  // An HTML component: once parsed, every element with setLAVSClient (or onAgentAction).
  function mountHtml() {
    var run = function () {
      registry.define = originalDefine;
      try {
        mounted = Array.prototype.filter.call(document.querySelectorAll('*'), function (el) {
          return typeof el.setLAVSClient === 'function' || typeof el.onAgentAction === 'function';
        });
        mounted.forEach(giveClient);
        window.lavsClient = client;
        emit('lavs-client', client);
      } catch (e) {
        failed(e);
      }
    };
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run, { once: true });
    else run();
  }

  window.addEventListener('error', function (event) {
    log('error', (event.message || 'error') + (event.lineno ? ' (line ' + event.lineno + ')' : ''));
  });
  window.addEventListener('unhandledrejection', function (event) {
    var r = event.reason;
    log('error', 'unhandled rejection: ' + (r && r.message ? r.message : r));
  });

  window.lavsClient = client;
  window.hearthMcpApp = Object.freeze({ mountModule: mountModule, mountHtml: mountHtml, client: client });
})();
