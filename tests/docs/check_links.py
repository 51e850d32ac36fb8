#!/usr/bin/env python3
"""Every link in README.md, CONTRIBUTING.md and docs/*.md goes to a public address (https://, or
http:// to a named host) or to a file of the repository that exists, with its #anchor among the
target's headings. Exit 1 with one line per bad link."""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2]).resolve()
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|<(https?://[^>]+)>")
FENCE = re.compile(r"^(```|~~~)")


def anchors(md):
    out = set()
    for line in md.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^#{1,6}\s+(.*)", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            out.add(slug)
    return out


def check(md):
    bad = []
    in_fence = False
    for n, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line.strip()):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for m in LINK.finditer(line):
            target = m.group(1) or m.group(2)
            where = f"{md.relative_to(ROOT)}:{n}: {target}"
            if re.match(r"^https://", target) or re.match(r"^http://(?!127\.|localhost|\[::1\])", target):
                continue
            if target.startswith(("http://", "file:", "ftp:")):
                bad.append(where + ": not a public address")
                continue
            if target.startswith("mailto:"):
                continue
            path, _, anchor = target.partition("#")
            dest = (md.parent / path).resolve() if path else md
            if ROOT not in dest.parents and dest != ROOT:
                bad.append(where + ": outside the repository")
                continue
            if not dest.exists():
                bad.append(where + ": no such file")
                continue
            if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(where + f": no heading #{anchor} in {dest.relative_to(ROOT)}")
    return bad


def main():
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    bad = [b for f in files if f.exists() for b in check(f)]
    for b in bad:
        print(b)
    print(f"links: {len(files)} files, {len(bad)} bad link(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
