"""
Every request this package's clients and hook send, and every answer they read, validates against
the HTTP API's schemas: ``test/fixtures/schemas/openapi.json``, generated (``npm run schemas``)
from the same zod schemas the server validates with. A recording proxy sits between the real
clients and the real server, so what is checked is the bytes on the wire.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import SCHEMAS, Live, _secret
from haystack.components.agents import Agent
from jsonschema import Draft202012Validator
from support import Counter, Reviewer, ScriptedChatGenerator, calls, local_tools, user

from haystack_integrations.common.callgate.client import AsyncCallgateClient, CallgateClient
from haystack_integrations.common.callgate.errors import CallgateError
from haystack_integrations.hooks.callgate import CallgateHook

DOCUMENT: dict[str, Any] = json.loads((SCHEMAS / "openapi.json").read_text(encoding="utf-8"))


@dataclass
class Exchange:
    method: str
    path: str
    query: dict[str, list[str]]
    request: bytes
    status: int
    content_type: str
    answer: bytes


class RecordingProxy:
    """An HTTP proxy on 127.0.0.1 (ephemeral port) that forwards to ``upstream`` and keeps each exchange."""

    def __init__(self, upstream: str) -> None:
        target = urlsplit(upstream)
        self.exchanges: list[Exchange] = []
        lock = threading.Lock()
        exchanges = self.exchanges

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                connection = http.client.HTTPConnection(target.hostname, target.port, timeout=90)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                connection.request(self.command, self.path, body=body or None, headers=headers)
                answer = connection.getresponse()
                content = answer.read()
                connection.close()
                parts = urlsplit(self.path)
                with lock:
                    exchanges.append(
                        Exchange(
                            self.command,
                            parts.path,
                            parse_qs(parts.query, keep_blank_values=True),
                            body,
                            answer.status,
                            answer.getheader("content-type") or "",
                            content,
                        )
                    )
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                self.send_header("content-length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            do_GET = do_POST = do_DELETE = _forward

            def log_message(self, *_: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def proxy(live: Live) -> Iterator[RecordingProxy]:
    recording = RecordingProxy(live.url)
    yield recording
    recording.close()


def _operations() -> list[tuple[str, re.Pattern[str], dict[str, Any]]]:
    found = []
    for path, methods in DOCUMENT["paths"].items():
        pattern = re.compile("^" + re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(path)) + "$")
        for method, operation in methods.items():
            found.append((method.upper(), pattern, operation))
    return found


OPERATIONS = _operations()


def _resolved(schema: dict[str, Any]) -> dict[str, Any]:
    reference = schema.get("$ref")
    if not reference:
        return schema
    node: Any = DOCUMENT
    for part in reference.removeprefix("#/").split("/"):
        node = node[part]
    return node


def check(exchanges: list[Exchange]) -> set[str]:
    """Validates every exchange against its operation's schemas; returns the operation ids seen."""
    seen: set[str] = set()
    for exchange in exchanges:
        where = f"{exchange.method} {exchange.path} -> {exchange.status}"
        matches = [
            operation
            for method, pattern, operation in OPERATIONS
            if method == exchange.method and pattern.match(exchange.path)
        ]
        assert matches, f"{where}: no such operation in openapi.json"
        operation = matches[0]
        seen.add(operation["operationId"])
        known = {parameter["name"] for parameter in operation.get("parameters", []) if parameter["in"] == "query"}
        assert set(exchange.query) <= known, f"{where}: query {sorted(exchange.query)} beyond {sorted(known)}"
        if exchange.request:
            body = operation.get("requestBody")
            assert body, f"{where}: sent a body the operation does not take"
            request_schema = Draft202012Validator(body["content"]["application/json"]["schema"])
            if exchange.status == 400:
                # Sent wrong on purpose: the schemas refuse it as the server did.
                assert not request_schema.is_valid(json.loads(exchange.request)), where
            else:
                request_schema.validate(json.loads(exchange.request))
        response = operation["responses"].get(str(exchange.status))
        assert response, f"{where}: status not documented"
        if "application/json" in exchange.content_type:
            schema = _resolved(response["content"]["application/json"]["schema"])
            Draft202012Validator(schema).validate(json.loads(exchange.answer))
    return seen


def test_the_sync_clients_requests_and_answers_match_the_schemas(live: Live, proxy: RecordingProxy) -> None:
    agent = CallgateClient(proxy.url, live.agent_key)
    reviewer = CallgateClient(proxy.url, live.reviewer_key)
    admin = CallgateClient(proxy.url, live.admin_key)
    agent.health()
    run = agent.start_run("haystack-wire-test", labels={"suite": "wire"})
    spec = {"name": "write_wire", "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}}}
    verdicts = agent.decide(
        run["run_id"],
        [
            {"id": "w-1", "tool": "read_wire", "arguments": {}},
            {"id": "w-2", "tool": "write_wire", "arguments": {"x": 1}},
        ],
        message={"role": "assistant", "content": "reading and writing"},
        tools=[{**spec, "name": "read_wire"}, spec],
    )
    allowed, pending = verdicts
    agent.consume_grant(
        allowed.raw["grant"]["token"],
        run_id=run["run_id"],
        call_id="w-1",
        tool="read_wire",
        arguments_digest=allowed.raw["arguments_digest"],
    )
    agent.record_outcome(run["run_id"], {"call_id": "w-1", "outcome": "ok", "result": {"text": "hi"}, "duration_ms": 1})
    reviewer.list_approvals(status="pending", run_id=run["run_id"])
    reviewer.approve(pending.raw["approval"]["id"], reason="fine")
    agent.get_approval(pending.raw["approval"]["id"], wait=1)
    step = agent.decide_step(
        run["run_id"],
        [
            {"id": "w-3", "tool": "read_wire", "arguments": "{}"},
            {"id": "w-4", "tool": "write_wire", "arguments": {"x": 2}},
        ],
        consume=True,
        outcomes=[{"call_id": "w-2", "outcome": "ok", "result": "done", "grant_consumed": False}],
    )
    reviewer.deny(step.verdicts[1].raw["approval"]["id"], reason="no")
    agent.record_message(run["run_id"], "assistant", "thinking")
    agent.record_gap(run["run_id"], reason="server was down", from_ts=1, to_ts=2, calls=0)
    agent.record_outcomes(run["run_id"], [{"call_id": "w-3", "outcome": "ok", "result": None, "grant_consumed": True}])
    third = agent.decide(run["run_id"], [{"id": "w-5", "tool": "write_wire", "arguments": {"x": 3}}])[0]
    agent.withdraw_approval(third.raw["approval"]["id"], reason="not needed")
    with pytest.raises(CallgateError):
        agent.decide(run["run_id"], [{"id": "w-6", "tool": 7, "arguments": {}}])  # a refused request: error body
    agent.end_run(run["run_id"], outcomes=[{"call_id": "w-4", "outcome": "denied"}])
    agent.get_run(run["run_id"])
    admin.list_tools()
    bundle = admin.bundle(run["run_id"], openings=True)
    admin.bundle(run["run_id"], proofs=True)
    admin.verify(bundle, strict=True)
    seen = check(proxy.exchanges)
    assert {
        "health",
        "startRun",
        "decide",
        "consumeGrant",
        "recordOutcome",
        "listApprovals",
        "approve",
        "getApproval",
        "deny",
        "recordMessage",
        "recordGap",
        "withdrawApproval",
        "endRun",
        "getRun",
        "listTools",
        "exportRun",
        "verifyBundle",
    } <= seen, seen


def test_the_async_client_and_the_hook_match_the_schemas(live: Live, proxy: RecordingProxy) -> None:
    async def use_async() -> None:
        client = AsyncCallgateClient(proxy.url, live.agent_key)
        try:
            run = await client.start_run("haystack-wire-async")
            step = await client.decide_step(run["run_id"], [{"id": "a-1", "tool": "read_async", "arguments": {}}])
            await client.end_run(run["run_id"], outcomes=[{"call_id": step.verdicts[0].call_id, "outcome": "ok"}])
        finally:
            await client.aclose()

    asyncio.run(use_async())
    gate = CallgateHook(url=proxy.url, api_key=_secret(live.agent_key), max_wait=None)
    try:
        generator = ScriptedChatGenerator(
            [
                calls(("read_note", {"name": "a"}), ("write_note", {"name": "b", "text": "c"})),
                calls(("delete_note", {"name": "a"}), ("fail", {"reason": "x"})),
                "done",
            ]
        )
        agent = Agent(chat_generator=generator, tools=local_tools(Counter()), hooks=gate.hooks())
        with Reviewer(live.reviewer(), {"write_note": "approve"}):
            agent.run([user("go")], hook_context={})
    finally:
        gate.close()
    seen = check(proxy.exchanges)
    assert {"startRun", "decide", "endRun"} <= seen, seen
    assert len(proxy.exchanges) >= 6
