"""`hearth lafs check`: per-check reports (plain and --json), tiers, exit codes, on the LAFS
conformance fixtures read from ../shared (beside the clone)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("HEARTH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FIXTURES = ROOT / ".." / "shared" / "conformance" / "lafs" / "fixtures"
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from hearthtest import hearth_bin  # noqa: E402


def run(*args):
    return subprocess.run([hearth_bin(), "lafs", "check", *map(str, args)], capture_output=True, text=True, timeout=60)


def all_fixtures():
    return sorted(FIXTURES.rglob("*.json"))


def test_there_are_25_fixtures():
    assert len(all_fixtures()) == 25


@pytest.mark.parametrize("name,code", [
    ("valid-success-envelope.json", 0),
    ("valid-error-actionable.json", 0),
    ("flags-conflict.json", 0),
    ("agent-workflows/error-recovery.json", 0),
    ("invalid-conflict-envelope.json", 1),
    ("invalid-unregistered-error.json", 1),
    ("mixed-pagination-envelope.json", 1),
    ("valid-error-minimal.json", 1),
])
def test_exit_code_per_file(name, code):
    r = run(FIXTURES / name)
    assert r.returncode == code, r.stdout + r.stderr
    assert ("PASS" if code == 0 else "FAIL") in r.stdout.splitlines()[0]


def test_plain_report_lists_each_check():
    r = run(FIXTURES / "mixed-pagination-envelope.json")
    lines = r.stdout.splitlines()
    assert lines[0].endswith("envelope, all checks: FAIL")
    assert "  PASS  envelope_schema_valid" in lines
    assert "  FAIL  pagination_mode_consistent" in lines
    assert any("cursor mode should not include offset field" in line for line in lines)
    assert lines[-1] == "0/1 files pass (all checks)"


def test_json_report_for_every_fixture():
    files = all_fixtures()
    r = run("--json", *files)
    assert r.returncode == 1  # some fixtures are meant to fail
    report = json.loads(r.stdout)
    assert report["ok"] is False and report["tier"] is None
    by_name = {Path(f["file"]).name: f for f in report["files"]}
    assert len(by_name) == 25
    assert by_name["valid-success-envelope.json"]["ok"] is True
    assert by_name["flags-valid.json"]["kind"] == "flags"
    assert by_name["chained-operations.json"]["kind"] == "workflow"
    cursor = by_name["invalid-cursor-missing-fields.json"]
    assert [c["name"] for c in cursor["checks"]] == ["envelope_schema_valid"]
    assert "nextCursor" in cursor["checks"][0]["detail"]
    invariants = [c for c in by_name["invalid-error-with-result.json"]["checks"] if c["name"] == "envelope_invariants"]
    assert invariants == [{"name": "envelope_invariants", "pass": True}]


def test_tiers_decide_the_exit_code():
    stale = FIXTURES / "invalid-context-stale.json"
    # context_preservation_valid is a complete-tier check.
    assert run("--tier", "core", stale).returncode == 0
    assert run("--tier", "standard", stale).returncode == 0
    r = run("--tier", "complete", stale)
    assert r.returncode == 1
    assert "FAIL  context_preservation_valid" in r.stdout
    core = json.loads(run("--json", "--tier", "core", stale).stdout)
    assert [c["name"] for c in core["files"][0]["checks"]] == [
        "envelope_schema_valid", "envelope_invariants", "error_code_registered"]
    assert run("--tier", "platinum", stale).returncode != 0  # not a tier


def test_every_valid_fixture_passes_every_tier():
    valid = [f for f in all_fixtures() if f.name.startswith("valid-") and f.name != "valid-error-minimal.json"]
    for tier in ("core", "standard", "complete"):
        r = run("--tier", tier, *valid)
        assert r.returncode == 0, r.stdout


def test_unreadable_and_non_json_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = run(bad, FIXTURES / "valid-success-envelope.json")
    assert r.returncode == 2
    assert "ERROR" in r.stdout
    r = run(tmp_path / "missing.json")
    assert r.returncode == 2
    assert "No such file or directory" in r.stdout
    r = run(tmp_path)
    assert r.returncode == 2
    assert "is a folder" in r.stdout
    r = subprocess.run([hearth_bin(), "lafs", "check"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0  # FILE is required
