"""
HTTP/1.1 (RFC 9112) for the clients' transports, without I/O: the bytes of a request's head
(:meth:`Origin.head`) and a parser of one answer (:func:`answer_steps`) that says what it needs
to read next and is fed what was read. The synchronous transport (:mod:`.transport`) drives it
over a socket, the asynchronous one (:mod:`.async_transport`) over asyncio streams, so both
frame requests and read answers the same way.

A request goes out in one write (head and body together). An answer is read as its status line,
its header fields (only ``content-length``, ``transfer-encoding`` and ``connection`` are acted
on) and a ``content-length`` or ``chunked`` body (or, with neither, the body up to the
connection's close); ``1xx`` answers before it are skipped, trailers dropped.

Why not ``http.client`` or httpx: measured side by side on the hook's one request per allowed
call (``bench/http_clients.py``), ``http.client`` writes head and body separately and parses
header fields with the ``email`` package, and httpx's models and transport layers cost about six
times this package's client CPU per request. Nothing else of HTTP is needed here: no redirects,
no ``Expect``, no compression (none is asked for).

Errors (``http.client``'s classes, so callers handle both transports alike):
``RemoteDisconnected`` when the connection closed before any answer, ``BadStatusLine`` /
``HTTPException`` for an answer that is not HTTP/1.x, ``IncompleteRead`` for a body cut short.
"""

from __future__ import annotations

import http.client
from collections.abc import Generator
from urllib.parse import urlencode, urlsplit

from .wire import unix_socket_path

#: The longest status line or header field line read, in bytes.
MAX_LINE = 65536
#: The most header fields read.
MAX_FIELDS = 100

#: What the parser asks for: a line (up to MAX_LINE + 1 bytes), exactly ``n`` bytes (fewer only
#: at the end of the stream), or everything up to the end of the stream.
LINE, EXACTLY, TO_END = "line", "exactly", "to-end"
Step = tuple[str, int]


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


def _token(name: str) -> bool:
    return bool(name) and name.isascii() and all(character.isalnum() or character in "-_" for character in name)


def _encoded_fields(fields: dict[str, str]) -> bytes:
    for name, value in fields.items():
        if not _token(name) or any(character in value for character in "\r\n\0"):
            raise ValueError(f"callgate client: header {name!r} cannot be sent (a line break or NUL in it)")
    return "".join(f"{name}: {value}\r\n" for name, value in fields.items()).encode("latin-1")


class Origin:
    """
    One server: its scheme, host, port and path prefix (or its Unix-domain socket), and the
    header fields every request to it carries (encoded once).

    :param url: ``http://host[:port][/prefix]``, ``https://...``, or a socket's ``unix:/path``
        (``http+unix://%2Fpath``; see :func:`~.wire.unix_socket_path`), whose requests say
        ``host: localhost``.
    :param headers: Header fields for every request (``host`` and ``connection: keep-alive`` are added).
    :raises ValueError: For another scheme, a socket path that is not absolute, or a header field
        with a line break or NUL.
    """

    __slots__ = ("_fields", "host", "https", "port", "prefix", "socket_path")

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        #: The Unix-domain socket's path, or None for TCP.
        self.socket_path = unix_socket_path(url)
        if self.socket_path is not None:
            self.https = False
            self.host, self.port, self.prefix = "localhost", 0, ""
            authority = "localhost"
        else:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https"):
                raise ValueError(f"callgate server URL {url!r}: the scheme must be http, https or unix")
            self.https = parts.scheme == "https"
            self.host = parts.hostname or "127.0.0.1"
            self.port = parts.port or (443 if self.https else 80)
            self.prefix = parts.path.rstrip("/")
            authority = parts.netloc.rpartition("@")[2]
        self._fields = _encoded_fields({"host": authority, **headers, "connection": "keep-alive"})

    def head(
        self,
        method: str,
        path: str,
        params: dict[str, str] | None,
        content: bytes | None,
        extra: dict[str, str] | None = None,
    ) -> bytes:
        """
        The request line and header fields of one request, ending in the empty line.

        :param extra: More header fields for this request only (e.g. ``traceparent``).
        :raises ValueError: For a target with a space or a control character, or a bad ``extra`` field.
        """
        target = self.prefix + path + (f"?{urlencode(params)}" if params else "")
        if not target.isprintable() or " " in target:
            raise ValueError(f"callgate client: the request target {target!r} has a space or a control character")
        head = f"{method} {target} HTTP/1.1\r\n".encode() + self._fields
        if content is not None or method in ("POST", "PUT", "PATCH"):
            head += b"content-length: %d\r\n" % (len(content) if content else 0)
        if extra:
            head += _encoded_fields(extra)
        return head + b"\r\n"


def answer_steps() -> Generator[Step, bytes, Answer]:
    """
    Reads one answer: yields what to read next (``(LINE, limit)``, ``(EXACTLY, n)``,
    ``(TO_END, 0)``), is sent the bytes read (``b""`` at the end of the stream), and returns the
    :class:`Answer`.
    """
    while True:
        line = yield (LINE, MAX_LINE + 1)
        if not line:
            raise http.client.RemoteDisconnected("the server closed the connection without an answer")
        version, _, rest = line.partition(b" ")
        code, _, reason = rest.partition(b" ")
        if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit():
            raise http.client.BadStatusLine(line.decode("latin-1", "replace").rstrip("\r\n"))
        status = int(code)
        length: int | None = None
        chunked = close = False
        for _ in range(MAX_FIELDS + 1):
            field = yield (LINE, MAX_LINE + 1)
            if field in (b"\r\n", b"\n", b""):
                break
            name, _, value = field.partition(b":")
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
        else:
            raise http.client.HTTPException(f"more than {MAX_FIELDS} header fields")
        if status >= 200 or status == 101:
            break  # 1xx answers (e.g. 100 Continue) precede the real one
    will_close = close or version == b"HTTP/1.0"
    if status in (204, 304):
        content = b""
    elif chunked:
        parts: list[bytes] = []
        while True:
            size_line = yield (LINE, MAX_LINE + 1)
            size_text = size_line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise http.client.HTTPException(f"bad chunk size {size_text!r}") from None
            if size == 0:
                while (yield (LINE, MAX_LINE + 1)) not in (b"\r\n", b"\n", b""):
                    pass  # trailer fields
                break
            chunk = yield (EXACTLY, size)
            if len(chunk) != size:
                raise http.client.IncompleteRead(b"".join(parts) + chunk, size - len(chunk))
            parts.append(chunk)
            yield (EXACTLY, 2)  # the CRLF after the chunk
        content = b"".join(parts)
    elif length is not None:
        content = yield (EXACTLY, length)
        if len(content) != length:
            raise http.client.IncompleteRead(content, length - len(content))
    else:
        content = yield (TO_END, 0)
        will_close = True
    return Answer(status, reason.rstrip(b"\r\n").decode("latin-1"), content, will_close)
