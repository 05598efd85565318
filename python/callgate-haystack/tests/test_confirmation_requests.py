"""
One request per allowed call for ``CallgateConfirmationStrategy`` too: a local tool's decision
consumes its grant (the strategy runs it right after), with no separate consume request; the
run's start and end are once per run. Counted on the client's own requests to the real server,
sync and async, and checked in the run's bundle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import Live
from haystack.components.agents import Agent
from haystack.hooks.human_in_the_loop import ConfirmationHook
from support import Counter, ScriptedChatGenerator, calls, local_tools, records, user

from haystack_integrations.common.callgate.client import AsyncCallgateClient, CallgateClient
from haystack_integrations.hooks.callgate import CallgateConfirmationStrategy


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str, Any]]]:
    """Every request the strategy's clients send, as ``(method, path, answer)``."""
    requests: list[tuple[str, str, Any]] = []
    sync_send, async_send = CallgateClient._send, AsyncCallgateClient._send

    def counted(self: CallgateClient, request: Any) -> Any:
        answer = sync_send(self, request)
        requests.append((request.method, request.path, answer))
        return answer

    async def counted_async(self: AsyncCallgateClient, request: Any) -> Any:
        answer = await async_send(self, request)
        requests.append((request.method, request.path, answer))
        return answer

    monkeypatch.setattr(CallgateClient, "_send", counted)
    monkeypatch.setattr(AsyncCallgateClient, "_send", counted_async)
    yield requests


def agent_of(live: Live, secret: Any, count: int) -> Agent:
    counter = Counter()
    tools = local_tools(counter)
    strategy = CallgateConfirmationStrategy(url=live.url, api_key=secret(live.agent_key), tools=tools)
    script: list[Any] = [calls(("read_note", {"name": f"n{step}"}, f"cr-{step}")) for step in range(count)]
    return Agent(
        chat_generator=ScriptedChatGenerator([*script, "all read"]),
        tools=tools,
        hooks={"before_tool": [ConfirmationHook(confirmation_strategies={"*": strategy})]},
        max_agent_steps=20,
    )


def per_call(sent: list[tuple[str, str, Any]], run_id: str) -> list[str]:
    return [path.removeprefix(f"/v1/runs/{run_id}") for _, path, _ in sent if run_id in path or "grants" in path]


def check_run(live: Live, sent: list[tuple[str, str, Any]], run_id: str, count: int) -> None:
    # Each decision consumed its call's grant: nothing else may run the call on it.
    verdicts = [verdict for _, path, answer in sent if path.endswith("/decisions") for verdict in answer["verdicts"]]
    assert [(verdict["status"], verdict.get("grant_consumed")) for verdict in verdicts] == [("allowed", True)] * count
    bundle = live.admin().bundle(run_id)
    decisions = records(bundle, "call-decision")
    assert [record["effect"] for record in decisions] == ["allow"] * count


def test_one_request_per_allowed_call(live: Live, secret: Any, sent: list[tuple[str, str, Any]]) -> None:
    context: dict[str, Any] = {"test": True}
    agent_of(live, secret, 4).run([user("read four")], hook_context=context)
    run_id = context["callgate_run"].run_id
    assert per_call(sent, run_id) == ["/decisions"] * 4
    check_run(live, sent, run_id, 4)


def test_one_request_per_allowed_call_async(live: Live, secret: Any, sent: list[tuple[str, str, Any]]) -> None:
    context: dict[str, Any] = {"test": True}
    asyncio.run(agent_of(live, secret, 3).run_async([user("read three")], hook_context=context))
    run_id = context["callgate_run"].run_id
    assert per_call(sent, run_id) == ["/decisions"] * 3
    check_run(live, sent, run_id, 3)
