"""`mcp` handlers end to end, against MCP servers nobody here wrote: the reference
@modelcontextprotocol/server-everything (stdio and Streamable HTTP) and server-filesystem (stdio),
from npm, installed by tests/mcp/setup_servers.sh into a cache folder. The stdio servers run under
the real daemon's jail."""
import concurrent.futures
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from hearthtest import ROOT, Daemon, error, hearth_bin, result

EVERYTHING = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
FILESYSTEM = "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"




def node_modules():
    out = subprocess.run(["bash", str(ROOT / "tests" / "mcp" / "setup_servers.sh")],
                         capture_output=True, text=True)
    if out.returncode == 77:
        pytest.skip("npm is not installed")
    assert out.returncode == 0, out.stderr
    return Path(out.stdout.strip())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the MCP HTTP server exited: " + proc.stderr.read().decode())
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the MCP HTTP server did not listen")


def server_pids(service_dir, needle):
    """Pids of node processes running `needle` with `service_dir` as their working directory."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if Path(cwd) == Path(service_dir) and cmdline and cmdline[0].endswith(b"node") and \
                any(needle.encode() in part for part in cmdline):
            pids.append(int(entry))
    return sorted(pids)


def endpoint(id, server, tool, method="query", permissions=None, **handler):
    ep = {"id": id, "method": method, "handler": {"type": "mcp", "server": server, "tool": tool, **handler}}
    if permissions is not None:
        ep["permissions"] = permissions
    return ep


def write_service(svc, modules, http_port):
    (svc / "data").mkdir(parents=True)
    (svc / "data" / "hello.txt").write_text("hello from a file\n")
    # Hard links: the servers must be inside the service folder, where the jail lets them run.
    subprocess.run(["cp", "-al", str(modules), str(svc / "node_modules")], check=True)
    url = f"http://127.0.0.1:{http_port}/mcp"
    (svc / "mcp-config.json").write_text(json.dumps({"mcpServers": {
        "everything": {"command": "node", "args": [EVERYTHING, "stdio"]},
        "files": {"command": "node", "args": [FILESYSTEM, "data"]},
        "remote": {"url": url},
        "ghost": {"command": "no-such-mcp-server"},
    }}))
    local = {"networkAccess": ["127.0.0.1"]}
    (svc / "lavs.json").write_text(json.dumps({
        "lavs": "1.0", "name": "mcp-tests", "version": "1.0.0",
        "endpoints": [
            endpoint("echo", "everything", "echo"),
            endpoint("sum", "everything", "get-sum"),
            endpoint("weather", "everything", "get-structured-content"),
            endpoint("longop", "everything", "trigger-long-running-operation", timeout=1500),
            endpoint("nope", "everything", "no-such-tool"),
            endpoint("readFile", "files", "read_text_file", permissions={"fileAccess": ["data/**"]}),
            endpoint("writeFile", "files", "write_file", method="mutation",
                     permissions={"fileAccess": ["data/**"]}),
            endpoint("ghost", "ghost", "anything"),
            endpoint("remoteEcho", "remote", "echo", permissions=local),
            endpoint("remoteLongop", "remote", "trigger-long-running-operation", timeout=1500,
                     permissions=local),
            endpoint("remoteDenied", "remote", "echo", permissions={"networkAccess": ["example.com"]}),
            endpoint("remoteNoNetwork", "remote", "echo"),
        ]}))


@pytest.fixture(scope="module")
def env():
    modules = node_modules()
    tmp = Path(tempfile.mkdtemp(prefix="hearth-mcp-it-"))
    port = free_port()
    http_server = subprocess.Popen(
        ["node", str(modules / EVERYTHING.removeprefix("node_modules/")), "streamableHttp"],
        env={**os.environ, "PORT": str(port)}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, http_server)
        svc = tmp / "mcp-tests"
        write_service(svc, modules, port)
        d = Daemon([svc], copy=False)
        yield d, svc
        assert d.stop() == 0
        # The daemon stops its MCP servers with it.
        assert server_pids(svc, "server-everything") == []
        assert server_pids(svc, "server-filesystem") == []
        d.cleanup()
    finally:
        http_server.terminate()
        http_server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def test_stdio_tool_calls(env):
    d, _ = env
    content = result(d.call("echo", {"message": "hi there"}))
    assert content == [{"type": "text", "text": "Echo: hi there"}]
    assert "3" in json.dumps(result(d.call("sum", {"a": 1, "b": 2})))


def test_structured_content_is_the_result(env):
    d, _ = env
    weather = result(d.call("weather", {"location": "Chicago"}))
    assert isinstance(weather, dict)
    assert {"temperature", "conditions", "humidity"} <= set(weather)


def test_server_runs_jailed_and_stays_between_calls(env):
    d, svc = env
    result(d.call("echo", {"message": "a"}))
    first = server_pids(svc, "server-everything")
    result(d.call("echo", {"message": "b"}))
    assert server_pids(svc, "server-everything") == first and len(first) == 1
    status = Path(f"/proc/{first[0]}/status").read_text()
    assert "NoNewPrivs:\t1" in status
    assert "Seccomp:\t2" in status


def test_filesystem_server_reads_and_writes_inside_file_access(env):
    d, svc = env
    got = result(d.call("readFile", {"path": str(svc / "data" / "hello.txt")}))
    assert got == {"content": "hello from a file\n"}
    result(d.call("writeFile", {"path": str(svc / "data" / "new.txt"), "content": "written"}))
    assert (svc / "data" / "new.txt").read_text() == "written"
    # The server refuses paths outside its folder; that is the tool's isError, -32003.
    e = error(d.call("readFile", {"path": "/etc/hostname"}))
    assert e["code"] == -32003
    assert e["data"]["tool"] == "read_text_file"


def test_progress_extends_the_timeout(env):
    d, _ = env
    # 2.5 s of work with progress every 0.5 s, under a 1.5 s timeout.
    r = result(d.call("longop", {"duration": 2.5, "steps": 5}))
    assert "Long running operation completed" in json.dumps(r)


def test_slow_tool_beyond_the_timeout(env):
    d, svc = env
    result(d.call("echo", {"message": "warm"}))
    before = server_pids(svc, "server-everything")
    started = time.time()
    e = error(d.call("longop", {"duration": 4, "steps": 1}))
    assert e["code"] == -32002, e
    assert time.time() - started < 3.5
    assert "cancelled" in e["message"]
    # The server is still the same process and still answers.
    result(d.call("echo", {"message": "still here"}))
    assert server_pids(svc, "server-everything") == before


def test_tool_not_found(env):
    d, _ = env
    e = error(d.call("nope"))
    assert e["code"] == -32003
    assert "has no tool 'no-such-tool'" in e["message"]
    assert "echo" in e["data"]["available"]


def test_server_not_found(env):
    d, _ = env
    e = error(d.call("ghost"))
    assert e["code"] == -32003
    assert "command not found: no-such-mcp-server" in e["message"]


def test_server_crash_mid_call_then_restart(env):
    d, svc = env
    result(d.call("echo", {"message": "warm"}))
    [pid] = server_pids(svc, "server-everything")
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(d.call, "longop", {"duration": 5, "steps": 10})
        time.sleep(1.0)
        os.kill(pid, signal.SIGKILL)
        e = error(pending.result(timeout=20))
    assert e["code"] == -32003
    assert "MCP server 'everything'" in e["message"] and "signal 9" in e["message"], e
    # The next call starts it again.
    assert result(d.call("echo", {"message": "back"})) == [{"type": "text", "text": "Echo: back"}]
    assert server_pids(svc, "server-everything") not in ([], [pid])


def test_streamable_http(env):
    d, _ = env
    assert result(d.call("remoteEcho", {"message": "over http"})) == \
        [{"type": "text", "text": "Echo: over http"}]
    # Progress arrives on the request's event stream and extends the timeout there too.
    r = result(d.call("remoteLongop", {"duration": 2.5, "steps": 5}))
    assert "Long running operation completed" in json.dumps(r)


def test_host_not_allowed(env):
    d, _ = env
    e = error(d.call("remoteDenied", {"message": "x"}))
    assert e["code"] == -32001
    assert "does not allow 127.0.0.1" in e["message"]
    e = error(d.call("remoteNoNetwork", {"message": "x"}))
    assert e["code"] == -32001


def test_concurrent_calls_share_the_server(env):
    d, svc = env
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: d.call("echo", {"message": str(i)}), range(24)))
    for i, r in enumerate(results):
        assert result(r) == [{"type": "text", "text": f"Echo: {i}"}]
    assert len(server_pids(svc, "server-everything")) == 1


def test_cli_lists_tools(env):
    _, svc = env
    out = subprocess.run([hearth_bin(), "mcp", "tools", str(svc), "--json", "--log-level", "error"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr  # the ghost server does not start
    servers = {s["name"]: s for s in json.loads(out.stdout)["servers"]}
    assert set(servers) == {"everything", "files", "remote", "ghost"}
    tools = {t["name"]: t for t in servers["everything"]["tools"]}
    assert tools["echo"]["inputSchema"]["properties"]["message"]["type"] == "string"
    assert servers["everything"]["transport"] == "stdio"
    assert servers["everything"]["protocolVersion"] in ("2025-11-25", "2025-06-18")
    assert "read_text_file" in {t["name"] for t in servers["files"]["tools"]}
    assert "echo" in {t["name"] for t in servers["remote"]["tools"]}  # remoteEcho's permissions
    assert "command not found" in servers["ghost"]["error"]["message"]

    text = subprocess.run([hearth_bin(), "mcp", "tools", str(svc / "mcp-config.json"),
                           "--log-level", "error"], capture_output=True, text=True, timeout=120)
    assert "everything (stdio, MCP " in text.stdout
    assert "  echo: " in text.stdout and "input: {" in text.stdout
    assert "ghost (stdio): " in text.stdout


def test_cli_reports_a_bad_config(tmp_path):
    (tmp_path / "mcp-config.json").write_text('{"mcpServers": {"x": {}}}')
    out = subprocess.run([hearth_bin(), "mcp", "tools", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 2
    assert "mcpServers.x" in out.stderr
    (tmp_path / "mcp-config.json").unlink()
    out = subprocess.run([hearth_bin(), "mcp", "tools", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 2 and "has no mcp-config.json" in out.stderr
