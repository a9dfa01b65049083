"""Tests for the scripted OpenAI chat completions server, spoken to as opencode's provider speaks to it."""

import http.client
import json
import time
from typing import Any

from tests.support.openai_server import UNSCRIPTED, OpenAIServer, http_error, text, tool_call

TITLE_SYSTEM = "You are a title generator. You output ONLY a thread title."


def post(server: OpenAIServer, body: dict[str, Any]) -> tuple[int, str]:
    host, port = server.url.split("//")[1].split("/")[0].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("POST", "/v1/chat/completions", json.dumps(body), {"content-type": "application/json"})
    response = connection.getresponse()
    return response.status, response.read().decode()


def chunks(stream: str) -> list[Any]:
    """The `data:` payloads of an SSE answer, `[DONE]` kept as a string."""
    found = [line[len("data: ") :] for line in stream.splitlines() if line.startswith("data: ")]
    return [item if item == "[DONE]" else json.loads(item) for item in found]


def ask(messages: list[dict[str, Any]], stream: bool = True) -> dict[str, Any]:
    return {"model": "model", "stream": stream, "messages": messages}


def test_a_text_turn_streams_content_deltas_then_a_stop_chunk_then_done() -> None:
    with OpenAIServer([text("Hello there, this answer is longer than one delta of forty characters")]) as server:
        status, body = post(server, ask([{"role": "user", "content": "hi"}]))
    assert status == 200
    got = chunks(body)
    assert got[-1] == "[DONE]"
    assert got[-2]["choices"][0]["finish_reason"] == "stop"
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in got[:-2])
    assert content == "Hello there, this answer is longer than one delta of forty characters"
    assert len(got) > 3


def test_a_tool_turn_streams_one_tool_call_with_its_arguments_as_json() -> None:
    with OpenAIServer([tool_call("fail", {"reason": "no"})]) as server:
        _, body = post(server, ask([{"role": "user", "content": "hi"}]))
    got = chunks(body)
    [call] = got[0]["choices"][0]["delta"]["tool_calls"]
    assert call["function"] == {"name": "fail", "arguments": '{"reason": "no"}'}
    assert got[-2]["choices"][0]["finish_reason"] == "tool_calls"


def test_a_scripted_error_and_a_request_past_the_script_answer_400() -> None:
    with OpenAIServer([http_error(400, "bad")]) as server:
        first = post(server, ask([{"role": "user", "content": "a"}]))
        second = post(server, ask([{"role": "user", "content": "b"}]))
    assert first[0] == 400 and json.loads(first[1])["error"]["message"] == "bad"
    assert second[0] == 400 and json.loads(second[1])["error"]["message"] == UNSCRIPTED


def test_a_title_request_takes_no_turn_of_the_script() -> None:
    with OpenAIServer([text("main answer")], title="A title") as server:
        _, title = post(server, ask([{"role": "system", "content": TITLE_SYSTEM}, {"role": "user", "content": "x"}]))
        _, main = post(server, ask([{"role": "user", "content": "x"}], stream=False))
        kinds = [r.kind for r in server.requests]
    assert "A title" in title
    assert json.loads(main)["choices"][0]["message"]["content"] == "main answer"
    assert kinds == ["title", "main"]


def test_the_record_reads_user_texts_and_tool_results() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "step one"}]},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "tool", "tool_call_id": "c", "content": "stopped"},
    ]
    with OpenAIServer([text("ok")]) as server:
        post(server, ask(messages))
        [request] = server.main_requests
    assert request.user_texts() == ["step one"]
    assert request.tool_results() == ["stopped"]


def test_a_body_that_is_not_json_still_gets_an_answer() -> None:
    with OpenAIServer([text("ok")]) as server:
        host, port = server.url.split("//")[1].split("/")[0].split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        connection.request("POST", "/v1/chat/completions", b"{not json", {"content-type": "application/json"})
        assert connection.getresponse().status == 200


def test_the_server_stops_by_itself_when_idle() -> None:
    server = OpenAIServer(idle_timeout=0.5).start()
    deadline = time.monotonic() + 5
    while server._server is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert server._server is None


def test_a_compaction_request_takes_no_turn_of_the_script() -> None:
    system = "You are a context summarization agent. You are given a conversation."
    with OpenAIServer([text("main answer")], summary="Short summary") as server:
        _, body = post(server, ask([{"role": "system", "content": system}, {"role": "user", "content": "x"}]))
        assert server.turns_left == 1
    assert "Short summary" in body


def respond(server: OpenAIServer, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, str]:
    host, port = server.url.split("//")[1].split("/")[0].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    sent = {"content-type": "application/json", **(headers or {})}
    connection.request("POST", "/v1/responses", json.dumps(body), sent)
    response = connection.getresponse()
    return response.status, response.read().decode()


def events(stream: str) -> list[Any]:
    return [json.loads(line[len("data: ") :]) for line in stream.splitlines() if line.startswith("data: ")]


def test_the_responses_api_streams_a_text_answer_and_a_function_call_as_codex_reads_them() -> None:
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    with OpenAIServer([text("Hello"), tool_call("fail", {"reason": "no"})]) as server:
        _, answer = respond(server, {"model": "m", "stream": True, "input": [user]})
        _, call = respond(server, {"model": "m", "stream": True, "input": [user]})
        assert server.main_requests[0].last_user_text() == "hi"
    said = events(answer)
    assert [e["type"] for e in said] == [
        "response.created",
        "response.output_item.added",
        "response.output_text.delta",
        "response.output_item.done",
        "response.completed",
    ]
    assert said[-1]["response"]["output"][0]["content"][0]["text"] == "Hello"
    item = events(call)[-1]["response"]["output"][0]
    assert (
        item["type"] == "function_call" and item["name"] == "fail" and json.loads(item["arguments"]) == {"reason": "no"}
    )


def test_a_responses_compaction_request_gets_the_summary_and_takes_no_turn() -> None:
    metadata = json.dumps({"request_kind": "compaction"})
    with OpenAIServer([text("scripted")], summary="THE SUMMARY") as server:
        _, answer = respond(server, {"model": "m", "input": []}, {"x-codex-turn-metadata": metadata})
        assert server.turns_left == 1 and [r.kind for r in server.requests] == ["summary"]
    assert events(answer)[-1]["response"]["output"][0]["content"][0]["text"] == "THE SUMMARY"
