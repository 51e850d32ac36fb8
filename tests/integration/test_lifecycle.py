"""Start-up, subscriptions that end, and graceful shutdown with nothing left behind."""
import json
import os
import signal
import threading
import time

from hearthtest import ROOT, wait_for

SERVICE = ROOT / "tests" / "services" / "lifecycle"


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose; it is reaped by its parent.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def marker_pids(marker):
    """Host pids of the processes whose command line contains `marker` (handlers run in a pid
    namespace of their own, so the pid they see is not the host's)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read() and alive(int(entry)):
                    found.append(int(entry))
        except OSError:
            pass
    return found



def test_ready_file_describes_the_daemon(daemon_factory):
    d = daemon_factory([SERVICE])
    r = d.ready
    assert r["url"] == f"http://127.0.0.1:{d.port}"
    assert r["wsUrl"] == f"ws://127.0.0.1:{d.port}/ws"
    assert r["services"] == ["lifecycle"]
    assert r["pid"] == d.proc.pid


def test_subscription_streams_and_last_unsubscribe_stops_the_process(daemon_factory):
    d = daemon_factory([SERVICE])
    pid_file = d.service_dir("lifecycle") / "data" / "ticks.pid"
    with d.ws() as a, d.ws() as b:
        sa = a.request("lavs/subscribe", {"endpoint": "ticks"})["result"]["subscriptionId"]
        sb = b.request("lavs/subscribe", {"endpoint": "ticks"})["result"]["subscriptionId"]
        assert sa != sb
        first = a.notification("lavs/data")["params"]
        assert first["subscriptionId"] == sa and "tick" in first["data"]
        assert b.notification("lavs/data")["params"]["subscriptionId"] == sb
        assert wait_for(pid_file.exists)
        assert marker_pids("hearth-lifecycle-ticks")
        a.request("lavs/unsubscribe", {"subscriptionId": sa}, id=2)
        time.sleep(0.5)
        assert marker_pids("hearth-lifecycle-ticks")  # b still listens
    # b disconnected: the producer is stopped.
    assert wait_for(lambda: not marker_pids("hearth-lifecycle-ticks"))


def test_crashing_producer_is_reported(daemon_factory):
    d = daemon_factory([SERVICE])
    with d.ws() as ws:
        sid = ws.request("lavs/subscribe", {"endpoint": "crashy"})["result"]["subscriptionId"]
        assert ws.notification("lavs/data")["params"]["data"] == {"n": 1}
        ended = ws.notification("lavs/subscriptionEnded")["params"]
        assert ended["subscriptionId"] == sid
        assert ended["reason"] == "error"
        assert ended["error"]["code"] == -32003
        assert ended["error"]["data"]["exitCode"] == 4
        assert "producer broke" in ended["error"]["data"]["stderr"]


def test_sigterm_stops_everything(daemon_factory):
    d = daemon_factory([SERVICE])
    data = d.service_dir("lifecycle") / "data"
    ws = d.ws()
    ws.request("lavs/subscribe", {"endpoint": "ticks"})
    t = threading.Thread(target=lambda: d.call("slowCall"), daemon=True)
    t.start()
    assert wait_for(lambda: (data / "ticks.pid").exists() and (data / "slow.pid").exists())
    markers = ["hearth-lifecycle-ticks", "hearth-lifecycle-slow"]
    assert all(marker_pids(m) for m in markers)
    assert d.stop() == 0
    assert wait_for(lambda: not any(marker_pids(m) for m in markers), timeout=5)
    assert not d.ready_file.exists()
    # The token file stays: the next start serves with the same token (test_daily_use.py).
    assert d.token_file.read_text().strip() == d.token
    ws.close()


def test_audit_log_has_one_line_per_call(daemon_factory):
    d = daemon_factory([SERVICE])
    d.call("nope")
    with d.ws() as ws:
        ws.request("lavs/subscribe", {"endpoint": "ticks"})
    d.stop()
    lines = [json.loads(l) for l in (d.state_dir / "audit.log").read_text().splitlines()]
    assert lines[0]["endpoint"] == "nope" and lines[0]["outcome"] == "error" and lines[0]["code"] == -32601
    assert lines[0]["transport"] == "http" and lines[0]["service"] == "lifecycle"
    assert lines[1]["method"] == "lavs/subscribe" and lines[1]["transport"] == "ws" and lines[1]["outcome"] == "ok"
    for l in lines:
        assert set(l) >= {"time", "service", "endpoint", "transport", "durationMs", "outcome"}
