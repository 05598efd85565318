"""
Outcome reports: how each call of a step ended, as ``POST /v1/runs/:id/outcomes`` takes it.
"""

from __future__ import annotations

from typing import Any

from haystack.dataclasses import ChatMessage

from haystack_integrations.common.callgate.results import Refusal, extract_outcome
from haystack_integrations.common.callgate.wire import encode_arguments

from .runs import DecidedCall
from .step import parse_result


def completed_report(call: DecidedCall, message: ChatMessage, duration_ms: float) -> dict[str, Any]:
    """
    The outcome of a call that reached the tool.

    - ``ok`` with the result (JSON text parsed back, so provenance sees its values);
    - ``error`` (``tool-error``) when Haystack marked the result as an error;
    - for a gateway tool, a refusal the gateway returned is ``denied`` with its kind;
    - when the call that ran differs in tool or arguments from the one decided (a ``before_tool``
      hook listed after callgate's changed it), the tool and arguments that ran are sent and the
      server records ``changed-after-decision``.

    :param duration_ms: The step's tool time in milliseconds (the calls of a step run together).
    """
    result = message.tool_call_result
    assert result is not None  # find_results only pairs tool results
    origin = result.origin
    report: dict[str, Any] = {
        "call_id": call.call_id,
        "attempt": call.attempt,
        "duration_ms": round(max(duration_ms, 0.0), 3),
        "grant_consumed": call.grant_consumed,
    }
    if origin.tool_name != call.tool or origin.arguments != call.arguments:
        report["tool"] = origin.tool_name
        report["arguments"] = encode_arguments(origin.arguments)
    if call.gateway:
        outcome = extract_outcome(result)
        if isinstance(outcome, Refusal):
            report["outcome"] = "error" if outcome.kind == "tool-error" else "denied"
            report["error_kind"] = outcome.kind
            report["result"] = parse_result(result.result)
        else:
            report["outcome"] = "ok"
            report["result"] = outcome.value
        return report
    if result.error:
        report["outcome"] = "error"
        report["error_kind"] = "tool-error"
    else:
        report["outcome"] = "ok"
    report["result"] = parse_result(result.result)
    return report


def refused_report(call_id: str, attempt: int, error: dict[str, Any]) -> dict[str, Any]:
    """The outcome of a decided call that did not run: ``denied``, with the refusal the model read."""
    return {
        "call_id": call_id,
        "attempt": attempt,
        "outcome": "denied",
        "error_kind": error.get("kind", "policy-denied"),
        "result": {"error": error},
    }
