#!/usr/bin/env python3
"""An MCP server (stdio transport, MCP 2025-06-18) keeping reading notes on books in
data/notes.json: the bookshelf example's `mcp` endpoints. Python's standard library only.

Tools: add_note {bookId, text} -> the note; list_notes {bookId?} -> {notes: [...]}.
Every message is one line of JSON-RPC on stdin/stdout; logs go to stderr.
"""
import json
import os
import sys
import time

NOTES = os.path.join(os.environ.get("LAVS_SERVICE_DIR", "."), "data", "notes.json")
VERSIONS = ["2025-11-25", "2025-06-18"]

NOTE = {"type": "object", "properties": {"bookId": {"type": "integer"}, "text": {"type": "string"},
                                          "at": {"type": "string"}},
        "required": ["bookId", "text", "at"]}
TOOLS = [
    {"name": "add_note", "title": "Add a reading note",
     "description": "Adds a note about a book.",
     "inputSchema": {"type": "object", "properties": {
         "bookId": {"type": "integer", "minimum": 1},
         "text": {"type": "string", "minLength": 1}}, "required": ["bookId", "text"]},
     "outputSchema": NOTE},
    {"name": "list_notes", "title": "List reading notes",
     "description": "Lists the notes, of one book or of all.",
     "inputSchema": {"type": "object", "properties": {"bookId": {"type": "integer"}}},
     "outputSchema": {"type": "object", "properties": {"notes": {"type": "array", "items": NOTE}},
                      "required": ["notes"]}},
]


def load():
    try:
        with open(NOTES) as f:
            return json.load(f)
    except FileNotFoundError:
        return []


def save(notes):
    tmp = NOTES + ".tmp"
    with open(tmp, "w") as f:
        json.dump(notes, f, indent=1)
    os.replace(tmp, NOTES)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tool_result(structured):
    return {"content": [{"type": "text", "text": json.dumps(structured)}],
            "structuredContent": structured}


def call_tool(name, args):
    if name == "add_note":
        book, text = args.get("bookId"), args.get("text")
        if not isinstance(book, int) or not isinstance(text, str) or not text.strip():
            return {"isError": True, "content": [{"type": "text", "text": "a note needs a bookId and a text"}]}
        note = {"bookId": book, "text": text.strip(), "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        notes = load()
        notes.append(note)
        save(notes)
        return tool_result(note)
    if name == "list_notes":
        book = args.get("bookId")
        return tool_result({"notes": [n for n in load() if book is None or n["bookId"] == book]})
    return None


def handle(message):
    method, rid = message.get("method"), message.get("id")
    params = message.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {"protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "reading-notes", "version": "1.0.0"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        result = call_tool(params.get("name"), params.get("arguments") or {})
        if result is None:
            raise LookupError(f"unknown tool {params.get('name')!r}")
        return result
    if rid is not None:
        raise NotImplementedError(method)
    return None


for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue  # a notification (initialized, cancelled) or a response
    try:
        send({"jsonrpc": "2.0", "id": message["id"], "result": handle(message)})
    except LookupError as e:
        send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": str(e)}})
    except NotImplementedError as e:
        send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": f"no method {e}"}})
