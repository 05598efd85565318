"""CallgateRefusalHook: a refusal that ends the run, as a typed exception."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Live
from haystack.components.agents import Agent
from support import Counter, ScriptedChatGenerator, calls, local_tools, records, user

from haystack_integrations.common.callgate.errors import PolicyDenied
from haystack_integrations.hooks.callgate import CallgateHook, CallgateRefusalHook, CallgateToolRefused


def test_a_refusal_ends_the_run_with_its_kind(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    generator = ScriptedChatGenerator(
        [calls(("read_note", {"name": "a"}, "rf-1"), ("delete_note", {"name": "b"}, "rf-2"))]
    )
    agent = Agent(
        chat_generator=generator,
        tools=local_tools(counter),
        hooks={
            "before_tool": [hook.point("before_tool")],
            "after_tool": [hook.point("after_tool"), CallgateRefusalHook()],
        },
    )
    context: dict[str, Any] = {"test": True}
    with pytest.raises(PolicyDenied) as raised:
        agent.run([user("go")], hook_context=context)
    assert isinstance(raised.value, CallgateToolRefused)
    assert raised.value.details["tool"] == "delete_note" and raised.value.call_id == "rf-2"
    hook.flush()
    ends = {r["call_id"]: r["outcome"] for r in records(live.admin().bundle(context["callgate_run_id"]), "call-end")}
    assert ends == {"rf-1": "ok", "rf-2": "denied"}  # the step was recorded before the run ended


def test_tool_errors_do_not_end_the_run_by_default(live: Live, hook: CallgateHook) -> None:
    generator = ScriptedChatGenerator([calls(("fail", {"reason": "x"}, "rf-3")), "recovered"])
    agent = Agent(
        chat_generator=generator,
        tools=local_tools(Counter()),
        hooks={
            "before_tool": [hook.point("before_tool")],
            "after_tool": [hook.point("after_tool"), CallgateRefusalHook()],
        },
    )
    assert agent.run([user("go")])["last_message"].text == "recovered"
