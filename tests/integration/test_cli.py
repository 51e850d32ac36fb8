"""The command line: check, call, --version, --help."""
import json
import os
import subprocess

import pytest

from hearthtest import EXAMPLES, ROOT, hearth_bin


def run(*args, **kw):
    return subprocess.run([hearth_bin(), *args], capture_output=True, text=True, timeout=60, **kw)


def test_version_and_help():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("hearth ")
    for cmd in ([], ["serve"], ["call"], ["check"]):
        r = run(*cmd, "--help")
        assert r.returncode == 0, cmd
        assert "Usage" in r.stdout or "usage" in r.stdout.lower()


def test_check_examples_summarises(tmp_path):
    r = run("check", str(EXAMPLES))
    assert r.returncode == 0, r.stdout + r.stderr
    for name in ("todo-manager", "simple-notes", "contact-manager", "bookshelf"):
        assert name in r.stdout
    assert "listTodos" in r.stdout
    r = run("check", "--json", str(EXAMPLES / "todo-manager"))
    report = json.loads(r.stdout)
    assert report["ok"] is True and report["services"][0]["name"] == "todo-manager"


def test_check_lists_every_problem_with_its_path(tmp_path):
    (tmp_path / "lavs.json").write_text(json.dumps({
        "lavs": "1.0", "name": "bad name", "version": "one",
        "endpoints": [
            {"id": "a", "method": "query", "handler": {"type": "script", "command": "x", "timeout": -5}},
            {"id": "a", "method": "query", "handler": {"type": "carrier-pigeon"}},
            {"id": "c", "method": "query", "handler": {"type": "script", "command": "x"},
             "schema": {"output": {"$ref": "#/types/Missing"}}},
        ]}))
    r = run("check", str(tmp_path))
    assert r.returncode == 1
    out = r.stdout
    for path in ("name", "version", "endpoints[0].handler.timeout", "endpoints[1].id",
                 "endpoints[1].handler.type", "endpoints[2].schema.output"):
        assert f": {path}" in out, (path, out)
    assert "carrier-pigeon" in out
    r = run("check", "--json", str(tmp_path))
    report = json.loads(r.stdout)
    assert report["ok"] is False and len(report["problems"]) >= 6


def test_check_invalid_json(tmp_path):
    (tmp_path / "lavs.json").write_text("{ not json")
    r = run("check", str(tmp_path))
    assert r.returncode == 1
    assert "lavs.json" in r.stdout


def test_call_prints_result(tmp_path):
    r = run("call", str(EXAMPLES / "contacts"), "searchContacts", '{"query": "Grace"}', "--state-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[0]["name"] == "Grace Hopper"


def test_call_error_prints_error_object(tmp_path):
    r = run("call", str(EXAMPLES / "todo-manager"), "addTodo", "{}", "--state-dir", str(tmp_path), "--json")
    assert r.returncode != 0
    err = json.loads(r.stdout)
    assert err["code"] == -32602 and err["data"]["field"] == "text"
    r = run("call", str(EXAMPLES / "todo-manager"), "noSuchEndpoint", "--state-dir", str(tmp_path), "--json")
    assert r.returncode != 0 and json.loads(r.stdout)["code"] == -32601
    r = run("call", str(EXAMPLES / "todo-manager"), "listTodos", "{bad", "--state-dir", str(tmp_path), "--json")
    assert r.returncode != 0 and json.loads(r.stdout)["code"] == -32700


def test_call_needs_service_when_several(tmp_path):
    r = run("call", str(EXAMPLES), "getNotes", "--state-dir", str(tmp_path), "--json")
    assert r.returncode != 0 and json.loads(r.stdout)["data"]["field"] == "service"
    r = run("call", str(EXAMPLES), "getNotes", "--service", "simple-notes", "--state-dir", str(tmp_path))
    assert r.returncode == 0 and "simple-notes" in json.loads(r.stdout)
