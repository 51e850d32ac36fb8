"""`hearth serve --watch`: manifests added, edited and removed while the daemon serves."""
import json
import os
import threading
import time
from pathlib import Path

from hearthtest import wait_for


def manifest(name, version, sleep=0, with_feed=True):
    endpoints = [
        {"id": "version", "method": "query",
         "handler": {"type": "script", "command": "sh",
                     "args": ["-c", f"sleep {sleep}; echo '{{\"v\": {version}}}'"]}},
    ]
    if with_feed:
        endpoints.append(
            {"id": "feed", "method": "subscription",
             "handler": {"type": "script", "command": "sh",
                         "args": ["-c", "echo '{\"n\": 1}'; exec sleep 60"]}})
    return {"lavs": "1.0", "name": name, "version": "1.0.0", "endpoints": endpoints}


def write(folder, doc):
    """Writes lavs.json the way editors do: beside it, then renamed over it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / "lavs.json.tmp"
    tmp.write_text(json.dumps(doc) if isinstance(doc, dict) else doc)
    os.replace(tmp, folder / "lavs.json")


def services(d):
    return [s["name"] for s in d.rpc("lavs/services")["result"]["services"]]



def start(daemon_factory, tmp_path):
    root = tmp_path / "services"
    write(root / "alpha", manifest("alpha", 1, sleep=1))
    d = daemon_factory([root], copy=False, extra_args=["--watch", "--watch-interval", "50"])
    return d, root


def test_an_edit_while_a_call_runs(daemon_factory, tmp_path):
    d, root = start(daemon_factory, tmp_path)
    answers = {}
    slow = threading.Thread(target=lambda: answers.update(old=d.call("version")))
    slow.start()
    time.sleep(0.3)  # the call is running on the old definition
    with d.ws() as ws:
        write(root / "alpha", manifest("alpha", 2))
        changed = ws.notification("lavs/servicesChanged")
        assert changed["params"] == {"added": [], "changed": ["alpha"], "removed": []}
    slow.join(10)
    assert answers["old"]["result"] == {"v": 1}
    assert d.call("version")["result"] == {"v": 2}


def test_removed_endpoint_ends_its_subscriptions(daemon_factory, tmp_path):
    d, root = start(daemon_factory, tmp_path)
    with d.ws() as ws:
        sub = ws.request("lavs/subscribe", {"endpoint": "feed"})["result"]["subscriptionId"]
        assert ws.notification("lavs/data")["params"]["subscriptionId"] == sub
        write(root / "alpha", manifest("alpha", 2, with_feed=False))
        ended = ws.notification("lavs/subscriptionEnded")
        assert ended["params"] == {"subscriptionId": sub, "reason": "removed"}
        assert ws.notification("lavs/servicesChanged")["params"]["changed"] == ["alpha"]
        again = ws.request("lavs/subscribe", {"endpoint": "feed"}, id=2)
        assert again["error"]["code"] == -32601


def test_services_added_broken_and_removed(daemon_factory, tmp_path):
    d, root = start(daemon_factory, tmp_path)
    with d.ws() as ws:
        write(root / "beta", manifest("beta", 7))
        assert ws.notification("lavs/servicesChanged")["params"]["added"] == ["beta"]
        assert services(d) == ["alpha", "beta"]
        assert d.call("version", service="beta")["result"] == {"v": 7}

        # A broken edit is reported on stderr and changes nothing.
        write(root / "beta", '{"lavs": "1.0", "name": "beta"')
        assert wait_for(lambda: "beta" in d.stderr_path.read_text() and
                        "not reloaded" in d.stderr_path.read_text())
        assert d.call("version", service="beta")["result"] == {"v": 7}

        (root / "beta" / "lavs.json").unlink()
        removed = ws.notification("lavs/servicesChanged")
        assert removed["params"] == {"added": [], "changed": [], "removed": ["beta"]}
        assert services(d) == ["alpha"]
        assert d.call("version", service="beta")["error"]["code"] == -32602
