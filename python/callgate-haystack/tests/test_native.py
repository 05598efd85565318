"""
Haystack-native behaviour against the real server: unknown tools as Haystack reports them, the
hook points object per point with one shared gate through to_dict / from_dict and a YAML
pipeline round trip, and a clear word when hook_context cannot carry the run id.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from conftest import Live
from haystack import Pipeline
from haystack.components.agents import Agent
from haystack.components.agents.tool_calling import ToolNotFoundException
from haystack.core.errors import SerializationError
from haystack.core.serialization_security import allow_deserialization_module
from haystack.dataclasses import ChatRole
from haystack.tools import create_tool_from_function
from haystack.utils import Secret
from serialization_tools import delete_note, read_note
from support import Counter, ScriptedChatGenerator, calls, check_history, local_tools, records, user

from haystack_integrations.hooks.callgate import (
    CallgateConfirmationHook,
    CallgateConfirmationStrategy,
    CallgateHook,
    CallgateHookPoint,
)
from haystack_integrations.tools.callgate import CallgateToolset, callgate_toolset

allow_deserialization_module("serialization_tools")
allow_deserialization_module("support")


def ends(bundle: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {record["call_id"]: record for record in records(bundle, "call-end")}


# --- unknown tools --------------------------------------------------------------------------


def test_an_unknown_tool_reads_as_haystack_says_it_and_is_recorded(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    generator = ScriptedChatGenerator([calls(("no_such_tool", {"x": 1}, "u-1"), ("read_note", {"name": "a"}, "u-2"))])
    agent = Agent(chat_generator=generator, tools=local_tools(counter), hooks=hook.hooks())
    context: dict[str, Any] = {"callgate_run_id": None}
    result = agent.run([user("go")], hook_context=context)

    check_history(result["messages"])
    refused = next(m for m in result["messages"] if m.role == ChatRole.TOOL and m.tool_call_result.origin.id == "u-1")
    assert refused.tool_call_result.error
    error = json.loads(refused.tool_call_result.result)["error"]
    expected = str(ToolNotFoundException("no_such_tool", ["read_note", "write_note", "delete_note", "fail"]))
    assert error["kind"] == "tool-not-found" and error["message"] == expected
    assert error["available_tools"] == ["read_note", "write_note", "delete_note", "fail"]
    assert counter.names() == ["read_note"]
    bundle = live.admin().bundle(context["callgate_run_id"])
    assert (ends(bundle)["u-1"]["outcome"], ends(bundle)["u-1"]["error_kind"]) == ("denied", "tool-not-found")
    assert live.admin().verify(bundle, strict=True)["ok"] is True


def test_an_unknown_tool_raises_haystacks_exception_when_asked_to(live: Live, hook: CallgateHook) -> None:
    generator = ScriptedChatGenerator([calls(("no_such_tool", {}, "u-3")), "never"])
    agent = Agent(
        chat_generator=generator,
        tools=local_tools(Counter()),
        hooks=hook.hooks(),
        raise_on_tool_invocation_failure=True,
    )
    context: dict[str, Any] = {"callgate_run_id": None}
    with pytest.raises(ToolNotFoundException, match=r"Tool 'no_such_tool' not found\. Available tools: read_note"):
        agent.run([user("go")], hook_context=context)
    hook.flush()
    end = ends(live.admin().bundle(context["callgate_run_id"]))["u-3"]
    assert (end["outcome"], end["error_kind"]) == ("denied", "tool-not-found")


def test_nobody_is_asked_to_approve_a_tool_the_agent_lacks(live: Live, hook: CallgateHook) -> None:
    spec = {"name": "write_memo", "description": "Write a memo.", "inputSchema": {"type": "object"}}
    client = live.agent()
    other = client.start_run("haystack")["run_id"]
    client.decide(other, [{"id": "m-0", "tool": "read_memo", "arguments": {}}], tools=[spec])  # the server knows it
    client.end_run(other)
    generator = ScriptedChatGenerator([calls(("write_memo", {"text": "hi"}, "m-1")), "done"])
    agent = Agent(chat_generator=generator, tools=local_tools(Counter()), hooks=hook.hooks())
    context: dict[str, Any] = {"callgate_run_id": None}
    agent.run([user("go")], hook_context=context)  # the policy asks for write_*: it would wait 4 s
    hook.flush()

    bundle = live.admin().bundle(context["callgate_run_id"])
    assert [record["status"] for record in records(bundle, "approval-response")] == ["withdrawn"]
    assert (ends(bundle)["m-1"]["outcome"], ends(bundle)["m-1"]["error_kind"]) == ("denied", "tool-not-found")


def test_the_confirmation_hook_records_unknown_calls_too(live: Live, secret: Any) -> None:
    counter = Counter()
    tools = local_tools(counter)
    strategy = CallgateConfirmationStrategy(url=live.url, api_key=secret(live.agent_key), tools=tools)
    generator = ScriptedChatGenerator([calls(("no_such_tool", {}, "cu-1"), ("read_note", {"name": "a"}, "cu-2"))])
    agent = Agent(
        chat_generator=generator,
        tools=tools,
        hooks={"before_tool": [CallgateConfirmationHook(confirmation_strategies={"*": strategy})]},
    )
    context: dict[str, Any] = {"test": True}
    result = agent.run([user("go")], hook_context=context)

    unknown = next(m for m in result["messages"] if m.role == ChatRole.TOOL and m.tool_call_result.origin.id == "cu-1")
    assert unknown.tool_call_result.error and "not found. Available tools" in unknown.tool_call_result.result
    bundle = live.admin().bundle(context["callgate_run"].run_id)
    decided = {record["call_id"]: record["effect"] for record in records(bundle, "call-decision")}
    assert set(decided) == {"cu-1", "cu-2"}
    assert (ends(bundle)["cu-1"]["outcome"], ends(bundle)["cu-1"]["error_kind"]) == ("denied", "tool-not-found")
    serializable = CallgateConfirmationStrategy(url=live.url)
    again = CallgateConfirmationHook.from_dict(
        CallgateConfirmationHook(confirmation_strategies={"*": serializable}).to_dict()
    )
    assert isinstance(again, CallgateConfirmationHook)


def test_a_repeated_id_in_one_step_gets_a_minted_one(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    step = calls(("read_note", {"name": "a"}, "r-1"), ("read_note", {"name": "b"}, "r-1"))
    agent = Agent(chat_generator=ScriptedChatGenerator([step, "done"]), tools=local_tools(counter), hooks=hook.hooks())
    context: dict[str, Any] = {"callgate_run_id": None}
    result = agent.run([user("go")], hook_context=context)

    assert sorted(arguments["name"] for _, arguments in counter.runs) == ["a", "b"]
    check_history(result["messages"])
    ids = [m.tool_call_result.origin.id for m in result["messages"] if m.role == ChatRole.TOOL]
    assert ids[0] == "r-1" and ids[1].startswith("cg-") and len(set(ids)) == 2  # one result per id
    decisions = records(live.admin().bundle(context["callgate_run_id"]), "call-decision")
    assert [(d["call_id"] == "r-1", d["minted"], d["attempt"]) for d in decisions] == [
        (True, False, 1),
        (False, True, 1),
    ]


# --- serialization --------------------------------------------------------------------------


def serializable_agent(url: str) -> Agent:
    gate = CallgateHook(url=url, api_key=Secret.from_env_var("CALLGATE_TEST_AGENT_KEY"), max_wait=5.0)
    tools = [create_tool_from_function(read_note), create_tool_from_function(delete_note)]
    strategy = CallgateConfirmationStrategy(url=url, api_key=Secret.from_env_var("CALLGATE_TEST_AGENT_KEY"))
    hooks = gate.hooks()
    return Agent(
        chat_generator=ScriptedChatGenerator([]),
        tools=[
            *tools,
            callgate_toolset(url=url, profile="observe", api_key=Secret.from_env_var("CALLGATE_TEST_AGENT_KEY")),
        ],
        hooks={
            "before_tool": [
                CallgateConfirmationHook(confirmation_strategies={"delete_note": strategy}),
                *hooks["before_tool"],
            ],
            "after_tool": hooks["after_tool"],
            "after_run": hooks["after_run"],
        },
    )


def shared_gates(agent: Agent) -> set[int]:
    return {id(hook.gate) for hooks in agent.hooks.values() for hook in hooks if isinstance(hook, CallgateHookPoint)}


def test_an_agent_with_the_gate_round_trips_with_one_shared_gate(live: Live) -> None:
    agent = serializable_agent(live.url)
    data = agent.to_dict()
    serialized = data["init_parameters"]["hooks"]
    assert serialized["before_tool"][1]["init_parameters"]["point"] == "before_tool"
    gate_data = serialized["after_run"][0]["init_parameters"]["gate"]["init_parameters"]
    assert gate_data["api_key"] == {"type": "env_var", "env_vars": ["CALLGATE_TEST_AGENT_KEY"], "strict": True}
    assert "token" not in json.dumps(data)

    again = Agent.from_dict(data)
    assert len(shared_gates(again)) == 1  # three entries, one gate: one run per agent run
    (gate_id,) = shared_gates(again)
    assert gate_id != id(agent.hooks["after_run"][0].gate)  # built from the configuration, not the original
    toolset = next(tool for tool in again.tools if isinstance(tool, CallgateToolset))
    assert toolset.gateway_url == f"{live.url}/mcp/observe" and not getattr(toolset, "_warmup_called", False)
    strategy = again.hooks["before_tool"][0].confirmation_strategies["delete_note"]
    assert isinstance(strategy, CallgateConfirmationStrategy) and strategy.url == live.url
    with pytest.raises(ValueError, match="only"):
        Agent(chat_generator=ScriptedChatGenerator([]), hooks={"after_tool": [again.hooks["after_run"][0]]})


def test_a_yaml_pipeline_round_trip_runs_one_governed_run(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALLGATE_TEST_AGENT_KEY", live.agent_key)
    pipeline = Pipeline()
    pipeline.add_component("agent", serializable_agent(live.url))
    loaded = Pipeline.loads(pipeline.dumps())
    agent: Agent = loaded.get_component("agent")
    assert len(shared_gates(agent)) == 1
    agent.tools = [tool for tool in agent.tools if not isinstance(tool, CallgateToolset)]  # no gateway here
    agent.chat_generator.replies = [
        calls(("read_note", {"name": "a"}, "y-1"), ("delete_note", {"name": "b"}, "y-2")),
        "done",
    ]
    context: dict[str, Any] = {"callgate_run_id": None}
    result = agent.run([user("go")], hook_context=context)

    assert result["last_message"].text == "done"
    (gate,) = {hook.gate for hook in agent.hooks["after_run"]}
    assert gate.run_ids[-1] == context["callgate_run_id"]
    bundle = live.admin().bundle(context["callgate_run_id"])
    assert "y-1" in {record["call_id"] for record in records(bundle, "call-end")}
    deleted = next(m for m in result["messages"] if m.role == ChatRole.TOOL and m.tool_call_result.origin.id == "y-2")
    assert deleted.tool_call_result.error  # the loaded strategy refused it (delete_* is denied)
    assert records(bundle, "run-end")[0]["status"] == "completed"  # one run, ended at after_run


def test_a_token_key_is_refused_with_what_to_use_instead() -> None:
    gate = CallgateHook(api_key=Secret.from_token("cg_x"))
    agent = Agent(chat_generator=ScriptedChatGenerator([]), hooks=gate.hooks())
    with pytest.raises(SerializationError, match=r"Secret\.from_env_var"):
        agent.to_dict()


def test_the_old_entry_point_still_works_and_round_trips(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALLGATE_TEST_AGENT_KEY", live.agent_key)
    gate = CallgateHook(url=live.url, api_key=Secret.from_env_var("CALLGATE_TEST_AGENT_KEY"))
    hooks = {"before_tool": [gate], "after_tool": [gate], "after_run": [gate]}
    tools = [create_tool_from_function(read_note), create_tool_from_function(delete_note)]
    agent = Agent(chat_generator=ScriptedChatGenerator([]), tools=tools, hooks=hooks)
    again = Agent.from_dict(agent.to_dict())
    assert again.hooks["before_tool"][0] is again.hooks["after_tool"][0]  # shared again

    agent.chat_generator.replies = [calls(("read_note", {"name": "a"}, "o-1"), ("delete_note", {"name": "b"}, "o-2"))]
    context: dict[str, Any] = {"callgate_run_id": None}
    with pytest.warns(DeprecationWarning, match=r"gate\.hooks\(\)"):
        result = agent.run([user("go")], hook_context=context)  # the point is read from Haystack's call stack
    read = next(m for m in result["messages"] if m.role == ChatRole.TOOL and m.tool_call_result.origin.id == "o-1")
    assert "contents of a" in read.tool_call_result.result
    bundle = live.admin().bundle(context["callgate_run_id"])
    assert [(r["call_id"], r["outcome"]) for r in records(bundle, "call-end")] == [("o-2", "denied"), ("o-1", "ok")]
    assert records(bundle, "run-end")[0]["status"] == "completed"


# --- hook_context ---------------------------------------------------------------------------


def test_an_empty_hook_context_is_told_what_to_pass(live: Live, secret: Any, caplog: pytest.LogCaptureFixture) -> None:
    gate = CallgateHook(url=live.url, api_key=secret(live.agent_key))
    generator = ScriptedChatGenerator([calls(("read_note", {"name": "a"}, "e-1")), "done"])
    agent = Agent(chat_generator=generator, tools=local_tools(Counter()), hooks=gate.hooks())
    empty: dict[str, Any] = {}
    with caplog.at_level(logging.WARNING, logger="haystack_integrations.callgate"):
        agent.run([user("go")], hook_context=empty)
    gate.close()
    assert empty == {}  # Haystack replaced it: nothing can be written back
    warned = " ".join(record.getMessage() for record in caplog.records)
    assert "hook_context={'callgate_run_id': None}" in warned and "last_run_id" in warned
