"""
A call's fate once its step is decided: a :class:`Resolution` (run as decided, with the arguments
that run, or refused with the error the model reads), and the helpers that build one from the
server's verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from haystack.dataclasses import ToolCall

from haystack_integrations.common.callgate.approvals import ApprovalAnswer
from haystack_integrations.common.callgate.client import ServerUnreachable
from haystack_integrations.common.callgate.wire import Grant, Verdict

from .reports import refused_report
from .runs import DecidedCall
from .step import CallPlan, plan_call


@dataclass
class Resolution:
    """One call's fate: its plan on the message, what it was decided as, and any outcome to record now."""

    plan: CallPlan
    decided: DecidedCall | None = None
    report: dict[str, Any] | None = None
    #: The server's verdict the call was resolved from (None: resumed, undecided or refused before deciding).
    verdict: Verdict | None = None
    #: The approval a resumed call was resolved from.
    resumed: str | None = None

    def of(self, verdict: Verdict) -> Resolution:
        """This resolution, noting the verdict it came from (for tracing)."""
        self.verdict = verdict
        return self


def unavailable(error: ServerUnreachable, approval_id: str | None = None) -> dict[str, Any]:
    """The refusal of a call callgate could not decide (``gate-unavailable``)."""
    body: dict[str, Any] = {
        "kind": "gate-unavailable",
        "message": f"{error.message}; the call is refused until callgate can decide it",
    }
    if approval_id:
        body["approval_id"] = approval_id
    return body


def refused(verdict: Verdict, original: ToolCall, error: dict[str, Any]) -> Resolution:
    call = plan_call(original, verdict.call_id, None)
    return Resolution(
        CallPlan(original, call, error=error), report=refused_report(verdict.call_id, verdict.attempt, error)
    )


def allowed(
    verdict: Verdict,
    original: ToolCall,
    gateway: bool,
    arguments: dict[str, Any] | None,
    *,
    grant: Grant | None,
    consumed: bool = False,
    note: str | None = None,
) -> Resolution:
    decided_arguments = arguments if arguments is not None else dict(original.arguments)
    call = plan_call(original, verdict.call_id, decided_arguments)
    decided = DecidedCall(
        call_id=verdict.call_id,
        attempt=verdict.attempt,
        tool=verdict.tool,
        arguments=decided_arguments,
        tool_call=call,
        gateway=gateway,
        grant=grant,
        grant_consumed=consumed,
    )
    return Resolution(CallPlan(original, call, note=note), decided=decided)


def edit_note(verdict: Verdict, answer: ApprovalAnswer) -> tuple[dict[str, Any] | None, str | None]:
    arguments = answer.arguments if answer.arguments is not None else verdict.arguments
    if arguments is None or verdict.arguments is None or arguments == verdict.arguments:
        return arguments, None
    note = f"A reviewer changed the arguments of '{verdict.tool}' before approving it; it runs with {arguments}"
    return arguments, note + (f" ({answer.reason})" if answer.reason else "")
