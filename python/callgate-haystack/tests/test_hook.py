"""CallgateHook against the real server: allow, deny, ask, ids, attempts, changes, failures, async."""

from __future__ import annotations

import asyncio
import gc
import json
from typing import Any

import pytest
from conftest import Live
from haystack.components.agents import Agent
from haystack.components.agents.state.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall
from haystack.hooks import hook as function_hook
from haystack.tools import AgentTool, Toolset
from haystack.tools.errors import ToolInvocationError
from support import Counter, Reviewer, ScriptedChatGenerator, calls, check_history, local_tools, records, user

from haystack_integrations.hooks.callgate import CallgateHook


def governed(generator: Any, tools: Any, hook: CallgateHook, **kwargs: Any) -> Agent:
    return Agent(
        chat_generator=generator,
        tools=tools,
        hooks=hook.hooks(),
        **kwargs,
    )


def tool_results(messages: list[ChatMessage]) -> dict[str, ChatMessage]:
    return {
        message.tool_call_result.origin.id: message
        for message in messages
        if message.role == ChatRole.TOOL and message.tool_call_result is not None
    }


def refusal_of(message: ChatMessage) -> dict[str, Any]:
    assert message.tool_call_result is not None and message.tool_call_result.error
    return json.loads(message.tool_call_result.result)["error"]


def run_agent(agent: Agent, text: str) -> tuple[dict[str, Any], str]:
    context: dict[str, Any] = {"test": True}
    result = agent.run([user(text)], hook_context=context)
    return result, context["callgate_run_id"]


def ends_by_call(bundle: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {record["call_id"]: record for record in records(bundle, "call-end")}


def test_allowed_call_runs_and_is_recorded(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    step = calls(("read_note", {"name": "a"}, "call-1"), text="let me read it")
    agent = governed(ScriptedChatGenerator([step, "it says hi"]), local_tools(counter), hook)
    result, run_id = run_agent(agent, "read a")

    assert counter.runs == [("read_note", {"name": "a"})]
    assert result["last_message"].text == "it says hi"
    bundle = live.admin().bundle(run_id)
    decision = records(bundle, "call-decision")[0]
    assert (decision["call_id"], decision["effect"], decision["rules"], decision["minted"]) == (
        "call-1",
        "allow",
        ["reads"],
        False,
    )
    end = ends_by_call(bundle)["call-1"]
    assert end["outcome"] == "ok" and end["attempt"] == 1 and end["result_commitment"].startswith("sha256:")
    messages = records(bundle, "model-message")
    assert messages[0]["tool_calls"][0]["call_id"] == "call-1" and messages[0]["content_commitment"]
    assert messages[-1]["tool_calls"] == []  # the final answer, recorded at after_run
    assert records(bundle, "run-end")[0]["status"] == "completed"
    assert live.admin().verify(bundle, strict=True)["ok"] is True


def test_denied_call_never_runs_and_the_model_reads_why(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    generator = ScriptedChatGenerator([calls(("delete_note", {"name": "a"}, "call-del")), "could not delete"])
    result, run_id = run_agent(governed(generator, local_tools(counter), hook), "delete a")

    assert counter.runs == []
    error = refusal_of(tool_results(result["messages"])["call-del"])
    assert error["kind"] == "policy-denied" and error["message"] == "deleting is not allowed"
    assert error["rules"] == ["deletes-denied"]
    assert result["last_message"].text == "could not delete"  # the run went on
    end = ends_by_call(live.admin().bundle(run_id))["call-del"]
    assert (end["outcome"], end["error_kind"]) == ("denied", "policy-denied")


def test_ask_approved_by_a_reviewer_runs_with_its_grant(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    generator = ScriptedChatGenerator([calls(("write_note", {"name": "a", "text": "hi"}, "call-w")), "written"])
    with Reviewer(live.reviewer(), {"write_note": "approve"}) as reviewer:
        result, run_id = run_agent(governed(generator, local_tools(counter), hook), "write a")

    assert counter.runs == [("write_note", {"name": "a", "text": "hi"})]
    assert len(reviewer.answered) == 1
    assert not tool_results(result["messages"])["call-w"].tool_call_result.error
    bundle = live.admin().bundle(run_id)
    response = records(bundle, "approval-response")[0]
    assert (response["status"], response["reviewer"]) == ("approved", "test-reviewer")
    end = ends_by_call(bundle)["call-w"]
    assert (end["outcome"], end["grant_consumed"]) == ("ok", True)
    assert live.admin().verify(bundle, strict=True)["ok"] is True


def test_ask_denied_by_a_reviewer_is_refused(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    generator = ScriptedChatGenerator([calls(("send_note", {"to": "b"}, "call-s")), "not sent"])
    tools = [*local_tools(counter), _send_note_tool(counter)]
    with Reviewer(live.reviewer(), {"send_note": "deny"}):
        result, run_id = run_agent(governed(generator, tools, hook), "send it")

    assert counter.runs == []
    error = refusal_of(tool_results(result["messages"])["call-s"])
    assert error["kind"] == "approval-denied" and error["approval_id"].startswith("ap-")
    assert error["message"] == "test-reviewer denied the call: not today"
    end = ends_by_call(live.admin().bundle(run_id))["call-s"]
    assert (end["outcome"], end["error_kind"]) == ("denied", "approval-denied")


def test_ask_unanswered_expires_at_the_policy_wait_limit(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    generator = ScriptedChatGenerator([calls(("write_note", {"name": "a", "text": "x"}, "call-t")), "gave up"])
    result, run_id = run_agent(governed(generator, local_tools(counter), hook), "write a")

    assert counter.runs == []
    error = refusal_of(tool_results(result["messages"])["call-t"])
    assert error["kind"] == "approval-expired" and error["approval_id"].startswith("ap-")
    statuses = [record["status"] for record in records(live.admin().bundle(run_id), "approval-response")]
    assert statuses == ["expired"]


def test_ask_still_pending_past_the_hook_limit_says_approval_required(live: Live, secret: Any) -> None:
    gate = CallgateHook(url=live.url, api_key=secret(live.agent_key), max_wait=0.3)
    try:
        counter = Counter()
        generator = ScriptedChatGenerator([calls(("write_note", {"name": "a", "text": "x"}, "call-p")), "waiting"])
        result, _ = run_agent(governed(generator, local_tools(counter), gate), "write a")
    finally:
        gate.close()
    error = refusal_of(tool_results(result["messages"])["call-p"])
    assert error["kind"] == "approval-pending"
    assert error["message"] == f"approval required: {error['approval_id']}"
    assert counter.runs == []


def test_parallel_calls_with_the_middle_one_denied(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    step = calls(
        ("read_note", {"name": "a"}, "p-1"),
        ("delete_note", {"name": "b"}, "p-2"),
        ("read_note", {"name": "c"}, "p-3"),
        text="three at once",
    )
    generator = ScriptedChatGenerator([step, "two read, one refused"])
    _, run_id = run_agent(governed(generator, local_tools(counter), hook), "do three things")

    assert sorted(counter.runs, key=str) == [("read_note", {"name": "a"}), ("read_note", {"name": "c"})]
    history = generator.received[1]  # what the next chat-generator call was given
    check_history(history)
    results = [m.tool_call_result.origin.id for m in history if m.role == ChatRole.TOOL]
    assert sorted(results) == ["p-1", "p-2", "p-3"]  # exactly one result per call id
    assert refusal_of(tool_results(history)["p-2"])["kind"] == "policy-denied"
    assistant_texts = [m.text for m in history if m.role == ChatRole.ASSISTANT and m.text]
    assert assistant_texts == ["three at once"]  # the text is not repeated
    ends = ends_by_call(live.admin().bundle(run_id))
    assert {key: ends[key]["outcome"] for key in ("p-1", "p-2", "p-3")} == {"p-1": "ok", "p-2": "denied", "p-3": "ok"}


def test_calls_without_ids_get_minted_ids_their_results_carry(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    step = calls(("read_note", {"name": "x"}, None), ("read_note", {"name": "y"}, None))
    generator = ScriptedChatGenerator([step, "both read"])
    result, run_id = run_agent(governed(generator, local_tools(counter), hook), "read x and y")

    assert len(counter.runs) == 2
    results = [m for m in result["messages"] if m.role == ChatRole.TOOL]
    minted = [m.tool_call_result.origin.id for m in results]
    assert all(call_id.startswith("cg-") for call_id in minted) and len(set(minted)) == 2
    by_name = {json.loads(m.tool_call_result.result)["name"]: m.tool_call_result.origin.id for m in results}
    bundle = live.admin().bundle(run_id)
    decisions = {record["call_id"]: record for record in records(bundle, "call-decision")}
    assert all(decisions[call_id]["minted"] for call_id in minted)
    ends = ends_by_call(bundle)
    assert ends[by_name["x"]]["outcome"] == ends[by_name["y"]]["outcome"] == "ok"
    assert ends[by_name["x"]]["arguments_digest"] != ends[by_name["y"]]["arguments_digest"]


def test_a_repeated_call_id_is_the_calls_next_attempt(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    generator = ScriptedChatGenerator(
        [calls(("read_note", {"name": "a"}, "again")), calls(("read_note", {"name": "b"}, "again")), "done"]
    )
    _, run_id = run_agent(governed(generator, local_tools(counter), hook), "read twice")

    assert len(counter.runs) == 2
    bundle = live.admin().bundle(run_id)
    assert [(r["call_id"], r["attempt"]) for r in records(bundle, "call-decision")] == [("again", 1), ("again", 2)]
    assert [(r["attempt"], r["outcome"]) for r in records(bundle, "call-end")] == [(1, "ok"), (2, "ok")]


def test_a_later_hook_changing_a_decided_call_is_recorded(live: Live, hook: CallgateHook) -> None:
    @function_hook
    def rewrite(state: State) -> None:
        last = state.data["messages"][-1]
        changed = [ToolCall(tool_name=c.tool_name, arguments={"name": "other"}, id=c.id) for c in last.tool_calls]
        new = ChatMessage.from_assistant(text=last.text, tool_calls=changed)
        state.set("messages", [*state.data["messages"][:-1], new], handler_override=replace_values)

    counter = Counter()
    generator = ScriptedChatGenerator([calls(("read_note", {"name": "a"}, "call-c")), "done"])
    agent = Agent(
        chat_generator=generator,
        tools=local_tools(counter),
        hooks={
            "before_tool": [hook.point("before_tool"), rewrite],
            "after_tool": [hook.point("after_tool")],
            "after_run": [hook.point("after_run")],
        },
    )
    _, run_id = run_agent(agent, "read a")

    assert counter.runs == [("read_note", {"name": "other"})]  # it ran, but…
    end = ends_by_call(live.admin().bundle(run_id))["call-c"]
    assert end["outcome"] == "changed-after-decision"  # …is recorded as changed


def test_raise_on_tool_failure_leaves_the_call_decided_not_completed(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    generator = ScriptedChatGenerator([calls(("fail", {"reason": "boom"}, "call-f")), "never"])
    agent = Agent(
        chat_generator=generator,
        tools=local_tools(counter),
        hooks={"before_tool": [hook.point("before_tool")], "after_tool": [hook.point("after_tool")]},
        raise_on_tool_invocation_failure=True,
    )
    context: dict[str, Any] = {"test": True}
    raised = False
    try:
        agent.run([user("fail")], hook_context=context)
    except ToolInvocationError:
        raised = True
    assert raised and counter.names() == ["fail"]
    gc.collect()  # the run's State is gone: the hook ends its run
    hook.flush()
    bundle = live.admin().bundle(context["callgate_run_id"])
    assert ends_by_call(bundle)["call-f"]["outcome"] == "decided-not-completed"
    assert records(bundle, "run-end")[0]["status"] == "failed"


def test_tool_errors_are_recorded_as_errors(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    generator = ScriptedChatGenerator([calls(("fail", {"reason": "boom"}, "call-e")), "it failed"])
    result, run_id = run_agent(governed(generator, local_tools(counter), hook), "fail")
    assert tool_results(result["messages"])["call-e"].tool_call_result.error
    end = ends_by_call(live.admin().bundle(run_id))["call-e"]
    assert (end["outcome"], end["error_kind"]) == ("error", "tool-error")


def test_agent_run_async(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    step = calls(
        ("read_note", {"name": "a"}, "as-1"),
        ("delete_note", {"name": "b"}, "as-2"),
        ("write_note", {"name": "c", "text": "t"}, "as-3"),
    )
    generator = ScriptedChatGenerator([step, "async done"])
    agent = governed(generator, local_tools(counter), hook)
    context: dict[str, Any] = {"test": True}
    with Reviewer(live.reviewer(), {"write_note": "approve"}):
        result = asyncio.run(agent.run_async([user("go")], hook_context=context))

    assert sorted(counter.names()) == ["read_note", "write_note"]
    assert refusal_of(tool_results(result["messages"])["as-2"])["kind"] == "policy-denied"
    ends = ends_by_call(live.admin().bundle(context["callgate_run_id"]))
    assert [ends[key]["outcome"] for key in ("as-1", "as-2", "as-3")] == ["ok", "denied", "ok"]
    assert ends["as-3"]["grant_consumed"] is True


def test_a_sub_agent_with_the_same_hook_records_a_child_run(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    inner = governed(
        ScriptedChatGenerator(
            [
                calls(("read_note", {"name": "inner"}, "in-1")),
                calls(("delete_note", {"name": "x"}, "in-2")),
                "inner done",
            ]
        ),
        local_tools(counter),
        hook,
    )
    helper = AgentTool(agent=inner, name="agent_helper", description="reads notes")
    task = {"messages": [{"role": "user", "content": "read the inner note"}]}
    outer = governed(ScriptedChatGenerator([calls(("agent_helper", task, "out-1")), "outer done"]), [helper], hook)
    result, outer_run = run_agent(outer, "delegate")

    assert counter.runs == [("read_note", {"name": "inner"})]
    assert "inner done" in tool_results(result["messages"])["out-1"].tool_call_result.result
    hook.flush()
    child_runs = [run_id for run_id in hook.run_ids if run_id != outer_run]
    assert len(child_runs) == 1
    child = live.admin().get_run(child_runs[0])
    assert child["run"]["parent_run_id"] == outer_run
    outcomes = {call["call_id"]: (call["decision"], call.get("outcome")) for call in child["calls"]}
    assert outcomes == {"in-1": ("allow", "ok"), "in-2": ("refused", "denied")}
    assert ends_by_call(live.admin().bundle(outer_run))["out-1"]["outcome"] == "ok"


def test_tools_from_a_toolset(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    generator = ScriptedChatGenerator(
        [calls(("read_note", {"name": "a"}, "ts-1"), ("delete_note", {"name": "a"}, "ts-2")), "done"]
    )
    _, run_id = run_agent(governed(generator, Toolset(local_tools(counter)), hook), "toolset")
    assert counter.names() == ["read_note"]
    ends = ends_by_call(live.admin().bundle(run_id))
    assert (ends["ts-1"]["outcome"], ends["ts-2"]["outcome"]) == ("ok", "denied")


def test_the_step_message_and_reasoning_are_recorded_before_decisions(live: Live, hook: CallgateHook) -> None:
    from haystack.dataclasses.chat_message import ReasoningContent

    counter = Counter()
    step = ChatMessage.from_assistant(
        text="checking",
        reasoning=ReasoningContent(reasoning_text="the user wants a", extra={"encrypted_content": "xyz"}),
        tool_calls=[ToolCall(tool_name="read_note", arguments={"name": "a"}, id="r-1")],
    )
    _, run_id = run_agent(governed(ScriptedChatGenerator([step, "ok"]), local_tools(counter), hook), "read")
    bundle = live.admin().bundle(run_id, openings=True)
    kinds = [record["type"] for record in bundle["records"]]
    assert kinds.index("model-message") < kinds.index("call-decision")
    message = records(bundle, "model-message")[0]
    opened = {opening["commitment"]: opening["value"] for opening in bundle.get("openings", [])}
    if message["content_commitment"] in opened:  # the vault keeps content only when it is on
        content = opened[message["content_commitment"]]
        assert content["text"] == "checking" and content["reasoning"][0]["extra"]["encrypted_content"] == "xyz"


def test_state_injected_values_are_not_decided(live: Live, hook: CallgateHook) -> None:
    from haystack.tools import create_tool_from_function

    seen: list[tuple[str, str]] = []

    def read_scoped(name: str, tenant: str) -> str:
        """Read a note of a tenant."""
        seen.append((name, tenant))
        return "ok"

    tool = create_tool_from_function(read_scoped, inputs_from_state={"tenant": "tenant"})
    generator = ScriptedChatGenerator([calls(("read_scoped", {"name": "a"}, "st-1")), "done"])
    agent = Agent(
        chat_generator=generator,
        tools=[tool],
        state_schema={"tenant": {"type": str}},
        hooks=hook.hooks(),
    )
    context: dict[str, Any] = {"test": True}
    agent.run([user("read")], tenant="acme", hook_context=context)
    assert seen == [("a", "acme")]
    spec = next(spec for spec in live.admin().list_tools() if spec["name"] == "read_scoped")
    assert "tenant" not in spec["inputSchema"].get("required", [])
    end = ends_by_call(live.admin().bundle(context["callgate_run_id"]))["st-1"]
    assert end["outcome"] == "ok"  # not changed-after-decision: the injected value is not the model's


def _send_note_tool(counter: Counter):
    from haystack.tools import create_tool_from_function

    def send_note(to: str) -> str:
        """Send a note."""
        counter.record("send_note", {"to": to})
        return "sent"

    return create_tool_from_function(send_note)


def test_the_hook_refuses_other_hook_points(hook: CallgateHook) -> None:
    with pytest.raises(ValueError, match="only supports"):
        Agent(chat_generator=ScriptedChatGenerator([]), tools=local_tools(Counter()), hooks={"before_llm": [hook]})


def test_a_cancelled_async_run_withdraws_its_pending_approval(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    generator = ScriptedChatGenerator([calls(("write_note", {"name": "w", "text": "t"}, "cx-1")), "never"])
    agent = governed(generator, local_tools(counter), hook)
    context: dict[str, Any] = {"test": True}

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(agent.run_async([user("write")], hook_context=context), timeout=1.0)

    asyncio.run(main())
    hook.flush()
    assert counter.runs == []
    approvals = live.reviewer().list_approvals(run_id=context["callgate_run_id"])
    assert [(a["call_id"], a["status"]) for a in approvals] == [("cx-1", "withdrawn")]
