"""
Keep-alive HTTP/1.1 connections for the asynchronous client, on asyncio streams (no thread per
request), framed and parsed by :mod:`.http1` exactly as the synchronous transport does.

- A pool of idle connections for the event loop the client belongs to; a connection serves one
  request at a time.
- An idle connection the server has closed (its stream saw EOF) is replaced before reuse; a
  request on a reused connection that fails before any answer arrives is sent once more on a
  fresh connection.
- Each request runs under one time-out (``asyncio.timeout``); a cancelled or timed-out request
  closes its connection, never returning a half-read one to the pool.
"""

from __future__ import annotations

import asyncio
import http.client
import ssl

from .http1 import EXACTLY, LINE, MAX_LINE, Answer, Origin, answer_steps
from .trace_context import trace_headers
from .transport import MAX_IDLE, STALE


class AsyncConnection:
    """A connection opened with :meth:`open`: its stream reader and writer."""

    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(
        cls, host: str, port: int, ssl_context: ssl.SSLContext | None, socket_path: str | None = None
    ) -> AsyncConnection:
        """
        Opens a connection (TLS with ``ssl_context``) with ``TCP_NODELAY`` (asyncio's default for
        TCP); or, with ``socket_path``, to that Unix-domain socket.
        """
        if socket_path is not None:
            reader, writer = await asyncio.open_unix_connection(socket_path, limit=MAX_LINE + 2)
        else:
            reader, writer = await asyncio.open_connection(
                host, port, ssl=ssl_context, server_hostname=host if ssl_context else None, limit=MAX_LINE + 2
            )
        return cls(reader, writer)

    def close(self) -> None:
        """Closes the connection (again is harmless)."""
        if not self.writer.is_closing():
            self.writer.close()

    def closed_by_peer(self) -> bool:
        return self.writer.is_closing() or self.reader.at_eof()

    async def exchange(self, head: bytes, body: bytes | None) -> Answer:
        """Sends one request (``head`` from :meth:`~.http1.Origin.head`, then ``body``) and reads its whole answer."""
        self.writer.write(head + body if body else head)
        await self.writer.drain()
        reader = self.reader
        steps = answer_steps()
        kind, size = next(steps)
        try:
            while True:
                if kind == LINE:
                    try:
                        data = await reader.readline()
                    except ValueError as error:  # longer than the stream's limit
                        raise http.client.LineTooLong("header line") from error
                elif kind == EXACTLY:
                    try:
                        data = await reader.readexactly(size)
                    except asyncio.IncompleteReadError as short:
                        data = short.partial
                else:
                    data = await reader.read()
                kind, size = steps.send(data)
        except StopIteration as done:
            answer: Answer = done.value
            return answer


class AsyncKeepAliveConnections:
    """
    Keep-alive connections to one origin, for one event loop.

    :param url: The base URL (``http://host:port``, ``https://...``, or a socket's ``unix:/path``);
        a path in an http(s) URL prefixes every request.
    :param headers: Headers sent with every request.
    :param connect_timeout: Seconds to wait for a connection.
    :raises ValueError: For a URL that is not http(s) or unix, or a header with a line break or NUL.
    """

    def __init__(self, url: str, headers: dict[str, str], connect_timeout: float) -> None:
        self._origin = Origin(url, headers)
        self._connect_timeout = connect_timeout
        self._idle: list[AsyncConnection] = []
        self._ssl_context: ssl.SSLContext | None = None

    async def _take(self) -> tuple[AsyncConnection, bool]:
        while self._idle:
            connection = self._idle.pop()
            if not connection.closed_by_peer():
                return connection, True
            connection.close()
        origin = self._origin
        if origin.https and self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
        opening = AsyncConnection.open(
            origin.host, origin.port, self._ssl_context if origin.https else None, origin.socket_path
        )
        return await asyncio.wait_for(opening, self._connect_timeout), False

    async def request(
        self,
        method: str,
        path: str,
        *,
        content: bytes | None = None,
        params: dict[str, str] | None = None,
        timeout: float,
    ) -> Answer:
        """
        Sends one request and reads its whole answer, within ``timeout`` seconds (after the connection).

        :raises OSError: When the server cannot be reached or the connection fails (``TimeoutError`` on a time-out).
        :raises http.client.HTTPException: When the answer is not HTTP.
        :raises ValueError: For a path with a space or a control character.
        """
        head = self._origin.head(method, path, params, content, trace_headers() or None)
        for attempt in (0, 1):
            connection, reused = await self._take()
            try:
                async with asyncio.timeout(timeout):
                    answer = await connection.exchange(head, content)
            except STALE:
                connection.close()
                if reused and attempt == 0:
                    continue
                raise
            except BaseException:
                connection.close()
                raise
            if answer.will_close or len(self._idle) >= MAX_IDLE:
                connection.close()
            else:
                self._idle.append(connection)
            return answer
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        """Closes every idle connection (the pool opens new ones if used again)."""
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
        for connection in idle:
            try:
                await connection.writer.wait_closed()
            except OSError:
                pass  # already reset by the server: closed all the same
