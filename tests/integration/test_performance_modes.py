"""The faster modes and what they keep, end to end under the real jail (tests/services/modes):
a script endpoint's default process per call shares nothing with the next call; `persistent`
serves many calls from one jailed process, restarted on a crash and after maxCalls; a function's
`isolation: "worker"` keeps module state per worker while the default does not."""
import pytest

from hearthtest import ROOT, Daemon, error, result

SERVICE = ROOT / "tests" / "services" / "modes"


@pytest.fixture(scope="module")
def daemon():
    with Daemon([SERVICE], extra_args=["--js-workers", "2"]) as d:
        yield d


def test_a_call_never_meets_what_an_earlier_call_left(daemon):
    assert result(daemon.call("leave")) == {"left": True}
    seen = result(daemon.call("look"))
    assert seen["tmpFile"] is False, seen
    assert "left-behind" not in seen["tmpEntries"], seen
    assert seen["env"] is None, seen
    assert not [p for p in seen["processes"] if "sleep" in p], seen


def test_a_persistent_process_serves_many_calls_then_is_replaced(daemon):
    answers = [result(daemon.call("server", {"op": "count"})) for _ in range(7)]
    assert [a["served"] for a in answers] == [1, 2, 3, 4, 5, 1, 2]
    assert len({a["instance"] for a in answers[:5]}) == 1
    assert answers[5]["instance"] != answers[4]["instance"]  # maxCalls 5: a new process
    assert all(a["persistent"] == "1" for a in answers)


def test_a_persistent_process_keeps_its_leftovers_as_opted_in(daemon):
    first = result(daemon.call("crash", {"op": "tmp"}))
    second = result(daemon.call("crash", {"op": "tmp"}))
    assert second["instance"] == first["instance"]
    assert second["tmp"] == first["tmp"] + 1


def test_a_persistent_process_is_jailed(daemon, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("not for handlers")
    outside.chmod(0o644)
    tmp_path.chmod(0o755)
    r = result(daemon.call("server", {"op": "read", "path": str(outside)}))
    assert r["outcome"] in ("PermissionError", "FileNotFoundError"), r


def test_a_persistent_crash_fails_its_call_and_the_next_gets_a_new_process(daemon):
    before = result(daemon.call("crash", {"op": "count"}))
    e = error(daemon.call("crash", {"op": "die"}))
    assert e["code"] == -32003
    assert e["message"] == "Handler exited with code 7"
    assert e["data"]["exitCode"] == 7
    assert "dying on request" in e["data"]["stderr"]
    after = result(daemon.call("crash", {"op": "count"}))
    assert after["instance"] != before["instance"]
    assert after["served"] == 1


def test_function_isolation_worker_keeps_module_state_and_call_does_not(daemon):
    assert [result(daemon.call("fresh"))["count"] for _ in range(4)] == [1, 1, 1, 1]
    counts = [result(daemon.call("counter"))["count"] for _ in range(10)]
    # Two workers, each with its own instance: each counts the calls it ran, 1, 2, 3...
    splits = [sorted(list(range(1, k + 1)) + list(range(1, 11 - k))) for k in range(11)]
    assert sorted(counts) in splits, counts
    assert max(counts) >= 5, counts
