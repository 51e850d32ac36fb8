"""Many concurrent calls, every body checked: a result is complete only when the child exited AND
its pipes reached EOF (runtimes that resolve on exit alone lose output under load)."""
import concurrent.futures
import json

from hearthtest import ROOT

SERVICE = ROOT / "tests" / "services" / "load"


def test_32_connections_every_body_complete(daemon_factory):
    d = daemon_factory([SERVICE])
    expected_len = 64 * 1024

    def worker(n):
        failures = []
        with d.http() as c:
            for i in range(8):
                r = c.rpc("lavs/call", {"endpoint": "blob", "input": {"size": expected_len, "tag": f"{n}-{i}"}}, id=i)
                res = r.get("result")
                if not isinstance(res, dict) or res.get("tag") != f"{n}-{i}" or len(res.get("data", "")) != expected_len:
                    failures.append(json.dumps(r)[:200])
        return failures

    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        results = list(pool.map(worker, range(32)))
    failures = [f for r in results for f in r]
    assert failures == [], failures[:3]


def test_slow_handler_does_not_delay_others(daemon_factory):
    d = daemon_factory([SERVICE])
    import threading
    import time
    slow_done = []

    def slow():
        slow_done.append(d.call("sleep", {"seconds": 3}))

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(0.3)
    start = time.time()
    for _ in range(5):
        assert "result" in d.call("blob", {"size": 10, "tag": "fast"})
    fast_elapsed = time.time() - start
    t.join()
    assert "result" in slow_done[0]
    # The fast calls finished while the slow one was still running.
    assert fast_elapsed < 2.5, fast_elapsed


def test_batch_members_run_concurrently_and_keep_order(daemon_factory):
    d = daemon_factory([SERVICE])
    batch = [{"jsonrpc": "2.0", "id": i, "method": "lavs/call",
              "params": {"endpoint": "blob", "input": {"size": 5, "tag": str(i)}}} for i in range(10)]
    with d.http() as c:
        status, _, body = c.post(batch)
    assert status == 200
    out = json.loads(body)
    assert [r["id"] for r in out] == list(range(10))
    assert [r["result"]["tag"] for r in out] == [str(i) for i in range(10)]
