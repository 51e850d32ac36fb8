// "Connect a client": ready-to-paste MCP client configurations for this daemon (docs/mcp-server.md):
// Streamable HTTP at /mcp with the daemon's bearer token, and stdio through `hearth mcp serve`.
// The token is the one this tab holds (from the #token link); it is masked on screen until the
// person reveals it, and the Copy buttons copy the real configuration.
import { el, button, panelHead, copyText } from './kit.js';

const MASK = '••••••••••••';

/// The configurations for a daemon at `origin` (http://HOST:PORT) with `token`.
export function clientConfigs(origin, token) {
  const url = `${origin}/mcp`;
  const bearer = `Bearer ${token}`;
  const json = (v) => JSON.stringify(v, null, 2);
  return [
    {
      id: 'claude-desktop',
      title: 'Claude Desktop',
      where: 'claude_desktop_config.json (Settings → Developer → Edit Config). Claude Desktop starts stdio servers, so mcp-remote bridges to the daemon’s HTTP endpoint.',
      text: json({ mcpServers: { hearth: { command: 'npx', args: ['-y', 'mcp-remote', url, '--header', 'Authorization:${HEARTH_AUTH}'], env: { HEARTH_AUTH: bearer } } } }),
    },
    {
      id: 'vscode',
      title: 'VS Code',
      where: '.vscode/mcp.json in a workspace (or MCP: Open User Configuration).',
      text: json({ servers: { hearth: { type: 'http', url, headers: { Authorization: bearer } } } }),
    },
    {
      id: 'mcp-json',
      title: 'Generic mcp.json',
      where: 'Clients that read an mcpServers map with a URL (Cursor’s ~/.cursor/mcp.json, and others).',
      text: json({ mcpServers: { hearth: { url, headers: { Authorization: bearer } } } }),
    },
    {
      id: 'claude-code',
      title: 'Claude Code',
      where: 'A shell command that adds the server to Claude Code.',
      text: `claude mcp add --transport http hearth ${url} --header "Authorization: ${bearer}"`,
    },
    {
      id: 'inspector',
      title: 'MCP Inspector',
      where: 'Lists the tools from a shell (drop --cli and the options after the URL for its web UI).',
      text: `npx @modelcontextprotocol/inspector --cli ${url} --transport http --method tools/list --header "Authorization: ${bearer}"`,
    },
    {
      id: 'stdio',
      title: 'stdio (a hearth of the client’s own)',
      where: 'For a client that starts its servers itself: it runs its own hearth on your service folders (not this daemon; no token needed). Put your folders in args.',
      text: json({ mcpServers: { hearth: { command: 'hearth', args: ['mcp', 'serve', '/path/to/your/services'] } } }),
      noToken: true,
    },
  ];
}

export class ConnectPanel {
  constructor({ section, token }) {
    this.section = section;
    this.token = token;
    this.revealed = false;
  }

  summary() {
    return 'MCP clients';
  }

  show() {
    this.render();
  }

  render() {
    const s = this.section;
    s.textContent = '';
    const url = `${location.origin}/mcp`;
    s.append(panelHead('Connect a client', `MCP clients reach this daemon’s services at ${url} (Streamable HTTP) with its bearer token. Paste one of these into the client’s configuration.`));
    const warn = el('div', 'banner warn');
    warn.append(el('span', null, 'These configurations carry the daemon’s token: whoever has it can call every service. Paste them only into your own clients. If the daemon starts with a new token, copy them again. '));
    const reveal = button(this.revealed ? 'Hide the token' : 'Show the token', 'ghost small', { action: 'reveal' });
    reveal.id = 'connect-reveal';
    reveal.addEventListener('click', () => {
      this.revealed = !this.revealed;
      this.render();
    });
    warn.append(reveal);
    s.append(warn);
    const grid = el('div', 'connect-grid');
    for (const c of clientConfigs(location.origin, this.token)) {
      const card = el('section', 'card connect-card');
      card.dataset.client = c.id;
      const head = el('div', 'card-head');
      head.append(el('h2', null, c.title));
      const copy = button('Copy', 'ghost small', { action: 'copy' });
      copy.addEventListener('click', () => copyText(copy, c.text));
      head.append(copy);
      const pre = el('pre', 'config', this.revealed || c.noToken ? c.text : c.text.split(this.token).join(MASK));
      card.append(head, el('p', 'muted', c.where), pre);
      grid.append(card);
    }
    s.append(grid);
  }
}
