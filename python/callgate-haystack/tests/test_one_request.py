"""
One request per allowed call: the hook's decisions request consumes the grants of local calls
and carries the previous step's outcomes; the run's end carries the last ones. Counted on the
client's own requests to the real server, and checked in the run's bundle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import Live
from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage
from support import Counter, ScriptedChatGenerator, calls, local_tools, records, user

from haystack_integrations.common.callgate.client import AsyncCallgateClient, CallgateClient
from haystack_integrations.hooks.callgate import CallgateHook


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """Every request the hook's clients send, as ``(method, path)``."""
    requests: list[tuple[str, str]] = []
    sync_send, async_send = CallgateClient._send, AsyncCallgateClient._send

    def counted(self: CallgateClient, request: Any) -> Any:
        requests.append((request.method, request.path))
        return sync_send(self, request)

    async def counted_async(self: AsyncCallgateClient, request: Any) -> Any:
        requests.append((request.method, request.path))
        return await async_send(self, request)

    monkeypatch.setattr(CallgateClient, "_send", counted)
    monkeypatch.setattr(AsyncCallgateClient, "_send", counted_async)
    yield requests


def steps(count: int) -> list[ChatMessage | str]:
    script: list[ChatMessage | str] = [calls(("read_note", {"name": f"n{step}"})) for step in range(count)]
    return [*script, "all read"]


def agent_of(generator: ScriptedChatGenerator, hook: CallgateHook) -> Agent:
    return Agent(
        chat_generator=generator,
        tools=local_tools(Counter()),
        hooks={"before_tool": [hook], "after_tool": [hook], "after_run": [hook]},
        max_agent_steps=20,
    )


def check_run(live: Live, run_id: str, count: int) -> None:
    bundle = live.admin().bundle(run_id)
    ends = records(bundle, "call-end")
    assert [end["outcome"] for end in ends] == ["ok"] * count
    assert all(end["grant_consumed"] is True for end in ends)
    # Each outcome is recorded before the next step's decision: the ledger keeps the agent's order.
    kinds = [record["type"] for record in bundle["records"] if record["type"] in ("call-decision", "call-end")]
    assert kinds == ["call-decision", "call-end"] * count
    assert live.admin().verify(bundle, strict=True)["ok"] is True


def requests_of(sent: list[tuple[str, str]], run_id: str) -> list[str]:
    return [path.removeprefix(f"/v1/runs/{run_id}") or "/" for _, path in sent if run_id in path or "grants" in path]


def test_one_request_per_allowed_call(live: Live, hook: CallgateHook, sent: list[tuple[str, str]]) -> None:
    context: dict[str, Any] = {"test": True}
    hook.warm_up()
    agent_of(ScriptedChatGenerator(steps(4)), hook).run([user("read four")], hook_context=context)
    run_id = context["callgate_run_id"]
    # 4 allowed calls: 4 decisions requests and nothing else per call (no consume, no outcome);
    # the run's end carries the last outcome, after the final message.
    assert requests_of(sent, run_id) == ["/decisions"] * 4 + ["/messages", "/end"]
    check_run(live, run_id, 4)


def test_one_request_per_allowed_call_async(live: Live, hook: CallgateHook, sent: list[tuple[str, str]]) -> None:
    context: dict[str, Any] = {"test": True}

    async def main() -> None:
        await agent_of(ScriptedChatGenerator(steps(3)), hook).run_async([user("read three")], hook_context=context)

    asyncio.run(main())
    run_id = context["callgate_run_id"]
    assert requests_of(sent, run_id) == ["/decisions"] * 3 + ["/messages", "/end"]
    check_run(live, run_id, 3)


def test_held_outcomes_reach_the_server_on_flush(live: Live, hook: CallgateHook) -> None:
    """Between steps (while the model thinks) the hook holds the step's outcome, unacknowledged; flush() sends it."""
    seen: list[dict[str, Any]] = []
    admin = live.admin()

    def outcomes() -> dict[str, Any]:
        return {row["call_id"]: row.get("outcome") for row in admin.get_run(hook.last_run_id or "")["calls"]}

    class Probing(ScriptedChatGenerator):
        @component.output_types(replies=list[ChatMessage])
        def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
            if len(self.received) == 1:  # the model's second turn: step one's tool has run
                seen.append(outcomes())
                hook.flush()
                seen.append(outcomes())
            return super().run(messages, tools, **kwargs)

    generator = Probing([calls(("read_note", {"name": "a"}, "held-1")), "done"])
    agent = Agent(
        chat_generator=generator,
        tools=local_tools(Counter()),
        hooks={"before_tool": [hook], "after_tool": [hook], "after_run": [hook]},
    )
    agent.run([user("read a")])
    assert seen == [{"held-1": None}, {"held-1": "ok"}]
    assert admin.verify(admin.bundle(hook.last_run_id or ""), strict=True)["ok"] is True
