"""JSON-RPC transcript tests: each line of tests/rpc_cases/*.jsonl is a request and the response
expected (null: none). Every case runs over HTTP and over WebSocket unless it names a transport.

Matching: objects match when every expected key matches (extra keys are allowed), arrays match
element by element, and "<any>", "<string>", "<number>", "<array>", "<object>" match by kind.
A case's "text" lists pieces the answer must contain as the daemon wrote it, before any JSON
parser reads it (how numbers are printed: 42.5, not 4.25E1)."""
import json
from pathlib import Path

import pytest

from hearthtest import ROOT

CASES_DIR = ROOT / "tests" / "rpc_cases"


def load_cases():
    cases = []
    for f in sorted(CASES_DIR.glob("*.jsonl")):
        for n, line in enumerate(f.read_text().splitlines(), 1):
            if line.strip():
                cases.append(pytest.param(json.loads(line), id=f"{f.stem}:{n}"))
    return cases


def matches(expected, actual, path="$"):
    kinds = {"<string>": str, "<number>": (int, float), "<array>": list, "<object>": dict}
    if expected == "<any>":
        return
    if isinstance(expected, str) and expected in kinds:
        assert isinstance(actual, kinds[expected]), f"{path}: expected {expected}, got {actual!r}"
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        for k, v in expected.items():
            assert k in actual, f"{path}: missing {k!r} in {actual!r}"
            matches(v, actual[k], f"{path}.{k}")
        return
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{path}: expected {expected!r}, got {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            matches(e, a, f"{path}[{i}]")
        return
    assert type(expected) == type(actual) and expected == actual, f"{path}: expected {expected!r}, got {actual!r}"


@pytest.fixture(scope="module")
def cases_daemon():
    from hearthtest import Daemon
    d = Daemon([CASES_DIR / "service"], extra_args=["--workspace", str(CASES_DIR / "workspace")])
    yield d
    d.stop()
    d.cleanup()


def check_text(case, text):
    for piece in case.get("text", []):
        assert piece in text, f"{piece!r} is not in the answer {text!r}"


def body_of(case):
    return case["raw"] if "raw" in case else json.dumps(case["send"])


@pytest.mark.parametrize("case", load_cases())
def test_http(cases_daemon, case):
    if case.get("transport", "http") != "http":
        pytest.skip("WebSocket-only case")
    with cases_daemon.http() as c:
        status, _, data = c.post(body_of(case))
    if case["expect"] is None:
        assert status == 204 and data == b"", (status, data)
    else:
        assert status == 200, (status, data)
        matches(case["expect"], json.loads(data))
        check_text(case, data.decode())


@pytest.mark.parametrize("case", load_cases())
def test_ws(cases_daemon, case):
    if case.get("transport", "ws") != "ws":
        pytest.skip("HTTP-only case")
    with cases_daemon.ws() as ws:
        ws.send_text(body_of(case))
        if case["expect"] is not None:
            while True:
                text = ws.recv(raw=True)
                m = json.loads(text)
                if isinstance(m, dict) and "method" in m and "id" not in m:
                    continue  # a subscription push
                break
            matches(case["expect"], m)
            check_text(case, text)
            return
        # No response expected: a marker request follows, and its answer must be the next message.
        ws.send({"jsonrpc": "2.0", "id": "marker", "method": "lavs/services"})
        got = []
        while True:
            m = ws.recv()
            if isinstance(m, dict) and m.get("id") == "marker":
                break
            if isinstance(m, dict) and "method" in m and "id" not in m:
                continue
            got.append(m)
        assert got == []
