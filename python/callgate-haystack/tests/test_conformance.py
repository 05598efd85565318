"""
The shared scenario table (test/conformance/scenarios.json, the one the TypeScript adapters run)
run through a real Haystack Agent governed by CallgateHook, against the real server.

Expectations are the table's, checked like test/conformance/check.ts does: one decision per
scripted call, its effect, error kind, minted flag and attempt; the approval's answer; exactly
one call-end with its outcome and kind; the grant consumed exactly when the tool ran; what the
model read; which tools ran. One difference, by design: a sub-agent's calls are recorded in a
child run (``parent_run_id``) of the calling run, so an agent-as-tool row reads both runs.

A row whose reviewer is ``in-app`` runs in Haystack's own human-in-the-loop flow: its
``ConfirmationHook`` (``CallgateConfirmationHook``) with ``CallgateConfirmationStrategy`` asks
callgate, and the person answers there with their reviewer key.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import REPOSITORY
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall
from haystack.tools import Tool
from haystack.utils import Secret
from support import Reviewer, ScriptedChatGenerator, check_history, records, user

from haystack_integrations.common.callgate.errors import ERROR_KINDS
from haystack_integrations.common.callgate.testing import CallgateServer
from haystack_integrations.hooks.callgate import CallgateConfirmationHook, CallgateConfirmationStrategy, CallgateHook

TABLE = json.loads((REPOSITORY / "test" / "conformance" / "scenarios.json").read_text(encoding="utf-8"))


def conformance_policy(wait: str) -> str:
    """The table's policy (test/conformance/world.ts, conformancePolicy)."""
    return f"""
version: 1
default: deny
approval: {{ ttl: 60s, wait: {wait}, allow_edits: false }}
rules:
  - id: reads
    match: {{ tools: [read_file] }}
    effect: allow
  - id: agents
    match: {{ tools: [researcher] }}
    effect: allow
  - id: small-invoices
    match: {{ tools: [send_invoice] }}
    when: args.amount <= 1000
    effect: allow
  - id: large-invoices
    match: {{ tools: [send_invoice] }}
    when: args.amount > 1000
    effect: ask
    reason: invoices over 1000 need a person
  - id: no-deletes
    match: {{ tools: [delete_file] }}
    effect: deny
    reason: deleting files is not allowed
"""


def schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


SPECS = {
    "read_file": ("Read a text file.", schema({"path": {"type": "string"}}, ["path"])),
    "delete_file": ("Delete a file.", schema({"path": {"type": "string"}}, ["path"])),
    "send_invoice": (
        "Send an invoice.",
        schema({"to": {"type": "string"}, "amount": {"type": "number"}}, ["to", "amount"]),
    ),
    "researcher": ("Ask the research agent a question.", schema({"question": {"type": "string"}}, ["question"])),
}


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, tuple[CallgateServer, str, str]]]:
    """One server per approval wait the table uses, each with an agent and a reviewer key."""
    started: dict[str, tuple[CallgateServer, str, str]] = {}
    try:
        for wait in sorted({scenario.get("approvalWait", "5s") for scenario in TABLE["scenarios"]}):
            server = CallgateServer.start(policy=conformance_policy(wait))
            started[wait] = (
                server,
                server.create_key("agent", "conformance-agent"),
                server.create_key("reviewer", "conformance-reviewer"),
            )
        yield started
    finally:
        for server, _, _ in started.values():
            server.close()


def tool_call(scripted: dict[str, Any]) -> ToolCall:
    """A scripted call as a Haystack chat generator would produce it."""
    text = scripted["arguments"]
    arguments: Any = text
    if not scripted.get("asText"):
        try:
            arguments = json.loads(text)
        except ValueError:
            arguments = text  # not JSON: given as the text itself, as the model wrote it
    return ToolCall(tool_name=scripted["tool"], arguments=arguments, id=scripted["id"])


def script(turns: list[dict[str, Any]]) -> list[ChatMessage | str]:
    replies: list[ChatMessage | str] = []
    for turn in turns:
        if "calls" in turn:
            replies.append(ChatMessage.from_assistant(tool_calls=[tool_call(call) for call in turn["calls"]]))
        else:
            replies.append(turn["text"])
    return [*replies, "done"]


def classify(message: ChatMessage | None) -> str:
    if message is None or message.tool_call_result is None:
        return "missing"
    try:
        value = json.loads(message.tool_call_result.result)
    except (TypeError, ValueError):
        return "result"
    kind = (
        value.get("error", {}).get("kind") if isinstance(value, dict) and isinstance(value.get("error"), dict) else None
    )
    return kind if kind in ERROR_KINDS else "result"


def build_tools(
    scenario: dict[str, Any], hook: CallgateHook, executions: list[str], sub_messages: list[ChatMessage]
) -> list[Tool]:
    def make(name: str) -> Tool:
        description, parameters = SPECS[name]

        def run(**arguments: Any) -> Any:
            executions.append(name)
            if name == "read_file":
                return f"contents of {arguments['path']}"
            if name == "delete_file":
                return f"deleted {arguments['path']}"
            return {"sent": True, "to": arguments["to"], "amount": arguments["amount"]}

        return Tool(name=name, description=description, parameters=parameters, function=run)

    tools = [make(name) for name in ("read_file", "delete_file", "send_invoice")]
    if scenario.get("subagent"):
        inner = Agent(
            chat_generator=ScriptedChatGenerator(script(scenario["subagent"])),
            tools=list(tools),
            hooks=hook.hooks(),
        )

        def researcher(question: str) -> str:
            result = inner.run([user(question)])
            sub_messages.extend(result["messages"])
            return result["last_message"].text or ""

        description, parameters = SPECS["researcher"]
        tools.append(Tool(name="researcher", description=description, parameters=parameters, function=researcher))
    return tools


def expected_calls(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's expectations with Haystack's differences applied (``frameworks.haystack.calls``)."""
    changes = scenario.get("frameworks", {}).get("haystack", {}).get("calls", {})
    return [{**want, **changes.get(str(index), {})} for index, want in enumerate(scenario["expect"])]


@pytest.mark.parametrize("scenario", TABLE["scenarios"], ids=[scenario["id"] for scenario in TABLE["scenarios"]])
def test_scenario(scenario: dict[str, Any], servers: dict[str, tuple[CallgateServer, str, str]]) -> None:
    unsupported = scenario.get("frameworks", {}).get("haystack", {}).get("unsupported")
    if unsupported:
        pytest.skip(f"Haystack cannot express this row: {unsupported}")
    expect = expected_calls(scenario)
    server, agent_key, reviewer_key = servers[scenario.get("approvalWait", "5s")]
    hook = CallgateHook(url=server.url, api_key=Secret.from_token(agent_key))
    executions: list[str] = []
    sub_messages: list[ChatMessage] = []
    generator = ScriptedChatGenerator(script(scenario["turns"]))
    tools = build_tools(scenario, hook, executions, sub_messages)
    in_app = scenario.get("reviewer") == "in-app"
    strategy = CallgateConfirmationStrategy(url=server.url, api_key=Secret.from_token(agent_key), tools=tools)
    agent = Agent(
        chat_generator=generator,
        tools=tools,
        # In the app's own flow: Haystack's ConfirmationHook asks callgate, a person answers there.
        hooks={"before_tool": [CallgateConfirmationHook(confirmation_strategies={"*": strategy})]}
        if in_app
        else hook.hooks(),
        streaming_callback=(lambda chunk: None) if scenario.get("streaming") else None,
    )
    context: dict[str, Any] = {"scenario": scenario["id"]}
    answers = {"approve": "approve", "deny": "deny", "in-app": "approve"}.get(scenario.get("reviewer", ""))
    with Reviewer(server.client(reviewer_key), {"send_invoice": answers} if answers else {}, delay=0.0):
        result = agent.run([user(scenario["title"])], hook_context=context)
    hook.close()
    strategy.close()

    admin = server.client(reviewer_key)
    outer = context["callgate_run"].run_id if in_app else context["callgate_run_id"]
    run_ids = [outer, *[run_id for run_id in hook.run_ids if run_id != outer]]
    all_records = [record for run_id in run_ids for record in admin.bundle(run_id)["records"]]
    for run_id in run_ids:
        assert len(records(admin.bundle(run_id), "run-end")) == 1
        assert admin.verify(admin.bundle(run_id), strict=True)["ok"]
    check_history(result["messages"])

    scripted = [
        call
        for turns in (scenario["turns"], scenario.get("subagent", []))
        for turn in turns
        for call in turn.get("calls", [])
    ]
    decisions = records({"records": all_records}, "call-decision")
    assert len(decisions) == len(expect)
    messages = [*result["messages"], *sub_messages]
    used: set[int] = set()
    seen: dict[str, int] = {}
    results_seen: dict[str, int] = {}
    for index, (want, call) in enumerate(zip(expect, scripted, strict=True)):
        # a call whose id the hook could not keep (a repeat within its step) is minted, as in check.ts
        given = call["id"] if call["id"] and not want.get("minted") else None
        nth = seen.get(given, 0) + 1 if given else 0
        if given:
            seen[given] = nth
        decision = next(
            record
            for position, record in enumerate(decisions)
            if position not in used
            and (
                record["call_id"] == given and record["attempt"] == nth
                if given
                else record["minted"] and record["tool"] == call["tool"]
            )
            and not used.add(position)  # type: ignore[func-returns-value]
        )
        where = f"{scenario['id']} call {index}"
        assert {
            "tool": decision["tool"],
            "effect": decision["effect"],
            "error_kind": decision.get("error_kind"),
            "minted": decision["minted"],
            "attempt": decision["attempt"],
        } == {
            "tool": want["tool"],
            "effect": want["decision"],
            "error_kind": want.get("errorKind"),
            "minted": want.get("minted", False),
            "attempt": want.get("attempt", 1),
        }, where
        approval = next(
            (r for r in all_records if r["type"] == "approval-response" and r["call_id"] == decision["call_id"]), None
        )
        assert (approval or {}).get("status") == want.get("approval"), where
        ends = [
            r
            for r in all_records
            if r["type"] == "call-end" and r["call_id"] == decision["call_id"] and r["attempt"] == decision["attempt"]
        ]
        assert len(ends) == 1, where
        end_kind = (
            None
            if want["outcome"] == "ok"
            else (want["modelSaw"] if want["modelSaw"] in ERROR_KINDS else want.get("errorKind"))
        )
        assert (ends[0]["outcome"], ends[0].get("error_kind")) == (want["outcome"], end_kind), where
        # A call-end claims the grant only for a call recorded as run (ok/error): one whose outcome
        # never came (decided-not-completed) does not, even if it ran on its grant.
        assert ends[0]["grant_consumed"] is (want["ran"] and want["outcome"] in ("ok", "error")), where
        tool_results = [
            m for m in messages if m.role == ChatRole.TOOL and m.tool_call_result.origin.id == decision["call_id"]
        ]
        position = results_seen.get(decision["call_id"], 0)
        results_seen[decision["call_id"]] = position + 1
        saw = classify(tool_results[position] if position < len(tool_results) else None)
        assert saw == want["modelSaw"], where

    want_ran = sorted(want["tool"] for want in expect if want["ran"] and want["tool"] != "researcher")
    assert sorted(executions) == want_ran
