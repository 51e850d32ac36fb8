#!/usr/bin/env python3
"""Soak benchmark: many concurrent clients against one `hearth serve` for a long time.

HTTP clients call the todo-manager-js service over keep-alive connections, one call each per
--think seconds (listTodos, and every --mutate-every calls addTodo followed by deleteTodo of what
they added); WebSocket clients subscribe to
todoUpdates, count the pushes the mutations cause, and call listTodos over the socket now and
then. Every answer is checked. Every SAMPLE seconds the daemon's resident memory (VmRSS) and the
counts so far are printed; at the end a JSON summary. Exit status 1 when any error was seen.

    python3 bench/soak.py [--build build/release] [--http 700] [--ws 300] [--duration 600]

Only loopback traffic; the run is bounded by --duration and stops by itself."""
import argparse
import asyncio
import base64
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class Counts:
    def __init__(self):
        self.calls = 0
        self.ws_calls = 0
        self.pushes = 0
        self.errors = 0
        self.first_errors = []
        self.ws_open = 0

    def error(self, what):
        self.errors += 1
        if len(self.first_errors) < 10:
            self.first_errors.append(what)


def rpc(id_, method, params):
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode()


async def http_client(port, token, counts, stop, n, think, mutate_every):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\n")

    async def call(id_, method, params):
        body = rpc(id_, method, params)
        writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        status = await reader.readline()
        length = 0
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        data = await reader.readexactly(length)
        if b" 200 " not in status:
            raise RuntimeError(f"HTTP {status!r}")
        answer = json.loads(data)
        if answer.get("id") != id_ or "result" not in answer:
            raise RuntimeError(f"bad answer {answer!r:.200}")
        return answer["result"]

    i = 0
    try:
        while not stop.is_set():
            i += 1
            try:
                await asyncio.sleep(think)
                if (i + n) % mutate_every == 0:  # spread over the clients
                    added = await call(i, "lavs/call", {"endpoint": "addTodo",
                                                        "input": {"text": f"soak {n}.{i}"}})
                    todo_id = added["id"] if "id" in added else added.get("todo", {}).get("id")
                    await call(i + 1, "lavs/call", {"endpoint": "deleteTodo", "input": {"id": todo_id}})
                    counts.calls += 2
                else:
                    result = await call(i, "lavs/call", {"endpoint": "listTodos"})
                    if not isinstance(result, (list, dict)):
                        raise RuntimeError(f"listTodos gave {result!r:.100}")
                    counts.calls += 1
            except Exception as e:  # noqa: BLE001 - every failure is counted and shown
                counts.error(f"http: {e}")
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
    finally:
        writer.close()


async def ws_client(port, token, counts, stop, n):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                  f"Authorization: Bearer {token}\r\n\r\n").encode())
    status = await reader.readline()
    while (await reader.readline()) not in (b"\r\n", b""):
        pass
    if b" 101 " not in status:
        counts.error(f"ws upgrade: {status!r}")
        writer.close()
        return
    counts.ws_open += 1

    def send(text):
        payload = text.encode()
        mask = os.urandom(4)
        header = bytearray([0x81])
        if len(payload) < 126:
            header.append(0x80 | len(payload))
        else:
            header.append(0x80 | 126)
            header += len(payload).to_bytes(2, "big")
        writer.write(bytes(header) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    async def recv():
        b0, b1 = await reader.readexactly(2)
        length = b1 & 0x7F
        if length == 126:
            length = int.from_bytes(await reader.readexactly(2), "big")
        elif length == 127:
            length = int.from_bytes(await reader.readexactly(8), "big")
        data = await reader.readexactly(length)
        return b0 & 0x0F, data

    send(rpc(1, "lavs/subscribe", {"endpoint": "todoUpdates"}).decode())
    pending = {}
    next_id = 2

    async def ticker():
        nonlocal next_id
        while not stop.is_set():
            await asyncio.sleep(5 + (n % 10))
            pending[next_id] = time.monotonic()
            send(rpc(next_id, "lavs/call", {"endpoint": "listTodos"}).decode())
            next_id += 1

    tick = asyncio.create_task(ticker())
    try:
        while not stop.is_set():
            try:
                opcode, data = await asyncio.wait_for(recv(), timeout=1.0)
            except asyncio.TimeoutError:
                continue
            if opcode == 0x9:  # ping: answer with a masked pong
                mask = os.urandom(4)
                writer.write(bytes([0x8A, 0x80 | len(data)]) + mask +
                             bytes(b ^ mask[i % 4] for i, b in enumerate(data)))
                continue
            if opcode == 0x8:
                counts.error("ws: closed by the server")
                return
            message = json.loads(data)
            if message.get("method") == "lavs/data":
                counts.pushes += 1
            elif message.get("method") == "lavs/subscriptionEnded":
                counts.error(f"ws: subscription ended {message!r:.200}")
            elif message.get("id") == 1:
                if "result" not in message:
                    counts.error(f"ws subscribe: {message!r:.200}")
            elif message.get("id") in pending:
                pending.pop(message["id"])
                if "result" in message:
                    counts.ws_calls += 1
                else:
                    counts.error(f"ws call: {message!r:.200}")
            else:
                counts.error(f"ws: unexpected {message!r:.200}")
    except Exception as e:  # noqa: BLE001
        counts.error(f"ws: {e}")
    finally:
        tick.cancel()
        counts.ws_open -= 1
        writer.close()
    for id_, since in pending.items():
        if time.monotonic() - since > 10:
            counts.error(f"ws call {id_} never answered")


def rss_kib(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(ROOT / "build" / "release"))
    ap.add_argument("--http", type=int, default=700)
    ap.add_argument("--ws", type=int, default=300)
    ap.add_argument("--duration", type=float, default=600)
    ap.add_argument("--sample", type=float, default=30)
    ap.add_argument("--think", type=float, default=0.5, help="seconds an HTTP client waits between calls")
    ap.add_argument("--mutate-every", type=int, default=200, help="every Nth call of a client is a mutation pair")
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    work = Path(tempfile.mkdtemp(prefix="hearth-soak-"))
    service = work / "todo-manager-js"
    shutil.copytree(ROOT / "examples" / "todo-manager-js", service,
                    ignore=shutil.ignore_patterns("data"))
    (service / "data").mkdir()
    daemon = subprocess.Popen(
        [str(Path(args.build) / "bin" / "hearth"), "serve", str(service), "--port", "0",
         "--ready-file", str(work / "ready.json"), "--token-file", str(work / "token"),
         "--state-dir", str(work / "state")],
        stdout=subprocess.DEVNULL, stderr=open(work / "daemon.log", "wb"))
    try:
        for _ in range(400):
            if (work / "ready.json").exists() and (work / "ready.json").stat().st_size:
                break
            await asyncio.sleep(0.05)
        ready = json.loads((work / "ready.json").read_text())
        port, token = ready["port"], (work / "token").read_text().strip()
        counts, stop = Counts(), asyncio.Event()
        tasks = [asyncio.create_task(ws_client(port, token, counts, stop, n)) for n in range(args.ws)]
        tasks += [asyncio.create_task(http_client(port, token, counts, stop, n, args.think, args.mutate_every))
                  for n in range(args.http)]
        start = time.monotonic()
        samples = []
        print("seconds  rss_kib  calls  ws_calls  pushes  errors  ws_open", flush=True)
        while time.monotonic() - start < args.duration:
            await asyncio.sleep(min(args.sample, args.duration - (time.monotonic() - start)))
            sample = {"t": round(time.monotonic() - start), "rssKiB": rss_kib(daemon.pid),
                      "calls": counts.calls, "wsCalls": counts.ws_calls, "pushes": counts.pushes,
                      "errors": counts.errors, "wsOpen": counts.ws_open}
            samples.append(sample)
            print(f"{sample['t']:7d}  {sample['rssKiB']}  {counts.calls}  {counts.ws_calls}  "
                  f"{counts.pushes}  {counts.errors}  {counts.ws_open}", flush=True)
            if daemon.poll() is not None:
                counts.error(f"the daemon exited with {daemon.returncode}")
                break
        stop.set()
        await asyncio.wait(tasks, timeout=15)
        summary = {"http": args.http, "ws": args.ws, "duration": args.duration,
                   "calls": counts.calls, "wsCalls": counts.ws_calls, "pushes": counts.pushes,
                   "errors": counts.errors, "firstErrors": counts.first_errors,
                   "rssKiB": {"first": samples[0]["rssKiB"] if samples else None,
                              "max": max((s["rssKiB"] or 0) for s in samples) if samples else None,
                              "last": samples[-1]["rssKiB"] if samples else None},
                   "samples": samples}
        print(json.dumps(summary))
        return 1 if counts.errors else 0
    finally:
        daemon.terminate()
        try:
            daemon.wait(10)
        except subprocess.TimeoutExpired:
            daemon.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
