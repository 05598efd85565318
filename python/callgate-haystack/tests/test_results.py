"""extract_outcome and the exception tree, on every form a governed result takes."""

from __future__ import annotations

import json

import pytest
from haystack.dataclasses import ChatMessage, ToolCall

from haystack_integrations.common.callgate.errors import (
    ERROR_KINDS,
    ApprovalDenied,
    CallgateError,
    CallgateRequestError,
    CallgateToolRefused,
    GateUnavailable,
    PolicyDenied,
    Unauthorized,
    error_class,
    error_from_body,
)
from haystack_integrations.common.callgate.results import Receipt, Refusal, extract_outcome

DENIAL = {"error": {"kind": "policy-denied", "message": "deletes are denied", "rules": ["no-deletes"]}}


def call_tool_result(payload: object, *, is_error: bool, key: str = "isError") -> str:
    return json.dumps(
        {"content": [{"type": "text", "text": json.dumps(payload)}], "structuredContent": None, key: is_error}
    )


def test_every_kind_has_one_class_in_two_branches() -> None:
    assert len(ERROR_KINDS) == 21
    for kind in ERROR_KINDS:
        cls = error_class(kind)
        assert cls.kind == kind
        assert issubclass(cls, CallgateToolRefused) != issubclass(cls, CallgateRequestError)
    assert issubclass(GateUnavailable, CallgateToolRefused)


def test_error_from_body_keeps_details_and_status() -> None:
    error = error_from_body({"error": {"kind": "unauthorized", "message": "no key", "path": "x"}}, status=401)
    assert isinstance(error, Unauthorized) and error.status == 401 and error.details == {"path": "x"}
    assert error.to_body() == {"error": {"path": "x", "kind": "unauthorized", "message": "no key"}}
    newer = error_from_body({"error": {"kind": "brand-new", "message": "?"}})
    assert type(newer) is CallgateError and newer.kind == "brand-new"
    assert error_from_body("<html>", status=500).kind == "internal"


def test_a_hook_refusal_message() -> None:
    origin = ToolCall(tool_name="delete", arguments={}, id="c1")
    message = ChatMessage.from_tool(tool_result=json.dumps(DENIAL), origin=origin, error=True)
    outcome = extract_outcome(message)
    assert isinstance(outcome, Refusal) and outcome.kind == "policy-denied"
    assert outcome.details == {"rules": ["no-deletes"]}
    with pytest.raises(PolicyDenied, match="deletes are denied"):
        raise outcome.to_exception()


@pytest.mark.parametrize("key", ["isError", "is_error"])
def test_json_inside_json_from_mcp_toolset(key: str) -> None:
    body = {"error": {"kind": "approval-denied", "message": "no", "approval_id": "ap-1"}}
    outcome = extract_outcome(call_tool_result(body, is_error=True, key=key))
    assert isinstance(outcome, Refusal) and outcome.approval_id == "ap-1"
    assert isinstance(outcome.to_exception(), ApprovalDenied)
    ok = extract_outcome(call_tool_result({"rows": 2}, is_error=False, key=key))
    assert isinstance(ok, Receipt) and ok.value == {"rows": 2}


def test_structured_content_wins_and_plain_errors_are_tool_errors() -> None:
    raw = json.dumps(
        {"content": [{"type": "text", "text": "2 rows"}], "structuredContent": {"rows": 2}, "isError": False}
    )
    assert extract_outcome(raw).value == {"rows": 2}
    failed = extract_outcome(json.dumps({"content": [{"type": "text", "text": "ENOENT"}], "isError": True}))
    assert isinstance(failed, Refusal) and (failed.kind, failed.message) == ("tool-error", "ENOENT")


def test_haystacks_error_text_with_an_embedded_refusal() -> None:
    text = "Failed to invoke Tool `rm` with parameters {'path': '/'}. Error: " + json.dumps(DENIAL)
    outcome = extract_outcome(text)
    assert isinstance(outcome, Refusal) and outcome.kind == "policy-denied"
    plain = extract_outcome("Failed to invoke Tool `rm` with parameters {}. Error: disk full")
    assert isinstance(plain, Refusal) and plain.kind == "tool-error"


def test_anything_else_is_a_receipt() -> None:
    assert extract_outcome("hello") == Receipt(value="hello", text="hello")
    assert extract_outcome({"a": 1}).value == {"a": 1}
    assert extract_outcome('{"error": "not a callgate body"}').value == {"error": "not a callgate body"}
    with pytest.raises(ValueError):
        extract_outcome(ChatMessage.from_user("hi"))
