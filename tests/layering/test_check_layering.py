"""scripts/check_layering.py on fabricated source trees: it passes a tree that keeps its
layering table and fails, naming the file, the line and the rule, on each kind of breach."""

import os
import subprocess
import sys
import textwrap

import pytest

CHECKER = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "check_layering.py")

TABLE = """\
low:
mid:          low
mid (tests):  side
high:         mid low/api.hpp
side:         low
"""

FILES = {
    "low/api.hpp": "#pragma once\n",
    "low/inner.hpp": "#pragma once\n",
    "low/impl.cpp": '#include "low/api.hpp"\n#include "low/inner.hpp"\n',
    "mid/mid.hpp": '#pragma once\n#include "low/inner.hpp"\n',
    "mid/mid_test.cpp": '#include <gtest/gtest.h>\n#include "mid/mid.hpp"\n#include "side/side.hpp"\n',
    "mid/nested/part.cpp": '#include "mid/mid.hpp"\n',
    "high/high.cpp": '#include "mid/mid.hpp"\n#include "low/api.hpp"\n',
    "side/side.hpp": '#include "low/api.hpp"\n',
    "low/CMakeLists.txt": "hearth_library(low SOURCES impl.cpp DEPS Boost::json)\n",
    "mid/CMakeLists.txt": ("hearth_library(mid SOURCES nested/part.cpp DEPS hearth_low)\n"
                           "hearth_test(mid_test SOURCES mid_test.cpp DEPS hearth_mid hearth_side)\n"),
    "high/CMakeLists.txt": "hearth_library(high SOURCES high.cpp DEPS hearth_mid)\n",
    "side/CMakeLists.txt": "hearth_library(side SOURCES DEPS hearth_low)\n",
}


def make_tree(root, table=TABLE, files=None, drop=()):
    os.makedirs(os.path.join(root, "docs"))
    with open(os.path.join(root, "docs", "architecture.md"), "w") as f:
        f.write("# arch\n\n## Layering\n\n```layering\n# comment\n" + table + "```\n")
    merged = dict(FILES)
    merged.update(files or {})
    for path, text in merged.items():
        if path in drop:
            continue
        full = os.path.join(root, "src", path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)


def check(root):
    result = subprocess.run([sys.executable, CHECKER, "--root", str(root)], capture_output=True,
                            text=True, timeout=60)
    return result.returncode, result.stdout + result.stderr


def test_a_tree_that_keeps_its_table_passes(tmp_path):
    make_tree(tmp_path)
    code, out = check(tmp_path)
    assert code == 0, out
    assert "4 folders" in out


def test_an_upward_include_fails_naming_file_line_and_rule(tmp_path):
    make_tree(tmp_path, files={"low/impl.cpp": '#include "low/api.hpp"\n#include "high/x.hpp"\n'})
    code, out = check(tmp_path)
    assert code == 1
    assert 'src/low/impl.cpp:2: #include "high/x.hpp": low may not include high' in out
    assert "(docs/architecture.md:7: low: -)" in out


def test_a_narrowed_arrow_allows_that_file_only(tmp_path):
    make_tree(tmp_path, files={"high/high.cpp": '#include "mid/mid.hpp"\n#include "low/inner.hpp"\n'})
    code, out = check(tmp_path)
    assert code == 1
    assert 'src/high/high.cpp:2: #include "low/inner.hpp": high may not include low' in out
    # ... and low/api.hpp is now used by no file of high.
    assert "high -> low/api.hpp is allowed but no non-test file of src/high includes it" in out


def test_a_tests_arrow_is_for_test_code_only(tmp_path):
    make_tree(tmp_path, files={"mid/nested/part.cpp": '#include "side/side.hpp"\n'})
    code, out = check(tmp_path)
    assert code == 1
    assert 'src/mid/nested/part.cpp:1: #include "side/side.hpp": mid may not include side' in out


def test_a_test_may_not_reach_above_its_folder(tmp_path):
    make_tree(tmp_path, files={"mid/mid_test.cpp": '#include "side/side.hpp"\n#include "high/h.hpp"\n'})
    code, out = check(tmp_path)
    assert code == 1
    assert ('src/mid/mid_test.cpp:2: #include "high/h.hpp": test code of mid may not include '
            'high') in out


def test_a_cycle_fails(tmp_path):
    table = TABLE.replace("low:\n", "low:          side\n")
    make_tree(tmp_path, table=table, files={"low/impl.cpp": '#include "side/side.hpp"\n'})
    code, out = check(tmp_path)
    assert code == 1
    assert "the arrows form a cycle: low -> side -> low" in out


def test_a_cycle_through_a_tests_line_fails(tmp_path):
    table = TABLE + "low (tests):  mid\n"
    make_tree(tmp_path, table=table, files={"low/low_test.cpp": '#include "mid/mid.hpp"\n'})
    code, out = check(tmp_path)
    assert code == 1
    assert "the arrows form a cycle: low -> mid -> low" in out


def test_an_arrow_nothing_uses_fails(tmp_path):
    make_tree(tmp_path, table=TABLE.replace("side:         low", "side:         low mid"))
    code, out = check(tmp_path)
    assert code == 1
    assert "side -> mid is allowed but no non-test file of src/side includes it" in out


def test_an_arrow_only_tests_use_belongs_on_the_tests_line(tmp_path):
    table = TABLE.replace("mid (tests):  side", "mid (tests):  -").replace(
        "mid:          low", "mid:          low side")
    make_tree(tmp_path, table=table)
    code, out = check(tmp_path)
    assert code == 1
    assert ("mid -> side is allowed but no non-test file of src/mid includes it: remove the arrow "
            "(or, if its tests do, move it to 'mid (tests)')") in out


def test_a_file_in_no_folder_of_the_table_fails(tmp_path):
    make_tree(tmp_path, files={"stray/s.cpp": '#include "low/api.hpp"\n'})
    code, out = check(tmp_path)
    assert code == 1
    assert "src/stray/s.cpp: its folder is not in the layering table" in out


def test_an_include_of_no_folder_fails(tmp_path):
    make_tree(tmp_path, files={"high/high.cpp": ('#include "mid/mid.hpp"\n#include "low/api.hpp"\n'
                                                 '#include "nowhere/x.hpp"\n')})
    code, out = check(tmp_path)
    assert code == 1
    assert "src/high/high.cpp:3: #include \"nowhere/x.hpp\": 'nowhere' is no folder" in out


def test_cmake_deps_above_the_folder_fail(tmp_path):
    make_tree(tmp_path, files={
        "low/CMakeLists.txt": "hearth_library(low SOURCES impl.cpp\n  DEPS hearth_high)\n"})
    code, out = check(tmp_path)
    assert code == 1
    assert ("src/low/CMakeLists.txt: hearth_low links hearth_high (high), which low does not "
            "reach through its arrows") in out


def test_cmake_deps_may_name_what_a_dependency_brings(tmp_path):
    make_tree(tmp_path, files={
        "high/CMakeLists.txt": "hearth_library(high SOURCES high.cpp DEPS hearth_mid hearth_low)\n"})
    code, out = check(tmp_path)
    assert code == 0, out


def test_a_source_compiled_into_another_folder_counts(tmp_path):
    make_tree(tmp_path, files={"side/CMakeLists.txt": textwrap.dedent("""\
        add_library(hearth_side STATIC ${PROJECT_SOURCE_DIR}/src/high/high.cpp)
        """)})
    code, out = check(tmp_path)
    assert code == 1
    assert "hearth_side compiles src/high/high.cpp (high), which side does not reach" in out


def test_no_table_fails(tmp_path):
    make_tree(tmp_path)
    with open(tmp_path / "docs" / "architecture.md", "w") as f:
        f.write("# arch\n")
    code, out = check(tmp_path)
    assert code == 1
    assert "no ```layering block" in out


@pytest.mark.parametrize("line,message", [
    ("ghost:        low\n", "'ghost' is no folder of src/"),
    ("side (tests): low\n", "side (tests) -> low: side has that arrow already"),
    ("mid:          low\n", "'mid' is listed twice"),
])
def test_a_table_that_contradicts_itself_fails(tmp_path, line, message):
    make_tree(tmp_path, table=TABLE + line)
    code, out = check(tmp_path)
    assert code == 1
    assert message in out
