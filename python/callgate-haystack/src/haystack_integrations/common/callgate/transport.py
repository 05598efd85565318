"""
Keep-alive HTTP/1.1 connections for the synchronous client, on the standard library's
``http.client``.

Measured side by side against httpx on the hook's one request per allowed call
(``bench/http_clients.py``), a bare ``http.client`` connection answers in about half the time
(httpx's request and response models, its transport layers and its per-request timeout objects
cost about 0.3–0.7 ms per request on a small VM); nothing else in the client needs what httpx
adds. The asynchronous client keeps httpx (it runs on asyncio itself, without a thread per call).

- One idle connection is reused per request; a connection is taken by one thread at a time (a
  small pool, so one client serves many threads).
- An idle connection the server has closed is noticed before reuse (it reads as ready: EOF) and
  replaced. A request on a reused connection that fails before any answer arrives
  (``RemoteDisconnected``, a reset or a broken pipe: the server closed it as the request went
  out, so it never read the request) is sent once more on a fresh connection.
- ``https://`` builds its SSL context once, on first use; plain ``http://`` never builds one.
"""

from __future__ import annotations

import http.client
import select
import socket
import ssl
import threading
from urllib.parse import urlencode, urlsplit

from .trace_context import trace_headers

#: Errors that mean the server closed a reused keep-alive connection before reading the request.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)

#: Idle connections kept at most.
MAX_IDLE = 8


class Answer:
    """A response: ``status`` (int), ``reason`` (str) and ``content`` (the body's bytes)."""

    __slots__ = ("content", "reason", "status")

    def __init__(self, status: int, reason: str, content: bytes) -> None:
        self.status = status
        self.reason = reason
        self.content = content

    @property
    def is_success(self) -> bool:
        return 200 <= self.status < 300


def _closed_by_peer(connection: http.client.HTTPConnection) -> bool:
    sock = connection.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)  # an idle keep-alive socket that reads as ready was closed (EOF) or is broken


class KeepAliveConnections:
    """
    Keep-alive connections to one origin.

    :param url: The base URL (``http://host:port`` or ``https://...``); a path in it prefixes every request.
    :param headers: Headers sent with every request.
    :param connect_timeout: Seconds to wait for a connection.
    """

    def __init__(self, url: str, headers: dict[str, str], connect_timeout: float) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"callgate server URL {url!r}: the scheme must be http or https")
        self._https = parts.scheme == "https"
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self._headers = {**headers, "connection": "keep-alive"}
        self._connect_timeout = connect_timeout
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._ssl_context: ssl.SSLContext | None = None

    def _new(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection
        if self._https:
            if self._ssl_context is None:
                self._ssl_context = ssl.create_default_context()
            connection = http.client.HTTPSConnection(
                self._host, self._port, timeout=self._connect_timeout, context=self._ssl_context
            )
        else:
            connection = http.client.HTTPConnection(self._host, self._port, timeout=self._connect_timeout)
        connection.connect()
        if connection.sock is not None:
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection

    def _take(self) -> tuple[http.client.HTTPConnection, bool]:
        while True:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                return self._new(), False
            if not _closed_by_peer(connection):
                return connection, True
            connection.close()

    def _give_back(self, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < MAX_IDLE:
                self._idle.append(connection)
                return
        connection.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        content: bytes | None = None,
        params: dict[str, str] | None = None,
        timeout: float,
    ) -> Answer:
        """
        Sends one request and reads its whole answer.

        :param timeout: Seconds to wait for each read or write of the request and its answer.
        :raises OSError: When the server cannot be reached or the connection fails (``TimeoutError`` on a time-out).
        :raises http.client.HTTPException: When the answer is not HTTP.
        """
        target = self._prefix + path + (f"?{urlencode(params)}" if params else "")
        for attempt in (0, 1):
            connection, reused = self._take()
            try:
                if connection.sock is not None:
                    connection.sock.settimeout(timeout)
                traced = trace_headers()
                headers = {**self._headers, **traced} if traced else self._headers
                connection.request(method, target, body=content, headers=headers)
                response = connection.getresponse()
                body = response.read()
            except _STALE:
                connection.close()
                if reused and attempt == 0:
                    continue
                raise
            except BaseException:
                connection.close()
                raise
            if response.will_close:
                connection.close()
            else:
                self._give_back(connection)
            return Answer(response.status, response.reason, body)
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        """Closes every idle connection (the pool opens new ones if used again)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
