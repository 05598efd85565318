# The public API of haystack_integrations.tools.callgate. Anything listed here is public and
# pinned by tests/test_exports.py; add names deliberately.
"""
Tools of callgate's governing MCP gateway for Haystack agents, and the reading of their results.

Usage::

    from haystack_integrations.tools.callgate import callgate_toolset, extract_outcome

    tools = callgate_toolset(url="http://127.0.0.1:7420/mcp", profile="observe")
"""

from haystack_integrations.common.callgate.errors import CallgateToolRefused, GatewayConnectionError
from haystack_integrations.common.callgate.results import Receipt, Refusal, extract_outcome

from .toolset import CallgateToolset, GatewayToolError, callgate_toolset, gateway_url

__all__ = [
    "CallgateToolRefused",
    "CallgateToolset",
    "GatewayConnectionError",
    "GatewayToolError",
    "Receipt",
    "Refusal",
    "callgate_toolset",
    "extract_outcome",
    "gateway_url",
]
