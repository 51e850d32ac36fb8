"""Durability: kill -9 the daemon, or its JavaScript workers, at random moments while several
clients write files through `ctx.writeFile`; after a restart every acknowledged write is there
with its whole content, no data file is half written, temporary files stay hidden, and the audit
log holds a whole line for every acknowledged call. Also a full disk (a file size limit, which
makes write(2) fail like ENOSPC): a clear error, the old content intact, no temporary file left."""
import json
import os
import random
import re
import resource
import signal
import tempfile
import threading
import time
from pathlib import Path

import pytest

from hearthtest import Daemon, error, result

MANIFEST = {
    "lavs": "1.0",
    "name": "durable",
    "version": "1.0.0",
    "endpoints": [
        {"id": "put", "method": "mutation",
         "handler": {"type": "function", "module": "store.mjs", "function": "put"},
         "schema": {"input": {"type": "object", "required": ["key", "seq", "size"],
                              "properties": {"key": {"type": "string", "pattern": "^[a-z0-9-]+$"},
                                             "seq": {"type": "integer"},
                                             "size": {"type": "integer"}}}}},
        {"id": "get", "method": "query",
         "handler": {"type": "function", "module": "store.mjs", "function": "get"}},
    ],
    "permissions": {"fileAccess": ["./data/**/*.json"], "maxExecutionTime": 20000},
}

STORE = """
export function put(input, ctx) {
  const record = {key: input.key, seq: input.seq, size: input.size, pad: 'x'.repeat(input.size)};
  ctx.writeFile('data/' + input.key + '.json', JSON.stringify(record));
  return {key: input.key, seq: input.seq};
}
export function get(input, ctx) {
  return JSON.parse(ctx.readFile('data/' + input.key + '.json')).seq;
}
"""

TEMP = re.compile(r"^\..+\.hearth-tmp-[0-9a-f]+$")


def make_service(root):
    service = Path(root) / "durable"
    (service / "data").mkdir(parents=True)
    (service / "lavs.json").write_text(json.dumps(MANIFEST))
    (service / "store.mjs").write_text(STORE)
    return service


def check_record(path):
    """The record in `path`, failing when it is not whole."""
    text = path.read_text()
    try:
        record = json.loads(text)
    except ValueError:
        pytest.fail(f"{path.name} is half written ({len(text)} bytes): {text[:80]!r}...")
    assert record["pad"] == "x" * record["size"], path
    return record


def check_folder(data):
    """Every data file whole; leftovers of killed writes are hidden temporary files only."""
    for p in data.iterdir():
        if p.name.endswith(".json"):
            assert not p.name.startswith("."), p
            check_record(p)
        else:
            assert TEMP.match(p.name), f"unexpected file {p.name}"


class Load:
    """Clients writing files (a unique key per call, plus a key they all overwrite) until stopped."""

    def __init__(self, daemon, clients=4):
        self.daemon = daemon
        self.acked = {}          # key -> seq of the acknowledged write
        self.shared_seqs = set()  # every seq ever sent for the shared key
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.client, args=(i,), daemon=True)
                        for i in range(clients)]

    def client(self, n):
        rng = random.Random(n)
        seq = 0
        try:
            http = self.daemon.http().__enter__()
        except OSError:
            return
        while not self.stop.is_set():
            seq += 1
            shared = rng.random() < 0.3
            key = "shared" if shared else f"c{n}-{seq}"
            size = rng.choice([10, 1000, 200_000, 2_000_000, 4_000_000])
            full_seq = n * 1_000_000 + seq
            if shared:
                with self.lock:
                    self.shared_seqs.add(full_seq)
            try:
                r = http.rpc("lavs/call", {"endpoint": "put",
                                           "input": {"key": key, "seq": full_seq, "size": size}})
            except Exception:  # the daemon was killed: this call is not acknowledged
                return
            if "result" in r and not shared:
                with self.lock:
                    self.acked[key] = full_seq

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)


def check_after(service, load):
    data = service / "data"
    check_folder(data)
    for key, seq in load.acked.items():
        path = data / f"{key}.json"
        assert path.exists(), f"acknowledged write of {key} is missing"
        assert check_record(path)["seq"] == seq
    if (data / "shared.json").exists():
        assert check_record(data / "shared.json")["seq"] in load.shared_seqs


def check_audit(audit_log, acked_count):
    """Every line but a torn last one is a whole record; every acknowledged put is recorded."""
    lines = audit_log.read_bytes().split(b"\n")
    records = []
    for i, line in enumerate(lines):
        if not line:
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            assert i == len(lines) - 1, f"torn audit line in the middle: {line[:80]!r}"
    ok_puts = [r for r in records if r.get("endpoint") == "put" and r.get("outcome") == "ok"]
    assert len(ok_puts) >= acked_count
    return records


def descendants(pid):
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                ppid = int(stat[stat.rindex(")") + 2:].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def worker_pids(daemon_pid):
    pids = []
    for pid in descendants(daemon_pid):
        try:
            if os.readlink(f"/proc/{pid}/exe").endswith("hearth-js-worker"):
                pids.append(pid)
        except OSError:
            pass
    return pids


def wait_gone(pid, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)


@pytest.fixture
def scratch():
    with tempfile.TemporaryDirectory(prefix="hearth-durable-") as d:
        yield Path(d)


def test_kill_9_of_the_daemon_loses_no_acknowledged_write(scratch):
    service = make_service(scratch)
    rng = random.Random(1)
    total_acked = 0
    for round_ in range(5):
        d = Daemon([service], copy=False, extra_args=["--js-workers", "3"])
        workers = worker_pids(d.proc.pid)
        try:
            with Load(d) as load:
                time.sleep(rng.uniform(0.5, 1.5))
                d.proc.send_signal(signal.SIGKILL)
                d.proc.wait()
            for w in workers:  # the jail takes the workers down with the daemon
                wait_gone(w)
            check_after(service, load)
            check_audit(d.state_dir / "audit.log", len(load.acked))
            total_acked += len(load.acked)
        finally:
            d.cleanup()
    assert total_acked > 0

    # After the restarts the service works, and reads what was written.
    d = Daemon([service], copy=False)
    try:
        some = next(iter(sorted((service / "data").glob("c*.json"))))
        assert result(d.call("get", {"key": some.stem})) == check_record(some)["seq"]
    finally:
        d.stop()
        d.cleanup()


def test_kill_9_of_workers_leaves_no_half_file(scratch):
    service = make_service(scratch)
    rng = random.Random(2)
    d = Daemon([service], copy=False, extra_args=["--js-workers", "3"])
    try:
        with Load(d) as load:
            killed = 0
            deadline = time.time() + 5
            while time.time() < deadline:
                time.sleep(rng.uniform(0.02, 0.2))
                pids = worker_pids(d.proc.pid)
                if pids:
                    try:
                        os.kill(rng.choice(pids), signal.SIGKILL)
                        killed += 1
                    except ProcessLookupError:
                        pass
        assert killed > 0
        check_after(service, load)
        # Temporaries left by killed writers go when their file is next written by a mutation.
        leftovers = [p for p in (service / "data").iterdir() if TEMP.match(p.name)]
        print("temporary files left by killed workers:", len(leftovers))
        for tmp in leftovers:
            key = tmp.name[1:tmp.name.index(".json.hearth-tmp-")]
            if (service / "data" / tmp.name).exists():
                result(d.call("put", {"key": key, "seq": 0, "size": 1}))
        assert not [p.name for p in (service / "data").iterdir() if TEMP.match(p.name)]
        # The service still answers, with every file whole.
        r = result(d.call("put", {"key": "after", "seq": 1, "size": 5}))
        assert r == {"key": "after", "seq": 1}
        check_folder(service / "data")
        check_audit(d.state_dir / "audit.log", len(load.acked))
    finally:
        d.stop()
        d.cleanup()


def test_a_torn_audit_line_does_not_swallow_the_next_record(scratch, monkeypatch):
    service = make_service(scratch)
    d = Daemon([service], copy=False)
    result(d.call("put", {"key": "one", "seq": 1, "size": 1}))
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait()
    d.stderr.close()
    with open(d.state_dir / "audit.log", "ab") as f:  # what a kill during a record's write leaves
        f.write(b'{"time":"2026-11-23T00:00:00.000Z","service":"dur')
    # The restarted daemon gets the same state folder.
    for name in ("ready.json", "token"):
        (d.tmp / name).unlink(missing_ok=True)
    monkeypatch.setattr("hearthtest.tempfile.mkdtemp", lambda **kw: str(d.tmp))
    d2 = Daemon([service], copy=False)
    try:
        result(d2.call("put", {"key": "two", "seq": 2, "size": 1}))
    finally:
        d2.stop()
    lines = (d.tmp / "state" / "audit.log").read_text().splitlines()
    d2.cleanup()
    assert json.loads(lines[0])["endpoint"] == "put"
    assert lines[-2] == '{"time":"2026-11-23T00:00:00.000Z","service":"dur'
    last = json.loads(lines[-1])
    assert last["endpoint"] == "put" and last["outcome"] == "ok"


def test_a_full_disk_is_a_clear_error_and_keeps_the_old_content(scratch):
    service = make_service(scratch)
    limit = 256 * 1024
    old = resource.getrlimit(resource.RLIMIT_FSIZE)
    # A file size limit on the daemon and (inherited) its workers: write(2) past it fails with
    # EFBIG, the same failure path as ENOSPC on a full file system.
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, old[1]))
    try:
        d = Daemon([service], copy=False)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
    try:
        result(d.call("put", {"key": "big", "seq": 1, "size": 1000}))
        before = (service / "data" / "big.json").read_bytes()
        e = error(d.call("put", {"key": "big", "seq": 2, "size": 1_000_000}))
        assert e["code"] == -32003, e
        assert "disk is full" in e["message"] and "keeps its old content" in e["message"], e
        assert (service / "data" / "big.json").read_bytes() == before
        assert sorted(p.name for p in (service / "data").iterdir()) == ["big.json"]
        # The worker survived and the service goes on.
        assert result(d.call("get", {"key": "big"})) == 1
        result(d.call("put", {"key": "big", "seq": 3, "size": 10}))
        assert result(d.call("get", {"key": "big"})) == 3
    finally:
        d.stop()
        d.cleanup()
