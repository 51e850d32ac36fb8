// The same `add` as an MCP tool on the official TypeScript SDK: Streamable HTTP, stateless mode
// (a server and transport per request, as the SDK's documentation shows), JSON responses.
// Usage: node mcp-server.mjs PORT_FILE  (run from the folder where the SDK is installed)
import http from 'node:http';
import fs from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

function makeServer() {
  const server = new McpServer({ name: 'bench-js', version: '1.0.0' });
  server.registerTool(
    'add',
    { description: 'a + b', inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  return server;
}

const httpServer = http.createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  let body = '';
  for await (const chunk of req) body += chunk;
  const server = makeServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, JSON.parse(body));
});
httpServer.keepAliveTimeout = 60000;
httpServer.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(process.argv[2], String(httpServer.address().port));
});
