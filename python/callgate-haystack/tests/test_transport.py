"""The synchronous client's keep-alive connections: reuse, a connection the server closed, plain http without TLS."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from conftest import Live
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_integrations.common.callgate.transport import KeepAliveConnections


class OneAnswerServer:
    """A raw HTTP/1.1 server that answers each connection once, then closes it without saying so."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            with connection:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                body = b'{"n": %d}' % self.connections
                connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def one_answer() -> Iterator[OneAnswerServer]:
    server = OneAnswerServer()
    yield server
    server.close()


def test_a_connection_the_server_closed_is_replaced(one_answer: OneAnswerServer) -> None:
    connections = KeepAliveConnections(f"http://127.0.0.1:{one_answer.port}", {}, 2.0)
    answers = [connections.request("GET", "/x", timeout=2.0) for _ in range(3)]
    assert [answer.content for answer in answers] == [b'{"n": 1}', b'{"n": 2}', b'{"n": 3}']
    assert one_answer.connections == 3
    connections.close()


def test_keeps_one_connection_alive_and_builds_no_tls_for_http(live: Live) -> None:
    connections = KeepAliveConnections(live.url, {}, 2.0)
    for _ in range(5):
        answer = connections.request("GET", "/v1/health", timeout=5.0)
        assert answer.status == 200 and b'"status"' in answer.content
    assert len(connections._idle) == 1  # noqa: SLF001 - one connection served all five
    assert connections._ssl_context is None  # noqa: SLF001
    connections.close()
    with pytest.raises(OSError):
        KeepAliveConnections("http://127.0.0.1:1", {}, 0.5).request("GET", "/", timeout=0.5)


class KeepAliveServer:
    """A raw HTTP/1.1 server that answers every request on a connection and keeps it open."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    @staticmethod
    def _answer(connection: socket.socket) -> None:
        with connection:
            data = b""
            while True:
                while b"\r\n\r\n" not in data:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                _, data = data.split(b"\r\n\r\n", 1)
                connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")

    def close(self) -> None:
        self.listener.close()


@settings(max_examples=40, deadline=None)
@given(timeouts=st.lists(st.sampled_from([0.5, 2.0, 5.0, 30.0]), min_size=1, max_size=12))
def test_each_request_waits_with_its_own_timeout_on_a_reused_connection(timeouts: list[float]) -> None:
    # The socket's timeout is set only when it changes (a system call each time): whatever the
    # order of timeouts, the connection a request used holds that request's timeout afterwards.
    server = KeepAliveServer()
    connections = KeepAliveConnections(f"http://127.0.0.1:{server.port}", {}, 2.0)
    try:
        for timeout in timeouts:
            assert connections.request("GET", "/x", timeout=timeout).content == b"{}"
            (connection,) = connections._idle  # noqa: SLF001 - one connection served every request
            assert connection.sock is not None and connection.sock.gettimeout() == timeout
    finally:
        connections.close()
        server.close()
