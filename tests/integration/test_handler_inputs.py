"""What input and manifests can make a script (or stdio MCP server) run with: env mode passes only
fields the input schema declares (an allowlist: input never chooses a variable name), a NUL in a
value bound for argv or the environment is -32602, and a command outside the service folder that
is not a system program is refused when the manifest loads (`hearth check` and `hearth serve`)."""
import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from hearthtest import Daemon, error, hearth_bin, result


def write_service(root, name, endpoints, extra_files=None):
    service = Path(root) / name
    service.mkdir(parents=True, exist_ok=True)
    (service / "lavs.json").write_text(json.dumps(
        {"lavs": "1.0", "name": name, "version": "1.0.0", "endpoints": endpoints}))
    for rel, (text, mode) in (extra_files or {}).items():
        (service / rel).parent.mkdir(parents=True, exist_ok=True)
        (service / rel).write_text(text)
        (service / rel).chmod(mode)
    return service


@pytest.fixture
def scratch():
    with tempfile.TemporaryDirectory(prefix="hearth-inputs-") as d:
        yield Path(d)


@pytest.fixture
def inputs(scratch):
    service = write_service(scratch, "inputs", [
        {"id": "env", "method": "query",
         "handler": {"type": "script", "command": "sh", "input": "env",
                     "args": ["-c", "env | sort | grep -v '^_='"]},
         "schema": {"input": {"type": "object", "additionalProperties": True,
                              "properties": {"note": {"type": "string"},
                                             "user": {"type": "object",
                                                      "properties": {"name": {"type": "string"}}}}}}},
        {"id": "args", "method": "query",
         "handler": {"type": "script", "command": "printf", "input": "args",
                     "args": ["[%s]", "{{text}}"]}},
    ])
    d = Daemon([service], copy=False)
    yield d
    d.stop()
    d.cleanup()


@pytest.mark.parametrize("field", ["GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "OPENSSL_CONF", "LESSOPEN",
                                   "PAGER", "LD_PRELOAD", "BASH_ENV", "PATH", "lavs_service", "HOME"])
def test_env_mode_never_takes_a_variable_name_from_input(inputs, field):
    e = error(inputs.call("env", {"note": "hi", field: "x"}))
    assert e["code"] == -32602, e
    assert e["data"] == {"field": field, "constraint": "env-name"}


def test_env_mode_passes_declared_fields(inputs):
    out = result(inputs.call("env", {"note": "hi there", "user": {"name": "ada"}}))
    lines = out.splitlines()
    assert "NOTE=hi there" in lines and "USER_NAME=ada" in lines
    assert not any(l.startswith("GIT_") or l.startswith("PAGER") for l in lines)
    e = error(inputs.call("env", {"user": {"name": "ada", "shell": "/bin/x"}}))
    assert e["data"] == {"field": "user.shell", "constraint": "env-name"}


def test_a_nul_in_a_value_is_invalid_params(inputs):
    e = error(inputs.call("args", {"text": "a\u0000b"}))
    assert e["code"] == -32602 and e["data"] == {"field": "text", "constraint": "no-nul"}, e
    e = error(inputs.call("env", {"note": "a\u0000b"}))
    assert e["code"] == -32602 and e["data"] == {"field": "note", "constraint": "no-nul"}, e
    assert result(inputs.call("args", {"text": "a b"})) == "[a b]"


def check(path):
    return subprocess.run([hearth_bin(), "check", str(path)], capture_output=True, text=True)


def test_a_command_in_another_service_is_refused_at_load(scratch):
    other = write_service(scratch, "other", [
        {"id": "x", "method": "query", "handler": {"type": "script", "command": "./run.sh"}}],
        {"run.sh": ("#!/bin/sh\ncat secret.txt\n", 0o755), "secret.txt": ("secret\n", 0o644)})
    cases = {
        "relative": "../other/run.sh",
        "absolute": str(other / "run.sh"),
        "link": "./link.sh",
    }
    for name, command in cases.items():
        service = write_service(scratch / name, "thief", [
            {"id": "a", "method": "query", "handler": {"type": "script", "command": "sh"}},
            {"id": "steal", "method": "query", "handler": {"type": "script", "command": command}}])
        if name == "link":
            (service / "link.sh").symlink_to(other / "run.sh")
        r = check(service)
        assert r.returncode != 0, (name, r.stdout)
        assert "endpoints[1].handler: command" in r.stdout + r.stderr, r.stdout + r.stderr
        assert "outside the service folder" in r.stdout + r.stderr
        with pytest.raises(RuntimeError):  # hearth serve refuses it too (nothing else to serve)
            Daemon([service], copy=False)
    # A PATH of the handler's own that leads into the other service, and an MCP server there.
    service = write_service(scratch / "path", "thief", [
        {"id": "steal", "method": "query",
         "handler": {"type": "script", "command": "run.sh", "env": {"PATH": str(other)}}}])
    r = check(service)
    assert r.returncode != 0 and "env.PATH" in r.stdout + r.stderr, r.stdout + r.stderr
    service = write_service(scratch / "mcp", "thief", [
        {"id": "steal", "method": "query", "handler": {"type": "mcp", "server": "s", "tool": "t"}}])
    (service / "mcp-config.json").write_text(json.dumps(
        {"mcpServers": {"s": {"command": "../../other/run.sh"}}}))
    r = check(service)
    assert r.returncode != 0 and "outside the service folder" in r.stdout + r.stderr, r.stdout + r.stderr
    # The service's own program and system programs load.
    assert check(other).returncode == 0, check(other).stdout


def test_handler_logs_are_bounded(scratch):
    """A handler that logs in a loop cannot fill the daemon's log: per call at most 1,000 lines
    (and 1 MiB), per endpoint 100 lines a second after that burst, then one line saying how many
    were suppressed."""
    service = write_service(scratch, "noisy", [
        {"id": "spam", "method": "query",
         "handler": {"type": "function", "module": "spam.mjs", "function": "spam"}}],
        {"spam.mjs": ("export function spam(input) {\n"
                      "  for (let i = 0; i < input.n; i++) console.warn('line ' + i + ' ' + 'x'.repeat(input.pad));\n"
                      "  return input.n;\n}\n", 0o644)})
    d = Daemon([service], copy=False, extra_args=["--js-workers", "1"])
    try:
        assert result(d.call("spam", {"n": 200_000, "pad": 10})) == 200_000
        assert result(d.call("spam", {"n": 5000, "pad": 10})) == 5000  # the rate limit now
        assert result(d.call("spam", {"n": 100, "pad": 20_000})) == 100  # long lines: bytes cap
    finally:
        d.stop()
    log = d.stderr_path.read_text(errors="replace")
    d.cleanup()
    lines = [l for l in log.splitlines() if "noisy.spam:" in l]
    suppressed = [l for l in lines if "log lines suppressed" in l]
    assert len(suppressed) == 3, suppressed
    assert "199000 log lines suppressed" in suppressed[0]
    assert len(lines) <= 1000 + 1000 + 100 + 3
    assert len(log) < 4_000_000
