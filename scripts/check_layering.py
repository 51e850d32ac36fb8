#!/usr/bin/env python3
"""Checks the layering of src/ against the table in docs/architecture.md ("Layering").

The table is the fenced block marked `layering`: one line per library folder of src/, naming
what that folder's files may include directly:

    views: common json host httpclient/url.hpp net/routes.hpp
    agentapp/appdata (tests): agentapp/package

- A folder (`host`) allows every header of that folder; a file (`net/routes.hpp`) allows that
  file only. A line `folder (tests): ...` adds arrows for the folder's test code alone: files
  named `*_test.cpp`, `testing.hpp` or `test_*.hpp` (which may include whatever their folder
  may, and gtest, which is no folder of src/).
- Each file of src/ belongs to the longest folder of the table its path starts with (a nested
  library such as `handlers/script` is a folder of its own; `methods/lavs` belongs to `methods`).
  A folder may always include its own files.

It fails, naming the file and line and the rule, when
- a `#include "x/..."` in src/ is not allowed by the table (direct includes are checked: what a
  folder reaches through another is that other folder's business);
- a file of src/ belongs to no folder of the table, or an include names no folder of it;
- an arrow of the table is used by no file (the table says what the code does, and no more; an
  arrow only tests use is on the folder's (tests) line);
- the arrows (tests' included) form a cycle;
- a CMake target of a folder (hearth_library, hearth_test, add_library, add_executable) links,
  or compiles in a source of, a folder it does not reach through the arrows (linking is
  transitive: DEPS may name what a dependency brings, never what is above or beside it).

Usage: check_layering.py [--root DIR]   (DIR: the source tree, by default this script's ../)
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field

DOC = "docs/architecture.md"
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".hh", ".inc", ".ipp")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def is_test_code(name: str) -> bool:
    return name.endswith("_test.cpp") or name == "testing.hpp" or (
        name.startswith("test_") and name.endswith(".hpp"))


@dataclass
class Arrows:
    """What one folder may include: whole folders, and single files."""
    folders: set[str] = field(default_factory=set)
    files: set[str] = field(default_factory=set)
    line: int = 0  # where the table states them

    def allows(self, path: str, folder: str) -> bool:
        return folder in self.folders or path in self.files

    def targets(self, folder_of) -> set[str]:
        return self.folders | {folder_of(f) for f in self.files}


@dataclass
class Table:
    lib: dict[str, Arrows]
    tests: dict[str, Arrows]
    start: int  # line of the block in the document


class Layering:
    def __init__(self, root: str):
        self.root = root
        self.errors: list[str] = []

    def error(self, message: str) -> None:
        self.errors.append(message)

    # --- the table ------------------------------------------------------------------------

    def read_table(self) -> Table | None:
        path = os.path.join(self.root, DOC)
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError as e:
            self.error(f"{DOC}: cannot be read: {e}")
            return None
        start = None
        for i, line in enumerate(lines):
            if line.strip() == "```layering":
                start = i
                break
        if start is None:
            self.error(f"{DOC}: no ```layering block (the table of allowed includes)")
            return None
        table = Table({}, {}, start + 1)
        last: Arrows | None = None
        for i in range(start + 1, len(lines)):
            text = lines[i].split("#", 1)[0].strip()
            if lines[i].strip() == "```":
                return table
            if not text:
                continue
            where = f"{DOC}:{i + 1}"
            if lines[i][0].isspace():  # continues the line above
                if last is None:
                    self.error(f"{where}: a continued line with no line to continue")
                else:
                    self.add_items(last, text)
                continue
            key, sep, rest = text.partition(":")
            if not sep:
                self.error(f"{where}: expected 'folder: what it may include', got '{text}'")
                continue
            key = key.strip()
            kind = table.lib
            if key.endswith("(tests)"):
                key = key[: -len("(tests)")].strip()
                kind = table.tests
            if key in kind:
                self.error(f"{where}: '{key}' is listed twice")
                continue
            arrows = Arrows(line=i + 1)
            self.add_items(arrows, rest)
            kind[key] = arrows
            last = arrows
        self.error(f"{DOC}:{start + 1}: the layering block is not closed")
        return None

    @staticmethod
    def add_items(arrows: Arrows, text: str) -> None:
        for item in re.split(r"[\s,]+", text.strip()):
            if not item or item == "-":
                continue
            if item.endswith(SOURCE_SUFFIXES):
                arrows.files.add(item)
            else:
                arrows.folders.add(item.rstrip("/"))

    def check_table(self, table: Table) -> None:
        folders = set(table.lib)
        for key, arrows in table.lib.items():
            if not os.path.isdir(os.path.join(self.root, "src", key)):
                self.error(f"{DOC}:{arrows.line}: '{key}' is no folder of src/")
        for key, arrows in table.tests.items():
            if key not in folders:
                self.error(f"{DOC}:{arrows.line}: '{key} (tests)': '{key}' has no line of its own")
        for kind in (table.lib, table.tests):
            for key, arrows in kind.items():
                for target in sorted(arrows.folders):
                    if target not in folders:
                        self.error(f"{DOC}:{arrows.line}: {key} -> {target}: '{target}' is no "
                                   f"folder of the table")
                    elif target == key:
                        self.error(f"{DOC}:{arrows.line}: {key} -> {key}: a folder needs no "
                                   f"arrow to itself")
                for target in sorted(arrows.files):
                    owner = self.folder_of(target, folders)
                    if not os.path.isfile(os.path.join(self.root, "src", target)):
                        self.error(f"{DOC}:{arrows.line}: {key} -> {target}: no such file in src/")
                    elif owner is None or owner == key:
                        self.error(f"{DOC}:{arrows.line}: {key} -> {target}: not a file of "
                                   f"another folder of the table")
        for key, arrows in table.tests.items():
            lib = table.lib.get(key, Arrows())
            for target in sorted(arrows.folders & lib.folders | arrows.files & lib.files):
                self.error(f"{DOC}:{arrows.line}: {key} (tests) -> {target}: {key} has that "
                           f"arrow already (its tests may use it)")

    @staticmethod
    def folder_of(path: str, folders) -> str | None:
        """The longest folder of the table that `path` (relative to src/) lies in."""
        parts = path.split("/")[:-1]
        while parts:
            candidate = "/".join(parts)
            if candidate in folders:
                return candidate
            parts.pop()
        return None

    # --- includes -------------------------------------------------------------------------

    def check_includes(self, table: Table) -> tuple[int, int]:
        folders = set(table.lib)
        used_lib: set[tuple[str, str]] = set()
        used_tests: set[tuple[str, str]] = set()
        files = includes = 0
        src = os.path.join(self.root, "src")
        for dirpath, dirnames, filenames in os.walk(src):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), src).replace(os.sep, "/")
                shown = "src/" + rel
                owner = self.folder_of(rel, folders)
                if owner is None:
                    self.error(f"{shown}: its folder is not in the layering table of {DOC}: "
                               f"add a line for it")
                    continue
                files += 1
                test = is_test_code(name)
                arrows = table.lib[owner]
                extra = table.tests.get(owner, Arrows()) if test else Arrows()
                with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or "/" not in m.group(1):
                            continue
                        includes += 1
                        path = m.group(1)
                        target = self.folder_of(path, folders)
                        if target is None:
                            self.error(f'{shown}:{number}: #include "{path}": '
                                       f"'{path.split('/')[0]}' is no folder of the layering "
                                       f"table of {DOC}")
                            continue
                        if target == owner:
                            continue
                        if arrows.allows(path, target):
                            if not test:  # an arrow only tests use belongs on the (tests) line
                                used_lib.add((owner, path if path in arrows.files else target))
                        elif extra.allows(path, target):
                            used_tests.add((owner, path if path in extra.files else target))
                        else:
                            rule = " ".join(sorted(arrows.folders | arrows.files)) or "-"
                            which = "test code of " if test else ""
                            hint = ""
                            if test and owner in table.tests:
                                tests_rule = " ".join(sorted(table.tests[owner].folders |
                                                             table.tests[owner].files))
                                hint = f"; {owner} (tests): {tests_rule}"
                            self.error(f'{shown}:{number}: #include "{path}": {which}{owner} may '
                                       f"not include {target} ({DOC}:{arrows.line}: {owner}: "
                                       f"{rule}{hint})")
        for kind, used, label in ((table.lib, used_lib, ""), (table.tests, used_tests, " (tests)")):
            for key, arrows in kind.items():
                for target in sorted(arrows.folders | arrows.files):
                    if (key, target) not in used:
                        whose = "test code" if label else "non-test file"
                        hint = "" if label else f" (or, if its tests do, move it to '{key} (tests)')"
                        self.error(f"{DOC}:{arrows.line}: {key}{label} -> {target} is allowed "
                                   f"but no {whose} of src/{key} includes it: remove the "
                                   f"arrow{hint}")
        return files, includes

    # --- cycles ---------------------------------------------------------------------------

    def check_cycles(self, table: Table) -> None:
        folders = set(table.lib)
        graph: dict[str, set[str]] = {key: set() for key in folders}
        for kind in (table.lib, table.tests):
            for key, arrows in kind.items():
                targets = arrows.targets(lambda f: self.folder_of(f, folders))
                graph.setdefault(key, set()).update(t for t in targets if t in folders and t != key)
        state: dict[str, int] = {}  # 1: on the path, 2: done
        path: list[str] = []
        reported: set[frozenset[str]] = set()

        def visit(node: str) -> None:
            state[node] = 1
            path.append(node)
            for nxt in sorted(graph.get(node, ())):
                if state.get(nxt) == 1:
                    cycle = path[path.index(nxt):] + [nxt]
                    members = frozenset(cycle)
                    if members not in reported:
                        reported.add(members)
                        self.error(f"{DOC}:{table.start}: the arrows form a cycle: "
                                   + " -> ".join(cycle))
                elif nxt not in state:
                    visit(nxt)
            path.pop()
            state[node] = 2

        for node in sorted(graph):
            if node not in state:
                visit(node)

    # --- CMake ----------------------------------------------------------------------------

    def check_cmake(self, table: Table) -> None:
        folders = set(table.lib)
        src = os.path.join(self.root, "src")
        # target -> (folder, is a test, its CMakeLists.txt)
        targets: dict[str, tuple[str, bool, str]] = {}
        links: list[tuple[str, str, str]] = []  # (target, dependency target, where)
        compiled: list[tuple[str, str, str]] = []  # (target, source path in src/, where)
        for dirpath, dirnames, filenames in os.walk(src):
            dirnames.sort()
            if "CMakeLists.txt" not in filenames:
                continue
            rel_dir = os.path.relpath(dirpath, src).replace(os.sep, "/")
            shown = f"src/{rel_dir}/CMakeLists.txt" if rel_dir != "." else "src/CMakeLists.txt"
            owner = self.folder_of(rel_dir + "/x", folders) if rel_dir != "." else None
            with open(os.path.join(dirpath, "CMakeLists.txt"), encoding="utf-8") as f:
                text = re.sub(r"#[^\n]*", "", f.read())
            for command, args in cmake_calls(text):
                if command in ("hearth_library", "hearth_test", "add_library", "add_executable"):
                    if not args:
                        continue
                    name = "hearth_" + args[0] if command == "hearth_library" else args[0]
                    if owner is None:
                        self.error(f"{shown}: target {name} is in no folder of the layering table")
                        continue
                    targets[name] = (owner, command == "hearth_test", shown)
                    deps = False
                    for arg in args[1:]:
                        if arg in ("SOURCES", "STATIC", "SHARED", "OBJECT"):
                            deps = False
                            continue
                        if arg == "DEPS":
                            deps = True
                            continue
                        if deps:
                            links.append((name, arg, shown))
                        elif arg.startswith("${PROJECT_SOURCE_DIR}/src/"):
                            compiled.append((name, arg[len("${PROJECT_SOURCE_DIR}/src/"):], shown))
                elif command == "target_link_libraries" and args:
                    for arg in args[1:]:
                        if arg not in ("PUBLIC", "PRIVATE", "INTERFACE"):
                            links.append((args[0], arg, shown))
        for name, dep, where in links:
            if name not in targets or dep not in targets:
                continue  # a system library, or a target of no folder of src/
            owner, test, _ = targets[name]
            self.check_target_arrow(table, name, owner, test, targets[dep][0], f"links {dep}",
                                    where)
        for name, path, where in compiled:
            if name not in targets:
                continue
            owner, test, _ = targets[name]
            target = self.folder_of(path, folders)
            if target is None:
                self.error(f"{where}: {name} compiles src/{path}, in no folder of the table")
                continue
            self.check_target_arrow(table, name, owner, test, target, f"compiles src/{path}", where)

    def reachable(self, table: Table, owner: str, test: bool) -> set[str]:
        """The folders `owner` reaches through the arrows (its tests' first arrows too when
        `test`): a library links what its dependencies link, so DEPS may name any of them."""
        folders = set(table.lib)
        first = [table.lib[owner]] + ([table.tests[owner]] if test and owner in table.tests
                                      else [])
        todo = [t for a in first for t in a.targets(lambda f: self.folder_of(f, folders))]
        seen: set[str] = set()
        while todo:
            folder = todo.pop()
            if folder in seen or folder not in table.lib:
                continue
            seen.add(folder)
            todo.extend(table.lib[folder].targets(lambda f: self.folder_of(f, folders)))
        return seen

    def check_target_arrow(self, table: Table, name: str, owner: str, test: bool, target: str,
                           what: str, where: str) -> None:
        if target == owner or target in self.reachable(table, owner, test):
            return
        self.error(f"{where}: {name} {what} ({target}), which {owner} does not reach through "
                   f"its arrows ({DOC}:{table.lib[owner].line})")

    def run(self) -> int:
        table = self.read_table()
        files = includes = 0
        if table is not None:
            self.check_table(table)
            if not self.errors:
                files, includes = self.check_includes(table)
                self.check_cycles(table)
                self.check_cmake(table)
        for message in self.errors:
            print(message, file=sys.stderr)
        if self.errors:
            print(f"layering: {len(self.errors)} problem(s); the rules are the ```layering block "
                  f"of {DOC}", file=sys.stderr)
            return 1
        print(f"layering: {len(table.lib)} folders, {files} files, {includes} includes: as drawn")
        return 0


def cmake_calls(text: str):
    """(command, [arguments]) of each call in a CMake file without comments."""
    i = 0
    call = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
    while True:
        m = call.search(text, i)
        if not m:
            return
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        body = text[m.end(): j - 1]
        yield m.group(1), [a for a in re.split(r"\s+", body.replace('"', " ")) if a]
        i = j


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help="the source tree (docs/ and src/)")
    return Layering(parser.parse_args().root).run()


if __name__ == "__main__":
    sys.exit(main())
