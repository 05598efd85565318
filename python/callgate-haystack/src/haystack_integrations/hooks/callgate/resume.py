"""
Resuming a run after an ask: a call refused as ``approval-pending`` (the wait ran out, or the
process stopped) is taken up by a later agent run, in this process or another.

The run whose call waits for an approval stays open when its agent run ends (nothing records
the call's end yet). A later agent run carries the callgate run id, or the approval id, in its
``hook_context``::

    agent.run(messages, hook_context={"callgate_run_id": run_id})          # or
    agent.run(messages, hook_context={"callgate_approval_id": approval_id})

and decides into that run. When the model asks for the same call again (same call id, tool and
arguments), the hook takes the approval a reviewer answered meanwhile instead of asking again:
approved, the call runs on its one-use grant; denied, expired or withdrawn, it is refused at once;
still pending, the hook waits for it (up to ``max_wait`` or the policy's limit). Any other call is
decided as usual.
"""

from __future__ import annotations

import logging
from typing import Any

from haystack.dataclasses import ToolCall
from haystack.tools import Tool

from haystack_integrations.common.callgate.approvals import interpret, wait_for_approval
from haystack_integrations.common.callgate.client import CallgateClient
from haystack_integrations.common.callgate.errors import Conflict
from haystack_integrations.common.callgate.specs import gateway_url_of
from haystack_integrations.common.callgate.wire import ApprovalState, encode_arguments

from .decisions import Resolution
from .reports import refused_report
from .runs import DecidedCall, RunContext
from .step import CallPlan, plan_call

#: ``hook_context`` keys naming the run to resume, or one of its approvals.
RESUME_RUN_KEY = "callgate_run_id"
RESUME_APPROVAL_KEY = "callgate_approval_id"
#: Where the hook lists the approvals a run that stays open waits for.
PENDING_KEY = "callgate_pending_approvals"


def resume_target(client: CallgateClient, hook_context: dict[str, Any] | None) -> str | None:
    """The run a ``hook_context`` asks to resume: its ``callgate_run_id``, or the run of its ``callgate_approval_id``.

    :raises NotFound: For an approval id the server does not know (or this key may not see).
    """
    if not hook_context:
        return None
    approval_id = hook_context.get(RESUME_APPROVAL_KEY)
    if isinstance(approval_id, str) and approval_id:
        return client.get_approval(approval_id).approval.run_id
    run_id = hook_context.get(RESUME_RUN_KEY)
    return run_id if isinstance(run_id, str) and run_id else None


def adopt(client: CallgateClient, context: RunContext, run_id: str) -> None:
    """
    Makes ``context`` decide into the open run ``run_id`` and notes its calls that wait for an approval.

    :raises Conflict: When the run has ended (it can no longer be resumed).
    """
    answer = client.get_run(run_id)
    status = answer["run"].get("status")
    if status != "running":
        raise Conflict(
            f"run {run_id} has ended ({status}) and cannot be resumed: pass hook_context without "
            f"{RESUME_RUN_KEY!r} / {RESUME_APPROVAL_KEY!r} to start a new run"
        )
    context.run_id = run_id
    for row in answer.get("calls", []):
        if row.get("approval_id") and row.get("outcome") is None:
            context.resumable[str(row["call_id"])] = row


def resumable_calls(context: RunContext, calls: list[ToolCall]) -> dict[int, dict[str, Any]]:
    """The positions of ``calls`` that take up an earlier call of the run waiting on its approval."""
    found: dict[int, dict[str, Any]] = {}
    for index, call in enumerate(calls):
        row = context.resumable.get(call.id or "")
        if row is not None and row.get("tool") == call.tool_name:
            found[index] = row
    return found


def resume_call(
    client: CallgateClient,
    context: RunContext,
    call: ToolCall,
    row: dict[str, Any],
    tools: dict[str, Tool],
    max_wait: float | None,
    logger: logging.Logger,
) -> Resolution | None:
    """
    The fate of ``call`` from the approval its earlier attempt waits on; None when the approval
    is for other arguments (the call is then decided afresh).
    """
    state = client.get_approval(str(row["approval_id"]))
    approval = state.approval
    context.resumable.pop(call.id or "", None)
    call_id, attempt = str(row["call_id"]), int(row.get("attempt", 1))
    if approval.raw.get("arguments") != encode_arguments(call.arguments):
        logger.info(
            "callgate: call %s asks with other arguments than approval %s: deciding it again", call.id, approval.id
        )
        _close_superseded(client, context, call_id, attempt, state)
        return None
    if approval.status == "pending":
        state = wait_for_approval(client, approval, max_wait)
    answer = interpret(approval, state)
    if not answer.approved:
        error = answer.error or {"kind": "approval-expired", "message": "the approval was not granted"}
        report = None if error.get("kind") == "approval-pending" else refused_report(call_id, attempt, error)
        return Resolution(CallPlan(call, plan_call(call, call_id, None), error=error), report=report)
    gateway = gateway_url_of(tools.get(call.tool_name)) is not None
    grant = answer.grant
    if grant is None and not gateway:
        error = {
            "kind": "grant-invalid",
            "message": f"approval {approval.id} yielded no grant for this key, so the call was not run",
            "approval_id": approval.id,
        }
        return Resolution(
            CallPlan(call, plan_call(call, call_id, None), error=error), report=refused_report(call_id, attempt, error)
        )
    if grant is not None and not gateway:
        client.consume_grant(
            grant.token,
            run_id=grant.run_id,
            call_id=grant.call_id,
            tool=grant.tool,
            arguments_digest=grant.arguments_digest,
        )
    arguments = answer.arguments if answer.arguments is not None else dict(call.arguments)
    tool_call = plan_call(call, call_id, arguments)
    decided = DecidedCall(
        call_id=call_id,
        attempt=attempt,
        tool=call.tool_name,
        arguments=arguments,
        tool_call=tool_call,
        gateway=gateway,
        grant=grant,
        grant_consumed=grant is not None and not gateway,
    )
    return Resolution(CallPlan(call, tool_call), decided=decided)


def _close_superseded(
    client: CallgateClient, context: RunContext, call_id: str, attempt: int, state: ApprovalState
) -> None:
    """
    Ends the waiting attempt of a call asked again with other arguments, before the new attempt is
    decided (the server takes outcomes of a call's latest attempt): its approval is withdrawn when
    still pending (nobody should approve a call that will not run) and the attempt is refused.
    """
    approval = state.approval
    if approval.status == "pending":
        client.withdraw_approval(approval.id, reason="the call was asked again with other arguments")
        error = {"kind": "approval-expired", "message": "the call was asked again with other arguments"}
    elif approval.status == "approved":
        error = {"kind": "grant-invalid", "message": "the call was asked again with other arguments; it did not run"}
    else:
        error = interpret(approval, state).error or {"kind": "approval-expired", "message": approval.status}
    client.record_outcome(context.run_id or "", refused_report(call_id, attempt, {**error, "approval_id": approval.id}))
