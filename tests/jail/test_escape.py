"""The jail escape suite: handlers that try to get out of hearth's jail (lavs-spec-v1 4.3, 4.6, 6).

Every probe in probes/ attempts one escape from inside a handler and reports on stdout what it
managed ({"escaped": ..., "detail": ...}); every test also checks containment from outside where it
can: the daemon's token and a canary of its environment never appear in any response, files outside
are unchanged or absent on the host, the daemon is alive and a concurrent normal call succeeds
while a bomb or a loop runs, and no probe process is left on the host.

test_unconfined_* run the same probes under `hearth serve --insecure-no-sandbox` and assert that
they DO escape: the proof that each probe can detect a real escape.

See README.md in this folder for the list of cases and what "contained" means for each.
"""
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "integration"))
from hearthtest import Daemon, hearth_bin  # noqa: E402

PROBES = HERE / "probes"
SERVICES = HERE / "services"
FS, BARE, NET = "jail-probe-fs", "jail-probe-bare", "jail-probe-net"
HIDE, HIDE_LITERAL = "jail-probe-hide", "jail-probe-hide-literal"
FOLDER = {FS: "probe-fs", BARE: "probe-bare", NET: "probe-net", HIDE: "probe-hide",
          HIDE_LITERAL: "probe-hide-literal"}
MAX_EXECUTION_S = 2.0  # maxExecutionTime of jail-probe-fs
CANARY_VAR = "HEARTH_JAIL_TEST_CANARY"
INSECURE_FLAG = "--insecure-no-sandbox"
PERMISSION_DENIED = -32001
TIMEOUT = -32002
HANDLER_ERROR = -32003
DNS_NAMES = ["deb.debian.org", "example.com", "github.com"]  # none listed by jail-probe-net


# -- set-up ------------------------------------------------------------------------------------

def assemble(dest, allowed_port):
    """The service folders of services/, each with every probe in scripts/ and the allowlisted port
    written into jail-probe-net's manifest. Returns the folders."""
    out = []
    for folder in FOLDER.values():
        target = dest / folder
        shutil.copytree(SERVICES / folder, target)
        (target / "scripts").mkdir()
        for probe in sorted(PROBES.glob("*.py")):
            shutil.copy2(probe, target / "scripts" / probe.name)
        manifest = target / "lavs.json"
        manifest.write_text(manifest.read_text().replace("@ALLOWED_PORT@", str(allowed_port)))
        out.append(target)
    return out


class Server:
    """A local HTTP server on 127.0.0.1:0 that answers every GET with 200 and a marker, and
    remembers the paths it was asked for."""

    def __init__(self, name):
        self.marker = f"hearth-jail-{name}-{secrets.token_hex(6)}"
        self.paths = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                server.paths.append(self.path)
                body = server.marker.encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class UnixServer:
    """A pathname unix socket of the test's user (root when the suite runs as root), stream or
    datagram, mode 0600, that records whatever reaches it; a stream one answers each connection
    with its marker."""

    def __init__(self, path, kind):
        self.path, self.kind = str(path), kind
        self.marker = f"hearth-unix-{kind}-{secrets.token_hex(6)}"
        self.received, self.connections = [], 0
        if os.path.lexists(self.path):
            os.unlink(self.path)
        self.sock = socket.socket(socket.AF_UNIX,
                                  socket.SOCK_STREAM if kind == "stream" else socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        os.chmod(self.path, 0o600)
        if kind == "stream":
            self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.running = True
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while self.running:
            try:
                if self.kind == "stream":
                    conn, _ = self.sock.accept()
                    self.connections += 1
                    with conn:
                        conn.settimeout(1)
                        try:
                            self.received.append(conn.recv(256))
                            conn.sendall(self.marker.encode())
                        except OSError:
                            pass
                else:
                    self.received.append(self.sock.recv(256))
            except (socket.timeout, BlockingIOError):
                continue
            except OSError:
                return

    def reached(self):
        return self.connections > 0 or bool(self.received)

    def close(self):
        self.running = False
        self.thread.join(2)
        self.sock.close()
        if os.path.lexists(self.path):
            os.unlink(self.path)


def insecure_flag_supported():
    out = subprocess.run([hearth_bin(), "serve", "--help"], capture_output=True, text=True)
    return INSECURE_FLAG in out.stdout + out.stderr


class Jail:
    """A daemon serving the probe services, and calls that check every response from outside.

    Its folder (service copies, token, state) is made under `base`: by default not under /tmp,
    which the jail replaces with a private one - a token there would be out of reach for that
    reason alone, while a real token lives in ~/.local/state/hearth."""

    def __init__(self, tmp, allowed, extra_args=(), base=None):
        self.canary = "canary-" + secrets.token_hex(12)
        paths = assemble(tmp, allowed.port)
        old = os.environ.get(CANARY_VAR)
        os.environ[CANARY_VAR] = self.canary  # in the daemon's environment only
        old_tempdir = tempfile.tempdir
        tempfile.tempdir = str(base) if base else None  # where Daemon's mkdtemp() goes
        try:
            self.d = Daemon(paths, extra_args=extra_args)
        finally:
            tempfile.tempdir = old_tempdir
            if old is None:
                del os.environ[CANARY_VAR]
            else:
                os.environ[CANARY_VAR] = old
        self.pid = self.d.proc.pid
        self.port = self.d.port
        self.token = self.d.token
        self.token_file = Path(self.d.ready["tokenFile"]).resolve()
        self.responses = []

    def dir(self, service):
        return self.d.service_dir(FOLDER[service])

    def stderr(self, tail=3000):
        try:
            return self.d.stderr_path.read_text(errors="replace")[-tail:]
        except OSError:
            return ""

    def call(self, endpoint, input=None, service=FS, secret=True):
        r = self.d.call(endpoint, input if input is not None else {}, service=service)
        self.responses.append(r)
        if secret:
            text = json.dumps(r)
            assert self.token not in text, f"the daemon's token leaked in a response: {r}"
            assert self.canary not in text, f"the daemon's environment leaked in a response: {r}"
        return r

    def probe(self, endpoint, input=None, service=FS, secret=True):
        """The probe's report; a JSON-RPC error fails the test, with the daemon's stderr."""
        r = self.call(endpoint, input, service, secret)
        if "result" not in r:
            pytest.fail(f"{service}.{endpoint}({input}) did not answer: {r.get('error')}\n"
                        f"(-32001 names a jail mechanism missing on this machine)\n"
                        f"daemon stderr:\n{self.stderr()}")
        return r["result"]

    def alive(self):
        return self.d.proc.poll() is None

    def stop(self):
        try:
            self.d.stop()
        finally:
            self.d.cleanup()


@pytest.fixture(scope="module")
def allowed():
    s = Server("allowed")
    yield s
    s.close()


@pytest.fixture(scope="module")
def unlisted():
    """A second local server, not in the allowlist."""
    s = Server("unlisted")
    yield s
    s.close()


@pytest.fixture(scope="module")
def base():
    """A folder outside /tmp for the daemons (see Jail)."""
    root = Path(os.environ.get("HEARTH_JAIL_TEST_DIR", "/var/tmp"))
    path = Path(tempfile.mkdtemp(prefix="hearth-jail-", dir=root))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def jail(tmp_path_factory, allowed, base):
    j = Jail(tmp_path_factory.mktemp("jail-services"), allowed, base=base)
    yield j
    j.stop()


@pytest.fixture(scope="module")
def unconfined(tmp_path_factory, allowed, base):
    # Until the flag exists the daemon runs handlers unconfined anyway; once it does, it is used.
    extra = [INSECURE_FLAG] if insecure_flag_supported() else []
    j = Jail(tmp_path_factory.mktemp("unconfined-services"), allowed, extra_args=extra, base=base)
    j.insecure_flag = bool(extra)
    yield j
    j.stop()


@pytest.fixture(scope="module")
def resolvable():
    """A name this machine resolves through DNS (not /etc/hosts): without one the DNS case would
    prove nothing, so it is skipped."""
    for name in DNS_NAMES:
        try:
            socket.getaddrinfo(name, 80)
            return name
        except OSError:
            pass
    pytest.skip(f"this machine resolves none of {DNS_NAMES}")


@pytest.fixture(autouse=True)
def daemon_survives(request):
    yield
    for name in ("jail", "unconfined"):
        if name in request.fixturenames:
            j = request.getfixturevalue(name)
            assert j.alive(), f"the daemon died:\n{j.stderr()}"


# -- helpers -----------------------------------------------------------------------------------

def host_processes(fragment):
    """Pids of the host whose command line contains `fragment` (a probe's script path)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(") ", 1)[1][0]
        except OSError:
            continue
        if fragment.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def wait_until(pred, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def no_probe_left(script, timeout=3.0):
    assert wait_until(lambda: not host_processes(f"scripts/{script}"), timeout), \
        f"processes of {script} are left on the host: {host_processes(f'scripts/{script}')}"


def while_running(j, endpoint, input, delay=0.5, service=FS):
    """Runs the call in a thread; `delay` s later a normal call (ping) on the same daemon.
    Returns (response, seconds it took, ping result, seconds the ping took, whether the call was
    still running when the ping had answered)."""
    box = {}

    def run():
        t0 = time.monotonic()
        try:
            box["r"] = j.call(endpoint, input, service=service)
        except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = e
        box["t"] = time.monotonic() - t0

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(delay)
    t0 = time.monotonic()
    ping = j.probe("ping", {"echo": "concurrent"})
    ping_s = time.monotonic() - t0
    concurrent = thread.is_alive()
    thread.join(60)
    if "error" in box:
        raise box["error"]
    assert "r" in box, f"{endpoint} never answered"
    return box["r"], box["t"], ping, ping_s, concurrent


def contained(report):
    assert report.get("escaped") is False, f"escaped: {report}"


# -- controls: the jail lets a handler do what its manifest allows ------------------------------

def test_control_allowed_access_works(jail):
    assert jail.probe("ping", {"echo": 1})["ok"] is True
    keep = jail.probe("readFile", {"path": "data/keep.txt"})
    assert keep["escaped"] is True and "data/** is its fileAccess" in keep["content"], keep
    w = jail.probe("writeFile", {"path": "data/written.txt", "text": "hello\n"})
    assert w["escaped"] is True, w
    assert (jail.dir(FS) / "data" / "written.txt").read_text() == "hello\n"
    # Without fileAccess, the handler's own code is still readable.
    own = jail.probe("readFile", {"path": "scripts/read_file.py"}, service=BARE)
    assert own["escaped"] is True, own


def test_services_under_tmp(tmp_path_factory, allowed):
    """The usual layout of the integration tests: service folders and the token under /tmp, which
    the jail replaces with a private /tmp. Handlers must still run, and the token stay out of reach."""
    j = Jail(tmp_path_factory.mktemp("tmp-services"), allowed)
    try:
        assert str(j.dir(FS)).startswith(tempfile.gettempdir())
        assert j.probe("ping")["ok"] is True
        keep = j.probe("readFile", {"path": "data/keep.txt"})
        assert keep["escaped"] is True, keep
        contained(j.probe("readFile", {"path": str(j.token_file)}))
        contained(j.probe("readFile", {"path": "secret.txt"}))
        contained(j.probe("readFile", {"path": str(j.dir(BARE) / "data" / "private.txt")}))
        (j.dir(FS) / "data" / "pre-link").symlink_to(j.token_file)
        contained(j.probe("symlink", {"link": "data/pre-link"}))
        token_before = j.token_file.read_bytes()
        contained(j.probe("writeFile", {"path": str(j.token_file)}))
        assert j.token_file.read_bytes() == token_before
        contained(j.probe("writeFile", {"path": "pwned.txt"}))
        assert not (j.dir(FS) / "pwned.txt").exists()
    finally:
        j.stop()


# -- reading outside fileAccess ------------------------------------------------------------------

def test_read_daemon_token_file(jail):
    contained(jail.probe("readFile", {"path": str(jail.token_file)}))
    contained(jail.probe("readFile", {"path": str(jail.token_file)}, service=BARE))


def test_read_etc_shadow(jail):
    r = jail.probe("readFile", {"path": "/etc/shadow"})
    contained(r)
    assert "root:" not in json.dumps(r)


@pytest.mark.parametrize("case", ["service-root-file", "data-without-fileAccess", "other-service",
                                  "daemon-state-dir"])
def test_read_file_not_matched_by_file_access(jail, case):
    if case == "service-root-file":  # fileAccess is ./data/** only
        service, path, secret = FS, "secret.txt", "SECRET-FS-ROOT"
    elif case == "data-without-fileAccess":
        service, path, secret = BARE, "data/private.txt", "SECRET-BARE-DATA"
    elif case == "other-service":
        service, path, secret = FS, str(jail.dir(BARE) / "data" / "private.txt"), "SECRET-BARE-DATA"
    else:
        files = sorted(p for p in jail.d.state_dir.rglob("*") if p.is_file())
        assert files, "the daemon's state folder is empty"
        service, path, secret = FS, str(files[0]), None
    r = jail.probe("readFile", {"path": path}, service=service)
    contained(r)
    if secret:
        assert secret not in json.dumps(r)


# -- writing outside fileAccess -----------------------------------------------------------------

@pytest.mark.parametrize("service,path", [
    (FS, "pwned.txt"),              # the service folder's root: only data/** is writable
    (FS, "scripts/pwned.py"),       # the handler's own code
    (FS, "lavs.json"),              # its manifest
    (BARE, "data/pwned.txt"),       # no fileAccess: nothing is writable
    (BARE, "pwned.txt"),
])
def test_write_inside_service_folder_outside_file_access(jail, service, path):
    host = jail.dir(service) / path
    before = host.read_bytes() if host.exists() else None
    contained(jail.probe("writeFile", {"path": path}, service=service))
    after = host.read_bytes() if host.exists() else None
    assert after == before, f"{host} changed on the host"


def test_write_host_paths(jail):
    escape = Path(f"/tmp/hearth-escape-{secrets.token_hex(6)}")
    beside = jail.d.tmp / f"hearth-escape-{secrets.token_hex(6)}"  # the daemon's own folder
    other = jail.dir(BARE) / "data" / "from-fs.txt"               # another service's data
    token_before = jail.token_file.read_bytes()
    try:
        # A private /tmp may take the write: what counts is the host.
        jail.probe("writeFile", {"path": str(escape)})
        assert not escape.exists(), f"{escape} was created on the host"
        contained(jail.probe("writeFile", {"path": str(beside)}))
        assert not beside.exists()
        contained(jail.probe("writeFile", {"path": str(other)}))
        assert not other.exists()
        contained(jail.probe("writeFile", {"path": str(jail.token_file)}))
        assert jail.token_file.read_bytes() == token_before
    finally:
        for p in (escape, beside):
            if p.exists():
                p.unlink()


# -- symbolic links, .. and hard links ----------------------------------------------------------

def test_symlink_created_in_data_pointing_outside(jail):
    r = jail.probe("symlink", {"link": "data/evil-link", "target": str(jail.token_file)})
    contained(r)
    r = jail.probe("symlink", {"link": "data/evil-secret", "target": "../secret.txt"})
    contained(r)
    assert "SECRET-FS-ROOT" not in json.dumps(r)
    outside = jail.d.tmp / "outside-dir-created"
    outside.mkdir()
    contained(jail.probe("symlink", {"link": "data/evil-dir", "target": str(outside), "op": "write",
                                     "name": "pwned.txt"}))
    assert list(outside.iterdir()) == []


def test_symlink_already_in_data_pointing_outside(jail):
    data = jail.dir(FS) / "data"
    (data / "pre-link").symlink_to(jail.token_file)
    (data / "pre-secret").symlink_to("../secret.txt")
    outside = jail.d.tmp / "outside-dir-pre"
    outside.mkdir()
    (data / "pre-dir").symlink_to(outside)
    contained(jail.probe("symlink", {"link": "data/pre-link"}))
    r = jail.probe("symlink", {"link": "data/pre-secret"})
    contained(r)
    assert "SECRET-FS-ROOT" not in json.dumps(r)
    contained(jail.probe("symlink", {"link": "data/pre-dir", "op": "write", "name": "pwned.txt"}))
    assert list(outside.iterdir()) == []


def test_dotdot(jail):
    up = os.path.relpath(jail.token_file, jail.dir(FS))  # ../../token
    contained(jail.probe("readFile", {"path": "data/../" + up}))
    r = jail.probe("readFile", {"path": "data/../secret.txt"})
    contained(r)
    assert "SECRET-FS-ROOT" not in json.dumps(r)
    contained(jail.probe("readFile", {"path": "data/../../" + FOLDER[BARE] + "/data/private.txt"}))
    contained(jail.probe("writeFile", {"path": "data/../pwned-dotdot.txt"}))
    assert not (jail.dir(FS) / "pwned-dotdot.txt").exists()


def test_hard_link_of_outside_file_into_data(jail):
    data = jail.dir(FS) / "data"
    for name, source in (("hl-token", jail.token_file), ("hl-secret", jail.dir(FS) / "secret.txt"),
                         ("hl-shadow", Path("/etc/shadow"))):
        nlink = source.stat().st_nlink
        r = jail.probe("hardlink", {"source": str(source), "link": f"data/{name}"})
        contained(r)
        assert not (data / name).exists(), f"data/{name} exists on the host"
        assert source.stat().st_nlink == nlink
        assert "SECRET-FS-ROOT" not in json.dumps(r)


# -- network denied -----------------------------------------------------------------------------

@pytest.mark.parametrize("service", [FS, BARE])  # networkAccess false / absent
@pytest.mark.parametrize("target", ["daemon", "allowed-server", "10.255.255.1", "192.0.2.1"])
def test_no_network(jail, allowed, service, target):
    host, port = {"daemon": ("127.0.0.1", jail.port), "allowed-server": ("127.0.0.1", allowed.port),
                  "10.255.255.1": ("10.255.255.1", 80), "192.0.2.1": ("192.0.2.1", 80)}[target]
    contained(jail.probe("connect", {"host": host, "port": port, "timeout": 1.0}, service=service))


# -- network allowlist (jail-probe-net lists 127.0.0.1:<allowed.port> only) ---------------------

@pytest.mark.parametrize("mode", ["absolute", "connect"])
def test_allowlisted_server_is_reachable_through_proxy(jail, allowed, mode):
    path = f"/{mode}-{secrets.token_hex(4)}"
    r = jail.probe("proxyFetch", {"url": f"http://127.0.0.1:{allowed.port}{path}", "mode": mode},
                   service=NET)
    assert r["reached"] is True, r
    assert allowed.marker in r["body"], r
    assert path in allowed.paths  # seen by the server itself


@pytest.mark.parametrize("mode", ["absolute", "connect"])
@pytest.mark.parametrize("target", ["name", "daemon", "unlisted-server"])
def test_non_listed_host_gets_403(jail, unlisted, mode, target):
    url = {"name": "http://not-listed.example/",
           "daemon": f"http://127.0.0.1:{jail.port}/rpc",
           "unlisted-server": f"http://127.0.0.1:{unlisted.port}/through-proxy"}[target]
    r = jail.probe("proxyFetch", {"url": url, "mode": mode}, service=NET)
    assert r["reached"] is False and r["status"] == 403, r
    assert not unlisted.paths, f"the unlisted server was reached: {unlisted.paths}"


@pytest.mark.parametrize("target", ["allowed-server", "daemon", "10.255.255.1"])
def test_direct_connection_fails_with_allowlist(jail, allowed, target):
    host, port = {"allowed-server": ("127.0.0.1", allowed.port), "daemon": ("127.0.0.1", jail.port),
                  "10.255.255.1": ("10.255.255.1", 80)}[target]
    contained(jail.probe("connect", {"host": host, "port": port, "timeout": 1.0}, service=NET))


def test_dns_of_non_listed_name_fails(jail, resolvable):
    contained(jail.probe("resolve", {"name": resolvable}, service=NET))


# -- unix sockets ---------------------------------------------------------------------------------
# A handler must reach no unix socket outside its jail (the host's docker, dbus, /dev/log, the
# daemon's...), whatever the daemon's user: a root daemon's handler has CAP_DAC_OVERRIDE in its
# user namespace, so the socket file's mode does not stop it, and Landlock (ABI 7) does not
# mediate connect() or sendto() of a pathname socket. The probe tries every way in (new sockets,
# raw system call, socketpair ends, open()).

def unix_socket_folder(j, where):
    return {"data": j.dir(FS) / "data", "service-root": j.dir(FS), "outside": j.d.tmp}[where]


@pytest.mark.parametrize("kind", ["stream", "dgram"])
@pytest.mark.parametrize("where", ["data", "service-root", "outside"])
def test_unix_socket_outside_the_jail(jail, where, kind):
    server = UnixServer(unix_socket_folder(jail, where) / f"hs-{kind}.sock", kind)
    try:
        for service in (FS, BARE):
            r = jail.probe("unixSocket", {"path": server.path, "kind": kind,
                                          "message": f"from-{service}"}, service=service)
            contained(r)
            assert server.marker not in json.dumps(r)
        time.sleep(0.2)
        assert not server.reached(), \
            f"the socket was reached: {server.connections} connections, {server.received}"
    finally:
        server.close()


def test_control_processes_and_pipes_still_work(jail):
    """subprocess, sh, multiprocessing, socket.socketpair(), asyncio and node's child_process
    (stdio pipes are stream socketpairs in libuv) keep working under the unix-socket rules."""
    hide_layout(jail, HIDE)
    r = jail.probe("runtimes", service=HIDE)
    failed = {k: v for k, v in r["results"].items() if isinstance(v, str) and v.startswith("FAILED")}
    assert not failed, r["results"]


# -- negated fileAccess patterns: the exclusion holds for every way of reaching the files ---------
# jail-probe-hide: ./** but !data/secret/** and !data/*.key; jail-probe-hide-literal: ./** but
# !data/secret (a folder, without /**). The handler must not move excluded content to a name no
# negation matches (renaming the folder, an ancestor of it, the file, or hard-linking it), and
# neither it nor lavs/readFile may read it under any name afterwards.

SECRET_FOLDER = "SECRET-HIDE-FOLDER"
SECRET_KEY = "SECRET-HIDE-KEY"
SECRETS = (SECRET_FOLDER, SECRET_KEY)


def hide_layout(j, service):
    """(Re)creates on the host what the negations protect, as at the start of every case."""
    d = j.dir(service)
    for entry in d.iterdir():
        if entry.name in ("lavs.json", "scripts"):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    (d / "data" / "secret" / "sub").mkdir(parents=True)
    (d / "data" / "secret" / "file.txt").write_text(SECRET_FOLDER)
    (d / "data" / "secret" / "sub" / "deep.txt").write_text(SECRET_FOLDER)
    # A secret only where `!data/*.key` excludes it (jail-probe-hide).
    (d / "data" / "a.key").write_text(SECRET_KEY if service == HIDE else "not a secret here")
    (d / "data" / "pub").mkdir()
    (d / "data" / "pub" / "readme.txt").write_text("public")
    (d / "data" / "notes.txt").write_text("notes")
    (d / "spare").mkdir()
    return d


def secret_files(d):
    """Every file of the service folder (code aside) that holds a secret, relative."""
    out = []
    for path in sorted(d.rglob("*")):
        rel = path.relative_to(d)
        if rel.parts[0] in ("scripts", "lavs.json") or not path.is_file():
            continue
        if any(s in path.read_text(errors="replace") for s in SECRETS):
            out.append(rel.as_posix())
    return out


def unread(r):
    """A read that gave nothing of the secrets: refused, or the jail's empty cover."""
    assert r.get("escaped") is False or not r.get("content"), f"read: {r}"
    assert not any(s in json.dumps(r) for s in SECRETS), f"a secret leaked: {r}"


def assert_secrets_unreachable(j, service):
    """Every name the secrets have on the host now: a new call cannot read it, and lavs/readFile
    refuses it with -32001."""
    d = j.dir(service)
    names = secret_files(d)
    assert names, "the secrets are gone from the host"
    for rel in names:
        r = j.probe("readFile", {"path": rel}, service=service)
        unread(r)
        served = j.d.rpc("lavs/readFile", {"service": service, "path": rel})
        assert "error" in served and served["error"]["code"] == PERMISSION_DENIED, \
            f"lavs/readFile served {rel}: {served}"
        assert not any(s in json.dumps(r) + json.dumps(served) for s in SECRETS)


def test_control_negations_leave_the_rest_usable(jail):
    for service in (HIDE, HIDE_LITERAL):
        hide_layout(jail, service)
        assert jail.probe("readFile", {"path": "data/notes.txt"}, service=service)["escaped"] is True
        assert jail.probe("writeFile", {"path": "data/new.txt"}, service=service)["escaped"] is True
        assert jail.probe("writeFile", {"path": "data/pub/new.txt"}, service=service)["escaped"]
        # A folder with nothing excluded keeps every right.
        for op, src, dst in (("rename", "data/pub/new.txt", "data/pub/renamed.txt"),
                             ("unlink", "data/pub/renamed.txt", None),
                             ("mkdir", "data/pub/dir", None), ("rmdir", "data/pub/dir", None),
                             ("mkdir", "spare/d", None), ("rename", "spare/d", "spare/e"),
                             ("rmdir", "spare/e", None)):
            r = jail.probe("fsOp", {"op": op, "src": src, "dst": dst}, service=service)
            assert r["escaped"] is True, r
        # Files in a folder above an excluded one stay fully usable: atomic saves (write a
        # temporary file, rename it over the old one) and removal work.
        for op, src, dst in (("rename", "data/new.txt", "data/notes-copy.txt"),
                             ("unlink", "data/notes-copy.txt", None)):
            r = jail.probe("fsOp", {"op": op, "src": src, "dst": dst}, service=service)
            assert r["escaped"] is True, r
        # The documented price: the folders in it stay (no removing or renaming them).
        for op, src, dst in (("rename", "spare", "spare2"), ("rmdir", "spare", None)):
            r = jail.probe("fsOp", {"op": op, "src": src, "dst": dst}, service=service)
            assert r["escaped"] is False, r
            assert (jail.dir(service) / src).exists()
        served = jail.d.rpc("lavs/readFile", {"service": service, "path": "data/pub/readme.txt"})
        assert "result" in served, served


@pytest.mark.parametrize("service", [HIDE, HIDE_LITERAL])
def test_excluded_content_is_unreadable(jail, service):
    hide_layout(jail, service)
    for rel in ("data/secret/file.txt", "data/secret/sub/deep.txt") + \
            (("data/a.key",) if service == HIDE else ()):
        unread(jail.probe("readFile", {"path": rel}, service=service))
    assert_secrets_unreachable(jail, service)


def replace_atomically(path, text):
    temporary = path.with_name(path.name + ".new")
    temporary.write_text(text)
    temporary.rename(path)


def make_again(folder):
    old = folder.with_name(folder.name + ".old")
    folder.rename(old)
    shutil.copytree(old, folder)
    shutil.rmtree(old)


HOST_CHANGES = {
    # name: (change made on the host between two calls, the secret the next call reads first).
    # The next call's jail may have been built before the change (a warm jail); each change
    # detaches or misses what a jail planned before it covers.
    "replace a hidden file atomically": (
        lambda d: replace_atomically(d / "data" / "a.key", SECRET_KEY), "data/a.key"),
    "add a file a negation matches": (
        lambda d: (d / "data" / "b.key").write_text(SECRET_KEY), "data/b.key"),
    "make the hidden folder again": (
        lambda d: make_again(d / "data" / "secret"), "data/secret/file.txt"),
    "make an ancestor again": (lambda d: make_again(d / "data"), "data/secret/file.txt"),
}


@pytest.mark.parametrize("change", sorted(HOST_CHANGES))
def test_host_changes_between_calls_never_uncover_a_secret(jail, change):
    d = hide_layout(jail, HIDE)
    for _ in range(2):  # the endpoint has been called: its next jail may be waiting already
        assert jail.probe("readFile", {"path": "data/notes.txt"}, service=HIDE)["escaped"] is True
    time.sleep(0.3)
    alter, first = HOST_CHANGES[change]
    alter(d)
    unread(jail.probe("readFile", {"path": first}, service=HIDE))
    assert_secrets_unreachable(jail, HIDE)


def test_literal_negation_of_a_folder_excludes_its_content_from_read_file(jail):
    """`!data/secret` (no /**) is one definition for the jail and lavs/readFile: the folder and
    everything beneath it."""
    hide_layout(jail, HIDE_LITERAL)
    for rel in ("data/secret/file.txt", "data/secret/sub/deep.txt", "data/secret",
                "./data/secret/file.txt", "data/pub/../secret/file.txt"):
        served = jail.d.rpc("lavs/readFile", {"service": HIDE_LITERAL, "path": rel})
        assert "error" in served and served["error"]["code"] == PERMISSION_DENIED, (rel, served)
        assert SECRET_FOLDER not in json.dumps(served)
    # Through a link planted in an allowed folder: refused after the link is resolved.
    (jail.dir(HIDE_LITERAL) / "data" / "pub" / "to-secret").symlink_to("../secret")
    served = jail.d.rpc("lavs/readFile", {"service": HIDE_LITERAL,
                                          "path": "data/pub/to-secret/file.txt"})
    assert "error" in served and served["error"]["code"] == PERMISSION_DENIED, served
    assert SECRET_FOLDER not in json.dumps(served)


MOVES = {
    # name: (op, src, dst, services)
    "rename the excluded folder": ("rename", "data/secret", "data/moved", (HIDE, HIDE_LITERAL)),
    "move the excluded folder into an allowed one": ("rename", "data/secret", "data/pub/secret",
                                                     (HIDE, HIDE_LITERAL)),
    "move the excluded folder to the root": ("rename", "data/secret", "moved", (HIDE, HIDE_LITERAL)),
    "rename an ancestor": ("rename", "data", "data2", (HIDE, HIDE_LITERAL)),
    "move an ancestor into an allowed folder": ("rename", "data", "spare/data", (HIDE, HIDE_LITERAL)),
    "exchange an ancestor with another folder": ("exchange", "data", "spare", (HIDE, HIDE_LITERAL)),
    "exchange the excluded folder": ("exchange", "data/secret", "data/pub", (HIDE, HIDE_LITERAL)),
    "move a file out of the excluded folder": ("rename", "data/secret/file.txt",
                                               "data/pub/file.txt", (HIDE, HIDE_LITERAL)),
    "hard-link a file of the excluded folder": ("link", "data/secret/file.txt", "data/pub/f-link",
                                                (HIDE, HIDE_LITERAL)),
    "rename an excluded file": ("rename", "data/a.key", "data/a.txt", (HIDE,)),
    "move an excluded file into an allowed folder": ("rename", "data/a.key", "data/pub/a.key",
                                                     (HIDE,)),
    "hard-link an excluded file in its folder": ("link", "data/a.key", "data/a-link", (HIDE,)),
    "hard-link an excluded file into an allowed folder": ("link", "data/a.key", "data/pub/a-link",
                                                          (HIDE,)),
}


@pytest.mark.parametrize("case,service", [(case, service) for case, move in MOVES.items()
                                          for service in move[3]])
def test_excluded_content_cannot_be_moved_out(jail, case, service):
    op, src, dst, _ = MOVES[case]
    d = hide_layout(jail, service)
    r = jail.probe("fsOp", {"op": op, "src": src, "dst": dst}, service=service)
    contained(r)
    assert (d / src).exists(), f"{src} is gone from the host"
    # The next calls, and the daemon's own reads, find the content under no name.
    assert_secrets_unreachable(jail, service)


# -- resources ------------------------------------------------------------------------------------

def test_fork_bomb(jail):
    r, seconds, ping, ping_s, concurrent = while_running(jail, "forkBomb", {"count": 1000, "hold": 1.0})
    assert ping["ok"] is True and ping_s < 5, (ping, ping_s)
    if "error" in r:
        assert r["error"]["code"] in (TIMEOUT, HANDLER_ERROR), r
    else:
        assert r["result"]["escaped"] is False, f"1000 processes were forked: {r}"
        assert concurrent, "the bomb (holding its children 1 s) ended before the concurrent call"
    assert seconds < MAX_EXECUTION_S + 3
    no_probe_left("fork_bomb.py")
    assert jail.probe("ping", {"echo": "after"})["ok"] is True


def test_memory_bomb(jail):
    r, seconds, ping, ping_s, concurrent = while_running(
        jail, "memoryBomb", {"bytes": 1 << 30, "hold_at": 48 << 20, "hold": 1.0},
        service=BARE)  # its 10 s time limit: on a loaded machine the bomb may need more than 2 s
    assert concurrent, "the bomb ended before the concurrent call"
    assert ping["ok"] is True and ping_s < 5, (ping, ping_s)
    assert "error" in r, f"1 GiB was allocated under maxMemory = 128 MiB: {r}"
    assert r["error"]["code"] == HANDLER_ERROR, r
    assert "memory limit exceeded" in r["error"]["message"], r
    no_probe_left("mem_bomb.py")
    assert jail.probe("ping", {"echo": "after"})["ok"] is True


def test_infinite_loop(jail):
    r, seconds, ping, ping_s, concurrent = while_running(jail, "loop", {"seconds": 30})
    assert concurrent, "the loop ended before the concurrent call"
    assert ping["ok"] is True and ping_s < 5, (ping, ping_s)
    assert "error" in r and r["error"]["code"] == TIMEOUT, r
    assert MAX_EXECUTION_S - 0.1 <= seconds < MAX_EXECUTION_S + 2.0, seconds
    no_probe_left("loop.py")  # the child it forked too


def test_background_process_does_not_outlive_the_call(jail):
    log = jail.dir(FS) / "data" / "background.log"
    r = jail.probe("background", {"file": "data/background.log", "seconds": 20})
    assert r["spawned"] is True, r
    assert log.exists() and log.read_text().startswith("start"), "the background process never ran"
    time.sleep(0.3)
    size = log.stat().st_size
    time.sleep(1.0)
    assert log.stat().st_size == size, "the background process is still writing after the call"
    no_probe_left("background.py", timeout=0.5)


# -- terminals, ptrace, /proc, signals --------------------------------------------------------------

def test_tiocsti(jail):
    r = jail.probe("tiocsti")
    contained(r)
    assert r["ownPty"] != "ok", f"TIOCSTI is not filtered: {r}"


def test_ptrace_sibling(jail):
    contained(jail.probe("ptraceChild"))


def test_ptrace_daemon(jail):
    contained(jail.probe("ptracePid", {"pid": jail.pid, "marker": str(jail.token_file)}))
    with open(f"/proc/{jail.pid}/status") as f:
        tracer = [line for line in f if line.startswith("TracerPid:")][0].split()[1]
    assert tracer == "0"
    assert jail.probe("ping")["ok"] is True


def test_read_daemon_environ(jail):
    contained(jail.probe("procRead", {"pid": jail.pid, "file": "environ", "marker": jail.canary}))


def test_read_daemon_cmdline(jail):
    contained(jail.probe("procRead", {"pid": jail.pid, "file": "cmdline",
                                      "marker": str(jail.token_file)}))


def test_proc_shows_only_the_jail(jail):
    r = jail.probe("procList", {"daemon_pid": jail.pid})
    contained(r)


def test_kill_daemon(jail):
    contained(jail.probe("kill", {"pid": jail.pid, "marker": str(jail.token_file)}))


def test_token_never_appeared(jail):
    """Runs last: no response of the module carried the token (each call checked it already)."""
    assert jail.responses
    assert all(jail.token not in json.dumps(r) for r in jail.responses)


# -- the proof: the same probes escape without the jail ------------------------------------------

def test_unconfined_daemon_says_so(unconfined):
    if not unconfined.insecure_flag:
        pytest.fail(f"this hearth has no {INSECURE_FLAG}: the probes ran unconfined by default")
    assert wait_until(lambda: any(w in unconfined.stderr().lower()
                                  for w in ("insecure", "sandbox", "unconfined")), 5), \
        f"{INSECURE_FLAG} was not logged:\n{unconfined.stderr()}"


@pytest.mark.parametrize("case", ["token", "shadow", "secret", "dotdot", "symlink", "hardlink",
                                  "daemon-port", "other-address", "environ", "cmdline", "proc",
                                  "kill", "ptrace-child", "ptrace-daemon", "dns"])
def test_unconfined_probes_do_escape(unconfined, case, request):
    u = unconfined
    up = os.path.relpath(u.token_file, u.dir(FS))
    endpoint, input = {
        "token": ("readFile", {"path": str(u.token_file)}),
        "shadow": ("readFile", {"path": "/etc/shadow"}),
        "secret": ("readFile", {"path": "secret.txt"}),
        "dotdot": ("readFile", {"path": "data/../" + up}),
        "symlink": ("symlink", {"link": "data/evil-link", "target": str(u.token_file)}),
        "hardlink": ("hardlink", {"source": str(u.dir(FS) / "secret.txt"), "link": "data/hl"}),
        "daemon-port": ("connect", {"host": "127.0.0.1", "port": u.port}),
        "other-address": ("connect", {"host": "192.0.2.1", "port": 80}),
        "environ": ("procRead", {"pid": u.pid, "file": "environ", "marker": u.canary}),
        "cmdline": ("procRead", {"pid": u.pid, "file": "cmdline", "marker": str(u.token_file)}),
        "proc": ("procList", {"daemon_pid": u.pid}),
        "kill": ("kill", {"pid": u.pid, "marker": str(u.token_file)}),
        "ptrace-child": ("ptraceChild", {}),
        "ptrace-daemon": ("ptracePid", {"pid": u.pid, "marker": str(u.token_file)}),
        "dns": ("resolve", {"name": request.getfixturevalue("resolvable") if case == "dns" else ""}),
    }[case]
    if case == "shadow" and not os.access("/etc/shadow", os.R_OK):
        pytest.skip("/etc/shadow is not readable by this user even without a jail")
    if case == "other-address":
        direct = subprocess.run([sys.executable, str(PROBES / "net_connect.py")],
                                input=json.dumps(input), capture_output=True, text=True)
        if not json.loads(direct.stdout)["escaped"]:
            pytest.skip(f"this machine has no route to 192.0.2.1: {direct.stdout}")
    r = u.probe(endpoint, input, service=NET if case == "dns" else FS, secret=False)
    assert r["escaped"] is True, f"the probe did not detect an escape it should: {r}"
    if case in ("token", "dotdot", "symlink"):
        # The outside check of the jailed tests would have seen it too.
        assert u.token in json.dumps(u.responses[-1])


@pytest.mark.parametrize("kind", ["stream", "dgram"])
def test_unconfined_unix_socket_probe_escapes(unconfined, kind):
    server = UnixServer(unconfined.d.tmp / f"hs-{kind}.sock", kind)
    try:
        r = unconfined.probe("unixSocket", {"path": server.path, "kind": kind, "message": "hi"},
                             secret=False)
        assert r["escaped"] is True, r
        assert wait_until(server.reached, 2), "the probe reported an escape the server never saw"
    finally:
        server.close()


def test_unconfined_fs_op_probe_moves_excluded_content(unconfined):
    d = hide_layout(unconfined, HIDE)
    r = unconfined.probe("fsOp", {"op": "rename", "src": "data", "dst": "data2"}, service=HIDE,
                         secret=False)
    assert r["escaped"] is True and (d / "data2" / "secret" / "file.txt").exists(), r


def test_unconfined_write_reaches_the_host(unconfined):
    escape = Path(f"/tmp/hearth-escape-{secrets.token_hex(6)}")
    try:
        r = unconfined.probe("writeFile", {"path": str(escape)})
        assert r["escaped"] is True and escape.exists(), r
    finally:
        if escape.exists():
            escape.unlink()


def test_unconfined_background_process_outlives_the_call(unconfined):
    log = unconfined.dir(FS) / "data" / "background.log"
    r = unconfined.probe("background", {"file": "data/background.log", "seconds": 10})
    assert r["spawned"] is True, r
    try:
        time.sleep(0.3)
        size = log.stat().st_size
        time.sleep(1.0)
        assert log.stat().st_size > size, "the probe's background process did not keep writing"
    finally:
        # Unconfined, the pid it reports is a host pid.
        if r["pid"] in host_processes("scripts/background.py"):
            os.kill(r["pid"], 9)


def test_unconfined_tiocsti_and_ptrace_probes_detect_escapes():
    """TIOCSTI needs a terminal, which hearth never gives a handler: the probe runs directly on a
    pseudo-terminal here, and must push its character into it."""
    if os.geteuid() != 0:
        pytest.skip("TIOCSTI on a terminal that is not the controlling one needs CAP_SYS_ADMIN")
    import pty
    import select
    master, slave = pty.openpty()
    try:
        out = subprocess.run([sys.executable, str(PROBES / "tiocsti.py")], stdin=slave,
                             capture_output=True, text=True, timeout=20)
        r = json.loads(out.stdout)
        if "EIO" in r["detail"]:
            pytest.skip(f"TIOCSTI is disabled on this kernel (dev.tty.legacy_tiocsti = 0): {r}")
        assert r["escaped"] is True and r["ownPty"] == "ok", r
        ready, _, _ = select.select([master], [], [], 2)
        assert ready and os.read(master, 16) == b" "
    finally:
        os.close(master)
        os.close(slave)
