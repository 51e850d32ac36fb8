// A stand-in for the seed's TypeScript LAVS runtime, for bench/seed/run.sh: the same executors
// the seed uses, behind a minimal HTTP front end (no auth, no validation, no sandbox):
// - function handlers: the module is imported (once: Node caches it) and the function called in
//   this process, as the seed's FunctionExecutor does;
// - script handlers: child_process.spawn per call, the input written to stdin as JSON, stdout
//   collected and parsed, as the seed's ScriptExecutor does (unsandboxed).
// Like the seed, each call logs a line before and after (sent to stdout; the benchmark discards
// it). Usage: node server.mjs SERVICE_DIR PORT_FILE
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, portFile] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(path.join(dir, 'lavs.json'), 'utf8'));
const endpoints = new Map(manifest.endpoints.map((e) => [e.id, e]));

async function callFunction(handler, input, context) {
  console.log(`[LAVS] Executing function for ${context.endpointId}`);
  const mod = await import(pathToFileURL(path.join(dir, handler.module)).href);
  const result = await mod[handler.function](input, context);
  console.log(`[LAVS] Function completed`);
  return result;
}

function callScript(handler, input, context) {
  console.log(`[LAVS] Executing script for ${context.endpointId}`);
  return new Promise((resolve, reject) => {
    const proc = spawn(handler.command, handler.args ?? [], {
      cwd: dir,
      // hearth's handler PATH, so that both start the same python3 (not a version manager's shim).
      env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
             LAVS_ENDPOINT_ID: context.endpointId },
      timeout: 30000,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => { stdout += d.toString(); });
    proc.stderr.on('data', (d) => { stderr += d.toString(); });
    proc.on('error', reject);
    proc.on('close', (code) => {
      console.log(`[LAVS] Script completed`, { exitCode: code });
      if (code !== 0) return reject(new Error(`Script exited with code ${code}: ${stderr}`));
      const text = stdout.trim();
      resolve(text ? JSON.parse(text) : null);
    });
    proc.stdin.write(JSON.stringify(input));
    proc.stdin.end();
  });
}

const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', async () => {
    let id = null;
    try {
      const rpc = JSON.parse(body);
      id = rpc.id;
      const endpoint = endpoints.get(rpc.params.endpoint);
      const context = { endpointId: endpoint.id, workdir: dir };
      const h = endpoint.handler;
      const result = h.type === 'function'
        ? await callFunction(h, rpc.params.input, context)
        : await callScript(h, rpc.params.input, context);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
    } catch (e) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32003, message: String(e) } }));
    }
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => writeFileSync(portFile, String(server.address().port)));
