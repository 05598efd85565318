"""
One HTTP/1.1 keep-alive connection (RFC 9112) for the synchronous client: a request goes out in
one ``sendall`` (head and body together), and the answer is read from a buffered reader — the
status line, the header fields (only ``content-length``, ``transfer-encoding`` and
``connection`` are acted on) and a ``content-length`` or ``chunked`` body (or, with neither, the
body up to the connection's close).

Why not ``http.client``: measured side by side on the hook's one request per allowed call
(``bench/http_clients.py``), ``http.client`` sends the head and the body in two writes (two
segments with ``TCP_NODELAY``) and parses header fields with the ``email`` package; that cost
about as much client time as the rest of the hook. Nothing else of HTTP is needed here: no
redirects, no ``Expect``, no trailers (read and dropped), no compression (none is asked for).

Errors: ``RemoteDisconnected`` (an ``http.client`` class, kept so the caller's retry of a stale
keep-alive connection is unchanged) when the server closed the connection before any answer,
``http.client.HTTPException`` for an answer that is not HTTP/1.x, ``OSError`` (``TimeoutError``
on a time-out) from the socket.
"""

from __future__ import annotations

import http.client
import socket
import ssl

#: The longest status line or header field line read, in bytes.
MAX_LINE = 65536
#: The most header fields read.
MAX_FIELDS = 100


class Answer:
    """A response: ``status`` (int), ``reason`` (str), ``content`` (the body's bytes), ``will_close``."""

    __slots__ = ("content", "reason", "status", "will_close")

    def __init__(self, status: int, reason: str, content: bytes, will_close: bool) -> None:
        self.status = status
        self.reason = reason
        self.content = content
        self.will_close = will_close

    @property
    def is_success(self) -> bool:
        return 200 <= self.status < 300


class Connection:
    """
    A connection to ``host:port`` (TLS when ``ssl_context`` is given), opened at once with
    ``TCP_NODELAY``.

    :param timeout: Seconds to wait for the connection.
    """

    __slots__ = ("_reader", "sock")

    def __init__(self, host: str, port: int, timeout: float, ssl_context: ssl.SSLContext | None = None) -> None:
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

    def close(self) -> None:
        """Closes the connection (again is harmless)."""
        sock, self.sock = self.sock, None
        if sock is not None:
            self._reader.close()
            sock.close()

    def exchange(self, head: bytes, body: bytes | None, timeout: float) -> Answer:
        """
        Sends one request (``head``: request line and header fields, ending in an empty line)
        and reads its whole answer.

        :param timeout: Seconds to wait for each write or read.
        """
        sock = self.sock
        if sock is None:
            raise http.client.RemoteDisconnected("the connection is closed")
        sock.settimeout(timeout)
        sock.sendall(head + body if body else head)
        reader = self._reader
        while True:
            line = reader.readline(MAX_LINE + 1)
            if not line:
                raise http.client.RemoteDisconnected("the server closed the connection without an answer")
            version, _, rest = line.partition(b" ")
            code, _, reason = rest.partition(b" ")
            if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit():
                raise http.client.BadStatusLine(line.decode("latin-1", "replace").rstrip("\r\n"))
            status = int(code)
            length, chunked, close = self._fields(reader)
            if status >= 200 or status == 101:
                break  # 1xx answers (e.g. 100 Continue) precede the real one
        will_close = close or version == b"HTTP/1.0"
        if status in (204, 304):
            content = b""
        elif chunked:
            content = _read_chunked(reader)
        elif length is not None:
            content = reader.read(length)
            if len(content) != length:
                raise http.client.IncompleteRead(content, length - len(content))
        else:
            content = reader.read()
            will_close = True
        return Answer(status, reason.rstrip(b"\r\n").decode("latin-1"), content, will_close)

    @staticmethod
    def _fields(reader: object) -> tuple[int | None, bool, bool]:
        length: int | None = None
        chunked = close = False
        readline = reader.readline  # type: ignore[attr-defined]
        for _ in range(MAX_FIELDS + 1):
            line = readline(MAX_LINE + 1)
            if line in (b"\r\n", b"\n", b""):
                return length, chunked, close
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                text = value.strip()
                if not text.isdigit():
                    raise http.client.HTTPException(f"bad content-length {text!r}")
                length = int(text)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection":
                close = b"close" in value.lower()
        raise http.client.HTTPException(f"more than {MAX_FIELDS} header fields")


def _read_chunked(reader: object) -> bytes:
    readline, read = reader.readline, reader.read  # type: ignore[attr-defined]
    parts: list[bytes] = []
    while True:
        size_line = readline(MAX_LINE + 1)
        size_text = size_line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise http.client.HTTPException(f"bad chunk size {size_text!r}") from None
        if size == 0:
            while readline(MAX_LINE + 1) not in (b"\r\n", b"\n", b""):
                pass  # trailer fields
            return b"".join(parts)
        chunk = read(size)
        if len(chunk) != size:
            raise http.client.IncompleteRead(b"".join(parts) + chunk, size - len(chunk))
        parts.append(chunk)
        read(2)  # the CRLF after the chunk
