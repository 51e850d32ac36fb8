// A web MCP Apps host for tests/e2e/mcp-app-bridge.test.mjs, built from the official pieces: the
// MCP SDK's Client over Streamable HTTP to hearth's /mcp, and ext-apps' AppBridge with its
// PostMessageTransport (both bundled into ./sdk.js by the test). Each view is read with
// resources/read and rendered in an iframe sandboxed `allow-scripts` only, under the CSP the
// MCP Apps specification has a host build from the resource's _meta.ui.csp.
import { AppBridge, Client, PostMessageTransport, StreamableHTTPClientTransport } from './sdk.js';

const MIME = 'text/html;profile=mcp-app';
const HOST_INFO = { name: 'hearth-e2e-host', version: '1.0.0' };

// MCP Apps 2026-01-26, "CSP Construction from Metadata".
function cspOf(csp = {}) {
  const list = (v) => (Array.isArray(v) ? v.join(' ') : '');
  const resources = list(csp.resourceDomains);
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `connect-src 'self' ${list(csp.connectDomains)}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    `frame-src ${list(csp.frameDomains) || "'none'"}`,
    "object-src 'none'",
    `base-uri ${list(csp.baseUriDomains) || "'self'"}`,
  ].join('; ');
}

function withCsp(html, policy) {
  const tag = `<meta http-equiv="Content-Security-Policy" content="${policy.replaceAll('"', '&quot;')}">`;
  const head = /<head[^>]*>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + tag + html.slice(head.index + head[0].length);
  return tag + html;
}

// A marker a test can check the view's style against: the host's colours for each theme.
export const STYLES = {
  light: { '--color-background-primary': 'rgb(255, 250, 240)', '--color-text-primary': 'rgb(40, 30, 20)' },
  dark: { '--color-background-primary': 'rgb(20, 24, 40)', '--color-text-primary': 'rgb(230, 232, 240)' },
};

class Host {
  constructor() {
    this.log = []; // [method, detail] of every view request the bridge handled
    this.sizes = [];
    this.logs = [];
  }

  async connect(url, token) {
    this.client = new Client(HOST_INFO, {
      capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [MIME] } } },
    });
    await this.client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  }

  async lists() {
    const tools = (await this.client.listTools()).tools;
    const resources = (await this.client.listResources()).resources;
    return { tools, resources };
  }

  async read(uri) {
    try {
      const r = await this.client.readResource({ uri });
      const c = r.contents[0];
      return { uri: c.uri, mimeType: c.mimeType, size: (c.text ?? c.blob ?? '').length, meta: c._meta ?? null };
    } catch (e) {
      return { error: { code: e.code, message: e.message } };
    }
  }

  async callTool(name, args) {
    return this.client.callTool({ name, arguments: args });
  }

  // Renders `uri` as the view of `tool` (a tool definition from tools/list) and waits for the
  // handshake; resolves once the view sent ui/notifications/initialized.
  async mount(uri, tool, { theme = 'light', timeout = 10000 } = {}) {
    await this.unmount();
    const r = await this.client.readResource({ uri });
    const content = r.contents[0];
    if (content.mimeType !== MIME) throw new Error(`${uri} is ${content.mimeType}`);
    const ui = content._meta?.ui ?? {};
    const frame = document.createElement('iframe');
    frame.id = 'view';
    frame.setAttribute('sandbox', 'allow-scripts');
    frame.className = ui.prefersBorder ? 'bordered' : '';
    document.getElementById('views').append(frame);
    this.context = {
      theme,
      styles: { variables: STYLES[theme] },
      displayMode: 'inline',
      availableDisplayModes: ['inline'],
      containerDimensions: { width: 720, maxHeight: 900 },
      locale: 'en-GB',
      platform: 'web',
      ...(tool ? { toolInfo: { tool } } : {}),
    };
    document.body.dataset.theme = theme;
    const capabilities = { serverTools: {}, serverResources: {}, logging: {}, openLinks: {} };
    const bridge = new AppBridge(this.client, HOST_INFO, capabilities, { hostContext: this.context });
    this.bridge = bridge;
    this.frame = frame;
    bridge.onsizechange = ({ width, height }) => {
      this.sizes.push({ width, height });
      if (height !== undefined) frame.style.height = `${Math.min(height, 900)}px`;
    };
    bridge.onloggingmessage = (m) => this.logs.push(m);
    const initialized = new Promise((resolve, reject) => {
      bridge.oninitialized = resolve;
      setTimeout(() => reject(new Error(`${uri}: no ui/notifications/initialized in ${timeout} ms`)), timeout);
    });
    await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
    // After connect: the bridge's forwarding to the MCP client is in place; note what passes.
    const call = bridge.oncalltool;
    bridge.oncalltool = (params, extra) => {
      this.log.push(['tools/call', params.name]);
      return call(params, extra);
    };
    const read = bridge.onreadresource;
    bridge.onreadresource = (params, extra) => {
      this.log.push(['resources/read', params.uri]);
      return read(params, extra);
    };
    frame.srcdoc = withCsp(content.text, cspOf(ui.csp));
    await initialized;
    return { appVersion: bridge.getAppVersion(), appCapabilities: bridge.getAppCapabilities() };
  }

  // A request to the view with the answer or the error, and how it ended: a view that does not
  // answer fails at `timeout`, far below the SDK's default of 60 s.
  async ask(method, params = {}, timeout = 5000) {
    const anything = { '~standard': { version: 1, vendor: 'hearth-e2e', validate: (value) => ({ value }) } };
    try {
      const result = method === 'ui/resource-teardown'
        ? await this.bridge.teardownResource(params, { timeout })
        : method === 'ping'
          ? await this.bridge.request({ method, params }, { timeout })
          : await this.bridge.request({ method, params }, anything, { timeout });
      return { result };
    } catch (e) {
      return { error: { code: e.code, message: e.message } };
    }
  }

  setTheme(theme) {
    this.context = { ...this.context, theme, styles: { variables: STYLES[theme] } };
    this.bridge.setHostContext(this.context);
    document.body.dataset.theme = theme;
  }

  async toolResult(args, result) {
    await this.bridge.sendToolInput({ arguments: args });
    await this.bridge.sendToolResult(result);
  }

  async unmount() {
    if (this.bridge) await this.bridge.close().catch(() => {});
    this.frame?.remove();
    this.bridge = null;
    this.frame = null;
    this.log = [];
    this.sizes = [];
    this.logs = [];
  }
}

window.host = new Host();
window.hostReady = true;
