"""
Effective arguments through a real Haystack Agent against the real server: a tool reading a
parameter from ``State`` (``inputs_from_state``) runs with a value the model did not send; the
call's records carry the digest of the arguments that ran beside the model's, and the reviewer of
an ask is shown the injected value (the decisions answer carries it with the approval).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from conftest import Live
from haystack.components.agents import Agent
from haystack.tools import Tool
from support import Reviewer, ScriptedChatGenerator, calls, records, user

from haystack_integrations.hooks.callgate import CallgateHook


def _digest(value: dict[str, Any]) -> str:
    # RFC 8785 for these plain string/number objects: sorted keys, no spaces.
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_values_from_state_are_recorded_beside_the_model_arguments(live: Live, secret: Any) -> None:
    ran: list[dict[str, Any]] = []

    def read_note(name: str, tenant: str) -> str:
        ran.append({"name": name, "tenant": tenant})
        return f"{tenant}/{name}"

    def write_note(name: str, tenant: str) -> str:
        ran.append({"name": name, "tenant": tenant, "wrote": True})
        return "written"

    def tool(name: str, function: Any) -> Tool:
        return Tool(
            name=name,
            description=name,
            parameters={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            function=function,
            inputs_from_state={"tenant": "tenant"},
        )

    hook = CallgateHook(url=live.url, api_key=secret(live.agent_key))
    agent = Agent(
        chat_generator=ScriptedChatGenerator(
            [calls(("read_tenant_note", {"name": "a"}, "ea-1"), ("write_tenant_note", {"name": "b"}, "ea-2")), "done"]
        ),
        tools=[tool("read_tenant_note", read_note), tool("write_tenant_note", write_note)],
        state_schema={"tenant": {"type": str}},
        hooks=hook.hooks(),
    )
    context: dict[str, Any] = {"test": True}
    with Reviewer(live.reviewer(), {"write_tenant_note": "approve"}) as reviewer:
        agent.run([user("go")], hook_context=context, tenant="acme")
    hook.close()
    assert ran == [{"name": "a", "tenant": "acme"}, {"name": "b", "tenant": "acme", "wrote": True}]
    # (Tool names of their own: the server keeps the first spec it is sent for a name.)
    # The reviewer saw which value Haystack adds, apart from the model's arguments.
    [asked] = reviewer.answered
    assert asked["arguments"] == {"name": "b"}
    assert asked.get("injected") == {"tenant": "acme"}

    bundle = live.admin().bundle(context["callgate_run_id"])
    decisions = {record["call_id"]: record for record in records(bundle, "call-decision")}
    effective = {record["call_id"]: record for record in records(bundle, "effective-arguments")}
    for call_id, name in (("ea-1", "a"), ("ea-2", "b")):
        # Digests are the gate's own (keyed alike in a version 2 record): the model's is the decision's.
        assert effective[call_id]["arguments_digest"] == decisions[call_id]["arguments_digest"]
        model, ran_with = effective[call_id]["arguments_digest"], effective[call_id]["effective_arguments_digest"]
        assert ran_with != model and ran_with.split(":")[0] == model.split(":")[0]
        if model.startswith("sha256:"):  # an unkeyed (version 1) record: the plain digests
            assert model == _digest({"name": name})
            assert ran_with == _digest({"name": name, "tenant": "acme"})
        assert effective[call_id]["injected"] == ["tenant"]
    assert live.admin().verify(bundle, strict=True)["ok"]
