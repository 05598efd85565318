"""
The operations of the callgate server API, each once: a function taking the operation's
arguments and returning the :class:`~.api.Call` (request + how to read its answer). The clients
of :mod:`.client` expose each as a method of the same name and arguments; the docstrings here are
those methods' docstrings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .api import MAX_WAIT_SECONDS, Call, Request, StepAnswer, outcome_results
from .wire import ApprovalState, Verdict


def _verdicts(answer: Any) -> list[Verdict]:
    return [Verdict.from_dict(item) for item in answer["verdicts"]]


def _listed(key: str) -> Callable[[Any], list[dict[str, Any]]]:
    return lambda answer: list(answer.get(key, [])) if isinstance(answer, dict) else []


def _outcome(answer: Any) -> str:
    return str(answer.get("outcome")) if isinstance(answer, dict) else str(answer)


def _nothing(_answer: Any) -> None:
    return None


def _reason(reason: str | None) -> dict[str, Any]:
    return {"reason": reason} if reason is not None else {}


def _flags(**flags: bool) -> dict[str, str] | None:
    return {key: "true" for key, on in flags.items() if on} or None


def health() -> Call[dict[str, Any]]:
    """``GET /v1/health``: ``{"status": "ok" | "degraded" | "draining", "version": ..., "problems"?: [...]}``."""
    return Call(Request("GET", "/v1/health"))


def start_run(
    framework: str,
    *,
    principal: str | None = None,
    labels: dict[str, str] | None = None,
    parent_run_id: str | None = None,
) -> Call[dict[str, Any]]:
    """
    Starts a run.

    :param framework: The framework that runs the agent, e.g. ``"haystack"``.
    :param principal: Who the run acts for; the server uses the key's name when absent.
    :param labels: Free-form string labels.
    :param parent_run_id: The run this one is a sub-run of (an agent used as a tool).
    :returns: The run: ``{"run_id", "principal", "framework", "labels", "status", "started_at", ...}``.
    """
    body: dict[str, Any] = {"framework": framework}
    if principal:
        body["principal"] = principal
    if labels:
        body["labels"] = labels
    if parent_run_id:
        body["parent_run_id"] = parent_run_id
    return Call(Request("POST", "/v1/runs", body))


def _decisions(
    run_id: str,
    calls: list[dict[str, Any]],
    message: dict[str, Any] | None,
    tools: list[dict[str, Any]] | None,
    consume: bool = False,
    outcomes: list[dict[str, Any]] | None = None,
) -> Request:
    body: dict[str, Any] = {"calls": calls}
    if message is not None:
        body["message"] = message
    if tools:
        body["tools"] = tools
    if consume:
        body["consume"] = True
    if outcomes:
        body["outcomes"] = outcomes
    return Request("POST", f"/v1/runs/{run_id}/decisions", body)


def decide(
    run_id: str,
    calls: list[dict[str, Any]],
    *,
    message: dict[str, Any] | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> Call[list[Verdict]]:
    """
    Decides a step's calls, all in one request, before any of them runs.

    :param run_id: The run.
    :param calls: ``[{"id": str | None, "tool": str, "arguments": dict | str}]`` in the model's order.
    :param message: The model message that asked for them, ``{"role", "content"}``; recorded first.
    :param tools: Tool specs (``{"name", "description", "inputSchema", ...}``) the server may not know yet.
    :returns: One :class:`~.wire.Verdict` per call, in order.
    """
    return Call(_decisions(run_id, calls, message, tools), _verdicts)


def decide_step(
    run_id: str,
    calls: list[dict[str, Any]],
    *,
    message: dict[str, Any] | None = None,
    tools: list[dict[str, Any]] | None = None,
    consume: bool = False,
    outcomes: list[dict[str, Any]] | None = None,
) -> Call[StepAnswer]:
    """
    Decides a step's calls with one request that also carries the previous step's outcomes:
    the server records ``outcomes`` in order, then decides ``calls``, and commits both together.

    :param consume: Consume each allowed call's grant with its decision (for calls this process
        runs right after); a call's own ``"consume": bool`` overrides it. Their verdicts say
        ``grant_consumed``.
    :param outcomes: Outcome reports (see :meth:`record_outcome`) not sent yet, in order.
    :returns: A :class:`~.api.StepAnswer`: the verdicts and what became of each outcome.
    """
    return Call(_decisions(run_id, calls, message, tools, consume, outcomes), StepAnswer.from_dict)


def record_message(run_id: str, role: str, content: Any = None) -> Call[None]:
    """Records a model message that asked for no tool calls (its content is committed)."""
    body: dict[str, Any] = {"role": role}
    if content is not None:
        body["content"] = content
    return Call(Request("POST", f"/v1/runs/{run_id}/messages", body), _nothing)


def record_outcome(run_id: str, report: dict[str, Any]) -> Call[str]:
    """
    Records how a call ended.

    :param report: ``{"call_id", "attempt"?, "outcome", "result"?, "error_kind"?, "tool"?,
        "arguments"?, "duration_ms"?, "grant_consumed"?}``. ``tool``/``arguments`` are what
        actually ran: a difference from the decision is recorded as ``changed-after-decision``.
    :returns: The outcome recorded.
    """
    return Call(Request("POST", f"/v1/runs/{run_id}/outcomes", report), _outcome)


def record_outcomes(run_id: str, reports: list[dict[str, Any]]) -> Call[list[dict[str, Any]]]:
    """
    Records several outcomes of a run with one request, in order.

    :returns: What became of each, in order: ``{"call_id", "outcome"}`` when recorded,
        ``{"call_id", "error": {"kind", "message"}}`` when refused.
    """
    return Call(Request("POST", f"/v1/runs/{run_id}/outcomes", {"outcomes": reports}), outcome_results)


def record_gap(run_id: str, *, reason: str, from_ts: int, to_ts: int, calls: int) -> Call[None]:
    """
    Records an outage (``gap``): calls ran undecided between ``from_ts`` and ``to_ts`` (epoch ms).

    :raises NotFound: When the server has no route for gap records.
    """
    body = {"reason": reason, "from_ts": from_ts, "to_ts": to_ts, "calls": calls}
    return Call(Request("POST", f"/v1/runs/{run_id}/gaps", body), _nothing)


def get_approval(approval_id: str, *, wait: float = 0.0) -> Call[ApprovalState]:
    """
    An approval, waiting up to ``wait`` seconds (long-poll, at most 60) for it to be answered.

    :returns: The approval and, when it was approved and this key owns the run, its grant.
    """
    wait = max(0.0, min(wait, MAX_WAIT_SECONDS))
    params = {"wait": f"{wait:.3f}".rstrip("0").rstrip(".") or "0"} if wait > 0 else None
    request = Request("GET", f"/v1/approvals/{approval_id}", params=params, extra_timeout=wait)
    return Call(request, ApprovalState.from_dict)


def approve(
    approval_id: str, *, reason: str | None = None, arguments: dict[str, Any] | None = None
) -> Call[ApprovalState]:
    """Approves a pending approval (needs a reviewer or admin key). ``arguments`` is an edit."""
    body = _reason(reason)
    if arguments is not None:
        body["arguments"] = arguments
    return Call(Request("POST", f"/v1/approvals/{approval_id}/approve", body), ApprovalState.from_dict)


def deny(approval_id: str, *, reason: str | None = None) -> Call[ApprovalState]:
    """Denies a pending approval (needs a reviewer or admin key)."""
    return Call(Request("POST", f"/v1/approvals/{approval_id}/deny", _reason(reason)), ApprovalState.from_dict)


def withdraw_approval(approval_id: str, *, reason: str | None = None) -> Call[None]:
    """Withdraws a pending approval the caller stopped waiting for."""
    return Call(Request("POST", f"/v1/approvals/{approval_id}/withdraw", _reason(reason)), _nothing)


def list_approvals(*, status: str | None = None, run_id: str | None = None) -> Call[list[dict[str, Any]]]:
    """Approvals by status or run, oldest first (reviewer or admin key)."""
    params = {key: value for key, value in (("status", status), ("run_id", run_id)) if value}
    return Call(Request("GET", "/v1/approvals", params=params or None), _listed("approvals"))


def consume_grant(token: str, *, run_id: str, call_id: str, tool: str, arguments_digest: str) -> Call[dict[str, Any]]:
    """
    Consumes a grant for exactly this call, atomically and once.

    :raises GrantInvalid: On any mismatch, reuse or expiry.
    """
    body = {"token": token, "run_id": run_id, "call_id": call_id, "tool": tool, "arguments_digest": arguments_digest}
    return Call(Request("POST", "/v1/grants/consume", body))


def end_run(
    run_id: str, status: str = "completed", *, outcomes: list[dict[str, Any]] | None = None
) -> Call[dict[str, Any]]:
    """
    Ends a run: ``outcomes`` not sent yet are recorded first, in order; calls decided but never
    completed are recorded as ``decided-not-completed`` (asks never approved as ``denied``),
    then ``run-end``.

    :param status: ``completed``, ``failed`` or ``cancelled``.
    :returns: The run; with ``outcomes``, its ``"outcomes"`` say what became of each (see :meth:`record_outcomes`).
    """
    body: dict[str, Any] = {"status": status}
    if outcomes:
        body["outcomes"] = outcomes
    return Call(Request("POST", f"/v1/runs/{run_id}/end", body))


def get_run(run_id: str) -> Call[dict[str, Any]]:
    """``GET /v1/runs/:id``: ``{"run": ..., "calls": [...]}``."""
    return Call(Request("GET", f"/v1/runs/{run_id}"))


def bundle(run_id: str, *, openings: bool = False, proofs: bool = False) -> Call[dict[str, Any]]:
    """
    Exports a run as a bundle: ``callgate-bundle/2`` (one batch inclusion proof of all its
    records), or with ``proofs`` ``callgate-bundle/1`` (one inclusion proof per record).
    """
    return Call(Request("GET", f"/v1/runs/{run_id}/bundle", params=_flags(openings=openings, proofs=proofs)))


def verify(bundle: dict[str, Any], *, strict: bool = False) -> Call[dict[str, Any]]:
    """
    Verifies a bundle with the server's verifier, against the server's own log key.

    :param strict: Also require every run to end with ``run-end``.
    :returns: ``{"ok": bool, "failures": [{"check", "message", ...}], "warnings", "records", "checkpoints"}``.
    """
    return Call(Request("POST", "/v1/verify", bundle, params=_flags(strict=strict), extra_timeout=30.0))


def list_tools() -> Call[list[dict[str, Any]]]:
    """The tool specs the server knows (its registry)."""
    return Call(Request("GET", "/v1/tools"), _listed("tools"))
