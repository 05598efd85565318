"""
How runs end, against a real server: a run the confirmation strategy starts ends with its agent
run (as CallgateHook's do), and a fail-open outage record's window spans the outage until the
server answered again (a server stopped and started again).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import Live
from haystack.components.agents import Agent
from haystack.tools import create_tool_from_function
from haystack.utils import Secret
from support import POLICY, Counter, ScriptedChatGenerator, calls, local_tools, records, user

from haystack_integrations.common.callgate.testing import CallgateServer
from haystack_integrations.hooks.callgate import CallgateConfirmationStrategy, CallgateHook
from haystack_integrations.hooks.callgate.confirmation_hook import CallgateConfirmationHook


def _ended(live: Live, run_id: str, within: float = 5.0) -> list[dict[str, Any]]:
    """The run's run-end records, once it has one (waiting up to ``within`` seconds)."""
    deadline = time.monotonic() + within
    while True:
        ends = records(live.admin().bundle(run_id), "run-end")
        if ends or time.monotonic() > deadline:
            return ends
        time.sleep(0.05)


def test_a_run_the_confirmation_strategy_starts_ends_with_its_agent_run(live: Live, secret: Any) -> None:
    counter = Counter()
    tools = local_tools(counter)
    strategy = CallgateConfirmationStrategy(url=live.url, api_key=secret(live.agent_key), tools=tools)
    agent = Agent(
        chat_generator=ScriptedChatGenerator([calls(("read_note", {"name": "a"}, "re-1")), "done"]),
        tools=tools,
        hooks={"before_tool": [CallgateConfirmationHook(confirmation_strategies={"*": strategy})]},
    )
    # The app keeps its hook_context (as a chat app keeps a session): the run still ends.
    context: dict[str, Any] = {"session": "kept"}
    seen: list[str] = []

    def note_run(state: Any) -> None:
        seen.append(state.data["hook_context"]["callgate_run"].run_id)

    agent.hooks.setdefault("after_tool", []).append(_FunctionHook(note_run))
    agent.run([user("go")], hook_context=context)
    gc.collect()
    assert counter.names() == ["read_note"]
    # The run stays readable in the context, ended: a later agent run with it starts a new one.
    assert context["callgate_run"].run_id == seen[0] and not context["callgate_run"].open
    ends = _ended(live, seen[0])
    assert [end["status"] for end in ends] == ["completed"]
    strategy.close()


class _FunctionHook:
    def __init__(self, function: Any) -> None:
        self.function = function

    def run(self, state: Any) -> None:
        self.function(state)


@pytest.fixture
def restartable() -> Iterator[tuple[CallgateServer, str, str]]:
    server = CallgateServer.start(policy=POLICY)
    try:
        yield server, server.create_key("agent", "window-agent"), server.create_key("admin", "window-admin")
    finally:
        server.close()


def test_a_fail_open_outage_record_spans_the_outage_until_the_server_answered_again(
    restartable: tuple[CallgateServer, str, str],
) -> None:
    server, agent_key, admin_key = restartable
    counter = Counter()
    moments: dict[str, int] = {}

    def restart_server() -> str:
        """Bring the callgate server back after a while."""
        time.sleep(0.3)
        server.launch()
        moments["answering"] = int(time.time() * 1000)  # launch returns once /v1/health answers
        return "restarted"

    tools = [*local_tools(counter), create_tool_from_function(restart_server)]
    gate = CallgateHook(url=server.url, api_key=Secret.from_token(agent_key), fail_mode="open")
    generator = ScriptedChatGenerator(
        [
            calls(("read_note", {"name": "during"}, "w-1"), ("restart_server", {}, "w-2")),
            calls(("read_note", {"name": "after"}, "w-3")),
            "done",
        ]
    )
    agent = Agent(chat_generator=generator, tools=tools, hooks=gate.hooks())
    context: dict[str, Any] = {"test": True}
    # The server stops before the run: its first step runs undecided (fail mode open).
    server.stop()
    moments["stopped"] = int(time.time() * 1000)
    agent.run([user("go")], hook_context=context)
    gate.close()
    assert counter.names() == ["read_note", "read_note"]
    bundle = server.client(admin_key).bundle(context["callgate_run_id"])
    gaps = records(bundle, "gap")
    assert len(gaps) == 1 and gaps[0]["calls"] == 2
    # The window starts at the first request that failed and ends when the server answered again,
    # not at the last call that ran undecided (which was before the restart).
    assert moments["stopped"] <= gaps[0]["from_ts"] < moments["answering"]
    assert gaps[0]["to_ts"] >= moments["answering"]
    decided = [record["call_id"] for record in records(bundle, "call-decision")]
    assert decided == ["w-3"]
