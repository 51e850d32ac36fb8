#!/usr/bin/env python3
"""Field Notes' backend: JSON-RPC 2.0 over stdio, one message per line.

`notes.summarise` takes the notes ({"notes": ["...", ...]}) and answers a summary that follows
artifacts/summary.schema.json: the count, the most frequent words and the first lines. The host
reads the notes from the app's storage and records the artifact; the backend only computes.
"""
import collections
import json
import re
import sys

STOP = {"the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "with", "is", "it", "at"}


def summarise(params):
    notes = params.get("notes")
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise ValueError("notes must be a list of strings")
    words = collections.Counter(
        w for n in notes for w in re.findall(r"[a-z']+", n.lower()) if w not in STOP)
    return {
        "count": len(notes),
        "topWords": [w for w, _ in words.most_common(5)],
        "firstLines": [n.splitlines()[0][:120] for n in notes[:3] if n.strip()],
    }


METHODS = {"notes.summarise": summarise}


def answer(message):
    rid = message.get("id")
    method = message.get("method")
    if method == "initialize":
        return {"jsonrpc": "2.0", "id": rid, "result": {"name": "field-notes-backend", "methods": sorted(METHODS)}}
    handler = METHODS.get(method)
    if handler is None:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no method {method}"}}
    try:
        return {"jsonrpc": "2.0", "id": rid, "result": handler(message.get("params") or {})}
    except ValueError as e:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": str(e)}}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        else:
            if "id" not in message:
                continue  # a notification
            reply = answer(message)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
