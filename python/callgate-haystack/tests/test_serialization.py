"""What serializes and what refuses to, clearly."""

from __future__ import annotations

import pytest
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.core.errors import DeserializationError, SerializationError
from haystack.hooks.human_in_the_loop import ConfirmationHook
from haystack.utils import Secret

from haystack_integrations.hooks.callgate import CallgateConfirmationStrategy, CallgateHook, CallgateRefusalHook
from haystack_integrations.tools.callgate import CallgateToolset, callgate_toolset


def test_an_agent_holding_the_hook_cannot_be_serialized() -> None:
    gate = CallgateHook(api_key=Secret.from_token("cg_x"))
    agent = Agent(chat_generator=MockChatGenerator(responses="hi"), hooks={"before_tool": [gate], "after_tool": [gate]})
    with pytest.raises(SerializationError, match="Build the hook in code"):
        agent.to_dict()
    with pytest.raises(DeserializationError, match="build it in code"):
        CallgateHook.from_dict({"type": "x", "init_parameters": {}})


def test_the_refusal_hook_round_trips() -> None:
    hook = CallgateRefusalHook(kinds=["policy-denied"])
    again = CallgateRefusalHook.from_dict(hook.to_dict())
    assert again.kinds == ["policy-denied"]


def test_the_confirmation_strategy_round_trips_inside_haystacks_hook() -> None:
    strategy = CallgateConfirmationStrategy(url="http://127.0.0.1:9", max_wait=2.5, consume_grants=False)
    confirmation = ConfirmationHook(confirmation_strategies={"*": strategy})
    again = ConfirmationHook.from_dict(confirmation.to_dict())
    restored = again.confirmation_strategies["*"]
    assert isinstance(restored, CallgateConfirmationStrategy)
    assert (restored.url, restored.max_wait, restored.consume_grants) == ("http://127.0.0.1:9", 2.5, False)
    assert restored.api_key == Secret.from_env_var("CALLGATE_API_KEY")


def test_the_toolset_round_trips_without_connecting() -> None:
    toolset = callgate_toolset(url="http://127.0.0.1:9/mcp", profile="execute", tool_names=["read_text_file"])
    data = toolset.to_dict()
    assert data["data"]["profile"] == "execute" and data["data"]["api_key"]["env_vars"] == ["CALLGATE_API_KEY"]
    again = CallgateToolset.from_dict(data)
    assert again.gateway_url == "http://127.0.0.1:9/mcp/execute"
    assert again.tool_names == ["read_text_file"]
