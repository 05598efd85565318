"""The server's answers, read by this package, validate against the protocol's JSON Schemas."""

from __future__ import annotations

import json
from typing import Any

from conftest import SCHEMAS, Live
from haystack.components.agents import Agent
from jsonschema import Draft202012Validator
from support import Counter, Reviewer, ScriptedChatGenerator, calls, local_tools, user

from haystack_integrations.common.callgate.errors import ERROR_KINDS, Unauthorized
from haystack_integrations.hooks.callgate import CallgateHook


def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8")))


def test_error_kinds_match_the_protocol() -> None:
    assert validator("error-kind").schema["enum"] == list(ERROR_KINDS)


def test_verdicts_grants_approvals_errors_and_bundles(live: Live, hook: CallgateHook) -> None:
    client = live.agent()
    run = client.start_run("haystack-schema-test")
    spec = {"name": "write_schema", "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}}}
    verdicts = client.decide(
        run["run_id"],
        [
            {"id": "s-1", "tool": "read_schema", "arguments": {}},
            {"id": "s-2", "tool": "write_schema", "arguments": {"x": 1}},
        ],
        tools=[{**spec, "name": "read_schema"}, spec],
    )
    allowed, pending = verdicts
    validator("decision").validate(allowed.decision)
    validator("grant").validate(allowed.raw["grant"])
    validator("approval").validate(pending.raw["approval"])
    refused = client.decide(run["run_id"], [{"id": "s-3", "tool": "write_schema", "arguments": {"x": "no"}}])[0]
    validator("error-body").validate({"error": refused.error})
    assert refused.error["kind"] == "tool-args-invalid"
    try:
        live.server.client("cg_wrong").start_run("x")
    except Unauthorized as error:
        validator("error-body").validate(error.to_body())
    client.end_run(run["run_id"])
    validator("bundle-v3").validate(live.admin().bundle(run["run_id"]))
    validator("bundle").validate(live.admin().bundle(run["run_id"], proofs=True))


def test_the_hooks_records_validate_as_ledger_records(live: Live, hook: CallgateHook) -> None:
    counter = Counter()
    generator = ScriptedChatGenerator(
        [calls(("read_note", {"name": "a"}, "v-1"), ("write_note", {"name": "b", "text": "c"}, "v-2")), "ok"]
    )
    agent = Agent(
        chat_generator=generator,
        tools=local_tools(counter),
        hooks=hook.hooks(),
    )
    context: dict[str, Any] = {"test": True}
    with Reviewer(live.reviewer(), {"write_note": "approve"}):
        agent.run([user("go")], hook_context=context)
    bundle = live.admin().bundle(context["callgate_run_id"])
    records = validator("ledger-record-v2")
    for record in bundle["records"]:
        records.validate(record)
