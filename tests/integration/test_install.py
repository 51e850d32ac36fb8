"""`make install`'s layout, checked on a real install: `cmake --install build/release --prefix
/usr` staged under a temporary DESTDIR, then the INSTALLED hearth run from there. It must find
its helpers (hearth-launch, hearth-js-worker) in libexec/hearth and the view host's page in
share/hearth/web, next to nothing of the build tree; its man pages, shell completions and systemd
user unit must be where the shells, man and systemd look."""
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from hearthtest import EXAMPLES, ROOT, HttpClient, result

BINARY_DIR = Path(os.environ.get("HEARTH_BINARY_DIR", ROOT / "build" / "release"))


def run(*args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    return subprocess.run([str(a) for a in args], **kw)


@pytest.fixture(scope="module")
def destdir(tmp_path_factory):
    """Everything installed with prefix /usr under a fresh DESTDIR."""
    dest = tmp_path_factory.mktemp("destdir")
    env = dict(os.environ, DESTDIR=str(dest))
    done = run("cmake", "--install", BINARY_DIR, "--prefix", "/usr", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return dest


@pytest.fixture(scope="module")
def usr(destdir):
    return destdir / "usr"


def clean_env():
    env = {k: v for k, v in os.environ.items() if k != "HEARTH_WEB_DIR"}
    return env


def test_the_layout(usr):
    assert sorted(p.name for p in (usr / "bin").iterdir()) == ["hearth"]
    assert sorted(p.name for p in (usr / "libexec" / "hearth").iterdir()) == ["hearth-js-worker",
                                                                            "hearth-launch"]
    for exe in [usr / "bin" / "hearth", *(usr / "libexec" / "hearth").iterdir()]:
        assert os.access(exe, os.X_OK), exe
    web = usr / "share" / "hearth" / "web"
    assert sorted(p.name for p in web.iterdir()) == sorted(p.name for p in (ROOT / "web").iterdir())
    assert (usr / "share" / "bash-completion" / "completions" / "hearth").is_file()
    assert (usr / "share" / "zsh" / "vendor-completions" / "_hearth").is_file()
    assert (usr / "share" / "fish" / "vendor_completions.d" / "hearth.fish").is_file()
    assert (usr / "lib" / "systemd" / "user" / "hearth.service").is_file()
    examples = usr / "share" / "doc" / "hearth" / "examples"
    assert (examples / "todo-manager-js" / "lavs.json").is_file()
    assert not list(examples.rglob("todos.json")), "runtime data of the examples is not installed"


def test_the_installed_binary_runs(usr):
    version = run(usr / "bin" / "hearth", "--version", env=clean_env())
    assert version.returncode == 0 and version.stdout.startswith("hearth "), version
    doctor = run(usr / "bin" / "hearth", "doctor", "--json", env=clean_env())
    assert doctor.returncode in (0, 1), doctor.stderr
    json.loads(doctor.stdout)


def test_the_installed_daemon_finds_its_js_worker_and_page(usr, tmp_path):
    service = tmp_path / "todo-manager-js"
    shutil.copytree(EXAMPLES / "todo-manager-js", service,
                    ignore=shutil.ignore_patterns("todos.json", ".todos.lock"))
    web = usr / "share" / "hearth" / "web"
    # Mark the installed page, so that the page served is known to be this one and not the
    # source tree's web/ (which the build tree's hearth serves).
    marker = f"<!-- installed copy {os.getpid()} -->\n"
    with open(web / "index.html", "a", encoding="utf-8") as f:
        f.write(marker)
    assert marker not in (ROOT / "web" / "index.html").read_text()
    ready_file = tmp_path / "ready.json"
    stderr = open(tmp_path / "stderr.log", "wb")
    proc = subprocess.Popen(
        [str(usr / "bin" / "hearth"), "serve", str(service), "--port", "0", "--ready-file",
         str(ready_file), "--state-dir", str(tmp_path / "state"), "--log-level", "warn"],
        stdout=subprocess.DEVNULL, stderr=stderr, env=clean_env(), cwd=tmp_path)
    try:
        deadline = time.time() + 30
        while not ready_file.exists():
            assert proc.poll() is None, (tmp_path / "stderr.log").read_text()
            assert time.time() < deadline, "the installed hearth did not become ready"
            time.sleep(0.05)
        ready = json.loads(ready_file.read_text())
        token = Path(ready["tokenFile"]).read_text().strip()
        assert Path(ready["tokenFile"]) == tmp_path / "state" / "token"
        with HttpClient("127.0.0.1", ready["port"], token) as c:
            # A function handler: run by hearth-js-worker, started through hearth-launch, both
            # found in libexec/hearth (nothing of that name is beside the installed binary).
            added = result(c.rpc("lavs/call", {"endpoint": "addTodo", "input": {"text": "milk"}}))
            assert added["text"] == "milk"
            todos = result(c.rpc("lavs/call", {"endpoint": "listTodos"}))
            assert [t["text"] for t in todos] == ["milk"]
            status, _, body = c.request("GET", "/ui/",
                                        headers={"Host": f"127.0.0.1:{ready['port']}"})
            assert status == 200
            assert marker.encode() in body
    finally:
        proc.terminate()
        assert proc.wait(timeout=20) == 0, (tmp_path / "stderr.log").read_text()
        stderr.close()


def test_every_command_has_a_man_page_that_renders_cleanly(usr):
    man1 = usr / "share" / "man" / "man1"
    listed = run(usr / "bin" / "hearth", "--help", env=clean_env()).stdout
    commands = []
    in_commands = False
    for line in listed.splitlines():
        if line.startswith("Subcommands:"):
            in_commands = True
        elif in_commands and line.strip():
            commands.append(line.split()[0])
    assert {"serve", "call", "check", "doctor", "completion", "man", "app"} <= set(commands)
    pages = sorted(p.name for p in man1.iterdir())
    assert pages == sorted(["hearth.1"] + [f"hearth-{c}.1" for c in commands])
    for page in pages:
        checked = run("groff", "-ww", "-z", "-man", "-Tutf8", man1 / page)
        assert checked.returncode == 0 and checked.stderr == "", (page, checked.stderr)
    shown = run("man", "-l", man1 / "hearth-serve.1", env=dict(clean_env(), MANPAGER="cat",
                                                              MANWIDTH="100"))
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "FILES",
                    "SEE ALSO"):
        assert section in text, section
    assert "--port" in text and "config.toml" in text and "hearth-call(1)" in text


def complete(script, words, env):
    """The words bash completes for the command line `words` (the last one being completed)."""
    line = " ".join(words)
    program = (f"source {script}\n"
               f"complete -p hearth\n"
               f"COMP_WORDS=({line})\n"
               f"COMP_CWORD={len(words) - 1}\n"
               f"COMP_LINE='{line}'\nCOMP_POINT=${{#COMP_LINE}}\n"
               "_hearth\n"
               "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    done = run("bash", "--norc", "--noprofile", "-c", program, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "complete -o filenames -F _hearth hearth"
    return [l for l in lines[1:] if l]


def test_bash_completion_walks_the_command_line(usr, tmp_path):
    script = usr / "share" / "bash-completion" / "completions" / "hearth"
    env = clean_env()
    assert complete(script, ["hearth", "se"], env) == ["serve"]
    assert complete(script, ["hearth", "serve", "--po"], env) == ["--port"]
    # Global options follow any command (--log-level), with their values.
    assert complete(script, ["hearth", "serve", "--log-level", "w"], env) == ["warn"]
    app_commands = complete(script, ["hearth", "app", "''"], env)
    helped = run(usr / "bin" / "hearth", "app", "--help", env=env).stdout
    listed = helped.split("Subcommands:", 1)[1].split()
    assert app_commands and set(app_commands) <= set(listed)
    assert "install" in app_commands and "serve" not in app_commands
    # An option's value is skipped when finding the command: `--state-dir app` is no `app`.
    assert "--port" in complete(script, ["hearth", "serve", "--state-dir", "app", "--p"], env)
    # A value that is a file name completes as one.
    (tmp_path / "svc-folder").mkdir()
    os.chdir(tmp_path)
    assert complete(script, ["hearth", "serve", "svc-f"], env) == ["svc-folder"]


def test_the_installed_scripts_are_what_hearth_prints(usr, tmp_path):
    hearth = usr / "bin" / "hearth"
    for shell, installed in (("bash", "bash-completion/completions/hearth"),
                             ("zsh", "zsh/vendor-completions/_hearth"),
                             ("fish", "fish/vendor_completions.d/hearth.fish")):
        printed = run(hearth, "completion", shell, env=clean_env())
        assert printed.returncode == 0, printed.stderr
        assert printed.stdout == (usr / "share" / installed).read_text(), shell
    refused = run(hearth, "completion", "tcsh", env=clean_env())
    assert refused.returncode != 0 and "tcsh" in refused.stderr
    unwritable = run(hearth, "completion", "bash", "--out", tmp_path / "missing" / "x",
                     env=clean_env())
    assert unwritable.returncode == 1 and "cannot write" in unwritable.stderr
    overview = run(hearth, "man", env=clean_env())
    assert overview.stdout == (usr / "share" / "man" / "man1" / "hearth.1").read_text()


def test_zsh_and_fish_completions_parse(usr):
    zsh_file = usr / "share" / "zsh" / "vendor-completions" / "_hearth"
    fish_file = usr / "share" / "fish" / "vendor_completions.d" / "hearth.fish"
    zsh, fish = shutil.which("zsh"), shutil.which("fish")
    if zsh:
        checked = run(zsh, "-n", zsh_file)
        assert checked.returncode == 0, checked.stderr
    if fish:
        checked = run(fish, "--no-execute", fish_file)
        assert checked.returncode == 0, checked.stderr

        def fish_complete(line):
            done = run(fish, "--no-config", "-c", f"source {fish_file}; complete -C'{line}'")
            assert done.returncode == 0, done.stderr
            return [l.split("\t")[0] for l in done.stdout.splitlines()]

        assert fish_complete("hearth se") == ["serve"]
        assert "--port" in fish_complete("hearth serve --po")
        assert "install" in fish_complete("hearth app ")
        assert "serve" not in fish_complete("hearth app ")
        assert fish_complete("hearth serve --model-tools ") == ["auto", "native", "prompt"]
    # Without the shells, the structure: every top-level command reachable in both.
    zsh_text, fish_text = zsh_file.read_text(), fish_file.read_text()
    assert zsh_text.startswith("#compdef hearth\n")
    for command in ("serve", "call", "app", "completion"):
        assert f"        {command}) _hearth_cmd__{command} && ret=0 ;;" in zsh_text
        assert f"-f -a {command} -d " in fish_text


def test_the_systemd_user_unit(usr, destdir, tmp_path):
    unit = (usr / "lib" / "systemd" / "user" / "hearth.service").read_text()
    assert "\nExecStart=/usr/bin/hearth serve --log-level info\n" in unit
    assert "\nRestart=on-failure\n" in unit and "\nWantedBy=default.target\n" in unit
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        pytest.skip("systemd-analyze is not installed")
    # Verified as installed under DESTDIR: the ExecStart pointing at the staged binary.
    staged = tmp_path / "hearth.service"
    staged.write_text(unit.replace("/usr/bin/hearth", str(usr / "bin" / "hearth")))
    checked = run(analyze, "verify", "--man=no", staged)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "hearth.service" not in checked.stderr, checked.stderr
