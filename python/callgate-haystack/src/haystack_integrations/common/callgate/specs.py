"""
Tool specs as callgate's registry knows them, built from Haystack tools.

A Haystack ``Tool`` carries a name, a description and a JSON Schema of its parameters. callgate
validates each call's arguments against that schema (draft 2020-12), so the spec sent to the
server describes **the model's arguments only**: parameters Haystack fills in from the agent's
``State`` (``inputs_from_state``, a ``State``-typed parameter) are not the model's, are never
decided, and are dropped from ``required``.

Tools that come from callgate's own MCP gateway (:func:`~haystack_integrations.tools.callgate.callgate_toolset`)
are already in the server's registry with their upstream spec; they are marked with
:func:`mark_gateway_tool` and their specs are never sent.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from haystack.tools import Tool

_GATEWAY_ATTRIBUTE = "_callgate_gateway_url"
_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.\-/]{1,128}$")


def mark_gateway_tool(tool: Tool, gateway_url: str) -> None:
    """Marks ``tool`` as served by the callgate MCP gateway at ``gateway_url``."""
    # Tool is a plain dataclass: an extra attribute travels with the object and nowhere else.
    object.__setattr__(tool, _GATEWAY_ATTRIBUTE, gateway_url)


def gateway_url_of(tool: Tool | None) -> str | None:
    """The gateway URL of a tool built by ``callgate_toolset``, or None for any other tool."""
    if tool is None:
        return None
    value = getattr(tool, _GATEWAY_ATTRIBUTE, None)
    return value if isinstance(value, str) else None


def tool_spec(tool: Tool) -> dict[str, Any] | None:
    """
    The callgate tool spec of a Haystack tool.

    :param tool: Any Haystack ``Tool`` (``ComponentTool``, ``AgentTool``, ``PipelineTool`` included).
    :returns: ``{"name", "description", "inputSchema"}``, or None when the name is not one callgate
        accepts (letters, digits, ``_ . - /``, at most 128): such a call is then refused by the
        server as ``tool-not-found``.
    """
    if not _NAME_PATTERN.match(tool.name):
        return None
    schema = copy.deepcopy(tool.parameters) if isinstance(tool.parameters, dict) else {}
    schema.setdefault("type", "object")
    injected = set((tool.inputs_from_state or {}).values())
    if injected and isinstance(schema.get("required"), list):
        schema["required"] = [name for name in schema["required"] if name not in injected]
    spec: dict[str, Any] = {"name": tool.name, "inputSchema": schema}
    if tool.description:
        spec["description"] = tool.description
    return spec
