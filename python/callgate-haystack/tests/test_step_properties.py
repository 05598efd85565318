"""
Generated steps (hypothesis) through a real Haystack Agent and the real server: any mix of call
ids (none, empty, repeated, unique) and tools (allowed, denied, unknown to the agent) yields one
result per call in a history chat APIs accept, each call decided and ended exactly once, and only
allowed calls run.
"""

from __future__ import annotations

from typing import Any

from conftest import Live
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall
from haystack.utils import Secret
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import Counter, ScriptedChatGenerator, check_history, local_tools, records, user

from haystack_integrations.hooks.callgate import CallgateHook

calls = st.lists(
    st.tuples(st.sampled_from(["read_note", "delete_note", "no_such_tool"]), st.sampled_from([None, "", "a", "b"])),
    min_size=1,
    max_size=4,
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(step=calls)
def test_any_step_gets_one_result_per_call_and_one_end_per_decision(live: Live, step: list[tuple[str, Any]]) -> None:
    gate = CallgateHook(url=live.url, api_key=Secret.from_token(live.agent_key))
    counter = Counter()
    tool_calls = [
        ToolCall(tool_name=tool, arguments={"name": f"n{i}"}, id=call_id) for i, (tool, call_id) in enumerate(step)
    ]
    generator = ScriptedChatGenerator([ChatMessage.from_assistant(tool_calls=tool_calls), "done"])
    agent = Agent(chat_generator=generator, tools=local_tools(counter), hooks=gate.hooks())
    context: dict[str, Any] = {"callgate_run_id": None}
    try:
        result = agent.run([user("go")], hook_context=context)
    finally:
        gate.close()

    check_history(result["messages"])
    results = [m.tool_call_result for m in result["messages"] if m.role == ChatRole.TOOL]
    ids = [r.origin.id for r in results]
    assert len(results) == len(step) and all(ids) and len(set(ids)) == len(ids)  # one result per call, ids kept apart
    assert sorted(name for name, _ in counter.runs) == sorted(t for t, _ in step if t == "read_note")
    for r in results:
        assert r.error is (r.origin.tool_name != "read_note")
    bundle = live.admin().bundle(context["callgate_run_id"])
    decided = [(d["call_id"], d["attempt"]) for d in records(bundle, "call-decision")]
    ended = [(e["call_id"], e["attempt"]) for e in records(bundle, "call-end")]
    assert len(decided) == len(step) and sorted(decided) == sorted(ended)
    assert live.admin().verify(bundle, strict=True)["ok"] is True
