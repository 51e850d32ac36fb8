// A plain JSON HTTP service for bench/outbound/run.sh: POST /add {"a","b"} -> {"sum": a + b}.
// Writes its port to the file named by its first argument.
import http from "node:http";
import { writeFileSync } from "node:fs";

const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    let out;
    try {
      const { a, b } = JSON.parse(body || "{}");
      out = JSON.stringify({ sum: a + b });
    } catch {
      res.writeHead(400).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(out) });
    res.end(out);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => writeFileSync(process.argv[2], String(server.address().port)));
