"""CallgateConfirmationStrategy inside Haystack's own ConfirmationHook, against the real server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from conftest import Live
from haystack.components.agents import Agent
from haystack.dataclasses import ChatRole
from haystack.hooks.human_in_the_loop import ConfirmationHook
from support import Counter, Reviewer, ScriptedChatGenerator, calls, check_history, local_tools, records, user

from haystack_integrations.hooks.callgate import CallgateConfirmationStrategy


def confirmed_agent(live: Live, secret: Any, generator: ScriptedChatGenerator, counter: Counter) -> Agent:
    tools = local_tools(counter)
    strategy = CallgateConfirmationStrategy(url=live.url, api_key=secret(live.agent_key), tools=tools)
    return Agent(
        chat_generator=generator,
        tools=tools,
        hooks={"before_tool": [ConfirmationHook(confirmation_strategies={"*": strategy})]},
    )


def test_allow_deny_and_an_approved_ask(live: Live, secret: Any) -> None:
    counter = Counter()
    step = calls(
        ("read_note", {"name": "a"}, "cs-1"),
        ("delete_note", {"name": "b"}, "cs-2"),
        ("write_note", {"name": "c", "text": "t"}, "cs-3"),
    )
    generator = ScriptedChatGenerator([step, "done"])
    context: dict[str, Any] = {"test": True}
    with Reviewer(live.reviewer(), {"write_note": "approve"}):
        result = confirmed_agent(live, secret, generator, counter).run([user("go")], hook_context=context)

    assert sorted(counter.names()) == ["read_note", "write_note"]
    check_history(result["messages"])
    refused = [m for m in result["messages"] if m.role == ChatRole.TOOL and m.tool_call_result.error]
    assert [json.loads(m.tool_call_result.result)["error"]["kind"] for m in refused] == ["policy-denied"]
    run_id = context["callgate_run"].run_id
    bundle = live.admin().bundle(run_id)
    effects = {record["call_id"]: record["effect"] for record in records(bundle, "call-decision")}
    assert effects == {"cs-1": "allow", "cs-2": "deny", "cs-3": "ask"}


def test_run_async_denied_ask(live: Live, secret: Any) -> None:
    counter = Counter()
    generator = ScriptedChatGenerator([calls(("write_note", {"name": "c", "text": "t"}, "ca-1")), "done"])
    with Reviewer(live.reviewer(), {"write_note": "deny"}):
        result = asyncio.run(confirmed_agent(live, secret, generator, counter).run_async([user("go")]))
    assert counter.runs == []
    error = json.loads(result["messages"][-2].tool_call_result.result)["error"]
    assert error["kind"] == "approval-denied"
