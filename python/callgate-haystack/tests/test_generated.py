"""
Generated runs (hypothesis) through a real Haystack ``Agent`` with ``CallgateHook`` against the
real server, checked from outside after each run (docs/ledger.md, "Invariants of the record"):
no refused call's side effect happened, the next model request holds one result per call (the
scripted generator checks every history it receives), every decided call attempt has exactly one
``call-end``, and the bundle verifies ``--strict``.
"""

from __future__ import annotations

import os
from typing import Any

from conftest import Live
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage, ToolCall
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import Counter, ScriptedChatGenerator, local_tools, records, user

from haystack_integrations.hooks.callgate import CallgateHook

#: Tools a generated call names: allowed (read, fail), denied (delete), unknown.
TOOLS = ["read_note", "read_note", "fail", "delete_note", "format_disk"]
ARGUMENTS = ["valid", "valid", "wrong-type", "missing", "big-integer"]
IDS = ["fresh", "fresh", "missing", "duplicate", "reused"]

call_strategy = st.tuples(st.sampled_from(TOOLS), st.sampled_from(ARGUMENTS), st.sampled_from(IDS))
run_strategy = st.lists(st.lists(call_strategy, min_size=1, max_size=4), min_size=1, max_size=3)


def _arguments(tool: str, form: str, index: int) -> dict[str, Any]:
    key = "reason" if tool == "fail" else "name"
    if form == "wrong-type":
        return {key: index}
    if form == "missing":
        return {}
    if form == "big-integer":
        return {key: f"n-{index}", "n": 2**53 + 1}
    return {key: f"n-{index}"}


def _script(steps: list[list[tuple[str, str, str]]]) -> list[ChatMessage | str]:
    replies: list[ChatMessage | str] = []
    used: list[str] = []
    index = 0
    for number, step in enumerate(steps):
        tool_calls = []
        this_step: list[str] = []
        for tool, form, id_form in step:
            if id_form == "missing":
                call_id = None
            elif id_form == "duplicate" and this_step:
                call_id = this_step[-1]
            elif id_form == "reused" and used:
                call_id = used[-1]
            else:
                call_id = f"g{number}-{index}-{os.getpid()}"
            if call_id:
                this_step.append(call_id)
            tool_calls.append(ToolCall(tool_name=tool, arguments=_arguments(tool, form, index), id=call_id))
            index += 1
        used.extend(this_step)
        replies.append(ChatMessage.from_assistant(tool_calls=tool_calls))
    replies.append("done")
    return replies


@settings(
    max_examples=int(os.environ.get("CALLGATE_FUZZ_RUNS", "40")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=run_strategy)
def test_generated_runs_hold_the_invariants_of_the_record(live: Live, steps: list[list[tuple[str, str, str]]]) -> None:
    # Duplicated ids in one step are two attempts; Haystack answers both under one id, which the
    # history check reads as one call: keep the ids of a step distinct here.
    steps = [[call if call[2] != "duplicate" else (call[0], call[1], "fresh") for call in step] for step in steps]
    counter = Counter()
    hook = CallgateHook(url=live.url, api_key=_secret(live.agent_key), max_wait=None)
    agent = Agent(
        chat_generator=ScriptedChatGenerator(_script(steps)),
        tools=local_tools(counter),
        hooks={"before_tool": [hook], "after_tool": [hook], "after_run": [hook]},
    )
    context: dict[str, Any] = {"test": True}
    try:
        agent.run([user("go")], hook_context=context)
    except Exception:  # a tool that fails may end the run in Haystack; the record must still hold
        pass
    hook.close()
    admin = live.admin()
    bundle = admin.bundle(context["callgate_run_id"])
    decisions = records(bundle, "call-decision")
    ends = records(bundle, "call-end")
    for decision in decisions:
        matching = [e for e in ends if e["call_id"] == decision["call_id"] and e["attempt"] == decision["attempt"]]
        assert len(matching) == 1, (decision, matching)
        refused = decision["effect"] == "deny" or "error_kind" in decision
        if refused:
            assert matching[0]["outcome"] == "denied", (decision, matching)
    # No refused call ran: only allowed tools appear among the side effects.
    assert set(counter.names()) <= {"read_note", "fail"}, counter.names()
    ran = [e for e in ends if e["outcome"] in ("ok", "error")]
    assert len(counter.runs) <= len(ran) + len([e for e in ends if e["outcome"] == "decided-not-completed"])
    report = admin.verify(bundle, strict=True)
    assert report["ok"], report["failures"]


def _secret(value: str) -> Any:
    from haystack.utils import Secret

    return Secret.from_token(value)
