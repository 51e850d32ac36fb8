"""Both agent loops against answers in the shapes real servers and open models produce
(docs/workspace.md, "What the loops accept"), replayed by the scripted model server, plain and
streamed: a final plain answer, tool calls written into the text (Hermes/Qwen, Llama, Mistral,
function tags, a fenced JSON block), streamed calls in every split servers use, `finish_reason`
`stop` with calls, arguments that are not JSON, reasoning (fields and `<think>`), and a server
that takes no tools."""
import json
import shutil
import sys
import time
from pathlib import Path

import pytest

from hearthtest import Daemon, error, result
from test_app_server import OUTPUT_SCHEMA, daemon_with, handshake, install, start

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "workspace-search"
sys.path.insert(0, str(ROOT / "tests" / "fake_model"))
from server import FakeModel  # noqa: E402

TOOLS = ["attempt_completion", "execute_script"]
SEARCH = "search_box_state.search_pattern = 'tea'; filter_state.maxPrice = 4;"
ANSWER = "The cheapest tea under 4 is chamomile."


@pytest.fixture
def model():
    fake = FakeModel([])
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def daemon(model, tmp_path):
    shutil.copytree(EXAMPLE, tmp_path / "workspace-search")
    d = Daemon([tmp_path / "workspace-search"], copy=False,
               extra_args=["--workspace", str(tmp_path / "workspace-search" / "workspace"),
                           "--model-url", model.base_url, "--model", "fake"])
    yield d
    d.stop()
    d.cleanup()


def run(daemon, stream, timeout=60, **model):
    with daemon.ws() as ws:
        r = result(ws.request("agent/run", {"workspaceId": "product-search", "task": "Find a cheap tea",
                                            "model": {"stream": stream, **model}}))
        events = []
        deadline = time.time() + timeout
        while True:
            m = ws.notification("agent/event", timeout=max(1, deadline - time.time()))
            events.append(m["params"])
            if m["params"]["type"].startswith("task."):
                return r, events


def hermes(name, **args):
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": args})}\n</tool_call>'


SHAPES = {
    "hermes": "I will search first.\n" + hermes("execute_script", script=SEARCH),
    "qwen-two-calls": hermes("execute_script", script="search_box_state.search_pattern = 'tea';")
    + "\n" + hermes("execute_script", script="filter_state.maxPrice = 4;"),
    "llama-bare": json.dumps({"name": "execute_script", "parameters": {"script": SEARCH}}),
    "llama-python-tag": "<|python_tag|>" + json.dumps({"name": "execute_script", "parameters": {"script": SEARCH}}),
    "llama-function-tag": f'<function=execute_script>{json.dumps({"script": SEARCH})}</function>',
    "mistral": "[TOOL_CALLS] " + json.dumps([{"name": "execute_script", "arguments": {"script": SEARCH},
                                             "id": "a1b2c3d4e"}]),
    "mistral-args": "[TOOL_CALLS]execute_script[ARGS]" + json.dumps({"script": SEARCH}),
    "fenced": "```json\n" + json.dumps({"name": "execute_script", "arguments": {"script": SEARCH}}) + "\n```",
}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_calls_written_into_the_text_and_a_plain_final_answer(daemon, model, shape, stream):
    model.reset([
        {"expect": {"tools": TOOLS, "stream": stream}, "reply": {"content": SHAPES[shape]}},
        # The tool result came back with the fresh render; the answer is plain text.
        {"expect": {"lastRole": "tool", "lastMessageContains": "Earl grey"},
         "reply": {"content": ANSWER, "finishReason": "stop"}},
    ])
    r, events = run(daemon, stream)
    assert model.errors == [], model.errors
    final = events[-1]
    assert final["type"] == "task.completed", final
    assert final["result"] == ANSWER
    completed = [e for e in events if e["type"] == "model.completed"]
    assert completed[0]["toolCalls"] and completed[0]["toolCalls"][0]["name"] == "execute_script"
    assert "<tool_call>" not in completed[0]["content"] and "[TOOL_CALLS]" not in completed[0]["content"]
    # The next request carried the call as a structured call with its result.
    second = model.requests[1]["messages"]
    assert any(m["role"] == "assistant" and m.get("tool_calls") for m in second)


@pytest.mark.parametrize("style", ["split", "whole", "no-index", "zero-index"])
def test_streamed_calls_in_every_split_and_stop_with_calls(daemon, model, style):
    model.reset([
        {"expect": {"stream": True},
         "reply": {"tool_calls": [{"name": "execute_script", "arguments": {"script": SEARCH}},
                                  {"name": "execute_script", "arguments": {"script": "return 1;"}}],
                   "streamStyle": style, "finishReason": "stop"}},
        {"expect": {"lastRole": "tool", "lastMessageContains": "Earl grey"},
         "reply": {"tool_calls": [{"name": "attempt_completion", "arguments": {"result": ANSWER}}],
                   "streamStyle": style}},
    ])
    _, events = run(daemon, True)
    assert model.errors == []
    assert events[-1]["type"] == "task.completed", events[-1]
    calls = [e for e in events if e["type"] == "model.completed"][0]["toolCalls"]
    assert [c["name"] for c in calls] == ["execute_script", "execute_script"]
    assert [json.loads(c["arguments"])["script"] for c in calls] == [SEARCH, "return 1;"]


@pytest.mark.parametrize("stream", [False, True])
def test_arguments_that_are_not_json_are_explained(daemon, model, stream):
    model.reset([
        {"reply": {"tool_calls": [{"name": "execute_script", "arguments": '{"script": "x = 1'}]}},
        {"expect": {"lastRole": "tool", "lastMessageContains": "not valid JSON"},
         "reply": {"content": hermes("execute_script", script=SEARCH)}},
        {"expect": {"lastRole": "tool"}, "reply": {"content": ANSWER}},
    ])
    _, events = run(daemon, stream)
    assert model.errors == [], model.errors
    assert events[-1]["type"] == "task.completed"
    failed = [e for e in events if e["type"] == "tool.failed"]
    assert "not valid JSON" in json.dumps(failed[0])


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("where", ["reasoning_content", "reasoning", "thinking", "think-tag"])
def test_reasoning_is_kept_out_of_the_answer_and_the_history(daemon, model, stream, where):
    secret = "PRIVATE-CHAIN-OF-THOUGHT"
    first = {"tool_calls": [{"name": "execute_script", "arguments": {"script": SEARCH}}]}
    if where == "think-tag":
        first["content"] = f"<think>{secret}</think>"
    else:
        first.update({"reasoning": secret, "reasoningField": where})
    last = ({"content": f"<think>{secret} again</think>\n\n{ANSWER}"} if where == "think-tag"
            else {"content": ANSWER, "reasoning": secret, "reasoningField": where})
    model.reset([
        {"reply": first},
        {"expect": {"notInMessages": secret, "lastRole": "tool"}, "reply": last},
    ])
    r, events = run(daemon, stream)
    assert model.errors == [], model.errors
    assert events[-1]["type"] == "task.completed"
    assert events[-1]["result"] == ANSWER
    # Shown as it streams? Never: deltas carry only the answer.
    assert secret not in json.dumps([e for e in events if e["type"] == "model.delta"])
    # Recorded in the transcript.
    lines = [json.loads(l) for l in Path(r["transcript"]).read_text().splitlines()]
    assert any(secret in l.get("reasoning", "") for l in lines if l["type"] == "model.completed")


@pytest.mark.parametrize("stream", [False, True])
def test_a_server_without_tool_support_gets_them_in_the_prompt(daemon, model, stream):
    model.reset([
        {"status": 400, "body": json.dumps({"error": {
            "message": "registry.ollama.ai/library/gemma:2b does not support tools"}})},
        {"expect": {"noTools": True, "systemContains": "<tool_call>"},
         "reply": {"content": hermes("execute_script", script=SEARCH)}},
        {"expect": {"noTools": True, "lastRole": "user", "lastMessageContains": "<tool_response>"},
         "reply": {"content": ANSWER}},
    ])
    _, events = run(daemon, stream)
    assert model.errors == [], model.errors
    assert events[-1]["type"] == "task.completed"
    fallback = [e for e in events if e["type"] == "model.fallback"]
    assert fallback and "does not support tools" in fallback[0]["reason"]
    # No message with role "tool" went to a server that does not know it.
    assert all(m["role"] != "tool" for req in model.requests[1:] for m in req["messages"])


def test_the_prompt_mode_can_be_chosen(daemon, model):
    model.reset([
        {"expect": {"noTools": True, "systemContains": "execute_script"},
         "reply": {"content": hermes("attempt_completion", result=ANSWER)}},
    ])
    _, events = run(daemon, False, tools="prompt")
    assert model.errors == []
    assert events[-1]["type"] == "task.completed" and events[-1]["result"] == ANSWER
    err = error(daemon.rpc("agent/run", {"workspaceId": "product-search", "task": "x",
                                          "model": {"tools": "sometimes"}}))
    assert err["code"] == -32602


def test_a_plain_answer_the_completion_schema_refuses_is_explained(model, tmp_path):
    shutil.copytree(EXAMPLE, tmp_path / "workspace-search")
    ws_yaml = tmp_path / "workspace-search" / "workspace" / "workspace.yaml"
    text = ws_yaml.read_text()
    assert "schema: {type: string, minLength: 1}" in text
    ws_yaml.write_text(text.replace(
        "schema: {type: string, minLength: 1}",
        "schema: {type: object, required: [productId, price], additionalProperties: false, "
        "properties: {productId: {type: integer}, price: {type: number}}}"))
    model.reset([
        {"reply": {"content": "It is chamomile."}},
        {"expect": {"lastRole": "user", "lastMessageContains": "does not end the task"},
         "reply": {"content": "Here it is:\n```json\n{\"productId\": 7, \"price\": 3.5}\n```"}},
    ])
    with Daemon([tmp_path / "workspace-search"], copy=False,
                extra_args=["--workspace", str(tmp_path / "workspace-search" / "workspace"),
                            "--model-url", model.base_url, "--model", "fake"]) as d:
        _, events = run(d, False)
    assert model.errors == [], model.errors
    assert events[-1]["type"] == "task.completed", events[-1]
    assert events[-1]["result"] == {"productId": 7, "price": 3.5}


# -- the App Server's turns --------------------------------------------------------------------

def turn(ws, s, stream, **extra):
    t = result(ws.request("agentSession/turn/start", {
        "sessionId": s["sessionId"], "workspaceId": "w1", "input": "Count the tasks",
        "outputSchema": OUTPUT_SCHEMA, "stream": stream, **extra}, id=3))
    seen = []
    while True:
        e = ws.notification("agentSession/event", timeout=60)["params"]
        seen.append(e)
        if e["type"] == "action.required":
            result(ws.request("agentSession/action/respond", {
                "sessionId": s["sessionId"], "workspaceId": "w1",
                "actionId": e["payload"]["actionId"], "decision": "allow"}, id=9))
        if e["type"] in ("completed", "cancelled") or (
                e["type"] == "status" and e["payload"]["status"] == "failed"):
            return t, seen


def app_turn(tmp_path, script, stream=False):
    """One App Server turn of the installed app against the scripted model: its events."""
    state = install(tmp_path)
    fake = FakeModel(script)
    fake.start()
    try:
        with daemon_with(state, fake) as d, d.ws() as ws:
            handshake(ws)
            _, seen = turn(ws, start(ws), stream)
        assert fake.errors == [], fake.errors
        return seen
    finally:
        fake.stop()


QUERY = {"sql": "SELECT count(*) AS n FROM tasks"}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("shape", ["hermes", "llama", "mistral", "structured-stop"])
def test_app_server_turns_take_calls_in_the_text_and_a_plain_final_answer(tmp_path, stream, shape):
    call = {"name": "lime_storage__query", "arguments": QUERY}
    first = {
        "hermes": {"content": f"<tool_call>{json.dumps(call)}</tool_call>"},
        "llama": {"content": json.dumps({"name": call["name"], "parameters": QUERY})},
        "mistral": {"content": "[TOOL_CALLS]" + json.dumps([call])},
        "structured-stop": {"tool_calls": [call], "finishReason": "stop"},
    }[shape]
    seen = app_turn(tmp_path, [
        {"expect": {"stream": stream}, "reply": first},
        {"expect": {"lastRole": "tool"},
         "reply": {"content": "<think>zero rows</think>Done:\n```json\n{\"count\": 0, \"stored\": []}\n```",
                   "finishReason": "stop"}},
    ], stream)
    assert seen[-1]["type"] == "completed", seen[-1]
    assert seen[-1]["payload"]["result"] == {"count": 0, "stored": []}
    assert any(e["type"] == "tool.call" and e["payload"].get("status") == "completed" for e in seen)
    assert "zero rows" not in json.dumps([e for e in seen if "delta" in e["payload"]])


def test_app_server_plain_answers_that_miss_the_schema_are_explained_then_fail(tmp_path):
    seen = app_turn(tmp_path, [
        {"reply": {"content": "There are no tasks."}},
        {"expect": {"lastRole": "user", "lastMessageContains": "does not end the task"},
         "reply": {"content": "{\"count\": \"none\"}"}},
        {"expect": {"lastRole": "user"}, "reply": {"content": "Still none."}},
    ])
    assert seen[-1]["type"] == "status" and seen[-1]["payload"]["status"] == "failed"
    invalid = [e for e in seen if e["type"] == "error" and e["payload"]["kind"] == "output-invalid"]
    assert len(invalid) == 3


def test_app_server_turns_fall_back_to_the_prompt_without_tool_support(tmp_path):
    seen = app_turn(tmp_path, [
        {"status": 400, "body": json.dumps({"error": {"message":
            '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'}})},
        {"expect": {"noTools": True, "systemContains": "lime_storage__query"},
         "reply": {"content": "<tool_call>" + json.dumps({"name": "complete", "arguments": {
             "result": {"count": 0, "stored": []}}}) + "</tool_call>"}},
    ])
    assert seen[-1]["type"] == "completed", seen[-1]
    assert any("notice" in e["payload"] for e in seen if e["type"] == "progress")
