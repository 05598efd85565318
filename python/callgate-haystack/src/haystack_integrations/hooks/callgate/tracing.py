"""
Haystack tracing spans for what the gate does in ``before_tool``, so an agent's trace (any tracer
set with ``haystack.tracing.enable_tracing``, e.g. one backed by OpenTelemetry) shows
callgate's work inside the span Haystack opens for the hook (in its ``haystack.agent.step``)::

    haystack.agent.step
      haystack.agent.hook           (point before_tool)
        callgate.before_tool        the step's decisions request and every approval wait
          callgate.decide           one per call, its tags below

Tags of ``callgate.decide`` (names after the OpenTelemetry GenAI conventions where one exists):
``gen_ai.operation.name`` (``execute_tool``), ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
``callgate.run_id``, ``callgate.call.attempt``, ``callgate.decision.effect`` (``allow``, ``deny``,
``ask``; absent when the call was refused before a decision, e.g. ``gate-unavailable``),
``callgate.rule_ids`` (the matched rules, a list), ``callgate.outcome`` (``allowed`` or ``refused``),
``error.type`` (the refusal's kind), ``callgate.approval.id`` and ``callgate.approval.status``
(``approved``, ``denied``, ``expired``, ``pending``) when an approval was awaited, and
``callgate.resumed`` for a call resumed from an earlier run's approval.

Arguments never go into tags unless Haystack's content tracing is on
(``HAYSTACK_CONTENT_TRACING_ENABLED=true``): then ``gen_ai.tool.call.arguments`` holds the
arguments the call runs with (``Span.set_content_tag``). With no tracer enabled, nothing is built.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from haystack import tracing

if TYPE_CHECKING:
    from haystack.dataclasses import ChatMessage

    from .decisions import Resolution
    from .runs import RunContext

STEP_OPERATION = "callgate.before_tool"
DECIDE_OPERATION = "callgate.decide"

_APPROVAL_STATUS = {"approval-denied": "denied", "approval-expired": "expired", "approval-pending": "pending"}


@contextlib.contextmanager
def step_span(context: RunContext, message: ChatMessage | None) -> Iterator[tracing.Span | None]:
    """
    The span of one ``before_tool`` step, a child of the tracer's current span (Haystack's
    ``haystack.agent.step``); None when tracing is off or the step has no calls. The hook's requests
    made inside carry its trace context (see ``common.callgate.trace_context``).
    """
    if message is None or not tracing.is_tracing_enabled():
        yield None
        return
    tags = {"callgate.step.calls": len(message.tool_calls)}
    with tracing.tracer.trace(STEP_OPERATION, tags=tags, parent_span=tracing.tracer.current_span()) as span:
        yield span
        if context.run_id is not None:
            span.set_tag("callgate.run_id", context.run_id)


def trace_calls(span: tracing.Span | None, context: RunContext, resolutions: list[Resolution]) -> None:
    """One ``callgate.decide`` span per resolved call, under the step's ``span`` (nothing when None)."""
    if span is None:
        return
    for resolution in resolutions:
        with tracing.tracer.trace(DECIDE_OPERATION, tags=call_tags(context, resolution), parent_span=span) as child:
            arguments = resolution.decided.arguments if resolution.decided is not None else None
            if arguments is not None:
                child.set_content_tag("gen_ai.tool.call.arguments", arguments)


def call_tags(context: RunContext, resolution: Resolution) -> dict[str, Any]:
    """The tags of one call's ``callgate.decide`` span (never its arguments)."""
    plan, verdict = resolution.plan, resolution.verdict
    call = plan.call
    tags: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.tool_name,
        "gen_ai.tool.call.id": call.id or "",
        "callgate.outcome": "allowed" if plan.error is None else "refused",
    }
    if context.run_id is not None:
        tags["callgate.run_id"] = context.run_id
    kind = plan.error.get("kind") if plan.error is not None else None
    if kind is not None:
        tags["error.type"] = str(kind)
    if verdict is not None:
        tags["callgate.call.attempt"] = verdict.attempt
        if verdict.effect is not None:
            tags["callgate.decision.effect"] = verdict.effect
        rules = verdict.decision.get("rules") if isinstance(verdict.decision, dict) else None
        if isinstance(rules, list):
            tags["callgate.rule_ids"] = [str(rule) for rule in rules]
        if verdict.approval is not None:
            tags["callgate.approval.id"] = verdict.approval.id
            tags["callgate.approval.status"] = _approval_status(resolution, kind)
    elif resolution.resumed is not None:
        tags["callgate.resumed"] = True
        tags["callgate.decision.effect"] = "ask"
        tags["callgate.approval.id"] = resolution.resumed
        tags["callgate.approval.status"] = _approval_status(resolution, kind)
    elif resolution.decided is None and plan.error is None:
        tags["callgate.outcome"] = "undecided"  # fail mode open: it runs without a decision
    return tags


def _approval_status(resolution: Resolution, kind: Any) -> str:
    if resolution.decided is not None:
        return "approved"
    return _APPROVAL_STATUS.get(str(kind), "refused")
