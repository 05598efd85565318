"""Cases that need a server of their own: fail modes in an outage, a restart, a bad key, edits allowed."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.dataclasses import ChatRole
from haystack.tools import create_tool_from_function
from haystack.utils import Secret
from support import POLICY, Counter, ScriptedChatGenerator, calls, local_tools, records, user

from haystack_integrations.common.callgate.testing import CallgateServer, free_port
from haystack_integrations.hooks.callgate import CallgateHook


@pytest.fixture
def restartable() -> Iterator[tuple[CallgateServer, str, str]]:
    """A server of its own, which a test may stop and start again on the same port and data."""
    server = CallgateServer.start(policy=POLICY)
    try:
        yield server, server.create_key("agent", "outage-agent"), server.create_key("admin", "outage-admin")
    finally:
        server.close()


def test_closed_refuses_every_call_while_the_server_is_unreachable() -> None:
    counter = Counter()
    gate = CallgateHook(url=f"http://127.0.0.1:{free_port()}", api_key=Secret.from_token("cg_unused"))
    generator = ScriptedChatGenerator(
        [calls(("read_note", {"name": "a"}, "d-1"), ("read_note", {"name": "b"}, None)), "the gate is down"]
    )
    agent = Agent(
        chat_generator=generator,
        tools=local_tools(counter),
        hooks={"before_tool": [gate.point("before_tool")], "after_tool": [gate.point("after_tool")]},
    )
    result = agent.run([user("read")])
    gate.close()

    assert counter.runs == []
    refusals = [m for m in result["messages"] if m.role == ChatRole.TOOL]
    assert len(refusals) == 2
    for message in refusals:
        error = json.loads(message.tool_call_result.result)["error"]
        assert error["kind"] == "gate-unavailable" and "cannot be reached" in error["message"]
    assert refusals[1].tool_call_result.origin.id.startswith("cg-")  # minted locally, carried by the result
    assert result["last_message"].text == "the gate is down"


def test_open_runs_calls_and_records_the_outage_when_the_server_is_back(
    restartable: tuple[CallgateServer, str, str], caplog: pytest.LogCaptureFixture
) -> None:
    server, agent_key, admin_key = restartable
    counter = Counter()

    def restart_server() -> str:
        """Bring the callgate server back."""
        server.launch()
        return "restarted"

    tools = [*local_tools(counter), create_tool_from_function(restart_server)]
    gate = CallgateHook(url=server.url, api_key=Secret.from_token(agent_key), fail_mode="open")
    generator = ScriptedChatGenerator(
        [
            calls(("read_note", {"name": "during"}, "o-1"), ("restart_server", {}, "o-2")),
            calls(("read_note", {"name": "after"}, "o-3"), ("delete_note", {"name": "x"}, "o-4")),
            "done",
        ]
    )
    agent = Agent(
        chat_generator=generator,
        tools=tools,
        hooks=gate.hooks(),
    )
    server.stop()
    context: dict[str, Any] = {"test": True}
    with caplog.at_level(logging.WARNING, logger="haystack_integrations.callgate"):
        agent.run([user("go")], hook_context=context)
    gate.close()

    warned = [record.getMessage() for record in caplog.records if record.name == "haystack_integrations.callgate"]
    assert any("cannot be reached" in text and "fail mode open" in text for text in warned), warned
    assert not any("list CallgateHook last" in text for text in warned), warned  # the outage, not hook order
    assert counter.names() == ["read_note", "read_note"]  # ran undecided, then decided (the delete was denied)
    bundle = server.client(admin_key).bundle(context["callgate_run_id"])
    decided = [record["call_id"] for record in records(bundle, "call-decision")]
    assert decided == ["o-3", "o-4"]
    gaps = records(bundle, "gap")
    gap_messages = [record for record in records(bundle, "model-message") if record["role"] == "callgate-gap"]
    print("outage recorded as:", "gap record" if gaps else "model-message record (the server has no gap route)")
    if gaps:
        assert gaps[0]["calls"] == 2 and gaps[0]["from_ts"] <= gaps[0]["to_ts"]
    else:  # a server without a gap route: the outage is kept as a message record
        assert len(gap_messages) == 1
    assert records(bundle, "run-end")[0]["status"] == "completed"


def test_closed_is_the_default() -> None:
    assert CallgateHook(api_key=Secret.from_token("x")).fail_mode == "closed"
    with pytest.raises(ValueError, match="fail_mode"):
        CallgateHook(api_key=Secret.from_token("x"), fail_mode="maybe")  # type: ignore[arg-type]


def test_a_bad_key_refuses_the_calls_with_its_reason(restartable: tuple[CallgateServer, str, str]) -> None:
    server, _, _ = restartable
    counter = Counter()
    gate = CallgateHook(url=server.url, api_key=Secret.from_token("cg_not-a-key"), fail_mode="open")
    generator = ScriptedChatGenerator([calls(("read_note", {"name": "a"}, "k-1")), "refused"])
    agent = Agent(
        chat_generator=generator,
        tools=local_tools(counter),
        hooks={"before_tool": [gate.point("before_tool")], "after_tool": [gate.point("after_tool")]},
    )
    result = agent.run([user("read")])
    gate.close()
    assert counter.runs == []  # a refusal is not an outage: fail mode open does not apply
    error = json.loads(result["messages"][-2].tool_call_result.result)["error"]
    assert error["kind"] == "unauthorized"


def test_a_restarted_server_learns_the_local_tools_again(restartable: tuple[CallgateServer, str, str]) -> None:
    server, agent_key, admin_key = restartable
    counter = Counter()

    def restart_server() -> str:
        """Restart the callgate server (it keeps the tool specs it was sent in its store)."""
        server.stop()
        server.launch()
        return "restarted"

    tools = [*local_tools(counter), create_tool_from_function(restart_server)]
    gate = CallgateHook(url=server.url, api_key=Secret.from_token(agent_key))
    generator = ScriptedChatGenerator(
        [
            calls(("read_note", {"name": "a"}, "r-1"), ("restart_server", {}, "r-2")),
            calls(("read_note", {"name": "b"}, "r-3")),
            "done",
        ]
    )
    agent = Agent(
        chat_generator=generator,
        tools=tools,
        hooks=gate.hooks(),
    )
    context: dict[str, Any] = {"test": True}
    agent.run([user("go")], hook_context=context)
    gate.close()

    assert counter.names() == ["read_note", "read_note"]
    bundle = server.client(admin_key).bundle(context["callgate_run_id"])
    third = [
        (r["attempt"], r["effect"], r.get("error_kind"))
        for r in records(bundle, "call-decision")
        if r["call_id"] == "r-3"
    ]
    # The restarted server knows the tools from its store: no spurious tool-not-found first.
    assert third == [(1, "allow", None)]
    ends = [(r["attempt"], r["outcome"]) for r in records(bundle, "call-end") if r["call_id"] == "r-3"]
    assert ends == [(1, "ok")]


def test_a_reviewers_edit_runs_when_the_policy_allows_edits() -> None:
    import threading
    import time

    policy = POLICY.replace("allow_edits: false", "allow_edits: true")
    with CallgateServer.start(policy=policy) as server:
        agent_key = server.create_key("agent", "edit-agent")
        reviewer = server.client(server.create_key("reviewer", "editor"))

        def edit() -> None:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                for approval in reviewer.list_approvals(status="pending"):
                    reviewer.approve(approval["id"], reason="shorter", arguments={"name": "a", "text": "short"})
                    return
                time.sleep(0.05)

        counter = Counter()
        gate = CallgateHook(url=server.url, api_key=Secret.from_token(agent_key))
        generator = ScriptedChatGenerator([calls(("write_note", {"name": "a", "text": "a long text"}, "e-1")), "ok"])
        agent = Agent(
            chat_generator=generator,
            tools=local_tools(counter),
            hooks={"before_tool": [gate.point("before_tool")], "after_tool": [gate.point("after_tool")]},
        )
        editor = threading.Thread(target=edit)
        editor.start()
        result = agent.run([user("write")])
        editor.join()
        gate.close()
    assert counter.runs == [("write_note", {"name": "a", "text": "short"})]
    notes = [m.text for m in result["messages"] if m.role.value == "user" and "reviewer changed" in (m.text or "")]
    assert len(notes) == 1  # the model is told why the arguments differ from what it asked
