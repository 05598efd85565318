"""
The callgate server API (``/v1``) without I/O: each operation is a function that builds the
:class:`Request` to send and says how to read its answer (a :class:`Call`); :func:`read_answer`
turns a response's status and body into a value or the error it means. The synchronous and
asynchronous clients (:mod:`.client`) send the same calls over their own transports, so every
operation exists once.

Bodies are encoded and decoded by :mod:`.codec` only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .codec import decode_body
from .errors import GateUnavailable, error_from_body
from .wire import ApprovalState, Verdict

T = TypeVar("T")

#: Statuses that mean "the server is not there" rather than "the server said no".
UNREACHABLE_STATUSES = frozenset({502, 503, 504})
#: The longest long-poll the server accepts for one request, in seconds.
MAX_WAIT_SECONDS = 60.0


class ServerUnreachable(GateUnavailable):
    """The callgate server could not be reached (the cause is in ``__cause__``)."""


@dataclass(frozen=True, slots=True)
class Request:
    """
    One request: ``method``, ``path`` (from the server's base URL, e.g. ``/v1/runs``), a JSON
    ``body`` (``None``: no body), query ``params``, and ``extra_timeout``: seconds added to the
    client's time-out (a long-poll's wait).
    """

    method: str
    path: str
    body: Any = None
    params: dict[str, str] | None = None
    extra_timeout: float = 0.0


def _same(answer: Any) -> Any:
    return answer


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """A request and how to read its answer's decoded body into the operation's value."""

    request: Request
    read: Callable[[Any], T] = _same  # type: ignore[assignment]


def read_answer(status: int, reason: str, content: bytes) -> Any:
    """
    The decoded body of a 2xx answer.

    :raises ServerUnreachable: For 502, 503 and 504 (a proxy, or a server not ready).
    :raises CallgateError: The class of the body's error kind for any other non-2xx answer
        (:func:`~.errors.error_from_body`).
    """
    if status in UNREACHABLE_STATUSES:
        raise ServerUnreachable(f"the callgate server answered {status} ({reason})")
    payload = decode_body(content)
    if 200 <= status < 300:
        return payload
    raise error_from_body(payload, status=status)


def unreachable(url: str, error: BaseException) -> ServerUnreachable:
    """The :class:`ServerUnreachable` for a transport failure ``error`` talking to ``url``."""
    reason = str(error) or type(error).__name__
    failure = ServerUnreachable(f"the callgate server at {url} cannot be reached: {reason}")
    failure.__cause__ = error
    return failure


@dataclass(frozen=True)
class StepAnswer:
    """
    The answer to a decisions request: one verdict per call, in order, and what became of each
    outcome the request carried (``{"call_id", "outcome"}`` when recorded,
    ``{"call_id", "error": {"kind", "message"}}`` when refused), in order.
    """

    verdicts: list[Verdict]
    outcomes: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_dict(cls, answer: dict[str, Any]) -> StepAnswer:
        return cls([Verdict.from_dict(item) for item in answer["verdicts"]], outcome_results(answer))


def outcome_results(answer: Any) -> list[dict[str, Any]]:
    """The ``outcomes`` list of an answer (what became of each outcome sent), ``[]`` when absent."""
    outcomes = answer.get("outcomes") if isinstance(answer, dict) else None
    return [item for item in outcomes if isinstance(item, dict)] if isinstance(outcomes, list) else []
