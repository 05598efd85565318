"""
Resume after an ask for :class:`~.confirmation.CallgateConfirmationStrategy`.

A call the strategy refused as ``approval-pending`` leaves its run open (the run is not ended
when its ``hook_context`` is dropped). A later agent run passing ``hook_context={"callgate_run_id":
run_id}`` decides into that run; a call there with the same call id, tool and arguments takes the
approval a reviewer answered meanwhile instead of asking again (approved: it runs on its grant;
denied or expired: refused at once; still pending: the strategy waits again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from haystack.hooks.human_in_the_loop import ToolExecutionDecision

from haystack_integrations.common.callgate.approvals import interpret, wait_for_approval
from haystack_integrations.common.callgate.client import CallgateClient
from haystack_integrations.common.callgate.wire import encode_arguments

from .resume import PENDING_KEY, RESUME_RUN_KEY

if TYPE_CHECKING:
    from .confirmation import CallgateConfirmationStrategy

#: Where the strategy keeps, in the ``hook_context``, the calls of a resumed run waiting on an approval.
WAITING_KEY = "callgate_waiting"


def note_pending(context: dict[str, Any] | None, run: Any, error: dict[str, Any]) -> None:
    """After an ``approval-pending`` refusal: keeps the strategy's run open and lists the approval."""
    if context is None or error.get("kind") != "approval-pending":
        return
    keep_open = getattr(run, "keep_open", None)
    if callable(keep_open):
        keep_open()
    approval_id = error.get("approval_id")
    if isinstance(approval_id, str):
        context.setdefault(PENDING_KEY, []).append(approval_id)


def resumes(context: dict[str, Any] | None, tool_call_id: str | None) -> bool:
    """Whether a call may take up a waiting call of a resumed run (else :func:`resume_decision` is None)."""
    return context is not None and bool(tool_call_id) and isinstance(context.get(RESUME_RUN_KEY), str)


def resume_decision(
    strategy: CallgateConfirmationStrategy,
    client: CallgateClient,
    run_id: str,
    context: dict[str, Any] | None,
    tool_name: str,
    tool_params: dict[str, Any],
    tool_call_id: str | None,
) -> ToolExecutionDecision | None:
    """
    The decision for a call that takes up a waiting call of a resumed run, or None when it does
    not (no such call, other tool or arguments): it is then decided as usual.
    """
    if context is None or not tool_call_id or not resumes(context, tool_call_id):
        return None
    waiting = context.get(WAITING_KEY)
    if not isinstance(waiting, dict):
        rows = client.get_run(run_id).get("calls", [])
        waiting = {row["call_id"]: row for row in rows if row.get("approval_id") and row.get("outcome") is None}
        context[WAITING_KEY] = waiting
    row = waiting.get(tool_call_id)
    if row is None or row.get("tool") != tool_name:
        return None
    state = client.get_approval(str(row["approval_id"]))
    approval = state.approval
    if approval.raw.get("arguments") != encode_arguments(tool_params):
        return None
    waiting.pop(tool_call_id, None)
    answered = wait_for_approval(client, approval, strategy.max_wait) if approval.status == "pending" else state
    answer = interpret(approval, answered)
    if not answer.approved:
        return strategy._refuse(tool_name, tool_call_id, answer.error or {})
    grant = answer.grant
    if grant is not None and strategy._consumes(tool_name):
        client.consume_grant(
            grant.token,
            run_id=grant.run_id,
            call_id=grant.call_id,
            tool=grant.tool,
            arguments_digest=grant.arguments_digest,
        )
    arguments = answer.arguments if answer.arguments is not None else dict(tool_params)
    return ToolExecutionDecision(
        tool_name=tool_name, execute=True, tool_call_id=tool_call_id, final_tool_params=arguments
    )
