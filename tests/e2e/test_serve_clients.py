"""Real clients against ``hermes serve`` in a subprocess, the fake model behind it.

The openai SDK's own helpers (``responses.stream``, ``chat.completions.stream``,
``parse``), client-defined tools in both APIs, LangChain's ``ChatOpenAI`` and
``llm -T``; upstream calls per turn counted from the fake server's request log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest
from pydantic import BaseModel

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.serve_process import ServeProcess, db_rows, serve_env

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}  # fmt: skip
FLAT_WEATHER = {"type": "function", **WEATHER["function"]}


class Weather(BaseModel):
    city: str
    degrees: int


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "notes.txt").write_text("the launch code is 4711\n")
    return folder


@pytest.fixture
def serve(fake_model_server: FakeModelServer, hermes_home: Path, workspace: Path):
    started: list[ServeProcess] = []

    def start(*args: str, env: dict[str, str] | None = None, **settings) -> ServeProcess:
        settings.setdefault("workspace", str(workspace))
        process = ServeProcess({**serve_env(fake_model_server, hermes_home, **settings), **(env or {})}, *args)
        started.append(process)
        return process

    yield start
    for process in started:
        process.__exit__()


def _post(url: str, body: object) -> tuple[int, dict]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _offered(request) -> list[str]:
    return [t["function"]["name"] for t in request.body.get("tools") or []]


# --- the openai SDK's helpers --------------------------------------------------------


def test_responses_stream_keeps_one_id_and_exact_tool_items(serve, fake_model_server: FakeModelServer) -> None:
    fake_model_server.tool_calls(("read_file", {"path": "notes.txt"}))
    fake_model_server.reply("The code is 4711.")
    client = serve().client()
    with client.responses.stream(model="hermes", input="what is the code?") as stream:
        events = list(stream)
        final = stream.get_final_response()
    ids = {e.response.id for e in events if hasattr(e, "response")}
    assert len(ids) == 1 and final.id in ids and final.output_text == "The code is 4711."
    (call,) = [i for i in final.output if i.type == "mcp_call"]
    assert json.loads(call.arguments) == {"path": "notes.txt"}  # a JSON string, encoded once
    assert "4711" in call.output
    done = [e.item for e in events if e.type == "response.output_item.done" and e.item.type == "mcp_call"]
    assert done and "4711" in done[0].output
    follow = client.responses.create(model="hermes", input="and again?", previous_response_id=final.id)
    assert fake_model_server.requests[-1].messages[-2]["content"] == "The code is 4711."  # continued from that id
    assert follow.id != final.id


def test_chat_completions_stream_helper_and_one_upstream_call(serve, fake_model_server: FakeModelServer, hermes_home: Path) -> None:
    fake_model_server.reply("Hello there, streamed.")
    client = serve(env={"HERMES_SESSIONS__AUTO_TITLE": "true"}).client()
    with client.chat.completions.stream(model="hermes", messages=[{"role": "user", "content": "hi"}]) as stream:
        deltas = [e.delta for e in stream if e.type == "content.delta"]
        final = stream.get_final_completion()
    assert "".join(deltas) == "Hello there, streamed." and final.choices[0].finish_reason == "stop"
    for n in range(3):
        fake_model_server.reply(f"answer {n}")
        client.chat.completions.create(model="hermes", messages=[{"role": "user", "content": f"turn {n}"}])
    import time

    time.sleep(0.5)  # a title call would run in the background after the turn
    assert len(fake_model_server.requests) == 4  # one upstream call per tool-less stateless request, no title calls
    titles = sorted(t for (t,) in db_rows(hermes_home, "SELECT title FROM sessions"))
    assert titles == ["hi", "turn 0", "turn 1", "turn 2"]  # named from the first user message, locally


def test_parse_helpers_pass_the_schema_through(serve, fake_model_server: FakeModelServer) -> None:
    client = serve().client()
    fake_model_server.reply('{"city": "Oslo", "degrees": 7}')
    parsed = client.chat.completions.parse(model="hermes", messages=[{"role": "user", "content": "weather"}],
                                           response_format=Weather)  # fmt: skip
    assert parsed.choices[0].message.parsed == Weather(city="Oslo", degrees=7)
    sent = fake_model_server.requests[-1].body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "Weather"
    fake_model_server.reply('{"city": "Bergen", "degrees": 3}')
    response = client.responses.parse(model="hermes", input="weather", text_format=Weather)
    assert response.output_parsed == Weather(city="Bergen", degrees=3)
    assert fake_model_server.requests[-1].body["response_format"]["json_schema"]["schema"]["required"] == ["city", "degrees"]


# --- client-defined tools ------------------------------------------------------------


def test_chat_client_tools_return_calls_and_take_results(serve, fake_model_server: FakeModelServer) -> None:
    client = serve().client()
    fake_model_server.tool_calls(("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Rome"}))
    messages = [{"role": "user", "content": "weather in Oslo and Rome?"}]
    first = client.chat.completions.create(model="hermes", messages=messages, tools=[WEATHER], tool_choice="required",
                                           parallel_tool_calls=True)  # fmt: skip
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls" and len(choice.message.tool_calls) == 2
    assert [json.loads(c.function.arguments) for c in choice.message.tool_calls] == [{"city": "Oslo"}, {"city": "Rome"}]
    upstream = fake_model_server.requests[-1].body
    assert "get_weather" in _offered(fake_model_server.requests[-1]) and "read_file" in _offered(fake_model_server.requests[-1])
    assert upstream["tool_choice"] == "required" and upstream["parallel_tool_calls"] is True
    messages.append(choice.message.model_dump(exclude_none=True))
    messages += [{"role": "tool", "tool_call_id": c.id, "content": f"{n} degrees"} for n, c in zip((7, 21), choice.message.tool_calls)]
    fake_model_server.reply("Oslo 7, Rome 21.")
    second = client.chat.completions.create(model="hermes", messages=messages, tools=[WEATHER])
    assert second.choices[0].message.content == "Oslo 7, Rome 21." and second.choices[0].finish_reason == "stop"
    sent = fake_model_server.requests[-1].messages
    assert [m["role"] for m in sent[-3:]] == ["assistant", "tool", "tool"] and sent[-1]["content"] == "21 degrees"
    assert len(fake_model_server.requests) == 2  # one call per request; the client ran the tools


def test_chat_client_tool_streamed_and_a_clash_goes_to_the_client(serve, fake_model_server: FakeModelServer) -> None:
    client = serve().client()
    theirs = {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {}}}}
    fake_model_server.tool_calls(("read_file", {"path": "notes.txt"}))
    with client.chat.completions.stream(model="hermes", messages=[{"role": "user", "content": "read it"}],
                                        tools=[theirs]) as stream:  # fmt: skip
        final = stream.get_final_completion()
    call = final.choices[0].message.tool_calls[0]
    assert final.choices[0].finish_reason == "tool_calls" and call.function.name == "read_file"
    assert json.loads(call.function.arguments) == {"path": "notes.txt"}
    offered = fake_model_server.requests[-1].body["tools"]
    assert [t["function"] for t in offered if t["function"]["name"] == "read_file"] == [theirs["function"]]
    assert len(fake_model_server.requests) == 1  # the server's own read_file never ran


def test_two_hundred_client_tools_and_serve_tools_client(serve, fake_model_server: FakeModelServer) -> None:
    tools = [{"type": "function", "function": {"name": f"tool_{i}", "parameters": {"type": "object", "properties": {}}}}
             for i in range(200)]  # fmt: skip
    client = serve(tools="client").client()
    fake_model_server.tool_calls(("tool_199", {}))
    answer = client.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "go"}], tools=tools)
    assert answer.choices[0].message.tool_calls[0].function.name == "tool_199"
    assert _offered(fake_model_server.requests[-1]) == [f"tool_{i}" for i in range(200)]  # no server tools


def test_responses_client_tools_function_call_items_continue(serve, fake_model_server: FakeModelServer) -> None:
    server = serve()
    client = server.client()
    fake_model_server.tool_calls(("get_weather", {"city": "Oslo"}))
    with client.responses.stream(model="hermes", input="weather in Oslo?", tools=[FLAT_WEATHER]) as stream:
        first = stream.get_final_response()
    (call,) = [i for i in first.output if i.type == "function_call"]
    assert call.name == "get_weather" and json.loads(call.arguments) == {"city": "Oslo"}
    status, error = _post(server.url + "/v1/responses", {"model": "hermes", "previous_response_id": first.id, "tools": [FLAT_WEATHER],
                          "input": [{"type": "function_call_output", "call_id": "call_nobody", "output": "x"}]})  # fmt: skip
    assert status == 400 and "'call_nobody'" in error["error"]["message"] and error["error"]["param"] == "input[0].call_id"
    fake_model_server.reply("It is 7 degrees in Oslo.")
    second = client.responses.create(model="hermes", previous_response_id=first.id, tools=[FLAT_WEATHER],
                                     input=[{"type": "function_call_output", "call_id": call.call_id, "output": "7 degrees"}])  # fmt: skip
    assert second.output_text == "It is 7 degrees in Oslo."
    sent = fake_model_server.requests[-1].messages
    assert sent[-1] == {"role": "tool", "tool_call_id": call.call_id, "content": "7 degrees"} or \
        (sent[-1]["role"], sent[-1]["content"]) == ("tool", "7 degrees")
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "tool"]
    assert len(fake_model_server.requests) == 2


# --- hostile input -----------------------------------------------------------------


def test_wire_faults_are_400s_in_openai_shape(serve, fake_model_server: FakeModelServer) -> None:
    server = serve()
    user = [{"role": "user", "content": "hi"}]
    deep = b'{"messages": [{"role": "user", "content": "hi"}], "deep": ' + b"[" * 1000 + b"]" * 1000 + b"}"
    for url, body, param in [
        ("/v1/chat/completions", {"messages": user, "stream": "false"}, "stream"),
        ("/v1/chat/completions", {"messages": user, "temperature": "hot"}, "temperature"),
        ("/v1/chat/completions", deep, None),
        ("/v1/responses", {"input": "hi", "stream": "true"}, "stream"),
        ("/v1/responses", {"input": "hi", "tools": "all"}, "tools"),
        ("/v1/responses", {"input": "hi", "previous_response_id": 5}, "previous_response_id"),
    ]:
        status, error = _post(server.url + url, body)
        assert status == 400 and error["error"]["type"] == "invalid_request_error" and error["error"]["param"] == param, (url, error)
    assert fake_model_server.requests == []
    fake_model_server.reply("still fine")
    assert server.client().chat.completions.create(model="hermes", messages=user).choices[0].message.content == "still fine"


def test_lone_surrogates_and_nul_bytes_never_500(serve, fake_model_server: FakeModelServer, hermes_home: Path) -> None:
    server = serve()
    fake_model_server.reply("got it")
    raw = b'{"model": "hermes", "messages": [{"role": "user", "content": "bad \\ud800 and \\u0000 here"}]}'
    request = urllib.request.Request(server.url + "/v1/chat/completions", data=raw, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    session_id = answer["hermes"]["session_id"]
    with urllib.request.urlopen(f"{server.url}/session/{session_id}", timeout=30) as page:
        assert page.status == 200 and "got it" in page.read().decode()
    shown = subprocess.run([sys.executable, "-m", "hermes.kernel", "sessions", "show", session_id],
                           env={**os.environ, "HERMES_HOME": str(hermes_home)}, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "got it" in shown.stdout and "Traceback" not in shown.stderr
    assert "bad \ufffd and \ufffd here" in shown.stdout  # stored as U+FFFD at the wire


# --- LangChain and llm -----------------------------------------------------------------


def test_langchain_bind_tools_and_structured_output(serve, fake_model_server: FakeModelServer) -> None:
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    @tool
    def get_weather(city: str) -> str:
        """Weather in a city."""
        return f"7 degrees in {city}"

    server = serve()
    model = ChatOpenAI(model="hermes", base_url=server.url + "/v1", api_key="none", max_retries=0)
    fake_model_server.tool_calls(("get_weather", {"city": "Oslo"}))
    bound = model.bind_tools([get_weather])
    asked = [HumanMessage("weather in Oslo?")]
    reply = bound.invoke(asked)
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("get_weather", {"city": "Oslo"})]
    assert "get_weather" in _offered(fake_model_server.requests[-1])
    fake_model_server.reply("It is 7 degrees in Oslo.")
    result = get_weather.invoke(reply.tool_calls[0]["args"])
    final = bound.invoke([*asked, reply, ToolMessage(result, tool_call_id=reply.tool_calls[0]["id"])])
    assert final.content == "It is 7 degrees in Oslo."
    assert fake_model_server.requests[-1].messages[-1]["content"] == "7 degrees in Oslo"

    fake_model_server.tool_calls(("Weather", {"city": "Rome", "degrees": 21}))
    structured = model.with_structured_output(Weather, method="function_calling").invoke("weather in Rome?")
    assert structured == Weather(city="Rome", degrees=21)
    upstream = fake_model_server.requests[-1].body
    assert upstream["tool_choice"]["function"]["name"] == "Weather" and _offered(fake_model_server.requests[-1])[-1] == "Weather"
    assert len(fake_model_server.requests) == 3


def test_llm_cli_runs_a_functions_tool(serve, fake_model_server: FakeModelServer, tmp_path: Path) -> None:
    server = serve()
    user_path = tmp_path / "llm-user"
    user_path.mkdir()
    (user_path / "extra-openai-models.yaml").write_text(
        f"- model_id: hermes\n  model_name: hermes\n  api_base: {server.url}/v1\n  supports_tools: true\n")
    fake_model_server.tool_calls(("multiply", {"x": 6, "y": 7}))
    fake_model_server.reply("The product is 42.")
    llm = Path(sys.executable).with_name("llm")
    run = subprocess.run(
        [str(llm), "-m", "hermes", "--functions", "def multiply(x: int, y: int) -> int:\n    return x * y\n",
         "-T", "llm_version", "what is 6 times 7?"],
        env={**os.environ, "LLM_USER_PATH": str(user_path), "OPENAI_API_KEY": "none"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "The product is 42." in run.stdout
    first, second = fake_model_server.requests
    assert {"multiply", "llm_version"} <= set(_offered(first))  # the --functions tool and the -T one
    tool_message = second.messages[-1]
    assert tool_message["role"] == "tool" and tool_message["content"].strip() == "42"


def test_responses_stateless_tool_history_and_serve_tools_server(serve, fake_model_server: FakeModelServer) -> None:
    client = serve().client()
    fake_model_server.reply("Oslo: 7 degrees.")
    answer = client.responses.create(model="hermes", tools=[FLAT_WEATHER], input=[
        {"role": "user", "content": "weather in Oslo?"},
        {"type": "function_call", "call_id": "call_a", "name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"},
        {"type": "function_call_output", "call_id": "call_a", "output": "7 degrees"}])  # fmt: skip
    assert answer.output_text == "Oslo: 7 degrees."
    sent = fake_model_server.requests[-1].messages
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "tool"]
    assert sent[2]["tool_calls"][0]["function"]["arguments"] == "{\"city\": \"Oslo\"}" and sent[3]["content"] == "7 degrees"

    only_server = serve(tools="server").client()
    fake_model_server.reply("no weather tool here")
    only_server.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "hi"}], tools=[WEATHER])
    offered = _offered(fake_model_server.requests[-1])
    assert "get_weather" not in offered and "read_file" in offered
