"""
A server on a Unix-domain socket (``callgate serve --socket``): the URL spellings the client
accepts, and the hook, the synchronous and the asynchronous client against a real server there.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from haystack.components.agents import Agent
from haystack.utils import Secret
from hypothesis import given
from hypothesis import strategies as st
from support import POLICY, Counter, ScriptedChatGenerator, calls, local_tools, records, user

from haystack_integrations.common.callgate.client import AsyncCallgateClient, CallgateClient
from haystack_integrations.common.callgate.http1 import Origin
from haystack_integrations.common.callgate.testing import CallgateServer
from haystack_integrations.common.callgate.wire import resolve_server_url, unix_socket_path
from haystack_integrations.hooks.callgate import CallgateHook
from haystack_integrations.tools.callgate.toolset import gateway_url

#: Socket paths: absolute, with the characters a folder name may hold (spaces, %, unicode); not
#: ending in white space, which a URL setting loses (``CALLGATE_URL`` is stripped).
paths = (
    st.lists(
        st.text(st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)), min_size=1, max_size=12),
        min_size=1,
        max_size=4,
    )
    .map(lambda parts: "/" + "/".join(parts))
    .filter(lambda path: path == path.rstrip())
)


@given(path=paths, spelling=st.sampled_from(["unix:", "unix://", "http+unix://"]), tail=st.sampled_from(["", "/v1"]))
def test_each_socket_spelling_names_the_same_path(path: str, spelling: str, tail: str) -> None:
    url = spelling + (quote(path, safe="") + tail if spelling == "http+unix://" else path)
    assert unix_socket_path(url) == path
    assert resolve_server_url(url) == f"unix:{path}"
    origin = Origin(resolve_server_url(url), {"authorization": "Bearer x"})
    assert (origin.socket_path, origin.prefix, origin.https) == (path, "", False)
    assert origin.head("GET", "/v1/health", None, None).startswith(b"GET /v1/health HTTP/1.1\r\nhost: localhost\r\n")


def test_socket_urls_that_are_refused_say_why() -> None:
    for url in ("unix:relative.sock", "unix:", "http+unix://relative.sock"):
        with pytest.raises(ValueError, match="absolute socket path"):
            resolve_server_url(url)
    with pytest.raises(ValueError, match=r"http\(s\)://host\[:port\]\[/path\] or unix:/path/to/socket"):
        resolve_server_url("ftp://h")
    assert unix_socket_path("http://127.0.0.1:7420") is None
    with pytest.raises(ValueError, match="not a Unix-domain socket") as refused:
        gateway_url("unix:/run/callgate.sock")
    # What it advises can be done: one server, on a port instead (not a second server beside it).
    assert "serve callgate on a TCP port instead" in str(refused.value)
    assert "port too" not in str(refused.value)


@pytest.fixture(scope="module")
def on_socket() -> Iterator[tuple[CallgateServer, str]]:
    server = CallgateServer.start(policy=POLICY, socket=True)
    try:
        yield server, server.create_key("agent", "socket-agent")
    finally:
        server.close()


def test_the_server_listens_on_its_socket_with_mode_0600_and_no_port(on_socket: tuple[CallgateServer, str]) -> None:
    server, _ = on_socket
    assert server.socket_path is not None
    mode = os.stat(server.socket_path).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    assert f"callgate serving unix:{server.socket_path}" in server.log()
    # The banner names what a client takes, and nothing below the socket's URL.
    assert f"CALLGATE_URL=unix:{server.socket_path}\n" in server.log()
    assert f"unix:{server.socket_path}/" not in server.log()


def test_clients_and_the_hook_over_the_socket(on_socket: tuple[CallgateServer, str]) -> None:
    server, key = on_socket
    os.environ.pop("CALLGATE_URL", None)
    client = CallgateClient(server.url, key)
    assert client.health()["status"] == "ok"
    client.close()

    async def asynchronous() -> str:
        client = AsyncCallgateClient(server.url, key)
        try:
            return str((await client.health())["status"])
        finally:
            await client.aclose()

    assert asyncio.run(asynchronous()) == "ok"

    hook = CallgateHook(url=server.url, api_key=Secret.from_token(key), max_wait=None)
    context: dict[str, Any] = {"test": True}
    agent = Agent(
        chat_generator=ScriptedChatGenerator([calls(("read_note", {"name": "n"})), "done"]),
        tools=local_tools(Counter()),
        hooks=hook.hooks(),
    )
    agent.run([user("read")], hook_context=context)
    hook.close()
    admin = server.client(server.create_key("admin", "socket-admin"))
    bundle = admin.bundle(context["callgate_run_id"])
    assert [end["outcome"] for end in records(bundle, "call-end")] == ["ok"]
    assert admin.verify(bundle, strict=True)["ok"] is True
