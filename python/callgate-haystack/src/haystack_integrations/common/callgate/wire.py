"""
The shapes of the callgate HTTP API as Python values, and the encoding of tool call arguments.

The server's JSON Schemas live in ``test/fixtures/schemas/`` of the callgate repository; the
dataclasses here carry the fields this package reads. Every response object also keeps its raw
``dict`` in ``raw`` so nothing the server sends is lost.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from .ecmascript import dumps as ecmascript_dumps

#: Where a local callgate server listens by default (`callgate serve`).
DEFAULT_SERVER_URL = "http://127.0.0.1:7420"
#: The environment variable naming the server (its base URL, or its ``/mcp`` URL).
URL_ENV_VAR = "CALLGATE_URL"
#: The environment variable holding the API key.
API_KEY_ENV_VAR = "CALLGATE_API_KEY"

_MAX_SAFE_INTEGER = 2**53 - 1


def resolve_server_url(url: str | None = None) -> str:
    """
    The base URL of the callgate server (scheme, host, port and any prefix, no trailing slash).

    A server started with ``callgate serve --socket PATH`` listens on a Unix-domain socket; name
    it ``unix:/path/to/callgate.sock`` (what the server prints; ``unix:///path`` too), or in the
    spelling of requests-unixsocket, ``http+unix://%2Fpath%2Fto%2Fcallgate.sock``.

    :param url: The URL given by the caller; ``None`` reads ``CALLGATE_URL``, then falls back to
        ``http://127.0.0.1:7420``. A URL ending in ``/mcp``, ``/mcp/<profile>`` or ``/v1`` is
        accepted and cut back to the base, so one setting serves the hook and the toolset.
    :returns: e.g. ``"http://127.0.0.1:7420"``, or ``"unix:/run/callgate.sock"`` for a socket
        (either socket spelling comes back as ``unix:PATH``).
    :raises ValueError: When the URL is not ``http``, ``https``, ``unix`` or ``http+unix``, or a
        socket path is not absolute.
    """
    text = (url or os.environ.get(URL_ENV_VAR) or DEFAULT_SERVER_URL).strip()
    socket_path = unix_socket_path(text)
    if socket_path is not None:
        return "unix:" + socket_path
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"the callgate URL must be http(s)://host[:port][/path] or unix:/path/to/socket, got {text!r}")
    segments = [segment for segment in parts.path.split("/") if segment]
    if "mcp" in segments:
        segments = segments[: segments.index("mcp")]
    elif segments and segments[-1] == "v1":
        segments = segments[:-1]
    path = "/" + "/".join(segments) if segments else ""
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def unix_socket_path(url: str) -> str | None:
    """
    The socket path a ``unix:`` or ``http+unix:`` URL names, or None for any other URL.

    ``unix:/run/callgate.sock`` and ``unix:///run/callgate.sock`` name ``/run/callgate.sock``;
    ``http+unix://%2Frun%2Fcallgate.sock/v1`` names it too (the host is the percent-encoded path,
    as requests-unixsocket writes it; a path after it, such as ``/v1`` or ``/mcp``, is dropped:
    a socket's server serves at its root).

    :raises ValueError: When the path is empty or not absolute.
    """
    if url.startswith("unix:"):
        path = url[len("unix:") :]
        if path.startswith("//"):
            path = path[2:]
    elif url.startswith("http+unix://"):
        path = unquote(url[len("http+unix://") :].partition("/")[0])
    else:
        return None
    if not path.startswith("/"):
        raise ValueError(f"the callgate URL {url!r} must name an absolute socket path, e.g. unix:/run/callgate.sock")
    return path


def _needs_text_form(value: Any, depth: int = 0) -> bool:
    """True when ``value`` cannot travel as plain JSON without losing what it is."""
    if depth > 64:
        return True
    if value is None or isinstance(value, (bool, str)):
        return False
    if isinstance(value, int):
        return not -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(not isinstance(key, str) or _needs_text_form(item, depth + 1) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return any(_needs_text_form(item, depth + 1) for item in value)
    return True


def encode_arguments(arguments: Any) -> Any:
    """
    The arguments of one call as the decisions request carries them.

    Plain JSON values travel as they are. Values JSON cannot carry faithfully (``NaN``,
    infinities, integers beyond ±(2^53−1), non-JSON objects) are sent as the JSON *text* the model
    would have produced (numbers as JavaScript writes them, ``NaN`` as its token), so the server
    parses it itself and refuses the call with a message naming the value, instead of the whole
    request failing or a number silently changing.

    :param arguments: The call's arguments (normally a ``dict``).
    :returns: The value itself, or its JSON text.
    """
    if not _needs_text_form(arguments):
        return arguments
    return ecmascript_dumps(arguments, allow_nan=True, default=repr)


def json_safe(value: Any) -> Any:
    """
    A JSON-able copy of ``value`` for records (tool results, message content): unknown objects
    become their ``to_dict()`` or their text, so recording never fails on an odd value. Numbers
    stay as they are: the body encoder (:mod:`.lossless_json`) sends an integer with every digit
    and replaces a value holding NaN/Infinity by the ``callgate-normalize/1`` marker core would
    commit, so the record says it was normalised instead of holding ``"nan"`` as if the tool had
    returned that text.
    """
    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        try:
            return json_safe(to_dict())
        except Exception:
            return repr(value)
    return repr(value)


@dataclass(frozen=True)
class Grant:
    """
    A one-use grant: bound to run, call, tool and arguments digest, valid until ``expires_at``
    (epoch ms). ``token`` is secret: present it once to consume the grant.
    """

    token: str
    run_id: str
    call_id: str
    tool: str
    arguments_digest: str
    expires_at: int

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Grant:
        """Builds a grant from its wire form (format version 1)."""
        return cls(
            token=str(data["token"]),
            run_id=str(data["run_id"]),
            call_id=str(data["call_id"]),
            tool=str(data["tool"]),
            arguments_digest=str(data["arguments_digest"]),
            expires_at=int(data["expires_at"]),
        )

    def __repr__(self) -> str:  # never print the token
        return f"Grant(call_id={self.call_id!r}, tool={self.tool!r}, expires_at={self.expires_at})"


@dataclass(frozen=True)
class Approval:
    """
    An approval: the request made for an ``ask`` decision. ``status`` is ``pending``,
    ``approved``, ``denied``, ``expired`` or ``withdrawn``; times are epoch ms.
    """

    id: str
    run_id: str
    call_id: str
    tool: str
    status: str
    reason: str
    expires_at: int
    reviewer: str | None = None
    response_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Approval:
        """Builds an approval from its wire form."""
        return cls(
            id=str(data["id"]),
            run_id=str(data.get("run_id", "")),
            call_id=str(data.get("call_id", "")),
            tool=str(data.get("tool", "")),
            status=str(data.get("status", "pending")),
            reason=str(data.get("reason", "")),
            expires_at=int(data.get("expires_at", 0)),
            reviewer=data.get("reviewer"),
            response_reason=data.get("response_reason"),
            raw=data,
        )


@dataclass(frozen=True)
class ApprovalState:
    """An approval as ``GET /v1/approvals/:id`` returns it, with the grant once approved."""

    approval: Approval
    grant: Grant | None = None
    #: The arguments to run with once approved: a reviewer's edit (when the policy allows edits) or the original.
    arguments: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ApprovalState:
        """Builds the state from the response body."""
        grant = data.get("grant")
        arguments = data.get("arguments")
        return cls(
            approval=Approval.from_dict(data["approval"]),
            grant=Grant.from_dict(grant) if isinstance(grant, dict) else None,
            arguments=arguments if isinstance(arguments, dict) else None,
        )


@dataclass(frozen=True)
class Verdict:
    """
    The server's answer for one call of a step.

    - ``status == "allowed"``: the call may run with ``arguments`` (parsed, validated, scrubbed);
      ``grant`` is its one-use grant.
    - ``status == "pending"``: ``approval`` was created; wait for it, then run or refuse.
    - ``status == "refused"``: the call must not run; ``error`` is what the model reads.
    """

    call_id: str
    minted: bool
    attempt: int
    tool: str
    status: str
    arguments: dict[str, Any] | None = None
    arguments_digest: str | None = None
    decision: dict[str, Any] | None = None
    approval: Approval | None = None
    grant: Grant | None = None
    error: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: True when the grant was consumed with the decision (``consume``): it is already spent.
    grant_consumed: bool = False

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        """Builds a verdict from its wire form."""
        approval = data.get("approval")
        grant = data.get("grant")
        arguments = data.get("arguments")
        return cls(
            call_id=str(data["call_id"]),
            minted=bool(data.get("minted", False)),
            attempt=int(data.get("attempt", 1)),
            tool=str(data.get("tool", "")),
            status=str(data["status"]),
            arguments=arguments if isinstance(arguments, dict) else None,
            arguments_digest=data.get("arguments_digest"),
            decision=data.get("decision"),
            approval=Approval.from_dict(approval) if isinstance(approval, dict) else None,
            grant=Grant.from_dict(grant) if isinstance(grant, dict) else None,
            error=data.get("error") if isinstance(data.get("error"), dict) else None,
            raw=data,
            grant_consumed=data.get("grant_consumed") is True,
        )

    @property
    def effect(self) -> str | None:
        """The decision's effect (``allow``, ``deny``, ``ask``), or None when the call was refused before deciding."""
        return self.decision.get("effect") if isinstance(self.decision, dict) else None
