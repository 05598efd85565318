"""callgate_toolset against the real gateway fronting @modelcontextprotocol/server-filesystem."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from haystack.components.agents import Agent
from haystack.dataclasses import ChatRole
from haystack.utils import Secret
from support import Counter, Reviewer, ScriptedChatGenerator, calls, local_tools, records, user

from haystack_integrations.common.callgate.testing import CallgateServer, free_port, repository_root, temporary_folder
from haystack_integrations.hooks.callgate import CallgateHook
from haystack_integrations.tools.callgate import (
    GatewayConnectionError,
    Receipt,
    Refusal,
    callgate_toolset,
    extract_outcome,
)

GATEWAY_POLICY = """
version: 1
default: deny
approval: { ttl: 60s, wait: 20s }
profiles:
  observe: [read_text_file, list_directory, list_allowed_directories]
  execute: [read_text_file, list_directory, list_allowed_directories, write_file, move_file]
rules:
  - id: reads
    match: { tools: ["read_*", "list_*"] }
    effect: allow
  - id: writes-ask
    match: { tools: [write_file] }
    effect: ask
    reason: writing a file needs a person
  - id: no-moves
    match: { tools: [move_file] }
    effect: deny
    reason: files are never moved
"""


def gateway_config(sandbox: Path) -> str:
    command = repository_root() / "node_modules" / ".bin" / "mcp-server-filesystem"
    return json.dumps({"upstreams": [{"name": "files", "stdio": {"command": str(command), "args": [str(sandbox)]}}]})


@pytest.fixture(scope="module")
def gateway() -> Iterator[tuple[CallgateServer, str, str, Path]]:
    """A server whose gateway fronts the filesystem MCP server on a sandbox folder."""
    with temporary_folder("callgate-sandbox-") as sandbox:
        (sandbox / "notes.txt").write_text("three little words", encoding="utf-8")
        try:
            server = CallgateServer.start(policy=GATEWAY_POLICY, config=gateway_config(sandbox))
        except RuntimeError as error:
            if "upstreams" in str(error) and "unknown field" in str(error):
                pytest.skip("this build of `callgate serve` takes no upstreams: the MCP gateway is not mounted yet")
            raise
        try:
            probe = httpx.post(f"{server.url}/mcp/observe", json={}, timeout=5.0)
            if probe.status_code == 404 and "no route" in probe.text:
                pytest.skip("this build of `callgate serve` does not mount the MCP gateway at /mcp yet")
            yield server, server.create_key("agent", "gw-agent"), server.create_key("reviewer", "gw-reviewer"), sandbox
        finally:
            server.close()


def test_a_connection_failure_names_the_url_and_what_to_check() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    toolset = callgate_toolset(url=url, profile="observe", api_key=Secret.from_token("cg_x"), connection_timeout=3)
    with pytest.raises(GatewayConnectionError) as raised:
        toolset.warm_up()
    message = str(raised.value)
    assert f"{url}/mcp/observe" in message
    assert "URL is right" in message and "server is running" in message and "API key is right" in message


def test_a_bad_key_is_named_as_the_problem(gateway: tuple[CallgateServer, str, str, Path]) -> None:
    server, _, _, _ = gateway
    toolset = callgate_toolset(url=server.url, profile="observe", api_key=Secret.from_token("cg_wrong"))
    with pytest.raises(GatewayConnectionError, match="refused the API key"):
        toolset.warm_up()


def test_the_profile_filters_the_tools(gateway: tuple[CallgateServer, str, str, Path]) -> None:
    server, agent_key, _, _ = gateway
    observe = callgate_toolset(url=f"{server.url}/mcp", profile="observe", api_key=Secret.from_token(agent_key))
    execute = callgate_toolset(url=server.url, profile="execute", api_key=Secret.from_token(agent_key))
    try:
        observe.warm_up()
        execute.warm_up()
        assert {tool.name for tool in observe} == {"read_text_file", "list_directory", "list_allowed_directories"}
        assert {"write_file", "move_file"} <= {tool.name for tool in execute}
    finally:
        observe.close()
        execute.close()


def test_hook_and_gateway_decide_each_call_once(gateway: tuple[CallgateServer, str, str, Path]) -> None:
    server, agent_key, reviewer_key, sandbox = gateway
    counter = Counter()
    toolset = callgate_toolset(url=server.url, profile="execute", api_key=Secret.from_token(agent_key))
    gate = CallgateHook(url=server.url, api_key=Secret.from_token(agent_key))
    notes = str(sandbox / "notes.txt")
    generator = ScriptedChatGenerator(
        [
            calls(("read_text_file", {"path": notes}, "g-1"), ("read_note", {"name": "local"}, "g-2")),
            calls(("write_file", {"path": str(sandbox / "out.txt"), "content": "hello"}, "g-3")),
            calls(("move_file", {"source": notes, "destination": str(sandbox / "moved.txt")}, "g-4")),
            "done",
        ]
    )
    agent = Agent(
        chat_generator=generator,
        tools=[toolset, *local_tools(counter)],
        hooks=gate.hooks(),
    )
    context: dict[str, Any] = {"test": True}
    try:
        with Reviewer(server.client(reviewer_key), {"write_file": "approve"}) as reviewer:
            result = agent.run([user("files")], hook_context=context)
    finally:
        toolset.close()
        gate.close()

    results = {m.tool_call_result.origin.id: m for m in result["messages"] if m.role == ChatRole.TOOL}
    read = extract_outcome(results["g-1"])
    assert isinstance(read, Receipt) and "three little words" in json.dumps(read.value)
    assert (sandbox / "out.txt").read_text(encoding="utf-8") == "hello"
    assert len(reviewer.answered) == 1  # asked once, by the hook; the gateway ran the call on its grant
    moved = extract_outcome(results["g-4"])
    assert isinstance(moved, Refusal) and moved.kind == "policy-denied"
    assert (sandbox / "notes.txt").exists()
    bundle = server.client(agent_key).bundle(context["callgate_run_id"])
    ends = {record["call_id"]: record for record in records(bundle, "call-end")}
    assert ends["g-1"]["outcome"] == "ok" and ends["g-1"]["grant_consumed"] is True  # consumed at the gateway
    assert ends["g-3"]["outcome"] == "ok" and ends["g-3"]["grant_consumed"] is True
    assert ends["g-4"]["outcome"] == "denied"
    assert len(records(bundle, "approval-request")) == 1


def test_the_confirmation_strategy_leaves_gateway_grants_to_the_gateway(
    gateway: tuple[CallgateServer, str, str, Path],
) -> None:
    from haystack.hooks.human_in_the_loop import ConfirmationHook

    from haystack_integrations.hooks.callgate import CallgateConfirmationStrategy

    server, agent_key, reviewer_key, sandbox = gateway
    toolset = callgate_toolset(url=server.url, profile="execute", api_key=Secret.from_token(agent_key))
    strategy = CallgateConfirmationStrategy(url=server.url, api_key=Secret.from_token(agent_key), tools=[toolset])
    target = sandbox / "confirmed.txt"
    generator = ScriptedChatGenerator([calls(("write_file", {"path": str(target), "content": "yes"}, "cf-1")), "done"])
    agent = Agent(
        chat_generator=generator,
        tools=toolset,
        hooks={"before_tool": [ConfirmationHook(confirmation_strategies={"*": strategy})]},
    )
    context: dict[str, Any] = {"test": True}
    try:
        with Reviewer(server.client(reviewer_key), {"write_file": "approve"}) as reviewer:
            agent.run([user("write")], hook_context=context)
    finally:
        toolset.close()
    assert target.read_text(encoding="utf-8") == "yes"
    assert len(reviewer.answered) == 1  # the gateway ran the call on the strategy's grant
    end = records(server.client(agent_key).bundle(context["callgate_run"].run_id), "call-end")[0]
    assert (end["call_id"], end["outcome"], end["grant_consumed"]) == ("cf-1", "ok", True)


def test_a_governed_mcp_result_reaches_the_model_as_the_tools_payload(
    gateway: tuple[CallgateServer, str, str, Path],
) -> None:
    server, agent_key, _, sandbox = gateway
    toolset = callgate_toolset(url=server.url, profile="observe", api_key=Secret.from_token(agent_key))
    gate = CallgateHook(url=server.url, api_key=Secret.from_token(agent_key))
    missing = str(sandbox / "missing.txt")
    generator = ScriptedChatGenerator(
        [
            calls(
                ("read_text_file", {"path": str(sandbox / "notes.txt")}, "p-1"),
                ("read_text_file", {"path": missing}, "p-2"),
            ),
            "done",
        ]
    )
    agent = Agent(chat_generator=generator, tools=toolset, hooks=gate.hooks())
    context: dict[str, Any] = {"callgate_run_id": None}
    try:
        result = agent.run([user("read")], hook_context=context)
    finally:
        toolset.close()
        gate.close()

    results = {m.tool_call_result.origin.id: m.tool_call_result for m in result["messages"] if m.role == ChatRole.TOOL}
    read = results["p-1"]
    assert not read.error
    payload = json.loads(read.result) if read.result.startswith("{") else read.result
    # the payload itself: the file's text, or the tool's structured content as JSON; never the envelope
    assert payload == "three little words" or payload == {"content": "three little words"}, read.result
    assert "isError" not in read.result and '"content": [' not in read.result
    failed = results["p-2"]
    assert failed.error and "ENOENT" in failed.result and not failed.result.startswith("Failed to invoke Tool")
    assert "isError" not in failed.result
    ends = {
        record["call_id"]: record
        for record in records(server.client(agent_key).bundle(context["callgate_run_id"]), "call-end")
    }
    assert ends["p-1"]["outcome"] == "ok"
    assert (ends["p-2"]["outcome"], ends["p-2"]["error_kind"]) == ("error", "tool-error")


def test_gateway_errors_are_mcp_haystacks_own(gateway: tuple[CallgateServer, str, str, Path]) -> None:
    from haystack.tools.errors import ToolInvocationError

    from haystack_integrations.tools.callgate import GatewayToolError
    from haystack_integrations.tools.mcp import MCPConnectionError, MCPInvocationError

    server, agent_key, _, sandbox = gateway
    with pytest.raises(MCPConnectionError):  # users' existing except clauses keep working
        callgate_toolset(url=server.url, profile="observe", api_key=Secret.from_token("cg_wrong")).warm_up()
    toolset = callgate_toolset(url=server.url, profile="observe", api_key=Secret.from_token(agent_key))
    try:
        toolset.warm_up()
        tool = next(tool for tool in toolset if tool.name == "read_text_file")
        with pytest.raises(MCPInvocationError) as raised:
            tool.invoke(path=str(sandbox / "missing.txt"))
    finally:
        toolset.close()
    assert isinstance(raised.value, GatewayToolError) and isinstance(raised.value, ToolInvocationError)
    assert raised.value.tool_name == "read_text_file" and "ENOENT" in str(raised.value)
