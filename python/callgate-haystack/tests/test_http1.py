"""
The clients' HTTP/1.1 connections (``http1`` driven by the synchronous ``transport`` and the
asyncio ``async_transport``, every test on both) against a raw socket server answering with
scripted bytes: content-length, chunked (generated splits) and read-to-close bodies, 1xx answers
skipped, ``connection: close`` honoured, an answer that is not HTTP refused, a connection the
server closed replaced, and header fields that would break the request's framing refused before
anything is sent.
"""

from __future__ import annotations

import asyncio
import http.client
import socket
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_integrations.common.callgate.async_transport import AsyncConnection, AsyncKeepAliveConnections
from haystack_integrations.common.callgate.transport import Connection, KeepAliveConnections


class ScriptedServer:
    """Answers each request (read up to its empty line plus any content-length body) with the next scripted bytes."""

    def __init__(self, close_after_each: bool = False) -> None:
        self.close_after_each = close_after_each
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.answers: list[bytes] = []
        self.requests: list[bytes] = []
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            with connection:
                self._answer(connection)

    def _answer(self, connection: socket.socket) -> None:
        """Answers the requests of one connection until the script says to close it."""
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
            if b"connection: close" in answer.lower() or not framed or self.close_after_each:
                return

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    yield scripted
    scripted.close()


#: Which transport the test drives: the synchronous one, or the asyncio one.
DRIVERS = ["sync", "async"]


def exchange(server: ScriptedServer, *answers: bytes, body: bytes | None = b"{}", driver: str = "sync") -> list:
    server.answers.extend(answers)
    head = b"POST /v1/x HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n" % len(body or b"")
    if driver == "async":

        async def run() -> list:
            connection = await AsyncConnection.open("127.0.0.1", server.port, None)
            try:
                return [await connection.exchange(head, body) for _ in answers]
            finally:
                connection.close()

        return asyncio.run(run())
    connection = Connection("127.0.0.1", server.port, 2.0)
    try:
        return [connection.exchange(head, body, 2.0) for _ in answers]
    finally:
        connection.close()


@pytest.mark.parametrize("driver", DRIVERS)
def test_content_length_answers_on_one_connection(server: ScriptedServer, driver: str) -> None:
    first, second = exchange(
        server,
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}",
        b"HTTP/1.1 409 Conflict\r\nContent-Length: 3\r\n\r\n[1]",
        driver=driver,
    )
    assert (first.status, first.reason, first.content, first.will_close) == (200, "OK", b"{}", False)
    assert (second.status, second.reason, second.content) == (409, "Conflict", b"[1]")
    assert server.requests[0].endswith(b"\r\n\r\n{}")  # head and body arrive as one request


@settings(max_examples=30, deadline=None)
@given(st.binary(max_size=300), st.lists(st.integers(1, 40), max_size=12), st.sampled_from(DRIVERS))
def test_chunked_bodies_of_any_split(body: bytes, cuts: list[int], driver: str) -> None:
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
        head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
        (answer,) = exchange(scripted, head + encoded, driver=driver)
    finally:
        scripted.close()
    assert answer.content == body and answer.will_close is False


@pytest.mark.parametrize("driver", DRIVERS)
def test_an_informational_answer_is_skipped_and_close_is_honoured(server: ScriptedServer, driver: str) -> None:
    informational = b"HTTP/1.1 100 Continue\r\n\r\n"
    final = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 1\r\n\r\n1"
    (answer,) = exchange(server, informational + final, driver=driver)
    assert (answer.status, answer.content, answer.will_close) == (200, b"1", True)


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_body_without_length_is_read_to_the_close(server: ScriptedServer, driver: str) -> None:
    (answer,) = exchange(server, b"HTTP/1.0 200 OK\r\n\r\nall of it", driver=driver)
    assert (answer.content, answer.will_close) == (b"all of it", True)


@pytest.mark.parametrize("driver", DRIVERS)
def test_an_answer_that_is_not_http_is_refused(server: ScriptedServer, driver: str) -> None:
    with pytest.raises(http.client.BadStatusLine):
        exchange(server, b"SSH-2.0-OpenSSH\r\n\r\n", driver=driver)


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_short_body_is_refused(server: ScriptedServer, driver: str) -> None:
    with pytest.raises(http.client.IncompleteRead):
        short = b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\nconnection: close\r\n\r\nabc"
        exchange(server, short, driver=driver)


def test_header_fields_that_break_framing_are_refused() -> None:
    with pytest.raises(ValueError, match="authorization"):
        KeepAliveConnections("http://127.0.0.1:1", {"authorization": "Bearer a\r\nx-evil: 1"}, 1.0)
    connections = KeepAliveConnections("http://127.0.0.1:1", {}, 1.0)
    with pytest.raises(ValueError, match="control character"):
        connections.request("GET", "/v1/runs/a b", timeout=1.0)


@pytest.mark.parametrize("pause", [0.05, 0.0])
def test_async_pool_replaces_a_connection_the_server_closed(pause: float) -> None:
    # Each connection answers once, then the server closes it without saying so.
    server = ScriptedServer(close_after_each=True)
    answer = b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n%d"
    server.answers.extend([answer % 1, answer % 2])

    async def run() -> list[bytes]:
        pool = AsyncKeepAliveConnections(f"http://127.0.0.1:{server.port}", {}, 2.0)
        first = await pool.request("GET", "/a", timeout=2.0)
        # With a pause the server's close reaches the idle connection (replaced before reuse);
        # without one the request may go out on it, fail before any answer and be sent again.
        await asyncio.sleep(pause)
        second = await pool.request("GET", "/b", timeout=2.0)
        await pool.aclose()
        return [first.content, second.content]

    try:
        assert asyncio.run(run()) == [b"1", b"2"]
    finally:
        server.close()
    assert [request.split(b" ")[1] for request in server.requests] == [b"/a", b"/b"]
    assert server.connections == 2


def test_async_request_times_out_and_drops_its_connection() -> None:
    silent = socket.create_server(("127.0.0.1", 0))
    port = silent.getsockname()[1]

    async def run() -> None:
        pool = AsyncKeepAliveConnections(f"http://127.0.0.1:{port}", {}, 2.0)
        with pytest.raises(TimeoutError):
            await pool.request("GET", "/never", timeout=0.2)
        assert pool._idle == []
        await pool.aclose()

    try:
        asyncio.run(run())
    finally:
        silent.close()
