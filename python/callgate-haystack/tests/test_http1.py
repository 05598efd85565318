"""
The synchronous client's HTTP/1.1 connection (``http1``) against a raw socket server answering
with scripted bytes: content-length, chunked (generated splits) and read-to-close bodies, 1xx
answers skipped, ``connection: close`` honoured, an answer that is not HTTP refused, and header
fields that would break the request's framing refused before anything is sent.
"""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_integrations.common.callgate.http1 import Connection
from haystack_integrations.common.callgate.transport import KeepAliveConnections


class ScriptedServer:
    """Answers each request (read up to its empty line plus any content-length body) with the next scripted bytes."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.answers: list[bytes] = []
        self.requests: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with connection:
                data = b""
                while self.answers:
                    while b"\r\n\r\n" not in data:
                        chunk = connection.recv(65536)
                        if not chunk:
                            return
                        data += chunk
                    head, _, data = data.partition(b"\r\n\r\n")
                    lines = head.lower().split(b"\r\n")
                    length = next((int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length")), 0)
                    while len(data) < length:
                        data += connection.recv(65536)
                    self.requests.append(head + b"\r\n\r\n" + data[:length])
                    data = data[length:]
                    answer = self.answers.pop(0)
                    connection.sendall(answer)
                    framed = b"content-length" in answer.lower() or b"chunked" in answer.lower()
                    if b"connection: close" in answer.lower() or not framed:
                        return

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    yield scripted
    scripted.close()


def exchange(server: ScriptedServer, *answers: bytes, body: bytes | None = b"{}") -> list:
    server.answers.extend(answers)
    connection = Connection("127.0.0.1", server.port, 2.0)
    try:
        head = b"POST /v1/x HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n" % len(body or b"")
        return [connection.exchange(head, body, 2.0) for _ in answers]
    finally:
        connection.close()


def test_content_length_answers_on_one_connection(server: ScriptedServer) -> None:
    first, second = exchange(
        server,
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}",
        b"HTTP/1.1 409 Conflict\r\nContent-Length: 3\r\n\r\n[1]",
    )
    assert (first.status, first.reason, first.content, first.will_close) == (200, "OK", b"{}", False)
    assert (second.status, second.reason, second.content) == (409, "Conflict", b"[1]")
    assert server.requests[0].endswith(b"\r\n\r\n{}")  # head and body arrive as one request


@settings(max_examples=30, deadline=None)
@given(st.binary(max_size=300), st.lists(st.integers(1, 40), max_size=12))
def test_chunked_bodies_of_any_split(body: bytes, cuts: list[int]) -> None:
    chunks, rest = [], body
    for cut in cuts:
        if rest:
            chunks.append(rest[:cut])
            rest = rest[cut:]
    if rest:
        chunks.append(rest)
    encoded = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks) + b"0\r\ntrailer: x\r\n\r\n"
    scripted = ScriptedServer()
    try:
        (answer,) = exchange(scripted, b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + encoded)
    finally:
        scripted.close()
    assert answer.content == body and answer.will_close is False


def test_an_informational_answer_is_skipped_and_close_is_honoured(server: ScriptedServer) -> None:
    informational = b"HTTP/1.1 100 Continue\r\n\r\n"
    (answer,) = exchange(server, informational + b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 1\r\n\r\n1")
    assert (answer.status, answer.content, answer.will_close) == (200, b"1", True)


def test_a_body_without_length_is_read_to_the_close(server: ScriptedServer) -> None:
    (answer,) = exchange(server, b"HTTP/1.0 200 OK\r\n\r\nall of it")
    assert (answer.content, answer.will_close) == (b"all of it", True)


def test_an_answer_that_is_not_http_is_refused(server: ScriptedServer) -> None:
    with pytest.raises(http.client.BadStatusLine):
        exchange(server, b"SSH-2.0-OpenSSH\r\n\r\n")


def test_a_short_body_is_refused(server: ScriptedServer) -> None:
    with pytest.raises(http.client.IncompleteRead):
        exchange(server, b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\nconnection: close\r\n\r\nabc")


def test_header_fields_that_break_framing_are_refused() -> None:
    with pytest.raises(ValueError, match="authorization"):
        KeepAliveConnections("http://127.0.0.1:1", {"authorization": "Bearer a\r\nx-evil: 1"}, 1.0)
    connections = KeepAliveConnections("http://127.0.0.1:1", {}, 1.0)
    with pytest.raises(ValueError, match="control character"):
        connections.request("GET", "/v1/runs/a b", timeout=1.0)
