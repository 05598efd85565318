"""
Resume after an ask, across two processes against one real server: a support agent asks on
Friday (its call refused as approval-pending, the process stops), a reviewer answers over the
weekend, and Monday's agent run carrying the run id (or the approval id) takes that answer
instead of asking again.
"""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.utils import Secret
from support import Counter, ScriptedChatGenerator, calls, local_tools, records, user

from haystack_integrations.common.callgate.errors import Conflict
from haystack_integrations.common.callgate.testing import CallgateServer
from haystack_integrations.hooks.callgate import CallgateConfirmationHook, CallgateConfirmationStrategy, CallgateHook

RESUME_POLICY = """
version: 1
default: deny
approval: { ttl: 120s, wait: 60s, allow_edits: false }
rules:
  - id: reads
    match: { tools: ["read_*"] }
    effect: allow
  - id: writes-ask
    match: { tools: ["write_*"] }
    effect: ask
    reason: writes need a person
"""

AGENT = Path(__file__).parent / "resume_agent.py"


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[CallgateServer, str, str]]:
    started = CallgateServer.start(policy=RESUME_POLICY)
    try:
        yield started, started.create_key("agent", "support-agent"), started.create_key("reviewer", "weekend-reviewer")
    finally:
        started.close()


def agent_process(url: str, key: str, context: dict[str, Any], calls: list[list[Any]]) -> dict[str, Any]:
    """Runs one agent in its own Python process; returns what it printed."""
    done = subprocess.run(
        [sys.executable, str(AGENT), url, key, json.dumps(context), json.dumps(calls)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def error_of(result: dict[str, Any]) -> dict[str, Any]:
    assert result["error"], result
    return json.loads(result["text"])["error"]


def test_monday_takes_fridays_answers_by_run_id(server: tuple[CallgateServer, str, str]) -> None:
    callgate, agent_key, reviewer_key = server
    calls = [
        ["w-1", "write_note", {"name": "refund", "text": "approved"}],
        ["w-2", "write_note", {"name": "b", "text": "x"}],
    ]
    friday = agent_process(callgate.url, agent_key, {"callgate_run_id": None}, calls)
    assert friday["ran"] == []
    pending = {call_id: error_of(result) for call_id, result in friday["results"].items()}
    assert {error["kind"] for error in pending.values()} == {"approval-pending"}
    run_id = friday["context"]["callgate_run_id"]
    assert sorted(friday["context"]["callgate_pending_approvals"]) == sorted(e["approval_id"] for e in pending.values())

    reviewer = callgate.client(reviewer_key)
    reviewer.approve(pending["w-1"]["approval_id"], reason="refund is fine")
    reviewer.deny(pending["w-2"]["approval_id"], reason="not this one")

    started = time.monotonic()
    monday = agent_process(callgate.url, agent_key, {"callgate_run_id": run_id}, calls)
    assert time.monotonic() - started < 30  # nobody was asked again, nothing waited for the 60 s limit
    assert monday["context"]["callgate_run_id"] == run_id
    assert monday["ran"] == ["write_note"]
    assert not monday["results"]["w-1"]["error"]
    denied = error_of(monday["results"]["w-2"])
    assert denied["kind"] == "approval-denied" and "not this one" in denied["message"]

    bundle = callgate.client(reviewer_key).bundle(run_id)
    assert len(records(bundle, "approval-request")) == 2  # asked once each, on Friday
    ends = {record["call_id"]: record for record in records(bundle, "call-end")}
    assert (ends["w-1"]["outcome"], ends["w-1"]["grant_consumed"], ends["w-1"]["attempt"]) == ("ok", True, 1)
    assert (ends["w-2"]["outcome"], ends["w-2"]["error_kind"]) == ("denied", "approval-denied")
    assert len(records(bundle, "call-end")) == 2 and len(records(bundle, "run-end")) == 1
    assert callgate.client(reviewer_key).verify(bundle, strict=True)["ok"] is True


def test_monday_resumes_by_approval_id(server: tuple[CallgateServer, str, str]) -> None:
    callgate, agent_key, reviewer_key = server
    calls = [["w-9", "write_note", {"name": "ticket-9", "text": "closed"}]]
    friday = agent_process(callgate.url, agent_key, {"ticket": "9"}, calls)
    approval_id = error_of(friday["results"]["w-9"])["approval_id"]
    callgate.client(reviewer_key).approve(approval_id, reason="ok")

    monday = agent_process(callgate.url, agent_key, {"callgate_approval_id": approval_id}, calls)
    assert monday["ran"] == ["write_note"]
    assert monday["context"]["callgate_run_id"] == friday["context"]["callgate_run_id"]
    bundle = callgate.client(reviewer_key).bundle(monday["context"]["callgate_run_id"])
    assert len(records(bundle, "approval-request")) == 1
    assert [record["outcome"] for record in records(bundle, "call-end")] == ["ok"]


def test_a_later_async_run_in_the_same_process_resumes(server: tuple[CallgateServer, str, str]) -> None:
    callgate, agent_key, reviewer_key = server
    gate = CallgateHook(url=callgate.url, api_key=Secret.from_token(agent_key), max_wait=0.3)
    counter = Counter()
    tools = local_tools(counter)

    def step(call_id: str, text: str) -> Any:
        return calls(("write_note", {"name": "n", "text": text}, call_id))

    friday = Agent(chat_generator=ScriptedChatGenerator([step("a-1", "t"), "later"]), tools=tools, hooks=gate.hooks())
    context: dict[str, Any] = {"callgate_run_id": None}
    friday.run([user("go")], hook_context=context)
    (approval_id,) = context["callgate_pending_approvals"]
    callgate.client(reviewer_key).approve(approval_id)

    # the same call runs on its approval; a call with other arguments under another id is decided (asks) afresh
    monday = Agent(
        chat_generator=ScriptedChatGenerator([step("a-1", "t"), step("a-2", "other"), "done"]),
        tools=tools,
        hooks=gate.hooks(),
    )
    resumed: dict[str, Any] = {"callgate_run_id": context["callgate_run_id"]}
    asyncio.run(monday.run_async([user("go")], hook_context=resumed))
    gate.close()

    assert counter.runs == [("write_note", {"name": "n", "text": "t"})]
    (waiting,) = resumed["callgate_pending_approvals"]  # a-2 waits now, asked once
    assert waiting != approval_id
    bundle = callgate.client(reviewer_key).bundle(context["callgate_run_id"])
    asked = [record["call_id"] for record in records(bundle, "approval-request")]
    assert asked == ["a-1", "a-2"]
    assert [(r["call_id"], r["outcome"]) for r in records(bundle, "call-end")] == [("a-1", "ok")]


def test_a_resumed_call_with_other_arguments_is_asked_again_and_its_old_attempt_ends(
    server: tuple[CallgateServer, str, str],
) -> None:
    callgate, agent_key, reviewer_key = server
    gate = CallgateHook(url=callgate.url, api_key=Secret.from_token(agent_key), max_wait=0.3)
    tools = local_tools(Counter())
    friday_step = calls(("write_note", {"name": "n", "text": "friday"}, "s-1"))
    friday = Agent(chat_generator=ScriptedChatGenerator([friday_step, "later"]), tools=tools, hooks=gate.hooks())
    context: dict[str, Any] = {"callgate_run_id": None}
    friday.run([user("go")], hook_context=context)
    run_id = context["callgate_run_id"]

    monday_step = calls(("write_note", {"name": "n", "text": "monday"}, "s-1"))
    monday = Agent(chat_generator=ScriptedChatGenerator([monday_step, "later"]), tools=tools, hooks=gate.hooks())
    monday.run([user("go")], hook_context={"callgate_run_id": run_id})
    gate.close()

    reviewer = callgate.client(reviewer_key)
    bundle = reviewer.bundle(run_id)
    assert [record["status"] for record in records(bundle, "approval-response")] == ["withdrawn"]
    assert [record["call_id"] for record in records(bundle, "approval-request")] == ["s-1", "s-1"]  # asked anew
    ends = [(r["attempt"], r["outcome"], r["error_kind"]) for r in records(bundle, "call-end")]
    assert ends == [(1, "denied", "approval-expired")]  # the old attempt ended before the new one was asked
    callgate.client(agent_key).end_run(run_id)  # nobody resumes it again: the waiting attempt ends with the run
    assert reviewer.verify(reviewer.bundle(run_id), strict=True)["ok"] is True


def test_resuming_an_ended_run_is_refused_with_what_to_do(server: tuple[CallgateServer, str, str]) -> None:
    callgate, agent_key, _ = server
    client = callgate.client(agent_key)
    ended = client.start_run("haystack")["run_id"]
    client.end_run(ended)
    gate = CallgateHook(url=callgate.url, api_key=Secret.from_token(agent_key))
    agent = Agent(
        chat_generator=ScriptedChatGenerator([calls(("read_note", {"name": "a"}, "e-1")), "done"]),
        tools=local_tools(Counter()),
        hooks=gate.hooks(),
    )
    with pytest.raises(Conflict, match="cannot be resumed: pass hook_context without"):
        agent.run([user("go")], hook_context={"callgate_run_id": ended})
    gate.close()


def test_the_confirmation_strategy_resumes_too(server: tuple[CallgateServer, str, str]) -> None:
    callgate, agent_key, reviewer_key = server
    counter = Counter()
    tools = local_tools(counter)
    strategy = CallgateConfirmationStrategy(
        url=callgate.url, api_key=Secret.from_token(agent_key), tools=tools, max_wait=0.3
    )

    def agent(script: list[Any]) -> Agent:
        confirmation = CallgateConfirmationHook(confirmation_strategies={"*": strategy})
        return Agent(chat_generator=ScriptedChatGenerator(script), tools=tools, hooks={"before_tool": [confirmation]})

    step = calls(("write_note", {"name": "n", "text": "t"}, "cs-1"))
    friday: dict[str, Any] = {"ticket": "1"}
    agent([step, "later"]).run([user("go")], hook_context=friday)
    run_id, (approval_id,) = friday["callgate_run"].run_id, friday["callgate_pending_approvals"]
    del friday  # the agent run's context is gone: its run stays open, a call waits in it
    gc.collect()
    callgate.client(reviewer_key).approve(approval_id)

    monday: dict[str, Any] = {"callgate_run_id": run_id}
    asyncio.run(
        agent([calls(("write_note", {"name": "n", "text": "t"}, "cs-1")), "done"]).run_async(
            [user("go")], hook_context=monday
        )
    )

    assert counter.runs == [("write_note", {"name": "n", "text": "t"})]
    bundle = callgate.client(reviewer_key).bundle(run_id)
    assert len(records(bundle, "approval-request")) == 1  # not asked again
    assert records(bundle, "run-end") == []  # a run of the caller's own: ended by the caller
