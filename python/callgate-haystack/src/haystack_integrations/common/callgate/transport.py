"""
Keep-alive HTTP/1.1 connections for the synchronous client, on sockets (TCP, or a Unix-domain
socket for a server started with ``callgate serve --socket``), framed and parsed by :mod:`.http1`
(see there for why not ``http.client`` or httpx).

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

from .http1 import EXACTLY, LINE, Answer, Origin, answer_steps
from .trace_context import trace_headers

#: Errors that mean the server closed a reused keep-alive connection before reading the request.
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)

#: Idle connections kept at most.
MAX_IDLE = 8


def _connect_unix(path: str, timeout: float) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
    except BaseException:
        sock.close()
        raise
    return sock


class Connection:
    """
    A connection to ``host:port`` (TLS when ``ssl_context`` is given), opened at once with
    ``TCP_NODELAY``; or, with ``socket_path``, to that Unix-domain socket.

    :param timeout: Seconds to wait for the connection.
    """

    __slots__ = ("_reader", "_timeout", "sock")

    def __init__(
        self,
        host: str,
        port: int,
        timeout: float,
        ssl_context: ssl.SSLContext | None = None,
        socket_path: str | None = None,
    ) -> None:
        if socket_path is not None:
            sock = _connect_unix(socket_path, timeout)
        else:
            sock = socket.create_connection((host, port), timeout=timeout)
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if ssl_context is not None:
                    sock = ssl_context.wrap_socket(sock, server_hostname=host)
            except BaseException:
                sock.close()
                raise
        self.sock: socket.socket | None = sock
        self._reader = sock.makefile("rb")
        # The socket's timeout as last set: ``settimeout`` is a system call (ioctl) each time.
        self._timeout: float | None = sock.gettimeout()

    def close(self) -> None:
        """Closes the connection (again is harmless)."""
        sock, self.sock = self.sock, None
        if sock is not None:
            self._reader.close()
            sock.close()

    def closed_by_peer(self) -> bool:
        """True when the server closed this idle connection (it reads as ready: EOF) or it is broken."""
        if self.sock is None:
            return True
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def exchange(self, head: bytes, body: bytes | None, timeout: float) -> Answer:
        """
        Sends one request (``head`` from :meth:`~.http1.Origin.head`, then ``body``) and reads its
        whole answer.

        :param timeout: Seconds to wait for each write or read.
        """
        sock = self.sock
        if sock is None:
            raise http.client.RemoteDisconnected("the connection is closed")
        if timeout != self._timeout:
            sock.settimeout(timeout)
            self._timeout = timeout
        sock.sendall(head + body if body else head)
        reader = self._reader
        steps = answer_steps()
        kind, size = next(steps)
        try:
            while True:
                if kind == LINE:
                    data = reader.readline(size)
                elif kind == EXACTLY:
                    data = reader.read(size)
                else:
                    data = reader.read()
                kind, size = steps.send(data)
        except StopIteration as done:
            answer: Answer = done.value
            return answer


class KeepAliveConnections:
    """
    Keep-alive connections to one origin.

    :param url: The base URL (``http://host:port``, ``https://...``, or a socket's ``unix:/path``);
        a path in an http(s) URL prefixes every request.
    :param headers: Headers sent with every request.
    :param connect_timeout: Seconds to wait for a connection.
    :raises ValueError: For a URL that is not http(s) or unix, or a header with a line break or NUL.
    """

    def __init__(self, url: str, headers: dict[str, str], connect_timeout: float) -> None:
        self._origin = Origin(url, headers)
        self._connect_timeout = connect_timeout
        self._idle: list[Connection] = []
        self._lock = threading.Lock()
        self._ssl_context: ssl.SSLContext | None = None

    def _new(self) -> Connection:
        origin = self._origin
        if origin.https and self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
        return Connection(
            origin.host,
            origin.port,
            self._connect_timeout,
            self._ssl_context if origin.https else None,
            origin.socket_path,
        )

    def _take(self) -> tuple[Connection, bool]:
        while True:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                return self._new(), False
            if not connection.closed_by_peer():
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
        :raises ValueError: For a path with a space or a control character.
        """
        head = self._origin.head(method, path, params, content, trace_headers() or None)
        for attempt in (0, 1):
            connection, reused = self._take()
            try:
                answer = connection.exchange(head, content, timeout)
            except STALE:
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
