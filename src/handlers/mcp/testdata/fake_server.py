"""A small MCP stdio server for the mcp handler's unit tests: it records what it receives in
FAKE_MCP_LOG (one JSON line each) and offers tools that misbehave on purpose."""
import json
import os
import sys
import threading
import time

LOG = os.environ.get("FAKE_MCP_LOG")
lock = threading.Lock()
extra_tools = []


def log(message):
    if LOG:
        with open(LOG, "a") as f:
            f.write(json.dumps(message) + "\n")


def send(message):
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def tool(name):
    return {"name": name, "description": "the " + name + " tool",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}


def call(rid, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    token = (params.get("_meta") or {}).get("progressToken")
    if name == "echo":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "content": [{"type": "text", "text": args.get("text", "")}],
            "structuredContent": {"echo": args.get("text", ""), "pid": os.getpid()}}})
    elif name == "text":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "content": [{"type": "text", "text": "plain " + args.get("text", "")}]}})
    elif name == "fail":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "isError": True, "content": [{"type": "text", "text": "it went wrong"}]}})
    elif name == "crash":
        sys.stderr.write("about to crash\n")
        sys.stderr.flush()
        os._exit(7)
    elif name == "sleep":
        pass  # never answers
    elif name == "progress":
        def work():
            for i in range(5):
                time.sleep(0.1)
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": i + 1, "total": 5}})
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [], "structuredContent": {"done": True}}})
        threading.Thread(target=work, daemon=True).start()
    elif name == "grow":
        extra_tools.append("added")
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": []}})
    elif name == "added":
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "new"}]}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "unknown tool " + str(name)}})


for line in sys.stdin:
    message = json.loads(line)
    log(message)
    method = message.get("method")
    rid = message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": os.environ.get("FAKE_MCP_VERSION", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "fake", "version": "1.0"}}})
    elif method == "tools/list":
        names = ["echo", "text", "fail", "crash", "sleep", "progress", "grow"] + extra_tools
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool(n) for n in names]}})
    elif method == "tools/call":
        call(rid, message.get("params") or {})
    elif rid is not None and method is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no " + method}})
