"""The methods check fails where it should: run against small fabricated trees, then the real one."""
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
CHECK = HERE / "check_methods.py"
sys.path.insert(0, str(HERE))
import check_methods  # noqa: E402


def tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('#include "rpc/dispatcher.hpp"\n' + text)
    return tmp_path / "src"


def test_a_method_in_its_groups_folder_passes(tmp_path):
    src = tree(tmp_path, {
        "methods/lavs/lavs.cpp": 'dispatcher.add("lavs/call", f);\n',
        "methods/initialize/initialize.cpp":
            'dispatcher.add("initialize", f);\ndispatcher.add("initialized", g);\n',
        "mcpserver/server.cpp": 'dispatcher_.add("tools/call", f);\n',
        "host/host_test.cpp": 'dispatcher.add("test/echo", f);\n',
    })
    assert check_methods.check(src) == []


def test_a_method_registered_outside_methods_fails(tmp_path):
    src = tree(tmp_path, {
        "methods/lavs/lavs.cpp": 'dispatcher.add("lavs/call", f);\n',
        "appui/appui.cpp": '\n  dispatcher.add("app/ui/open", f);\n',
    })
    problems = check_methods.check(src)
    assert problems == ["src/appui/appui.cpp:3: app/ui/open is registered outside src/methods/ "
                        "(it belongs in src/methods/app/)"]


def test_a_method_in_another_groups_folder_fails(tmp_path):
    src = tree(tmp_path, {
        "methods/apps/apps.cpp":
            'dispatcher.add("capability/invoke", f);\ndispatcher.add("app/backend/call", g);\n',
    })
    problems = check_methods.check(src)
    assert "src/methods/apps/apps.cpp:2: capability/invoke is in src/methods/apps/, not " \
           "src/methods/capability/" in problems
    assert "src/methods/apps/apps.cpp:3: app/backend/call is in src/methods/apps/, not " \
           "src/methods/app/" in problems


def test_a_folder_without_methods_fails(tmp_path):
    src = tree(tmp_path, {
        "methods/lavs/lavs.cpp": 'dispatcher.add("lavs/call", f);\n',
        "methods/a2s/helpers.cpp": 'int x;\n',
    })
    assert check_methods.check(src) == [
        "src/methods/a2s/: registers no method (a folder of src/methods/ is one method group)"]


def test_the_repository_passes():
    run = subprocess.run([sys.executable, str(CHECK)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
