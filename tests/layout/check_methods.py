#!/usr/bin/env python3
"""Where the daemon's JSON-RPC methods live (docs/architecture.md, "Methods").

A method GROUP/NAME is registered in src/methods/GROUP/ (the App Server's handshake, `initialize`
and `initialized`, in src/methods/initialize/), so that a method is found from its name. The
check reads every `.add("NAME", ...)` call on a dispatcher in src/ and fails, naming the file and
line, on:
  - a method registered outside src/methods/ (the MCP and A2A engines in src/mcpserver/ and
    src/a2a/ speak other protocols at /mcp and /a2a, and tests register what they like);
  - a method in a src/methods/ folder that is not its group's;
  - a folder of src/methods/ that registers no method.

Usage: check_methods.py [SRC_DIR]   (default: the src/ beside tests/)
"""
import pathlib
import re
import sys

# The receiver of .add(...) is a dispatcher: `dispatcher.add(`, `dispatcher_.add(`, `own.add(`
# ... any call whose first argument is a quoted method name.
ADD = re.compile(r'\b([A-Za-z_][A-Za-z0-9_]*)\s*(?:\.|->)\s*add\(\s*"([^"]+)"')
# A helper that registers for its caller (`add("agentSession/start", &State::start)`): counted
# when the name has a group ("x/y") or is the handshake's.
BARE_ADD = re.compile(r'(?<![.>\w])add\(\s*"([^"]+)"')
OTHER_PROTOCOLS = ("mcpserver", "a2a")  # MCP at /mcp, A2A at /a2a: not the daemon's JSON-RPC
HANDSHAKE = {"initialize": "initialize", "initialized": "initialize"}
# Receivers that are not dispatchers (option tables, CLI parsers, JSON builders).
NOT_DISPATCHERS = {"app", "cmd", "sub", "command", "opts", "options", "args", "list", "names",
                   "table", "builder", "set", "seen"}


def group_of(method: str) -> str:
    if "/" in method:
        return method.split("/", 1)[0]
    return HANDSHAKE.get(method, method)


def registrations(path: pathlib.Path):
    text = path.read_text(encoding="utf-8", errors="replace")
    if "rpc/dispatcher.hpp" not in text and "Dispatcher" not in text:
        return
    line_of = lambda pos: text.count("\n", 0, pos) + 1  # noqa: E731
    # Over the whole text: a registration may break its line after `add(`.
    for match in ADD.finditer(text):
        receiver, method = match.groups()
        if receiver in NOT_DISPATCHERS:
            continue
        # A method name: segments of letters, digits, dots and underscores.
        if re.fullmatch(r"[A-Za-z][A-Za-z0-9_.]*(/[A-Za-z][A-Za-z0-9_.]*)*", method):
            yield line_of(match.start(2)), method
    for match in BARE_ADD.finditer(text):
        method = match.group(1)
        if "/" in method or method in HANDSHAKE:
            yield line_of(match.start(1)), method


def check(src: pathlib.Path) -> list[str]:
    problems = []
    methods_dir = src / "methods"
    used_folders = set()
    for path in sorted(src.rglob("*.cpp")):
        rel = path.relative_to(src)
        if path.name.endswith("_test.cpp") or rel.parts[0] in OTHER_PROTOCOLS:
            continue
        for number, method in registrations(path):
            where = f"src/{rel}:{number}"
            if rel.parts[0] != "methods":
                problems.append(f"{where}: {method} is registered outside src/methods/ "
                                f"(it belongs in src/methods/{group_of(method)}/)")
                continue
            folder = rel.parts[1] if len(rel.parts) > 2 else ""
            if folder != group_of(method):
                problems.append(f"{where}: {method} is in src/methods/{folder or '.'}/, "
                                f"not src/methods/{group_of(method)}/")
            used_folders.add(folder)
    if methods_dir.is_dir():
        for folder in sorted(p.name for p in methods_dir.iterdir() if p.is_dir()):
            if folder not in used_folders:
                problems.append(f"src/methods/{folder}/: registers no method (a folder of "
                                f"src/methods/ is one method group)")
    return problems


def main() -> int:
    src = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else \
        pathlib.Path(__file__).resolve().parents[2] / "src"
    problems = check(src)
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print(f"methods: every JSON-RPC method of {src} is in its group's folder")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
