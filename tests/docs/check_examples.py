#!/usr/bin/env python3
"""The whole examples in the docs are checked as written. A fenced block after a line
`<!-- check: KIND PATH -->` is written to PATH in a scratch folder; then each KIND is checked:

  lavs       `hearth check --strict` on the folder of each lavs.json: no problem, no warning
  app        the block is an APP.md put into a copy of examples/apps/field-notes (the files it
             names), then `hearth app validate --json`: valid, no finding of severity error
  workspace  the block is a workspace.yaml put into a copy of examples/workspace-search/workspace,
             then `hearth workspace render` with the example's services

Usage: check_examples.py HEARTH_BINARY [DOC...] (default: every docs/*.md). Exit 1 on a failure."""
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
MARK = re.compile(r"^<!-- check: (\w+) (\S+) -->$")


def blocks(doc):
    lines = doc.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i].strip())
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            k = j + 1
            while k < len(lines) and not lines[k].startswith("```"):
                k += 1
            yield m.group(1), m.group(2), "\n".join(lines[j + 1:k]) + "\n", f"{doc.name}:{i + 1}"
            i = k
        i += 1


def run(hearth, *args):
    return subprocess.run([hearth, *map(str, args)], capture_output=True, text=True, timeout=120)


def main():
    hearth = sys.argv[1]
    docs = [pathlib.Path(p) for p in sys.argv[2:]] or sorted((ROOT / "docs").glob("*.md"))
    failures = []
    checked = 0
    for doc in docs:
        found = list(blocks(doc))
        if not found:
            continue
        work = pathlib.Path(tempfile.mkdtemp(prefix="hearth-doc-"))
        try:
            lavs_dirs = []
            for kind, path, text, where in found:
                if kind == "lavs":
                    dest = work / path
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_text(text)
                    if dest.name == "lavs.json":
                        lavs_dirs.append((dest.parent, where))
                elif kind == "app":
                    pkg = work / "app"
                    shutil.copytree(ROOT / "examples" / "apps" / "field-notes", pkg)
                    (pkg / "APP.md").write_text(text)
                    r = run(hearth, "app", "validate", pkg, "--json")
                    checked += 1
                    try:
                        report = json.loads(r.stdout)
                    except ValueError:
                        failures.append(f"{where}: app validate did not answer JSON: {r.stdout}{r.stderr}")
                        continue
                    errors = [f for f in report.get("findings", []) if f.get("severity") == "error"]
                    if r.returncode != 0 or not report.get("ok", False) or errors:
                        failures.append(f"{where}: APP.md is not valid: {json.dumps(errors or report)[:2000]}")
                elif kind == "workspace":
                    ws = work / "workspace"
                    shutil.copytree(ROOT / "examples" / "workspace-search" / "workspace", ws)
                    (ws / "workspace.yaml").write_text(text)
                    r = run(hearth, "workspace", "render", ws, "--services", ROOT / "examples" / "workspace-search",
                            "--state-dir", work / "state")
                    checked += 1
                    if r.returncode != 0:
                        failures.append(f"{where}: workspace does not render: {r.stdout}{r.stderr}")
                else:
                    failures.append(f"{where}: unknown check kind '{kind}'")
            for folder, where in lavs_dirs:
                r = run(hearth, "check", "--strict", folder)
                checked += 1
                if r.returncode != 0 or "warning" in r.stdout:
                    failures.append(f"{where}: hearth check --strict: {r.stdout}{r.stderr}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print(f)
    print(f"doc examples: {checked} checked, {len(failures)} failed")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
