"""
Waiting for an approval, and what its answer means for the call.

An ``ask`` decision creates an approval that a person answers through the API, the inbox or the
CLI. The waiter long-polls ``GET /v1/approvals/:id?wait=`` (at most 60 s a request) until the
approval leaves ``pending`` or its wait limit passes: the policy's (the approval's
``expires_at``, after which the server expires it) or the caller's ``max_wait``, whichever comes
first.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .client import MAX_WAIT_SECONDS, AsyncCallgateClient, CallgateClient
from .wire import Approval, ApprovalState, Grant

#: Seconds past an approval's ``expires_at`` to keep polling, so the server's own expiry arrives.
EXPIRY_GRACE_SECONDS = 2.0


def wait_deadline(approval: Approval, max_wait: float | None, started: float) -> float:
    """
    When to stop waiting for ``approval`` (``time.time()`` seconds).

    :param approval: The pending approval (its ``expires_at`` is the policy's wait limit, epoch ms).
    :param max_wait: The caller's own cap in seconds, or None for the policy's limit only.
    :param started: When the wait started (``time.time()``).
    """
    deadline = approval.expires_at / 1000.0 + EXPIRY_GRACE_SECONDS if approval.expires_at else started + 300.0
    if max_wait is not None:
        deadline = min(deadline, started + max(0.0, max_wait))
    return deadline


def wait_for_approval(client: CallgateClient, approval: Approval, max_wait: float | None) -> ApprovalState | None:
    """
    Waits for ``approval`` to be answered.

    :returns: Its state once it left ``pending``, or None when it is still pending at the deadline.
    :raises ServerUnreachable: When the server goes away during the wait.
    """
    deadline = wait_deadline(approval, max_wait, time.time())
    while True:
        remaining = deadline - time.time()
        if remaining <= 0:
            return None
        state = client.get_approval(approval.id, wait=min(remaining, MAX_WAIT_SECONDS))
        if state.approval.status != "pending":
            return state


async def wait_for_approval_async(
    client: AsyncCallgateClient, approval: Approval, max_wait: float | None
) -> ApprovalState | None:
    """The coroutine twin of :func:`wait_for_approval`."""
    deadline = wait_deadline(approval, max_wait, time.time())
    while True:
        remaining = deadline - time.time()
        if remaining <= 0:
            return None
        state = await client.get_approval(approval.id, wait=min(remaining, MAX_WAIT_SECONDS))
        if state.approval.status != "pending":
            return state


@dataclass(frozen=True)
class ApprovalAnswer:
    """What an approval's answer means for its call."""

    #: True when the call may run.
    approved: bool
    #: The refusal the model reads when it may not: ``{"kind", "message", "approval_id"}``.
    error: dict[str, Any] | None = None
    grant: Grant | None = None
    #: The arguments to run with (a reviewer's edit, where the policy allows edits).
    arguments: dict[str, Any] | None = None
    #: The reviewer's reason, to pass on to the model with an edit.
    reason: str | None = None


def interpret(approval: Approval, state: ApprovalState | None) -> ApprovalAnswer:
    """
    Maps an approval's final state to the call's fate.

    - approved: may run, with the grant and the (possibly edited) arguments;
    - denied: ``approval-denied`` naming the reviewer and reason;
    - expired or withdrawn: ``approval-expired``;
    - still pending (``state`` is None): ``approval-pending``, ``approval required: <id>``.
    """
    if state is None:
        return ApprovalAnswer(
            approved=False,
            error={
                "kind": "approval-pending",
                "message": f"approval required: {approval.id}",
                "approval_id": approval.id,
            },
        )
    answered = state.approval
    reason = answered.response_reason
    if answered.status == "approved":
        return ApprovalAnswer(approved=True, grant=state.grant, arguments=state.arguments, reason=reason)
    if answered.status == "denied":
        who = answered.reviewer or "the reviewer"
        message = f"{who} denied the call" + (f": {reason}" if reason else "")
        return ApprovalAnswer(
            approved=False, error={"kind": "approval-denied", "message": message, "approval_id": answered.id}
        )
    message = f"the approval was {answered.status} before anyone approved it" + (f" ({reason})" if reason else "")
    return ApprovalAnswer(
        approved=False, error={"kind": "approval-expired", "message": message, "approval_id": answered.id}
    )
