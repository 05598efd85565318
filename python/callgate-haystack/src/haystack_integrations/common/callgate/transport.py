"""
Keep-alive HTTP/1.1 connections for the synchronous client (:mod:`.http1`).

Measured side by side on the hook's one request per allowed call (``bench/http_clients.py``):
httpx's request and response models, its transport layers and its per-request timeout objects
cost about 0.3–0.7 ms per request on a small VM, and ``http.client`` still writes head and body
separately and parses header fields with the ``email`` package; nothing in the client needs
more than :mod:`.http1` does. The asynchronous client keeps httpx (it runs on asyncio itself,
without a thread per call).

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
import ssl
import threading
from urllib.parse import urlencode, urlsplit

from .http1 import Answer, Connection
from .trace_context import trace_headers

#: Errors that mean the server closed a reused keep-alive connection before reading the request.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)

#: Idle connections kept at most.
MAX_IDLE = 8


def _closed_by_peer(connection: Connection) -> bool:
    sock = connection.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)  # an idle keep-alive socket that reads as ready was closed (EOF) or is broken


def _token(name: str) -> bool:
    return bool(name) and name.isascii() and all(character.isalnum() or character in "-_" for character in name)


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
        fields = {"host": parts.netloc.rpartition("@")[2], **headers, "connection": "keep-alive"}
        for name, value in fields.items():
            if not _token(name) or any(character in value for character in "\r\n\0"):
                raise ValueError(f"callgate client: header {name!r} cannot be sent (a line break or NUL in it)")
        # The header fields every request carries, encoded once.
        self._fields = "".join(f"{name}: {value}\r\n" for name, value in fields.items()).encode("latin-1")
        self._connect_timeout = connect_timeout
        self._idle: list[Connection] = []
        self._lock = threading.Lock()
        self._ssl_context: ssl.SSLContext | None = None

    def _new(self) -> Connection:
        if self._https and self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
        return Connection(self._host, self._port, self._connect_timeout, self._ssl_context if self._https else None)

    def _take(self) -> tuple[Connection, bool]:
        while True:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                return self._new(), False
            if not _closed_by_peer(connection):
                return connection, True
            connection.close()

    def _give_back(self, connection: Connection) -> None:
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
        if not target.isprintable() or " " in target:
            raise ValueError(f"callgate client: the request target {target!r} has a space or a control character")
        traced = trace_headers()
        head = f"{method} {target} HTTP/1.1\r\n".encode() + self._fields
        if content is not None or method in ("POST", "PUT", "PATCH"):
            head += b"content-length: %d\r\n" % (len(content) if content else 0)
        if traced:
            head += "".join(f"{name}: {value}\r\n" for name, value in traced.items()).encode("latin-1")
        head += b"\r\n"
        for attempt in (0, 1):
            connection, reused = self._take()
            try:
                answer = connection.exchange(head, content, timeout)
            except _STALE:
                connection.close()
                if reused and attempt == 0:
                    continue
                raise
            except BaseException:
                connection.close()
                raise
            if answer.will_close:
                connection.close()
            else:
                self._give_back(connection)
            return answer
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        """Closes every idle connection (the pool opens new ones if used again)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
