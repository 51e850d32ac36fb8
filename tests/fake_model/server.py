#!/usr/bin/env python3
"""A scripted stand-in for an OpenAI-compatible model server (`POST /v1/chat/completions`), for
testing hearth's agent loop. It replays a scenario: one step per request, in order. A step says
what the request must look like and what to answer:

    {"expect": {"tools": ["execute_script", "attempt_completion"],   # tool names offered
                "lastRole": "tool",                                   # role of the last message
                "lastMessageContains": "schema",                      # text in the last message
                "stream": true},                                      # the request streams
     "reply": {"content": "thinking...",
               "tool_calls": [{"name": "execute_script", "arguments": {"script": "x = 1"}}],
               "reasoning": "...",            # as reasoning_content (or "reasoningField")
               "finishReason": "stop",        # instead of tool_calls/stop as fits
               "streamStyle": "split"},       # tool-call deltas: split (id and name first, the
                                              # arguments in pieces), whole (one chunk, as
                                              # Ollama), no-index, zero-index (every call 0)
     "status": 429, "headers": {"Retry-After": "1"}, "body": "...",  # an error answer instead
     "delayMs": 0,                                                    # wait before answering
     "flood": {"bytes": 100000000, "chunk": 65536}}                   # an answer that never ends:
                                                                      # content of that size, sent
                                                                      # until the client hangs up

A reply is sent as the request asks: one chat.completion JSON, or server-sent events (the text
and each tool call's arguments cut into several chunks, then `data: [DONE]`). Anything
unexpected (a request past the last step, an expectation not met, a malformed request) is
answered with HTTP 500 and recorded in `errors`, so a test that checks `errors` fails loudly.

Use it in-process (`FakeModel(steps).start()` -> base_url, `.requests`, `.errors`, `.stop()`)
or as a program: `server.py SCENARIO.jsonl [--port N]` prints its base URL on the first line.
"""
import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeModel:
    def __init__(self, steps, api_key=None):
        self.steps = list(steps)
        self.api_key = api_key  # when set, requests must carry "Authorization: Bearer <key>"
        self.requests = []      # every request body, parsed
        self.raw_sizes = []     # every request body's size in bytes
        self.auth = []          # every request's Authorization header (None when absent)
        self.flooded = []       # bytes of each flood the client took before it hung up
        self.errors = []        # what went wrong, in words
        self.lock = threading.Lock()
        self.server = None

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self, port=0):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                fake._handle(self)

            def do_GET(self):
                fake._fail(self, f"unexpected GET {self.path}")

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.base_url

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()

    def reset(self, steps, api_key=None):
        """A new scenario on the same server (a daemon configured with its URL stays so)."""
        with self.lock:
            self.steps = list(steps)
            self.api_key = api_key
            self.requests, self.raw_sizes, self.auth, self.flooded, self.errors = [], [], [], [], []

    def remaining(self):
        with self.lock:
            return len(self.steps)

    # -- one request ------------------------------------------------------------------------
    def _fail(self, handler, message):
        with self.lock:
            self.errors.append(message)
        body = json.dumps({"error": {"message": "fake model: " + message}}).encode()
        handler.send_response(500)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def _handle(self, h):
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length)
        if h.path != "/v1/chat/completions":
            return self._fail(h, f"unexpected path {h.path}")
        try:
            request = json.loads(raw)
        except ValueError:
            return self._fail(h, "the request body is not JSON")
        with self.lock:
            self.requests.append(request)
            self.raw_sizes.append(len(raw))
            self.auth.append(h.headers.get("Authorization"))
            step = self.steps.pop(0) if self.steps else None
        if self.api_key is not None and h.headers.get("Authorization") != f"Bearer {self.api_key}":
            return self._fail(h, "the request does not carry the API key")
        if step is None:
            return self._fail(h, "a request past the end of the scenario")
        problem = self._check(request, step.get("expect", {}))
        if problem:
            return self._fail(h, problem)
        if step.get("delayMs"):
            time.sleep(step["delayMs"] / 1000)
        if "status" in step:
            body = (step.get("body") or json.dumps({"error": {"message": "scripted error"}})).encode()
            h.send_response(step["status"])
            for k, v in step.get("headers", {}).items():
                h.send_header(k, v)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
            return
        if "flood" in step:
            return self._flood(h, request, step["flood"])
        reply = step.get("reply", {})
        if request.get("stream"):
            self._stream(h, request, reply)
        else:
            self._plain(h, request, reply)

    @staticmethod
    def _check(request, expect):
        for key in ("model", "messages"):
            if key not in request:
                return f"the request has no {key}"
        messages = request["messages"]
        if not isinstance(messages, list) or not messages:
            return "messages is not a non-empty list"
        for m in messages:
            if m.get("role") not in ("system", "user", "assistant", "tool"):
                return f"a message with role {m.get('role')!r}"
            if m.get("role") == "tool" and not m.get("tool_call_id"):
                return "a tool message without tool_call_id"
        if "tools" in expect:
            names = [t.get("function", {}).get("name") for t in request.get("tools", [])]
            if sorted(names) != sorted(expect["tools"]):
                return f"tools offered {names}, expected {expect['tools']}"
        last = messages[-1]
        if "lastRole" in expect and last.get("role") != expect["lastRole"]:
            return f"the last message is {last.get('role')!r}, expected {expect['lastRole']!r}"
        if "lastMessageContains" in expect:
            content = last.get("content") or ""
            if expect["lastMessageContains"] not in content:
                return (f"the last message does not contain {expect['lastMessageContains']!r}: "
                        f"{content[:300]!r}")
        if "stream" in expect and bool(request.get("stream")) != expect["stream"]:
            return f"stream is {request.get('stream')!r}, expected {expect['stream']!r}"
        if expect.get("noTools") and request.get("tools"):
            return "tools were offered to a server that takes none"
        if "systemContains" in expect:
            system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
            if expect["systemContains"] not in system:
                return f"the system message does not contain {expect['systemContains']!r}"
        if "notInMessages" in expect:
            text = json.dumps(messages)
            if expect["notInMessages"] in text:
                return f"the messages contain {expect['notInMessages']!r}"
        return None

    @staticmethod
    def _calls(reply):
        out = []
        for i, c in enumerate(reply.get("tool_calls", [])):
            args = c.get("arguments", {})
            out.append({"id": c.get("id", f"call_{i}_{int(time.time() * 1000) % 100000}"),
                        "type": "function",
                        "function": {"name": c["name"],
                                     "arguments": args if isinstance(args, str) else json.dumps(args)}})
        return out

    @staticmethod
    def _finish(reply, calls):
        return reply.get("finishReason") or ("tool_calls" if calls else "stop")

    def _plain(self, h, request, reply):
        calls = self._calls(reply)
        message = {"role": "assistant", "content": reply.get("content")}
        if calls:
            message["tool_calls"] = calls
        if reply.get("reasoning"):
            message[reply.get("reasoningField", "reasoning_content")] = reply["reasoning"]
        body = json.dumps({"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                           "model": request.get("model"),
                           "choices": [{"index": 0, "message": message,
                                        "finish_reason": self._finish(reply, calls)}],
                           "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def _stream(self, h, request, reply):
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()

        def send(obj):
            data = obj if isinstance(obj, str) else json.dumps(obj)
            payload = f"data: {data}\n\n".encode()
            h.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
            h.wfile.flush()

        def chunk(delta, finish=None):
            return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": request.get("model"),
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        send(chunk({"role": "assistant", "content": ""}))
        reasoning = reply.get("reasoning") or ""
        field = reply.get("reasoningField", "reasoning_content")
        for i in range(0, len(reasoning), 9):
            send(chunk({field: reasoning[i:i + 9]}))
        content = reply.get("content") or ""
        for i in range(0, len(content), 7):
            send(chunk({"content": content[i:i + 7]}))
        calls = self._calls(reply)
        style = reply.get("streamStyle", "split")
        for index, c in enumerate(calls):
            args = c["function"]["arguments"]
            name = c["function"]["name"]
            if style == "whole":
                send(chunk({"tool_calls": [{"index": index, "id": c["id"], "type": "function",
                                            "function": {"name": name, "arguments": args}}]}))
                continue
            first = {"id": c["id"], "type": "function", "function": {"name": name, "arguments": ""}}
            if style != "no-index":
                first["index"] = 0 if style == "zero-index" else index
            send(chunk({"tool_calls": [first]}))
            for i in range(0, len(args), 11):
                piece = {"function": {"arguments": args[i:i + 11]}}
                if style != "no-index":
                    piece["index"] = 0 if style == "zero-index" else index
                if style == "zero-index":
                    piece["id"] = c["id"]
                send(chunk({"tool_calls": [piece]}))
        send(chunk({}, self._finish(reply, calls)))
        send({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": [],
              "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
        send("[DONE]")
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()


    def _flood(self, h, request, flood):
        """Content deltas (streamed) or one body (plain) of flood["bytes"], for as long as the
        client reads; what it took is recorded in `flooded`."""
        total, size = flood["bytes"], flood.get("chunk", 65536)
        sent = 0
        try:
            if request.get("stream"):
                h.send_response(200)
                h.send_header("Content-Type", "text/event-stream")
                h.send_header("Transfer-Encoding", "chunked")
                h.end_headers()
                text = "x" * size
                while sent < total:
                    data = json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]})
                    payload = f"data: {data}\n\n".encode()
                    h.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
                    sent += len(payload)
                h.wfile.write(b"0\r\n\r\n")
            else:
                head = b'{"choices":[{"index":0,"message":{"role":"assistant","content":"'
                tail = b'"},"finish_reason":"stop"}]}'
                h.send_response(200)
                h.send_header("Content-Type", "application/json")
                h.send_header("Content-Length", str(len(head) + total + len(tail)))
                h.end_headers()
                h.wfile.write(head)
                block = b"x" * size
                while sent < total:
                    n = min(size, total - sent)
                    h.wfile.write(block[:n])
                    sent += n
                h.wfile.write(tail)
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        with self.lock:
            self.flooded.append(sent)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenario", help="JSONL file, one step a line")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with open(args.scenario) as f:
        steps = [json.loads(line) for line in f if line.strip()]
    fake = FakeModel(steps)
    print(fake.start(args.port), flush=True)
    try:
        while True:
            time.sleep(1)
            for e in fake.errors:
                print("error:", e, file=sys.stderr, flush=True)
            fake.errors.clear()
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
