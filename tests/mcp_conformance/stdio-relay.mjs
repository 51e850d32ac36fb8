// Runs the conformance suite's protocol scenarios against `hearth mcp serve` (stdio): a relay that
// takes Streamable HTTP posts from the suite's client and passes each JSON-RPC message unchanged to
// one hearth stdio server, giving the answer back (as server-sent events, after the progress
// notifications of that request and the log messages sent while a tools/call ran, when there are
// any: stdio has one stream, HTTP one per request). Ids are renumbered on the way so that the
// suite's successive clients never collide; nothing else is touched, so what the scenarios check
// is hearth's stdio server. HTTP-level scenarios (DNS rebinding, several SSE streams) test the
// daemon's /mcp and are not run here.
//   node stdio-relay.mjs PORT_FILE HEARTH_BINARY ARGS...
import http from 'node:http';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const [portFile, hearth, ...args] = process.argv.slice(2);
const child = spawn(hearth, args, { stdio: ['pipe', 'pipe', 'inherit'] });
child.on('exit', (code) => {
  console.error(`hearth mcp serve exited (${code})`);
  process.exit(1);
});
let nextId = 1;
const waiting = new Map(); // relay id -> { resolve, originalId, progressToken, notes }
createInterface({ input: child.stdout }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.id !== undefined && message.method === undefined) {
    const w = waiting.get(message.id);
    if (!w) return;
    waiting.delete(message.id);
    w.resolve({ ...message, id: w.originalId });
    return;
  }
  if (message.method === 'notifications/progress') {
    for (const w of waiting.values()) {
      if (w.progressToken !== undefined && w.progressToken === message.params?.progressToken) w.notes.push(message);
    }
  }
  if (message.method === 'notifications/message') {
    for (const w of waiting.values()) {
      if (w.method === 'tools/call') w.notes.push(message);
    }
  }
});

function relay(message) {
  if (message.id === undefined || message.method === undefined) {
    child.stdin.write(JSON.stringify(message) + '\n');
    return Promise.resolve(null);
  }
  const id = nextId++;
  return new Promise((resolve) => {
    const w = {
      originalId: message.id, method: message.method, progressToken: message.params?._meta?.progressToken, notes: [],
    };
    w.resolve = (answer) => resolve({ answer, notes: w.notes });
    waiting.set(id, w);
    child.stdin.write(JSON.stringify({ ...message, id }) + '\n');
  });
}

const server = http.createServer(async (req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405, { Allow: 'POST' }).end();
    return;
  }
  let body = '';
  for await (const chunk of req) body += chunk;
  const result = await relay(JSON.parse(body));
  if (!result) {
    res.writeHead(202).end();
    return;
  }
  if (result.notes.length === 0) {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(result.answer));
    return;
  }
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  for (const m of [...result.notes, result.answer]) res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
  res.end();
});
server.listen(0, '127.0.0.1', () => writeFileSync(portFile, String(server.address().port)));
