"""Living with the daemon: one daemon per state folder, a token that survives restarts,
`hearth status` / `stop` / `logs`, the configuration file, the per-call log line, and what the CLI
says when it is used wrongly."""
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from hearthtest import EXAMPLES, ROOT, Daemon, hearth_bin, result, wait_for

TODO = EXAMPLES / "todo-manager"


def cli(*args, env=None, timeout=60, **kw):
    return subprocess.run([hearth_bin(), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env, **kw)


def isolated_env(tmp_path):
    """An environment whose default state and configuration folders are under tmp_path."""
    return {**os.environ, "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg-config")}


# -- one daemon per state folder ---------------------------------------------------------------

def test_a_second_daemon_on_the_same_state_folder_names_the_first_and_changes_nothing(tmp_path):
    with Daemon([TODO]) as first:
        daemon_json = (first.state_dir / "daemon.json").read_text()
        token = first.token_file.read_text()
        r = cli("serve", TODO, "--port", "0", "--state-dir", first.state_dir,
                "--token-file", first.token_file, timeout=30)
        assert r.returncode != 0
        assert f"pid {first.proc.pid}" in r.stderr and str(first.state_dir) in r.stderr, r.stderr
        assert first.ready["url"] in r.stderr and "hearth stop" in r.stderr
        # The first daemon's files are as they were, and it still serves with its token.
        assert (first.state_dir / "daemon.json").read_text() == daemon_json
        assert first.token_file.read_text() == token
        result(first.call("listTodos"))
    # Once it stopped, the folder is free again.
    with Daemon([TODO], state_dir=first.state_dir) as again:
        result(again.call("listTodos"))


def test_the_token_survives_a_restart_unless_rotated(tmp_path):
    default_state = tmp_path / "default-token-state"
    seen = []
    for extra in ([], [], ["--rotate-token"]):
        p = subprocess.Popen([hearth_bin(), "serve", str(TODO), "--port", "0", "--state-dir",
                              str(default_state), "--ready-file", str(tmp_path / "ready.json"),
                              "--log-level", "warn", *extra],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert wait_for(lambda: (tmp_path / "ready.json").exists())
            seen.append((default_state / "token").read_text().strip())
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)
    assert seen[0] == seen[1] and seen[2] != seen[1] and len(seen[2]) == 64
    # A token file others may read is not reused.
    (default_state / "token").chmod(0o644)
    p = subprocess.Popen([hearth_bin(), "serve", str(TODO), "--port", "0", "--state-dir",
                          str(default_state), "--ready-file", str(tmp_path / "ready.json"),
                          "--log-level", "warn"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: (tmp_path / "ready.json").exists())
        assert (default_state / "token").read_text().strip() != seen[2]
        assert (default_state / "token").stat().st_mode & 0o777 == 0o600
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)


# -- status, stop, logs ------------------------------------------------------------------------

def test_status_stop_and_logs(tmp_path):
    d = Daemon([TODO], extra_args=["--log-level", "info"])
    try:
        r = cli("status", "--state-dir", d.state_dir)
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"running (pid {d.proc.pid})" in r.stdout and d.ready["url"] in r.stdout
        assert "todo-manager" in r.stdout
        s = json.loads(cli("status", "--state-dir", d.state_dir, "--json").stdout)
        assert s["running"] and s["ready"] and s["pid"] == d.proc.pid
        assert s["daemon"]["url"] == d.ready["url"]

        result(d.call("listTodos", service="todo-manager"))
        d.call("noSuchEndpoint", service="todo-manager")
        result(d.call("listTodos"))  # the service left to the daemon: the line names the endpoint
        # The per-call line, in the daemon's own log (written out within a second).
        log = d.state_dir / "hearth.log"
        assert wait_for(lambda: log.exists() and "call lavs/call todo-manager/noSuchEndpoint error -32601"
                        in log.read_text(), timeout=5)
        assert "call lavs/call todo-manager/listTodos ok" in log.read_text()
        assert wait_for(lambda: "call lavs/call listTodos ok" in log.read_text(), timeout=5)

        r = cli("logs", "--state-dir", d.state_dir)
        assert r.returncode == 0
        lines = r.stdout.splitlines()
        assert any(" audit lavs/call todo-manager/listTodos ok" in l for l in lines), r.stdout
        assert any(" info call lavs/call todo-manager/listTodos ok" in l for l in lines), r.stdout
        assert lines == sorted(lines, key=lambda l: l[:23])  # in time order
        only_audit = cli("logs", "--state-dir", d.state_dir, "--only", "audit", "-n", "1").stdout
        assert only_audit.count("\n") == 1 and " audit lavs/call todo-manager/listTodos ok" in only_audit

        # -f prints lines written after it started.
        follow = subprocess.Popen([hearth_bin(), "logs", "-f", "--only", "audit", "--state-dir",
                                   str(d.state_dir)], stdout=subprocess.PIPE, text=True)
        try:
            time.sleep(0.5)
            d.call("addTodo", {"text": "followed"})
            line = ""
            deadline = time.time() + 10
            while "addTodo" not in line and time.time() < deadline:
                line = follow.stdout.readline()
            assert "audit lavs/call todo-manager/addTodo ok" in line
        finally:
            follow.kill()
            follow.wait()

        r = cli("stop", "--state-dir", d.state_dir)
        assert r.returncode == 0 and f"stopped (pid {d.proc.pid})" in r.stdout
        assert d.proc.wait(timeout=5) == 0
        r = cli("status", "--state-dir", d.state_dir)
        assert r.returncode == 3 and "not running" in r.stdout
        assert json.loads(cli("status", "--state-dir", d.state_dir, "--json").stdout)["running"] is False
        # Stopping what does not run is not an error.
        r = cli("stop", "--state-dir", d.state_dir)
        assert r.returncode == 0 and "no daemon is running" in r.stderr
    finally:
        d.stop()
        d.cleanup()


def test_a_stale_daemon_json_does_not_make_a_daemon(tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "daemon.json").write_text(json.dumps({"url": "http://127.0.0.1:9", "port": 9, "pid": os.getpid()}))
    assert cli("status", "--state-dir", state).returncode == 3
    r = cli("open", "--state-dir", state)
    assert r.returncode == 1 and "no running hearth daemon" in r.stderr


# -- the configuration file --------------------------------------------------------------------

def test_every_serve_option_can_come_from_the_configuration_file(tmp_path):
    env = isolated_env(tmp_path)
    state = tmp_path / "configured-state"
    config = tmp_path / "xdg-config" / "hearth" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'''# a person's configuration
log-level = "warn"

[serve]
paths = ["{TODO}"]
port = 0
state-dir = "{state}"
ready-file = "{tmp_path / 'ready.json'}"
''')
    assert cli("config", "path", env=env).stdout.strip() == str(config)
    shown = cli("config", "show", "serve", env=env).stdout
    assert "[serve]" in shown and "port = 0" in shown and "# threads = 0" in shown
    assert "# rotate-token = false" in shown
    p = subprocess.Popen([hearth_bin(), "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_for(lambda: (tmp_path / "ready.json").exists()), p.stderr.read1().decode() if p.poll() is not None else ""
        ready = json.loads((tmp_path / "ready.json").read_text())
        assert ready["stateDir"] == str(state)
        # status, logs and stop find the daemon through the same file's [serve] state-dir.
        r = cli("status", env=env)
        assert r.returncode == 0 and ready["url"] in r.stdout
        assert cli("stop", env=env).returncode == 0
        assert p.wait(timeout=5) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    # The command line wins over the file.
    r = cli("config", "show", "serve", "--config", config, env=env)
    assert r.returncode == 0

    # A misspelt key or section is an error that names the key meant.
    config.write_text('[serve]\nprot = 5\n')
    r = cli("serve", env=env)
    assert r.returncode != 0 and "unknown key 'serve.prot'" in r.stderr and "did you mean 'serve.port'" in r.stderr
    config.write_text('[srve]\nport = 5\n')
    r = cli("status", env=env)
    assert r.returncode != 0 and "unknown section [srve]" in r.stderr and "[serve]" in r.stderr
    # --config names another file; a missing one that was named is an error.
    other = tmp_path / "other.toml"
    other.write_text('[status]\njson = true\n')
    r = cli("--config", other, "status", env=env)
    assert r.returncode == 3 and json.loads(r.stdout)["running"] is False
    assert cli("--config", tmp_path / "missing.toml", "status", env=env).returncode != 0


# -- the CLI used wrongly ----------------------------------------------------------------------

@pytest.mark.parametrize("args, says", [
    (["srve"], "unknown command 'srve'; did you mean 'serve'?"),
    (["stauts"], "did you mean 'status'?"),
    (["serve", "--prot", "5"], "unknown option '--prot'; did you mean '--port'?"),
    (["app", "shw", "x"], "hearth app: unknown command 'shw'; did you mean 'show'?"),
    (["vault", "lst"], "did you mean 'list'?"),
    (["deploy"], "unknown command 'deploy'"),
])
def test_misspelt_commands_and_options_name_what_was_meant(tmp_path, args, says):
    r = cli(*args, env=isolated_env(tmp_path))
    assert r.returncode != 0 and says in r.stderr, r.stderr
    assert "Path does not exist" not in r.stderr and "subcommand is required" not in r.stderr


def test_help_and_no_arguments(tmp_path):
    env = isolated_env(tmp_path)
    r = cli("help", env=env)
    assert r.returncode == 0 and "Subcommands:" in r.stdout and "status" in r.stdout
    r = cli("help", "serve", env=env)
    assert r.returncode == 0 and "Usage: hearth serve" in r.stdout
    r = cli("help", "app", "show", env=env)
    assert r.returncode == 0 and "hearth app show" in r.stdout
    r = cli(env=env)
    assert r.returncode == 0 and "Subcommands:" in r.stdout


def test_call_errors_are_readable_and_json_on_request(tmp_path):
    r = cli("call", TODO, "addTodo", "{}", "--state-dir", tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("hearth call: Invalid params") and "[-32602]" in r.stderr
    assert "  field: text" in r.stderr
    r = cli("call", TODO, "addTodo", "{}", "--state-dir", tmp_path, "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["code"] == -32602


def test_an_unreachable_model_server_fails_at_once(tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ws = EXAMPLES / "workspace-search"
    started = time.monotonic()
    r = cli("agent", "run", ws / "workspace", "find shoes", "--services", ws, "--model-url",
            f"http://127.0.0.1:{port}/v1", "--model", "m", "--state-dir", tmp_path, "--json")
    elapsed = time.monotonic() - started
    assert r.returncode != 0
    assert "cannot be reached" in r.stdout + r.stderr and "is it running?" in r.stdout + r.stderr
    # Not the retries with back-off a server that answered before is given (seconds).
    assert elapsed < 3, elapsed


# -- the page's address ------------------------------------------------------------------------

def test_the_root_leads_to_the_page(tmp_path):
    with Daemon([TODO]) as d, d.http() as c:
        status, headers, _ = c.request("GET", "/", headers={"Host": f"127.0.0.1:{d.port}"})
        assert status == 308 and headers["Location"] == "/ui/"
        # Other paths without the token still get 401.
        status, _, _ = c.request("GET", "/nothing-here", headers={"Host": f"127.0.0.1:{d.port}"})
        assert status == 401


def test_a_second_make_run_says_where_the_first_daemon_is(tmp_path):
    env = isolated_env(tmp_path)
    state = tmp_path / "xdg-state" / "hearth"
    with Daemon([TODO], state_dir=state) as d:
        r = subprocess.run(["bash", str(ROOT / "scripts" / "run-examples.sh"), hearth_bin(), "0"],
                           capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)
        assert r.returncode == 1
        assert "already runs" in r.stderr and d.ready["url"] in r.stderr
        assert "Traceback" not in r.stderr


def test_the_documented_configuration_file_is_read_as_documented(tmp_path):
    import re
    doc = (ROOT / "docs" / "daemon.md").read_text()
    block = re.search(r"```toml\n(.*?)```", doc, re.S).group(1)
    config = tmp_path / "config.toml"
    config.write_text(block)
    env = isolated_env(tmp_path)
    r = cli("--config", config, "config", "show", env=env)
    assert r.returncode == 0, r.stderr
    for line in ['paths = ["/home/ada/services"]', "port = 5555", 'model = "qwen2.5:7b"',
                 "model-stream = true", "[app.install]", 'log-level = "info"']:
        assert line in r.stdout, line
    # status works though the configured folders do not exist on this machine.
    assert cli("--config", config, "status", "--state-dir", tmp_path / "s", env=env).returncode == 3
    # serve itself refuses them, naming the first.
    r = cli("--config", config, "serve", "--state-dir", tmp_path / "s", env=env)
    assert r.returncode != 0 and "/home/ada/services" in r.stderr


# -- misspelt manifest keys --------------------------------------------------------------------

def misspelt_service(tmp_path):
    svc = tmp_path / "typos"
    svc.mkdir()
    (svc / "lavs.json").write_text(json.dumps({
        "lavs": "1.0", "name": "typos", "version": "1.0.0",
        "permissions": {"fileAcess": ["data/*"], "netwrokAccess": False},
        "endpoints": [{"id": "ping", "method": "query",
                       "handler": {"type": "script", "command": "printf", "args": ["%s", "1"], "timout": 5}}]}))
    return svc


def test_misspelt_manifest_keys_are_warnings_and_errors_with_strict(tmp_path):
    svc = misspelt_service(tmp_path)
    r = cli("check", svc)
    assert r.returncode == 0, r.stdout
    assert "warning: " in r.stdout
    assert "permissions.fileAcess: unknown key 'fileAcess'; did you mean 'fileAccess'?" in r.stdout
    assert "permissions.netwrokAccess: unknown key 'netwrokAccess'; did you mean 'networkAccess'?" in r.stdout
    assert "endpoints[0].handler.timout: unknown key 'timout'; did you mean 'timeout'?" in r.stdout
    report = json.loads(cli("check", svc, "--json").stdout)
    assert any("fileAcess" in w for w in report["warnings"])
    r = cli("check", svc, "--strict")
    assert r.returncode == 1 and "did you mean 'fileAccess'?" in r.stdout and "3 problems" in r.stdout

    # The daemon says so when it loads the service, and refuses it with --strict.
    with Daemon([svc], copy=False, extra_args=["--log-level", "warn"]) as d:
        result(d.call("ping"))
        assert "did you mean 'fileAccess'?" in d.stderr_path.read_text()
    r = cli("serve", svc, "--port", "0", "--state-dir", tmp_path / "strict-state", "--strict", timeout=30)
    assert r.returncode != 0 and "did you mean 'networkAccess'?" in r.stderr


def test_app_show_is_a_readable_summary_and_the_bundled_app_is_ready(tmp_path):
    sd = ["--state-dir", tmp_path / "state"]
    r = cli("app", "install", EXAMPLES / "apps" / "field-notes", "--dev", *sd)
    assert r.returncode == 0, r.stderr
    assert "  readiness     ready\n" in r.stdout
    r = cli("app", "show", "field-notes", *sd)
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0] == "field-notes 0.1.0 (Field Notes), disabled (hearth app enable field-notes)"
    assert "  readiness     ready" in lines and len(lines) < 40
    assert any(l.startswith("  capabilities  lime.storage") for l in lines)
    assert "hearth app show field-notes --json" in lines[-1]
    shown = json.loads(cli("app", "show", "field-notes", "--json", *sd).stdout)
    assert shown["readiness"]["status"] == "ready" and shown["name"] == "field-notes"
    r = cli("app", "show", "no-such-app", *sd)
    assert r.returncode != 0 and r.stdout == "" and "no app named 'no-such-app'" in r.stderr


def test_misspelt_app_md_and_workspace_keys_name_the_key_meant(tmp_path):
    import shutil
    pkg = tmp_path / "typo-app"
    shutil.copytree(EXAMPLES / "apps" / "field-notes", pkg)
    text = (pkg / "APP.md").read_text().replace("\npermissions:\n", "\npremissions:\n")
    (pkg / "APP.md").write_text(text)
    r = cli("app", "install", pkg, "--dev", "--state-dir", tmp_path / "state")
    assert r.returncode == 0, r.stderr
    assert "unknown front-matter key 'premissions'; did you mean 'permissions'?" in r.stdout

    ws = tmp_path / "ws"
    shutil.copytree(EXAMPLES / "workspace-search" / "workspace", ws)
    yaml = (ws / "workspace.yaml").read_text().replace("  - id: search_box\n", "  - id: search_box\n    descripton: x\n")
    (ws / "workspace.yaml").write_text(yaml)
    r = cli("workspace", "render", ws, "--services", EXAMPLES / "workspace-search", "--state-dir", tmp_path / "s2")
    assert r.returncode != 0
    assert "components[0].descripton: is not a known member here; did you mean 'description'?" in r.stderr


def test_app_install_strict_refuses_a_misspelt_front_matter_key(tmp_path):
    import shutil
    pkg = tmp_path / "typo-app"
    shutil.copytree(EXAMPLES / "apps" / "field-notes", pkg)
    (pkg / "APP.md").write_text((pkg / "APP.md").read_text().replace("\nstorage:\n", "\nstorge:\n"))
    r = cli("app", "install", pkg, "--dev", "--strict", "--state-dir", tmp_path / "state")
    assert r.returncode != 0 and "unknown front-matter key 'storge'; did you mean 'storage'?" in r.stderr
    assert "no app" in cli("app", "show", "field-notes", "--state-dir", tmp_path / "state").stderr
    # The bundled example has none.
    assert cli("app", "install", EXAMPLES / "apps" / "field-notes", "--dev", "--strict",
               "--state-dir", tmp_path / "state").returncode == 0


def test_logs_of_a_long_audit_log_are_its_last_lines(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    with open(state / "audit.log", "w") as f:
        for i in range(50000):
            f.write(json.dumps({"time": f"2026-11-28T00:00:00.{i % 1000:03d}Z", "service": "s",
                                "endpoint": f"e{i}", "method": "lavs/call", "transport": "http",
                                "durationMs": 1.0, "outcome": "ok"}) + "\n")
    r = cli("logs", "--only", "audit", "-n", "3", "--state-dir", state)
    assert r.returncode == 0
    assert [l.split()[3] for l in r.stdout.splitlines()] == ["s/e49997", "s/e49998", "s/e49999"]
