"""
What a governed MCP tool hands the model: the tool's own payload, not the ``CallToolResult``
envelope around it.

mcp-haystack's ``MCPTool`` returns ``CallToolResult.model_dump_json()``: the model then reads the
payload escaped inside ``content[0].text`` of a JSON envelope. A tool of ``callgate_toolset``
returns instead:

- the ``structuredContent`` as compact JSON text, when the tool gave one;
- else the text of its text blocks (joined by newlines when there are several);
- else (images, audio, resources) the ``CallToolResult`` JSON as mcp-haystack returns it, so
  nothing is lost.

An ``isError`` result is raised as :class:`GatewayToolError` (an mcp-haystack
``MCPInvocationError``) whose message is the tool's text alone, and it reaches the model as an
error result with that text (Haystack's ``Tool.invoke`` would wrap it in ``Failed to invoke Tool
... Error: ...``; the governed tool unwraps it).
"""

from __future__ import annotations

import json
import types
from typing import Any

from haystack.tools import Tool
from haystack.tools.errors import ToolInvocationError

from haystack_integrations.tools.mcp import MCPInvocationError
from haystack_integrations.tools.mcp.compatibility_layer import mcp_field_value


class GatewayToolError(MCPInvocationError):
    """
    A gateway tool answered ``isError``. The message is the tool's text: a callgate refusal body
    (``{"error": {"kind", "message", ...}}``) when the gateway refused the call, else the tool's
    own error text. An mcp-haystack ``MCPInvocationError`` (so a ``ToolInvocationError``).
    """

    def __init__(self, message: str, tool_name: str = "", tool_args: dict[str, Any] | None = None) -> None:
        super().__init__(message, tool_name, tool_args)


def result_texts(result: Any) -> list[str]:
    """The text of each text block of a ``CallToolResult``, in order."""
    return [text for block in (result.content or []) if isinstance(text := getattr(block, "text", None), str)]


def mcp_payload(result: Any, *, parse: bool = False) -> Any:
    """
    The payload of a successful ``CallToolResult`` (see the module docs).

    :param parse: Return Python values instead of text (for tools with ``outputs_to_state``):
        the structured content, or the first text parsed as JSON (else the text).
    """
    structured = mcp_field_value(model=result, name="structured_content")
    texts = result_texts(result)
    if parse:
        if structured is not None:
            return structured
        for text in texts:
            try:
                return json.loads(text)
            except ValueError:
                return text
    if structured is not None:
        return json.dumps(structured, ensure_ascii=False, separators=(",", ":"), default=str)
    blocks = result.content or []
    if blocks and len(texts) == len(blocks):
        return texts[0] if len(texts) == 1 else "\n".join(texts)
    return result.model_dump_json(by_alias=True)


def raise_if_error(result: Any, name: str, arguments: dict[str, Any]) -> None:
    """
    :raises GatewayToolError: When ``result`` is an ``isError`` result, with the tool's text.
    """
    if mcp_field_value(model=result, name="is_error"):
        text = "\n".join(result_texts(result))
        raise GatewayToolError(text or f"tool {name} returned an error", name, arguments)


def unwrap_tool_errors(tool: Tool) -> Tool:
    """
    Makes ``tool.invoke`` raise a :class:`GatewayToolError` as it is, instead of Haystack's
    ``ToolInvocationError("Failed to invoke Tool ... Error: ...")`` around it, so the model's error
    result is the tool's text. Other failures keep Haystack's wording.
    """
    wrapped = Tool.invoke

    def invoke(self: Tool, **kwargs: Any) -> Any:
        try:
            return wrapped(self, **kwargs)
        except ToolInvocationError as error:
            if isinstance(error.__cause__, GatewayToolError):
                raise error.__cause__ from None
            raise

    tool.invoke = types.MethodType(invoke, tool)  # type: ignore[method-assign]
    return tool
