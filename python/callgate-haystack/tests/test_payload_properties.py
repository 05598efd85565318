"""
Generated cases (hypothesis) for what a governed MCP tool hands the model: for any mix of
content blocks, structured content and isError, the model reads the tool's payload and never the
CallToolResult envelope, nothing the tool said is lost, and extract_outcome reads it back.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
import pytest
from haystack.dataclasses import ToolCall, ToolCallResult
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_integrations.common.callgate.results import Receipt, Refusal, extract_outcome
from haystack_integrations.tools.callgate.payload import GatewayToolError, mcp_payload, raise_if_error

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
texts = st.lists(
    st.text(max_size=40).map(lambda text: types.TextContent(type="text", text=text)), min_size=1, max_size=3
)
image = st.just(types.ImageContent(type="image", data="aGVsbG8=", mimeType="image/png"))
structured = st.none() | st.dictionaries(st.text(min_size=1, max_size=8), json_values, min_size=1, max_size=4)


@settings(max_examples=100, deadline=None)
@given(blocks=texts, extra=st.lists(image, max_size=1), content=structured)
def test_the_model_reads_the_payload_not_the_envelope(blocks: list[Any], extra: list[Any], content: Any) -> None:
    result = types.CallToolResult(content=[*blocks, *extra], structuredContent=content, isError=False)
    payload = mcp_payload(result)
    assert isinstance(payload, str)
    if content is not None:
        assert json.loads(payload) == content  # structured content, as JSON
        outcome = extract_outcome(payload)
        assert isinstance(outcome, Receipt) and outcome.value == content
    elif not extra:
        assert payload == "\n".join(block.text for block in blocks)  # the tool's text, exactly
    else:  # blocks a text cannot carry: the CallToolResult JSON, so nothing is lost
        assert json.loads(payload)["content"][-1]["type"] == "image"
    assert isinstance(extract_outcome(payload), Receipt)
    assert mcp_payload(result, parse=True) == (content if content is not None else _first_parsed(blocks[0].text))


def _first_parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


@settings(max_examples=100, deadline=None)
@given(blocks=texts, kind=st.sampled_from(["policy-denied", "approval-denied", "grant-invalid", None]))
def test_an_error_result_raises_the_tools_text(blocks: list[Any], kind: str | None) -> None:
    if kind is not None:
        blocks = [types.TextContent(type="text", text=json.dumps({"error": {"kind": kind, "message": "no"}}))]
    result = types.CallToolResult(content=blocks, isError=True)
    with pytest.raises(GatewayToolError) as raised:
        raise_if_error(result, "tool", {"a": 1})
    text = "\n".join(block.text for block in blocks)
    assert str(raised.value) == (text or "tool tool returned an error")
    assert raised.value.tool_name == "tool" and raised.value.tool_args == {"a": 1}
    outcome = extract_outcome(ToolCallResult(result=str(raised.value), origin=ToolCall("tool", {}), error=True))
    assert isinstance(outcome, Refusal)
    assert outcome.kind == (kind or "tool-error")
