"""The toolset, the confirmation strategy and the refusal hook serialize (the gate: tests/test_native.py)."""

from __future__ import annotations

from haystack.hooks.human_in_the_loop import ConfirmationHook
from haystack.utils import Secret

from haystack_integrations.hooks.callgate import CallgateConfirmationStrategy, CallgateRefusalHook
from haystack_integrations.tools.callgate import CallgateToolset, callgate_toolset


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
