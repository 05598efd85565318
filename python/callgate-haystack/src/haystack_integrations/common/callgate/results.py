"""
Reading governed tool results: a receipt when the call ran, a typed refusal when it did not.

A result reaches a Haystack agent in several forms, all handled by :func:`extract_outcome`:

- the refusal text a callgate hook puts in place of a refused call:
  ``{"error": {"kind": "policy-denied", "message": "..."}}``;
- the raw ``CallToolResult`` JSON that an ``MCPToolset`` tool returns — JSON text whose
  ``content[].text`` is itself often JSON ("JSON inside JSON"), with ``isError`` (or
  ``is_error``) set when the tool failed or the gateway refused the call;
- Haystack's own error text for a tool that raised (``Failed to invoke Tool ... Error: {...}``),
  which embeds the refusal body when the gateway refused the call;
- any other value: a receipt carrying it.

Usage::

    from haystack_integrations.common.callgate.results import Refusal, extract_outcome

    outcome = extract_outcome('{"error": {"kind": "approval-denied", "message": "no", "approval_id": "ap-1"}}')
    assert isinstance(outcome, Refusal) and outcome.approval_id == "ap-1"
    raise outcome.to_exception()   # ApprovalDenied, a CallgateToolRefused
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from haystack.dataclasses import ChatMessage, ToolCallResult

from .errors import ERROR_KINDS, CallgateToolRefused, ToolError, error_class


@dataclass(frozen=True)
class Receipt:
    """
    A call that ran and returned.

    :param value: The result as a Python value: the parsed JSON of the (innermost) text, the MCP
        ``structuredContent`` when there is one, or the text itself.
    :param text: The result's text as the model read it.
    :param raw: The result exactly as given to :func:`extract_outcome`.
    """

    value: Any
    text: str | None = None
    raw: Any = field(default=None, repr=False, compare=False)

    ok = True


@dataclass(frozen=True)
class Refusal:
    """
    A call that did not run (or ran and failed, ``kind == "tool-error"``).

    :param kind: One of the error kinds, e.g. ``"policy-denied"``.
    :param message: Why, as the model read it.
    :param approval_id: The approval involved, for ``approval-*`` kinds.
    :param call_id: The call, when the body names it.
    :param details: Every other field of the error body (``rules``, ``path``, ...).
    """

    kind: str
    message: str
    approval_id: str | None = None
    call_id: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    raw: Any = field(default=None, repr=False, compare=False)

    ok = False

    def to_exception(self) -> CallgateToolRefused:
        """
        The typed exception of this refusal.

        :returns: The :class:`~.errors.CallgateToolRefused` subclass of ``kind``
            (:class:`~.errors.ToolError` for ``tool-error``), carrying ``approval_id``, ``call_id``
            and the other details.
        """
        details = dict(self.details)
        if self.approval_id:
            details["approval_id"] = self.approval_id
        if self.call_id:
            details["call_id"] = self.call_id
        cls = error_class(self.kind)
        if isinstance(cls, type) and issubclass(cls, CallgateToolRefused):
            return cls(self.message, details=details)
        return CallgateToolRefused(self.message, kind=self.kind, details=details)


Outcome = Receipt | Refusal

#: How Haystack starts the result text of a tool that raised (``Tool.invoke``).
_HAYSTACK_ERROR_PREFIX = "Failed to invoke Tool"


def _loads(text: str) -> Any:
    stripped = text.strip()
    if not stripped or (
        stripped[0] not in '[{"' and not stripped[0].isdigit() and stripped not in ("true", "false", "null")
    ):
        raise ValueError("not JSON")
    return json.loads(stripped)


def _refusal_of(body: Any, raw: Any) -> Refusal | None:
    """A refusal when ``body`` is ``{"error": {"kind": <known kind>, "message": str}}``."""
    if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
        return None
    inner = body["error"]
    kind = inner.get("kind")
    if not isinstance(kind, str) or kind not in ERROR_KINDS:
        return None
    message = inner.get("message") if isinstance(inner.get("message"), str) else kind
    details = {key: value for key, value in inner.items() if key not in ("kind", "message", "approval_id", "call_id")}
    approval_id = inner.get("approval_id")
    call_id = inner.get("call_id")
    return Refusal(
        kind=kind,
        message=message,
        approval_id=approval_id if isinstance(approval_id, str) else None,
        call_id=call_id if isinstance(call_id, str) else None,
        details=details,
        raw=raw,
    )


def _embedded_body(text: str) -> Any:
    """The first ``{"error": ...}`` JSON object embedded in ``text``, if any."""
    decoder = json.JSONDecoder()
    start = text.find('{"error"')
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
            return value
        except ValueError:
            start = text.find('{"error"', start + 1)
    return None


def _call_tool_result(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("content"), list)
        and ("isError" in value or "is_error" in value or "structuredContent" in value or "structured_content" in value)
    )


def _from_call_tool_result(result: dict[str, Any], raw: Any, text: str | None) -> Outcome:
    is_error = bool(result.get("isError") or result.get("is_error"))
    texts: list[str] = [
        block["text"]
        for block in result["content"]
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    joined = "\n".join(texts)
    structured = result.get("structuredContent", result.get("structured_content"))
    inner: Any = joined
    if len(texts) == 1:
        try:
            inner = _loads(texts[0])
        except ValueError:
            inner = texts[0]
    if is_error:
        refusal = _refusal_of(structured, raw) or _refusal_of(inner, raw)
        if refusal is not None:
            return refusal
        return Refusal(kind=ToolError.kind, message=joined or "the tool returned an error", raw=raw)
    value = structured if structured is not None else inner
    return Receipt(value=value, text=joined if texts else text, raw=raw)


def extract_outcome(tool_result: Any) -> Outcome:
    """
    Parses a governed tool result into a :class:`Receipt` or a :class:`Refusal`.

    :param tool_result: A tool-result ``ChatMessage``, a ``ToolCallResult``, the text a tool
        returned (JSON or not), an already parsed ``dict``, or any other value.
    :returns: A :class:`Refusal` for a callgate refusal body (top level, inside a ``CallToolResult``
        with ``isError``/``is_error``, in its ``structuredContent``, or embedded in Haystack's
        ``Failed to invoke Tool`` text); a :class:`Refusal` of kind ``tool-error`` for any other
        failed result; else a :class:`Receipt` whose ``value`` is the innermost parsed JSON.
    :raises ValueError: For a ``ChatMessage`` that carries no tool result.
    """
    raw = tool_result
    error_flag = False
    if isinstance(tool_result, ChatMessage):
        if tool_result.tool_call_result is None:
            raise ValueError("the message carries no tool result")
        tool_result = tool_result.tool_call_result
    if isinstance(tool_result, ToolCallResult):
        error_flag = bool(tool_result.error)
        tool_result = tool_result.result

    text: str | None = None
    value: Any = tool_result
    if isinstance(tool_result, str):
        text = tool_result
        try:
            value = _loads(tool_result)
        except ValueError:
            value = tool_result

    refusal = _refusal_of(value, raw)
    if refusal is not None:
        return refusal
    if _call_tool_result(value):
        outcome = _from_call_tool_result(value, raw, text)
        if error_flag and isinstance(outcome, Receipt):
            return Refusal(kind=ToolError.kind, message=text or str(value), raw=raw)
        return outcome
    if isinstance(value, str) and (error_flag or value.startswith(_HAYSTACK_ERROR_PREFIX)):
        embedded = _refusal_of(_embedded_body(value), raw)
        if embedded is not None:
            return embedded
    if error_flag or (isinstance(value, str) and value.startswith(_HAYSTACK_ERROR_PREFIX)):
        return Refusal(kind=ToolError.kind, message=text if text is not None else str(value), raw=raw)
    return Receipt(value=value, text=text, raw=raw)
