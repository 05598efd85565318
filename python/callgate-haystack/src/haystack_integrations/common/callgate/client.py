"""
HTTP clients of the callgate server API (``/v1``), synchronous and asynchronous: the synchronous
one on keep-alive ``http.client`` connections (:mod:`.transport`; half the time per request of
httpx, measured side by side), the asynchronous one on httpx's asyncio client.

Both clients take the same arguments and return the same values; every method of
:class:`AsyncCallgateClient` is the coroutine of the method of the same name on
:class:`CallgateClient`. Errors:

- :class:`ServerUnreachable` (a :class:`~.errors.GateUnavailable`) when the server cannot be
  reached: connection refused or reset, a time-out, or a 502/503/504 from a proxy in front of it.
  This is what fail modes act on.
- Any other non-2xx answer raises the exception class of its error kind
  (:func:`~.errors.error_from_body`), e.g. :class:`~.errors.Unauthorized` for a bad key.

Usage::

    from haystack.utils import Secret
    from haystack_integrations.common.callgate.client import CallgateClient

    client = CallgateClient(url="http://127.0.0.1:7420", api_key=Secret.from_env_var("CALLGATE_API_KEY"))
    run = client.start_run(framework="haystack")
    verdicts = client.decide(run["run_id"], [{"id": "call-1", "tool": "read_file", "arguments": {"path": "a.txt"}}])
    client.record_outcome(run["run_id"], {"call_id": "call-1", "outcome": "ok", "result": "hello"})
    client.end_run(run["run_id"])
    client.close()
"""

from __future__ import annotations

import http.client
from dataclasses import dataclass, field
from typing import Any

import httpx
from haystack.utils import Secret

from . import lossless_json
from .errors import GateUnavailable, error_from_body
from .trace_context import trace_headers
from .transport import Answer, KeepAliveConnections
from .wire import ApprovalState, Verdict, resolve_server_url

#: Statuses that mean "the server is not there" rather than "the server said no".
_UNREACHABLE_STATUSES = frozenset({502, 503, 504})
#: The longest long-poll the server accepts for one request, in seconds.
MAX_WAIT_SECONDS = 60.0


class ServerUnreachable(GateUnavailable):
    """The callgate server could not be reached (the cause is in ``__cause__``)."""


@dataclass(frozen=True)
class _Request:
    method: str
    path: str
    body: Any = None
    params: dict[str, Any] | None = None
    timeout: float | None = None


def _api_key_value(api_key: Secret | str | None) -> str | None:
    if api_key is None:
        return None
    if isinstance(api_key, Secret):
        return api_key.resolve_value()
    return api_key


class _Api:
    """The requests of the API, shared by both clients."""

    @staticmethod
    def start_run(
        framework: str,
        principal: str | None,
        labels: dict[str, str] | None,
        parent_run_id: str | None,
    ) -> _Request:
        body: dict[str, Any] = {"framework": framework}
        if principal:
            body["principal"] = principal
        if labels:
            body["labels"] = labels
        if parent_run_id:
            body["parent_run_id"] = parent_run_id
        return _Request("POST", "/v1/runs", body)

    @staticmethod
    def decide(
        run_id: str,
        calls: list[dict[str, Any]],
        message: dict[str, Any] | None,
        tools: list[dict[str, Any]] | None,
        consume: bool = False,
        outcomes: list[dict[str, Any]] | None = None,
    ) -> _Request:
        body: dict[str, Any] = {"calls": calls}
        if message is not None:
            body["message"] = message
        if tools:
            body["tools"] = tools
        if consume:
            body["consume"] = True
        if outcomes:
            body["outcomes"] = outcomes
        return _Request("POST", f"/v1/runs/{run_id}/decisions", body)

    @staticmethod
    def end_run(run_id: str, status: str, outcomes: list[dict[str, Any]] | None) -> _Request:
        body: dict[str, Any] = {"status": status}
        if outcomes:
            body["outcomes"] = outcomes
        return _Request("POST", f"/v1/runs/{run_id}/end", body)


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
        outcomes = answer.get("outcomes")
        return cls(
            [Verdict.from_dict(item) for item in answer["verdicts"]],
            [item for item in outcomes if isinstance(item, dict)] if isinstance(outcomes, list) else [],
        )


def _outcome_results(answer: Any) -> list[dict[str, Any]]:
    outcomes = answer.get("outcomes") if isinstance(answer, dict) else None
    return [item for item in outcomes if isinstance(item, dict)] if isinstance(outcomes, list) else []


def _encode(body: Any) -> bytes:
    return lossless_json.encode(body)


def _parse(status: int, reason: str, content: bytes, success: bool) -> Any:
    if status in _UNREACHABLE_STATUSES:
        raise ServerUnreachable(f"the callgate server answered {status} ({reason})")
    try:
        payload = lossless_json.decode(content) if content else None
    except ValueError:
        payload = content.decode("utf-8", "replace")
    if success:
        return payload
    raise error_from_body(payload, status=status)


def _unreachable(url: str, error: Exception) -> ServerUnreachable:
    reason = str(error) or type(error).__name__
    unreachable = ServerUnreachable(f"the callgate server at {url} cannot be reached: {reason}")
    unreachable.__cause__ = error
    return unreachable


class _ClientBase:
    def __init__(
        self,
        url: str | None,
        api_key: Secret | str | None,
        timeout: float,
        connect_timeout: float,
    ) -> None:
        self.url = resolve_server_url(url)
        self._api_key = api_key
        self.timeout = timeout
        self.connect_timeout = connect_timeout

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json"}
        key = _api_key_value(self._api_key)
        if key:
            headers["authorization"] = f"Bearer {key}"
        return headers

    def _timeout(self, request: _Request) -> httpx.Timeout:
        return httpx.Timeout(request.timeout or self.timeout, connect=self.connect_timeout)


class CallgateClient(_ClientBase):
    """
    Synchronous client of the callgate server API. Thread-safe: one client may serve many threads.

    :param url: The server's base URL (or its ``/mcp`` URL); ``None`` reads ``CALLGATE_URL``, then
        uses ``http://127.0.0.1:7420``.
    :param api_key: The API key (a Haystack ``Secret`` or its text); ``None`` sends no key.
    :param timeout: Seconds to wait for an answer (long-polls add their wait to it).
    :param connect_timeout: Seconds to wait for a connection.
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: Secret | str | None = None,
        *,
        timeout: float = 15.0,
        connect_timeout: float = 2.0,
    ) -> None:
        super().__init__(url, api_key, timeout, connect_timeout)
        self._http: KeepAliveConnections | None = None

    def _client(self) -> KeepAliveConnections:
        if self._http is None:
            self._http = KeepAliveConnections(self.url, self._headers(), self.connect_timeout)
        return self._http

    def _send(self, request: _Request) -> Any:
        try:
            answer: Answer = self._client().request(
                request.method,
                request.path,
                content=_encode(request.body) if request.body is not None else None,
                params=request.params,
                timeout=request.timeout or self.timeout,
            )
        except (http.client.HTTPException, OSError) as error:
            raise _unreachable(self.url, error) from error
        return _parse(answer.status, answer.reason, answer.content, answer.is_success)

    def close(self) -> None:
        """Closes the connection pool (the client reopens one if used again)."""
        if self._http is not None:
            self._http.close()
            self._http = None

    def health(self) -> dict[str, Any]:
        """``GET /v1/health``: ``{"status": "ok" | "degraded" | "draining", "version": ..., "problems"?: [...]}``."""
        return self._send(_Request("GET", "/v1/health"))

    def start_run(
        self,
        framework: str,
        *,
        principal: str | None = None,
        labels: dict[str, str] | None = None,
        parent_run_id: str | None = None,
    ) -> dict[str, Any]:
        """
        Starts a run.

        :param framework: The framework that runs the agent, e.g. ``"haystack"``.
        :param principal: Who the run acts for; the server uses the key's name when absent.
        :param labels: Free-form string labels.
        :param parent_run_id: The run this one is a sub-run of (an agent used as a tool).
        :returns: The run: ``{"run_id", "principal", "framework", "labels", "status", "started_at", ...}``.
        """
        return self._send(_Api.start_run(framework, principal, labels, parent_run_id))

    def decide(
        self,
        run_id: str,
        calls: list[dict[str, Any]],
        *,
        message: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> list[Verdict]:
        """
        Decides a step's calls, all in one request, before any of them runs.

        :param run_id: The run.
        :param calls: ``[{"id": str | None, "tool": str, "arguments": dict | str}]`` in the model's order.
        :param message: The model message that asked for them, ``{"role", "content"}``; recorded first.
        :param tools: Tool specs (``{"name", "description", "inputSchema", ...}``) the server may not know yet.
        :returns: One :class:`~.wire.Verdict` per call, in order.
        """
        answer = self._send(_Api.decide(run_id, calls, message, tools))
        return [Verdict.from_dict(item) for item in answer["verdicts"]]

    def decide_step(
        self,
        run_id: str,
        calls: list[dict[str, Any]],
        *,
        message: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
        consume: bool = False,
        outcomes: list[dict[str, Any]] | None = None,
    ) -> StepAnswer:
        """
        Decides a step's calls with one request that also carries the previous step's outcomes:
        the server records ``outcomes`` in order, then decides ``calls``.

        :param consume: Consume each allowed call's grant with its decision (for calls this process
            runs right after); a call's own ``"consume": bool`` overrides it. Their verdicts say
            ``grant_consumed``.
        :param outcomes: Outcome reports (see :meth:`record_outcome`) not sent yet, in order.
        :returns: A :class:`StepAnswer`: the verdicts and what became of each outcome.
        """
        return StepAnswer.from_dict(self._send(_Api.decide(run_id, calls, message, tools, consume, outcomes)))

    def record_message(self, run_id: str, role: str, content: Any = None) -> None:
        """Records a model message that asked for no tool calls (its content is committed)."""
        body: dict[str, Any] = {"role": role}
        if content is not None:
            body["content"] = content
        self._send(_Request("POST", f"/v1/runs/{run_id}/messages", body))

    def record_outcome(self, run_id: str, report: dict[str, Any]) -> str:
        """
        Records how a call ended.

        :param report: ``{"call_id", "attempt"?, "outcome", "result"?, "error_kind"?, "tool"?,
            "arguments"?, "duration_ms"?, "grant_consumed"?}``. ``tool``/``arguments`` are what
            actually ran: a difference from the decision is recorded as ``changed-after-decision``.
        :returns: The outcome recorded.
        """
        answer = self._send(_Request("POST", f"/v1/runs/{run_id}/outcomes", report))
        return str(answer.get("outcome")) if isinstance(answer, dict) else str(answer)

    def record_outcomes(self, run_id: str, reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """
        Records several outcomes of a run with one request, in order.

        :returns: What became of each, in order: ``{"call_id", "outcome"}`` when recorded,
            ``{"call_id", "error": {"kind", "message"}}`` when refused.
        """
        return _outcome_results(self._send(_Request("POST", f"/v1/runs/{run_id}/outcomes", {"outcomes": reports})))

    def record_gap(self, run_id: str, *, reason: str, from_ts: int, to_ts: int, calls: int) -> None:
        """
        Records an outage (``gap``): calls ran undecided between ``from_ts`` and ``to_ts`` (epoch ms).

        :raises NotFound: When the server has no route for gap records.
        """
        body = {"reason": reason, "from_ts": from_ts, "to_ts": to_ts, "calls": calls}
        self._send(_Request("POST", f"/v1/runs/{run_id}/gaps", body))

    def get_approval(self, approval_id: str, *, wait: float = 0.0) -> ApprovalState:
        """
        An approval, waiting up to ``wait`` seconds (long-poll, at most 60) for it to be answered.

        :returns: The approval and, when it was approved and this key owns the run, its grant.
        """
        wait = max(0.0, min(wait, MAX_WAIT_SECONDS))
        params = {"wait": f"{wait:.3f}".rstrip("0").rstrip(".") or "0"} if wait > 0 else None
        answer = self._send(_Request("GET", f"/v1/approvals/{approval_id}", params=params, timeout=self.timeout + wait))
        return ApprovalState.from_dict(answer)

    def approve(
        self, approval_id: str, *, reason: str | None = None, arguments: dict[str, Any] | None = None
    ) -> ApprovalState:
        """Approves a pending approval (needs a reviewer or admin key). ``arguments`` is an edit."""
        body: dict[str, Any] = {}
        if reason is not None:
            body["reason"] = reason
        if arguments is not None:
            body["arguments"] = arguments
        return ApprovalState.from_dict(self._send(_Request("POST", f"/v1/approvals/{approval_id}/approve", body)))

    def deny(self, approval_id: str, *, reason: str | None = None) -> ApprovalState:
        """Denies a pending approval (needs a reviewer or admin key)."""
        body = {"reason": reason} if reason is not None else {}
        return ApprovalState.from_dict(self._send(_Request("POST", f"/v1/approvals/{approval_id}/deny", body)))

    def withdraw_approval(self, approval_id: str, *, reason: str | None = None) -> None:
        """Withdraws a pending approval the caller stopped waiting for."""
        body = {"reason": reason} if reason is not None else {}
        self._send(_Request("POST", f"/v1/approvals/{approval_id}/withdraw", body))

    def list_approvals(self, *, status: str | None = None, run_id: str | None = None) -> list[dict[str, Any]]:
        """Approvals by status or run, oldest first (reviewer or admin key)."""
        params = {key: value for key, value in (("status", status), ("run_id", run_id)) if value}
        answer = self._send(_Request("GET", "/v1/approvals", params=params or None))
        return list(answer.get("approvals", [])) if isinstance(answer, dict) else []

    def consume_grant(
        self, token: str, *, run_id: str, call_id: str, tool: str, arguments_digest: str
    ) -> dict[str, Any]:
        """
        Consumes a grant for exactly this call, atomically and once.

        :raises GrantInvalid: On any mismatch, reuse or expiry.
        """
        body = {
            "token": token,
            "run_id": run_id,
            "call_id": call_id,
            "tool": tool,
            "arguments_digest": arguments_digest,
        }
        return self._send(_Request("POST", "/v1/grants/consume", body))

    def end_run(
        self, run_id: str, status: str = "completed", *, outcomes: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """
        Ends a run: ``outcomes`` not sent yet are recorded first, in order; calls decided but never
        completed are recorded as ``decided-not-completed`` (asks never approved as ``denied``),
        then ``run-end``.

        :param status: ``completed``, ``failed`` or ``cancelled``.
        :returns: The run; with ``outcomes``, its ``"outcomes"`` say what became of each (see :meth:`record_outcomes`).
        """
        return self._send(_Api.end_run(run_id, status, outcomes))

    def get_run(self, run_id: str) -> dict[str, Any]:
        """``GET /v1/runs/:id``: ``{"run": ..., "calls": [...]}``."""
        return self._send(_Request("GET", f"/v1/runs/{run_id}"))

    def bundle(self, run_id: str, *, openings: bool = False, proofs: bool = False) -> dict[str, Any]:
        """
        Exports a run as a bundle: ``callgate-bundle/2`` (one batch inclusion proof of all its
        records), or with ``proofs`` ``callgate-bundle/1`` (one inclusion proof per record).
        """
        params = {key: "true" for key, on in (("openings", openings), ("proofs", proofs)) if on}
        return self._send(_Request("GET", f"/v1/runs/{run_id}/bundle", params=params or None))

    def verify(self, bundle: dict[str, Any], *, strict: bool = False) -> dict[str, Any]:
        """
        Verifies a bundle with the server's verifier, against the server's own log key.

        :param strict: Also require every run to end with ``run-end``.
        :returns: ``{"ok": bool, "failures": [{"check", "message", ...}], "warnings", "records", "checkpoints"}``.
        """
        params = {"strict": "true"} if strict else None
        return self._send(_Request("POST", "/v1/verify", bundle, params=params, timeout=self.timeout + 30))

    def list_tools(self) -> list[dict[str, Any]]:
        """The tool specs the server knows (its registry)."""
        answer = self._send(_Request("GET", "/v1/tools"))
        return list(answer.get("tools", [])) if isinstance(answer, dict) else []


class AsyncCallgateClient(_ClientBase):
    """
    Asynchronous client of the callgate server API; the coroutine twin of :class:`CallgateClient`.
    One instance belongs to one event loop.
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: Secret | str | None = None,
        *,
        timeout: float = 15.0,
        connect_timeout: float = 2.0,
    ) -> None:
        super().__init__(url, api_key, timeout, connect_timeout)
        self._http: httpx.AsyncClient | None = None

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            # A plain http:// server never uses TLS: skip loading the CA bundle (tens of ms) then.
            plain = self.url.startswith("http://")
            self._http = httpx.AsyncClient(base_url=self.url, headers=self._headers(), verify=not plain)
        return self._http

    async def _send(self, request: _Request) -> Any:
        try:
            response = await self._client().request(
                request.method,
                request.path,
                content=_encode(request.body) if request.body is not None else None,
                params=request.params,
                headers=trace_headers() or None,
                timeout=self._timeout(request),
            )
        except (httpx.TransportError, OSError) as error:
            raise _unreachable(self.url, error) from error
        return _parse(response.status_code, response.reason_phrase, response.content, response.is_success)

    async def aclose(self) -> None:
        """Closes the connection pool."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def start_run(
        self,
        framework: str,
        *,
        principal: str | None = None,
        labels: dict[str, str] | None = None,
        parent_run_id: str | None = None,
    ) -> dict[str, Any]:
        """See :meth:`CallgateClient.start_run`."""
        return await self._send(_Api.start_run(framework, principal, labels, parent_run_id))

    async def decide(
        self,
        run_id: str,
        calls: list[dict[str, Any]],
        *,
        message: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> list[Verdict]:
        """See :meth:`CallgateClient.decide`."""
        answer = await self._send(_Api.decide(run_id, calls, message, tools))
        return [Verdict.from_dict(item) for item in answer["verdicts"]]

    async def decide_step(
        self,
        run_id: str,
        calls: list[dict[str, Any]],
        *,
        message: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
        consume: bool = False,
        outcomes: list[dict[str, Any]] | None = None,
    ) -> StepAnswer:
        """See :meth:`CallgateClient.decide_step`."""
        return StepAnswer.from_dict(await self._send(_Api.decide(run_id, calls, message, tools, consume, outcomes)))

    async def record_outcomes(self, run_id: str, reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """See :meth:`CallgateClient.record_outcomes`."""
        answer = await self._send(_Request("POST", f"/v1/runs/{run_id}/outcomes", {"outcomes": reports}))
        return _outcome_results(answer)

    async def end_run(
        self, run_id: str, status: str = "completed", *, outcomes: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """See :meth:`CallgateClient.end_run`."""
        return await self._send(_Api.end_run(run_id, status, outcomes))

    async def record_outcome(self, run_id: str, report: dict[str, Any]) -> str:
        """See :meth:`CallgateClient.record_outcome`."""
        answer = await self._send(_Request("POST", f"/v1/runs/{run_id}/outcomes", report))
        return str(answer.get("outcome")) if isinstance(answer, dict) else str(answer)

    async def get_approval(self, approval_id: str, *, wait: float = 0.0) -> ApprovalState:
        """See :meth:`CallgateClient.get_approval`."""
        wait = max(0.0, min(wait, MAX_WAIT_SECONDS))
        params = {"wait": f"{wait:.3f}".rstrip("0").rstrip(".") or "0"} if wait > 0 else None
        answer = await self._send(
            _Request("GET", f"/v1/approvals/{approval_id}", params=params, timeout=self.timeout + wait)
        )
        return ApprovalState.from_dict(answer)

    async def withdraw_approval(self, approval_id: str, *, reason: str | None = None) -> None:
        """See :meth:`CallgateClient.withdraw_approval`."""
        body = {"reason": reason} if reason is not None else {}
        await self._send(_Request("POST", f"/v1/approvals/{approval_id}/withdraw", body))

    async def consume_grant(
        self, token: str, *, run_id: str, call_id: str, tool: str, arguments_digest: str
    ) -> dict[str, Any]:
        """See :meth:`CallgateClient.consume_grant`."""
        body = {
            "token": token,
            "run_id": run_id,
            "call_id": call_id,
            "tool": tool,
            "arguments_digest": arguments_digest,
        }
        return await self._send(_Request("POST", "/v1/grants/consume", body))
