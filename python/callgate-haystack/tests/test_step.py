"""The pure parts of the hook: rewriting a step, pairing results, telling hook points apart, encoding."""

from __future__ import annotations

import json
import math

from haystack.dataclasses import ChatMessage, ToolCall
from haystack.dataclasses.chat_message import ReasoningContent
from support import check_history

from haystack_integrations.common.callgate.wire import encode_arguments, resolve_server_url
from haystack_integrations.hooks.callgate.points import infer_point
from haystack_integrations.hooks.callgate.runs import DecidedCall, RunContext
from haystack_integrations.hooks.callgate.step import CallPlan, find_results, plan_call, rewrite_step

DENIED = {"kind": "policy-denied", "message": "no"}


def step() -> tuple[ChatMessage, list[ToolCall]]:
    calls = [ToolCall(tool_name=name, arguments={"n": index}, id=f"c{index}") for index, name in enumerate("abc")]
    reasoning = ReasoningContent(reasoning_text="thinking", extra={"encrypted_content": "x"})
    return ChatMessage.from_assistant(text="doing three", reasoning=reasoning, tool_calls=calls, meta={"m": 1}), calls


def test_nothing_changes_when_every_call_runs_as_asked() -> None:
    message, calls = step()
    assert rewrite_step(message, [CallPlan(call, call) for call in calls]) is None


def test_a_refused_call_becomes_a_pair_and_the_rest_stay_last() -> None:
    message, calls = step()
    plans = [CallPlan(calls[0], calls[0]), CallPlan(calls[1], calls[1], error=DENIED), CallPlan(calls[2], calls[2])]
    rewritten = rewrite_step(message, plans)
    assert rewritten is not None
    assert [m.role.value for m in rewritten] == ["assistant", "tool", "assistant"]
    assert rewritten[0].tool_calls == [calls[1]] and rewritten[0].text == "doing three"
    assert rewritten[0].reasoning is not None and rewritten[0].meta == {"m": 1}
    assert json.loads(rewritten[1].tool_call_result.result) == {"error": DENIED}
    assert rewritten[1].tool_call_result.error
    assert rewritten[2].tool_calls == [calls[0], calls[2]] and rewritten[2].text is None
    check_history([ChatMessage.from_user("go"), *rewritten, *_results(rewritten[2].tool_calls)])


def test_minted_ids_and_decided_arguments_are_applied() -> None:
    original = ToolCall(tool_name="a", arguments={"x": 1, "force": True}, id=None)
    planned = plan_call(original, "cg-0123456789abcdef", {"x": 1})
    assert (planned.id, planned.arguments) == ("cg-0123456789abcdef", {"x": 1})
    assert plan_call(planned, "cg-0123456789abcdef", {"x": 1}) is planned


def test_results_pair_by_the_object_then_by_id() -> None:
    message, calls = step()
    decided = [
        DecidedCall(call_id=c.id or "", attempt=1, tool=c.tool_name, arguments=c.arguments, tool_call=c) for c in calls
    ]
    replaced = ToolCall(tool_name="b", arguments={"n": 99}, id="c1")  # a later hook replaced call c1
    history = [message, *_results([calls[0], replaced, calls[2]])]
    found, undecided = find_results(history, decided, [])
    assert set(found) == {0, 1, 2} and undecided == []
    assert found[1].tool_call_result.origin is replaced
    stranger = ToolCall(tool_name="z", arguments={}, id="zz")
    _, undecided = find_results([message, *_results([*calls, stranger])], decided, [])
    assert [m.tool_call_result.origin.id for m in undecided] == ["zz"]


def test_hook_points_are_inferred_from_the_phase_and_the_last_message() -> None:
    message, _ = step()
    context = RunContext()
    assert infer_point([message], None) == "before_tool"
    assert infer_point([message, ChatMessage.from_assistant("done")], context) == "after_run"
    empty = ChatMessage.from_assistant("")
    assert infer_point([empty], context) == "before_tool"  # an empty reply does not end the run
    cut = ChatMessage.from_assistant("", meta={"finish_reason": "length"})
    assert infer_point([cut], context) == "after_run"
    context.phase, context.step_message = "tools", message
    assert infer_point([message, *_results(message.tool_calls)], context) == "after_tool"
    again, _ = step()
    assert infer_point([message, again], context) == "before_tool"  # after_tool was not registered


def test_arguments_json_cannot_carry_travel_as_text() -> None:
    assert encode_arguments({"a": 1, "b": [1.5, "x", None]}) == {"a": 1, "b": [1.5, "x", None]}
    # The text as JavaScript writes it (compact, Number::toString), NaN as its token.
    assert encode_arguments({"amount": 9007199254740993}) == '{"amount":9007199254740993}'
    assert encode_arguments({"x": math.nan, "y": 1e16, "z": 1e-7}) == '{"x":NaN,"y":10000000000000000,"z":1e-7}'
    assert encode_arguments("{not json") == "{not json"


def test_server_urls() -> None:
    assert resolve_server_url("http://127.0.0.1:7420/mcp/observe") == "http://127.0.0.1:7420"
    assert resolve_server_url("https://gate.example/prefix/v1/") == "https://gate.example/prefix"
    assert resolve_server_url("http://h:1") == "http://h:1"


def _results(calls: list[ToolCall]) -> list[ChatMessage]:
    return [ChatMessage.from_tool(tool_result="ok", origin=call) for call in calls]
