"""The bundled examples, end to end over HTTP and WebSocket."""
import json

import pytest

from hearthtest import result

# The todo manager twice: as scripts and as JavaScript function handlers, same manifest shape.
TODO_SERVICES = ["todo-manager", "todo-manager-js"]


def test_services_lists_all_of_them(examples):
    names = sorted(s["name"] for s in result(examples.rpc("lavs/services"))["services"])
    assert names == ["contact-manager", "simple-notes", "todo-manager", "todo-manager-js"]


def test_a_call_must_name_its_service_when_several_are_served(examples):
    r = examples.call("listTodos")
    assert r["error"]["code"] == -32602
    assert r["error"]["data"]["field"] == "service"


def test_manifest_is_returned_as_written(examples):
    m = result(examples.rpc("lavs/manifest", {"service": "todo-manager"}))
    on_disk = json.loads((examples.service_dir("todo-manager") / "lavs.json").read_text())
    assert m == on_disk


@pytest.mark.parametrize("svc", TODO_SERVICES)
def test_todo_lifecycle(examples, svc):
    assert result(examples.call("listTodos", service=svc)) == []
    a = result(examples.call("addTodo", {"text": "Buy milk", "priority": 1}, service=svc))
    assert a["text"] == "Buy milk" and a["done"] is False and a["priority"] == 1 and a["id"] == 1
    b = result(examples.call("addTodo", {"text": "Walk"}, service=svc))
    assert b["priority"] == 0  # the schema default was applied
    t = result(examples.call("toggleTodo", {"id": a["id"]}, service=svc))
    assert t["done"] is True
    todos = result(examples.call("listTodos", service=svc))
    assert [x["text"] for x in todos] == ["Buy milk", "Walk"]
    assert result(examples.call("deleteTodo", {"id": b["id"]}, service=svc)) == {"deleted": b["id"]}
    assert len(result(examples.call("listTodos", service=svc))) == 1
    # Data lives in data/todos.json, written whole.
    stored = json.loads((examples.service_dir(svc) / "data" / "todos.json").read_text())
    assert stored == result(examples.call("listTodos", service=svc))


@pytest.mark.parametrize("svc", TODO_SERVICES)
def test_todo_errors(examples, svc):
    r = examples.call("addTodo", {}, service=svc)
    assert r["error"]["code"] == -32602 and r["error"]["data"]["field"] == "text"
    r = examples.call("toggleTodo", {"id": 999}, service=svc)
    assert r["error"]["code"] == -32003
    if svc == "todo-manager":
        assert "no todo with id 999" in r["error"]["data"]["stderr"]
    else:
        assert r["error"]["message"] == "Error: no todo with id 999"
        assert "handlers/todos.mjs:" in r["error"]["data"]["stack"]


@pytest.mark.parametrize("svc", TODO_SERVICES)
def test_todo_subscription_sees_changes_made_by_another_client(examples, svc):
    with examples.ws() as watcher:
        sub = result(watcher.request("lavs/subscribe", {"service": svc, "endpoint": "todoUpdates"}))
        sid = sub["subscriptionId"]
        snap = watcher.notification("lavs/data")
        assert snap["params"]["subscriptionId"] == sid
        assert snap["params"]["data"] == {"type": "snapshot", "todos": []}
        # Another client (plain HTTP) adds a todo; the watcher is told.
        added = result(examples.call("addTodo", {"text": "from elsewhere"}, service=svc))
        ev = watcher.notification("lavs/data")
        assert ev["params"]["data"] == {"type": "todoAdded", "todo": added}
        with examples.ws() as other:
            result(other.request("lavs/call", {"service": svc, "endpoint": "toggleTodo",
                                               "input": {"id": added["id"]}}))
        ev = watcher.notification("lavs/data")
        assert ev["params"]["data"]["type"] == "todoUpdated"
        r = result(watcher.request("lavs/unsubscribe", {"subscriptionId": sid}, id=2))
        assert r["unsubscribed"] is True


def test_notes_example(examples):
    svc = "simple-notes"
    assert result(examples.call("getNotes", service=svc)) == "Welcome to simple-notes.\n"
    assert result(examples.call("saveNote", {"NOTE": "remember $HOME; rm -rf /"}, service=svc)) is None
    notes = result(examples.call("getNotes", service=svc))
    assert notes.endswith("remember $HOME; rm -rf /\n")


def test_notes_env_input_cannot_set_protected_variables(examples):
    r = examples.call("saveNote", {"NOTE": "x", "LD_PRELOAD": "/tmp/evil.so"}, service="simple-notes")
    assert r["error"]["code"] == -32602


def test_contacts_example(examples):
    svc = "contact-manager"
    found = result(examples.call("searchContacts", {"query": "Ada"}, service=svc))
    assert [c["name"] for c in found] == ["Ada Lovelace"]
    everyone = result(examples.call("searchContacts", service=svc))
    assert len(everyone) == 3
    added = result(examples.call("addContact", {"name": "Katherine Johnson", "email": "kj@example.org"}, service=svc))
    assert added["id"] > 0
    assert [c["name"] for c in result(examples.call("searchContacts", {"query": "Kath"}, service=svc))] == ["Katherine Johnson"]
    assert result(examples.call("deleteContact", {"id": added["id"]}, service=svc)) == {"deleted": added["id"]}
    r = examples.call("addContact", {"name": "x", "nickname": "y"}, service=svc)
    assert r["error"]["code"] == -32602 and r["error"]["data"]["constraint"] == "additionalProperties"


def test_read_file_follows_file_access(examples):
    examples.call("addTodo", {"text": "x"}, service="todo-manager")
    r = examples.rpc("lavs/readFile", {"service": "todo-manager", "path": "data/todos.json"})
    assert json.loads(result(r)["content"])[0]["text"] == "x"
    r = examples.rpc("lavs/readFile", {"service": "todo-manager", "path": "lavs.json"})
    assert r["error"]["code"] == -32001
    r = examples.rpc("lavs/readFile", {"service": "todo-manager", "path": examples.token_file.as_posix()})
    assert r["error"]["code"] == -32001


def test_todo_js_concurrent_adds_lose_nothing(examples):
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(examples.call, "addTodo", {"text": f"t{i}"}, service="todo-manager-js")
                   for i in range(40)]
        ids = [result(f.result())["id"] for f in futures]
    assert sorted(ids) == list(range(1, 41))
    assert len(result(examples.call("listTodos", service="todo-manager-js"))) == 40


# -- bookshelf: http handlers against its local catalogue, mcp handlers against its MCP server ---

@pytest.fixture
def bookshelf(daemon_factory, tmp_path):
    """The bookshelf example with its catalogue server on a free port (the copy's manifest is
    pointed at it)."""
    import shutil
    import socket
    import subprocess
    import sys
    import time

    from hearthtest import EXAMPLES

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    catalog = subprocess.Popen([sys.executable, str(EXAMPLES / "bookshelf" / "catalog" / "server.py"),
                                "--port", str(port)], stdout=subprocess.DEVNULL)
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert time.time() < deadline, "the catalogue did not start"
            time.sleep(0.05)
    svc = tmp_path / "bookshelf"
    shutil.copytree(EXAMPLES / "bookshelf", svc, ignore=shutil.ignore_patterns("notes.json", "__pycache__"))
    manifest = (svc / "lavs.json").read_text().replace("127.0.0.1:8765", f"127.0.0.1:{port}")
    (svc / "lavs.json").write_text(manifest)
    try:
        yield daemon_factory([svc], copy=False), svc
    finally:
        catalog.terminate()
        catalog.wait()


def test_bookshelf_http_endpoints(bookshelf):
    d, _ = bookshelf
    found = result(d.call("searchBooks", {"q": "butler", "limit": 5}))
    assert [b["title"] for b in found] == ["Kindred", "Parable of the Sower"]
    assert result(d.call("getBook", {"id": 3}))["author"] == "Octavia E. Butler"
    added = result(d.call("addBook", {"title": "Dawn", "author": "Octavia E. Butler", "year": 1987}))
    assert added["id"] == 6
    assert result(d.call("getBook", {"id": 6}))["title"] == "Dawn"
    # The catalogue's 404 is the endpoint's -32003, with the status.
    e = d.call("getBook", {"id": 99})["error"]
    assert e["code"] == -32003 and e["data"]["status"] == 404


def test_bookshelf_mcp_endpoints(bookshelf):
    d, svc = bookshelf
    note = result(d.call("addNote", {"bookId": 3, "text": "Reread the first chapter"}))
    assert note["bookId"] == 3 and note["text"] == "Reread the first chapter"
    result(d.call("addNote", {"bookId": 1, "text": "Winter"}))
    notes = result(d.call("listNotes", {"bookId": 3}))["notes"]
    assert [n["text"] for n in notes] == ["Reread the first chapter"]
    assert len(result(d.call("listNotes", {}))["notes"]) == 2
    # The MCP server wrote through the jail, into data/ as fileAccess allows.
    assert len(json.loads((svc / "data" / "notes.json").read_text())) == 2
