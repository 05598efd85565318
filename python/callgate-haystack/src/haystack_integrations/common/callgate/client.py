"""
HTTP clients of the callgate server API (``/v1``), synchronous and asynchronous, sharing one
implementation: every operation is built once, without I/O, in :mod:`.operations` (requests and
how to read their answers, :mod:`.api`), and each client only sends it over its transport — the
synchronous one on sockets (:mod:`.transport`), the asynchronous one on asyncio streams
(:mod:`.async_transport`), both keep-alive HTTP/1.1 framed and parsed by :mod:`.http1` (a sixth
of httpx's client CPU per request, measured side by side in ``bench/http_clients.py``).

Both clients have the same methods with the same arguments and return the same values; every
method of :class:`AsyncCallgateClient` is the coroutine of the method of the same name on
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
from collections.abc import Awaitable, Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

from haystack.utils import Secret

from . import operations
from .api import MAX_WAIT_SECONDS, Call, Request, ServerUnreachable, StepAnswer, read_answer, unreachable
from .async_transport import AsyncKeepAliveConnections
from .codec import encode_body
from .transport import KeepAliveConnections
from .wire import resolve_server_url

__all__ = ["MAX_WAIT_SECONDS", "AsyncCallgateClient", "CallgateClient", "ServerUnreachable", "StepAnswer"]

P = ParamSpec("P")
T = TypeVar("T")


def _api_key_value(api_key: Secret | str | None) -> str | None:
    if api_key is None:
        return None
    if isinstance(api_key, Secret):
        return api_key.resolve_value()
    return api_key


class _ClientBase:
    """What both clients hold (their arguments are documented on :class:`CallgateClient`)."""

    def __init__(
        self,
        url: str | None = None,
        api_key: Secret | str | None = None,
        *,
        timeout: float = 15.0,
        connect_timeout: float = 2.0,
    ) -> None:
        self.url = resolve_server_url(url)
        self._api_key = api_key
        self.timeout = timeout
        self.connect_timeout = connect_timeout

    def _options(self, request: Request) -> dict[str, Any]:
        """The keyword arguments of a transport's ``request`` for ``request``: its body, query and time-out."""
        return {
            "content": None if request.body is None else encode_body(request.body),
            "params": request.params,
            "timeout": self.timeout + request.extra_timeout,
        }

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json"}
        key = _api_key_value(self._api_key)
        if key:
            headers["authorization"] = f"Bearer {key}"
        return headers


def _named(method: Any, operation: Callable[..., Any]) -> Any:
    method.__name__ = operation.__name__
    method.__qualname__ = operation.__name__
    method.__doc__ = operation.__doc__
    method.__wrapped__ = operation
    return method


def _blocking(operation: Callable[P, Call[T]]) -> Callable[Concatenate[CallgateClient, P], T]:
    """The method of :class:`CallgateClient` that sends ``operation``'s call and reads its answer."""

    def method(self: CallgateClient, *args: P.args, **kwargs: P.kwargs) -> T:
        call = operation(*args, **kwargs)
        return call.read(self._send(call.request))

    return _named(method, operation)  # type: ignore[no-any-return]


def _coroutine(operation: Callable[P, Call[T]]) -> Callable[Concatenate[AsyncCallgateClient, P], Awaitable[T]]:
    """The coroutine method of :class:`AsyncCallgateClient` that sends ``operation``'s call."""

    async def method(self: AsyncCallgateClient, *args: P.args, **kwargs: P.kwargs) -> T:
        call = operation(*args, **kwargs)
        return call.read(await self._send(call.request))

    return _named(method, operation)  # type: ignore[no-any-return]


class CallgateClient(_ClientBase):
    """
    Synchronous client of the callgate server API. Thread-safe: one client may serve many threads.

    :param url: The server's base URL (or its ``/mcp`` URL); ``None`` reads ``CALLGATE_URL``, then
        uses ``http://127.0.0.1:7420``.
    :param api_key: The API key (a Haystack ``Secret`` or its text); ``None`` sends no key.
    :param timeout: Seconds to wait for an answer (long-polls add their wait to it).
    :param connect_timeout: Seconds to wait for a connection.
    """

    _http: KeepAliveConnections | None = None

    def _client(self) -> KeepAliveConnections:
        if self._http is None:
            self._http = KeepAliveConnections(self.url, self._headers(), self.connect_timeout)
        return self._http

    def _send(self, request: Request) -> Any:
        """Sends ``request``; returns its answer's decoded body (see :func:`~.api.read_answer`)."""
        try:
            answer = self._client().request(request.method, request.path, **self._options(request))
        except (http.client.HTTPException, OSError) as error:
            raise unreachable(self.url, error) from error
        return read_answer(answer.status, answer.reason, answer.content)

    def close(self) -> None:
        """Closes the connection pool (the client reopens one if used again)."""
        if self._http is not None:
            self._http.close()
            self._http = None

    health = _blocking(operations.health)
    start_run = _blocking(operations.start_run)
    decide = _blocking(operations.decide)
    decide_step = _blocking(operations.decide_step)
    record_message = _blocking(operations.record_message)
    record_outcome = _blocking(operations.record_outcome)
    record_outcomes = _blocking(operations.record_outcomes)
    record_gap = _blocking(operations.record_gap)
    get_approval = _blocking(operations.get_approval)
    approve = _blocking(operations.approve)
    deny = _blocking(operations.deny)
    withdraw_approval = _blocking(operations.withdraw_approval)
    list_approvals = _blocking(operations.list_approvals)
    consume_grant = _blocking(operations.consume_grant)
    end_run = _blocking(operations.end_run)
    get_run = _blocking(operations.get_run)
    bundle = _blocking(operations.bundle)
    verify = _blocking(operations.verify)
    list_tools = _blocking(operations.list_tools)


class AsyncCallgateClient(_ClientBase):
    """
    Asynchronous client of the callgate server API; the coroutine twin of :class:`CallgateClient`
    (same methods, same arguments). One instance belongs to one event loop.
    """

    _http: AsyncKeepAliveConnections | None = None

    def _client(self) -> AsyncKeepAliveConnections:
        if self._http is None:
            self._http = AsyncKeepAliveConnections(self.url, self._headers(), self.connect_timeout)
        return self._http

    async def _send(self, request: Request) -> Any:
        """Sends ``request``; returns its answer's decoded body (see :func:`~.api.read_answer`)."""
        try:
            answer = await self._client().request(request.method, request.path, **self._options(request))
        except (http.client.HTTPException, OSError) as error:
            raise unreachable(self.url, error) from error
        return read_answer(answer.status, answer.reason, answer.content)

    async def aclose(self) -> None:
        """Closes the connection pool."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    health = _coroutine(operations.health)
    start_run = _coroutine(operations.start_run)
    decide = _coroutine(operations.decide)
    decide_step = _coroutine(operations.decide_step)
    record_message = _coroutine(operations.record_message)
    record_outcome = _coroutine(operations.record_outcome)
    record_outcomes = _coroutine(operations.record_outcomes)
    record_gap = _coroutine(operations.record_gap)
    get_approval = _coroutine(operations.get_approval)
    approve = _coroutine(operations.approve)
    deny = _coroutine(operations.deny)
    withdraw_approval = _coroutine(operations.withdraw_approval)
    list_approvals = _coroutine(operations.list_approvals)
    consume_grant = _coroutine(operations.consume_grant)
    end_run = _coroutine(operations.end_run)
    get_run = _coroutine(operations.get_run)
    bundle = _coroutine(operations.bundle)
    verify = _coroutine(operations.verify)
    list_tools = _coroutine(operations.list_tools)
