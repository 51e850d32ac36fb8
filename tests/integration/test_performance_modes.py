"""The faster modes and what they keep, end to end under the real jail (tests/services/modes):
a script endpoint's default process per call shares nothing with the next call; `persistent`
serves many calls from one jailed process, restarted on a crash and after maxCalls; a function's
`isolation: "worker"` keeps module state per worker while the default does not."""
import json
import os
import time

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


def warm_launchers(daemon):
    """The daemon's children that are warm jails' launchers, waiting for a call."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if parent == daemon.proc.pid and b"--exec-on-request" in argv:
            found.append(int(entry))
    return found


def wait_for(condition, limit=10.0):
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.parametrize("endpoint", ["again", "again-env"])
def test_calls_in_warm_jails_share_nothing_and_get_their_own_input(daemon, endpoint):
    # The first call makes its jail; a warm one waits for the next before it comes, and each
    # later call runs in a jail built ahead of it. None of them meets what an earlier one left.
    for i in range(6):
        tag = f"call {i}: 'quoted' $HOME \u00e9"
        waiting = set(warm_launchers(daemon))
        seen = result(daemon.call(endpoint, {"tag": tag}))
        if i > 0:
            # The call took the jail that waited for it: that launcher ran it and is gone.
            assert waiting, "no warm jail waited for the call"
            assert wait_for(lambda: not waiting <= set(warm_launchers(daemon)))
        if endpoint == "again":
            assert seen["argv"] == [tag], seen
            assert json.loads(seen["stdin"]) == {"tag": tag}, seen
        else:
            assert seen["envTag"] == tag, seen
            assert seen["argv"] == [], seen
        assert "left-behind" not in seen["tmpEntries"], seen
        assert seen["leftVar"] is None, seen
        assert not [p for p in seen["processes"] if "sleep" in p], seen
        assert seen["proxy"] is None, seen
        if i == 0:
            assert wait_for(lambda: warm_launchers(daemon)), "no warm jail was made after a call"


def test_a_warm_jail_is_jailed_and_holds_no_input(daemon, tmp_path):
    result(daemon.call("again", {"tag": "first"}))
    assert wait_for(lambda: warm_launchers(daemon))
    for pid in warm_launchers(daemon):
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        assert b"--jail" in argv
        assert not [a for a in argv if b"first" in a], argv
        with open(f"/proc/{pid}/environ", "rb") as f:
            assert b"first" not in f.read()
    outside = tmp_path / "outside.txt"
    outside.write_text("not for handlers")
    outside.chmod(0o644)
    tmp_path.chmod(0o755)
    for _ in range(3):  # the first call's jail is made then, the others' ahead of them
        seen = result(daemon.call("peek", {"path": str(outside)}))
        assert seen["outcome"] in ("PermissionError", "FileNotFoundError"), seen


def test_warm_jails_end_with_the_daemon():
    with Daemon([SERVICE]) as d:
        result(d.call("again", {"tag": "x"}))
        assert wait_for(lambda: warm_launchers(d))
        waiting = warm_launchers(d)
        d.stop()
    for pid in waiting:
        assert wait_for(lambda: not os.path.exists(f"/proc/{pid}")), f"launcher {pid} outlived the daemon"


def test_no_warm_jail_is_built_without_the_jail():
    with Daemon([SERVICE], extra_args=["--insecure-no-sandbox"]) as d:
        for _ in range(3):  # (peek leaves nothing behind on the host, unjailed as it is here)
            assert result(d.call("peek", {"path": "/nonexistent"}))["outcome"] == "FileNotFoundError"
        time.sleep(0.3)
        assert warm_launchers(d) == []


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
