"""
The one exception tree of callgate in Python.

Every refusal and failure callgate reports carries exactly one *kind* from a closed list, the same
list on every surface (the TypeScript ``CallgateError``, HTTP bodies ``{"error": {"kind", "message"}}``,
MCP tool results). This module mirrors that list: one class per kind, under two branches.

- :class:`CallgateToolRefused` — the kinds a single tool call can be refused with (``policy-denied``,
  ``approval-denied``, ``gate-unavailable``, ...). A model reads these as the call's tool result.
- :class:`CallgateRequestError` — request-level kinds of the HTTP API (``unauthorized``,
  ``not-found``, ``conflict``, ...).

Build the right class from a wire body with :func:`error_from_body`::

    from haystack_integrations.common.callgate.errors import PolicyDenied, error_from_body

    error = error_from_body({"error": {"kind": "policy-denied", "message": "deletes are denied"}})
    assert isinstance(error, PolicyDenied)
    assert error.kind == "policy-denied"
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

#: The closed list of error kinds, in the order of the protocol package.
ERROR_KINDS: tuple[str, ...] = (
    "tool-args-invalid",
    "tool-not-found",
    "policy-denied",
    "approval-denied",
    "approval-pending",
    "approval-expired",
    "grant-invalid",
    "guardrail-blocked",
    "run-limit-exceeded",
    "idempotency-blocked",
    "gate-unavailable",
    "tool-error",
    "request-invalid",
    "policy-invalid",
    "unauthorized",
    "forbidden",
    "not-found",
    "conflict",
    "ledger-invalid",
    "internal",
    "store-unavailable",
)


class CallgateError(Exception):
    """
    The base of every callgate error.

    :param message: What was wrong and where, for a person or a model to read.
    :param kind: One of :data:`ERROR_KINDS`. Subclasses fix it; pass it only to this base class.
    :param details: Structured extras of the wire body (``approval_id``, ``call_id``, ``rules``,
        ``path``, ...).

    ``kind`` is stable and machine-readable; ``details`` keeps every other field of the body.
    :meth:`to_body` gives back the wire shape ``{"error": {"kind", "message", ...details}}``.
    """

    kind: ClassVar[str] = "internal"

    def __init__(self, message: str, *, kind: str | None = None, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        if kind is not None:
            # An instance-level kind for kinds this package does not know (a newer server).
            self.kind = kind  # type: ignore[misc]
        self.details: dict[str, Any] = dict(details or {})
        #: The HTTP status the error came with, when it came from the server.
        self.status: int | None = None

    @property
    def approval_id(self) -> str | None:
        """The approval this error is about, when there is one."""
        value = self.details.get("approval_id")
        return value if isinstance(value, str) else None

    @property
    def call_id(self) -> str | None:
        """The call this error is about, when there is one."""
        value = self.details.get("call_id")
        return value if isinstance(value, str) else None

    def to_body(self) -> dict[str, Any]:
        """
        The wire shape of this error.

        :returns: ``{"error": {**details, "kind": ..., "message": ...}}``.
        """
        return {"error": {**self.details, "kind": self.kind, "message": self.message}}

    def to_json(self) -> str:
        """The wire shape as compact JSON text (what a model reads as a refused call's result)."""
        return json.dumps(self.to_body(), ensure_ascii=False, separators=(",", ":"), default=str)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind!r}, message={self.message!r})"


class CallgateToolRefused(CallgateError):
    """
    A tool call was refused and did not run. Raised by
    :class:`~haystack_integrations.hooks.callgate.CallgateRefusalHook` for users who want a refusal to
    end the agent run; :func:`~haystack_integrations.common.callgate.results.extract_outcome` returns
    the same information as a value instead.
    """

    kind: ClassVar[str] = "policy-denied"


class CallgateRequestError(CallgateError):
    """A request to the callgate server was refused as a whole (auth, validation, missing resource)."""

    kind: ClassVar[str] = "request-invalid"


# --- kinds a tool call can be refused with --------------------------------------------------


class ToolArgsInvalid(CallgateToolRefused):
    """The call's arguments do not match the tool's input schema or are not safe JSON."""

    kind: ClassVar[str] = "tool-args-invalid"


class ToolNotFound(CallgateToolRefused):
    """The call names a tool the server does not know."""

    kind: ClassVar[str] = "tool-not-found"


class PolicyDenied(CallgateToolRefused):
    """A policy rule (or the policy default) denied the call."""

    kind: ClassVar[str] = "policy-denied"


class ApprovalDenied(CallgateToolRefused):
    """A person denied the call (or edited it where the policy counts an edit as a denial)."""

    kind: ClassVar[str] = "approval-denied"


class ApprovalPending(CallgateToolRefused):
    """The call needs a person's approval that has not come within the wait limit."""

    kind: ClassVar[str] = "approval-pending"


class ApprovalExpired(CallgateToolRefused):
    """The call's approval expired or was withdrawn before anyone answered it."""

    kind: ClassVar[str] = "approval-expired"


class GrantInvalid(CallgateToolRefused):
    """The call's grant was unknown, spent, expired, or bound to another call or arguments."""

    kind: ClassVar[str] = "grant-invalid"


class GuardrailBlocked(CallgateToolRefused):
    """A guardrail (size, pattern, secret-looking value) blocked the call."""

    kind: ClassVar[str] = "guardrail-blocked"


class RunLimitExceeded(CallgateToolRefused):
    """The run, or this tool within the run, reached its call limit."""

    kind: ClassVar[str] = "run-limit-exceeded"


class IdempotencyBlocked(CallgateToolRefused):
    """The same side effect already completed once."""

    kind: ClassVar[str] = "idempotency-blocked"


class GateUnavailable(CallgateToolRefused):
    """The callgate server could not be reached and the fail mode is ``closed``."""

    kind: ClassVar[str] = "gate-unavailable"


class ToolError(CallgateToolRefused):
    """The tool ran and failed."""

    kind: ClassVar[str] = "tool-error"


class GatewayConnectionError(GateUnavailable):
    """
    The MCP gateway could not be reached (or refused the API key) when the toolset connected.
    The message names the URL and what to check; ``__cause__`` is mcp-haystack's own error.
    """


# --- request-level kinds --------------------------------------------------------------------


class RequestInvalid(CallgateRequestError):
    """The request body or query was malformed; ``details["path"]`` names the field."""

    kind: ClassVar[str] = "request-invalid"


class PolicyInvalid(CallgateRequestError):
    """A policy did not load."""

    kind: ClassVar[str] = "policy-invalid"


class Unauthorized(CallgateRequestError):
    """No API key, or the key is unknown or revoked."""

    kind: ClassVar[str] = "unauthorized"


class Forbidden(CallgateRequestError):
    """The key's role may not do this (an agent key can never approve)."""

    kind: ClassVar[str] = "forbidden"


class NotFound(CallgateRequestError):
    """No such run, approval or call (or the key may not see it)."""

    kind: ClassVar[str] = "not-found"


class Conflict(CallgateRequestError):
    """The resource is no longer in a state that allows this (an ended run, an answered approval)."""

    kind: ClassVar[str] = "conflict"


class LedgerInvalid(CallgateRequestError):
    """A bundle or the ledger failed verification."""

    kind: ClassVar[str] = "ledger-invalid"


class InternalError(CallgateRequestError):
    """The server failed in a way it did not expect."""

    kind: ClassVar[str] = "internal"


class StoreUnavailable(CallgateRequestError):
    """The server's store cannot write (disk full, I/O error); retry once it has recovered."""

    kind: ClassVar[str] = "store-unavailable"


_BY_KIND: dict[str, type[CallgateError]] = {
    cls.kind: cls
    for cls in (
        ToolArgsInvalid,
        ToolNotFound,
        PolicyDenied,
        ApprovalDenied,
        ApprovalPending,
        ApprovalExpired,
        GrantInvalid,
        GuardrailBlocked,
        RunLimitExceeded,
        IdempotencyBlocked,
        GateUnavailable,
        ToolError,
        RequestInvalid,
        PolicyInvalid,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        LedgerInvalid,
        InternalError,
        StoreUnavailable,
    )
}

#: The kinds a single tool call can be refused with (the :class:`CallgateToolRefused` branch).
TOOL_REFUSAL_KINDS: frozenset[str] = frozenset(
    kind for kind, cls in _BY_KIND.items() if issubclass(cls, CallgateToolRefused)
)


def error_class(kind: str) -> type[CallgateError]:
    """
    The exception class of an error kind.

    :param kind: An error kind, e.g. ``"approval-denied"``.
    :returns: Its class; :class:`CallgateError` for a kind this package does not know.
    """
    return _BY_KIND.get(kind, CallgateError)


def error_from_body(body: Any, *, status: int | None = None) -> CallgateError:
    """
    Builds the exception of a wire error body.

    :param body: ``{"error": {"kind", "message", ...}}`` as parsed JSON, or the inner ``error``
        object itself. Anything else yields an :class:`InternalError` describing it.
    :param status: The HTTP status the body came with, kept in the error's ``status``.
    :returns: An instance of the class of the body's kind, carrying every other field in ``details``.
    """
    inner = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else body
    if not isinstance(inner, dict) or not isinstance(inner.get("kind"), str):
        text = body if isinstance(body, str) else json.dumps(body, default=str)[:500]
        fallback = InternalError(f"the server answered{f' {status}' if status else ''} without an error body: {text}")
        fallback.status = status
        return fallback
    kind: str = inner["kind"]
    given = inner.get("message")
    message: str = given if isinstance(given, str) else kind
    details = {key: value for key, value in inner.items() if key not in ("kind", "message")}
    cls = error_class(kind)
    error = (
        CallgateError(message, kind=kind, details=details) if cls is CallgateError else cls(message, details=details)
    )
    error.status = status
    return error
