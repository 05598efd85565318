"""Haystack tracing spans of the gate, inside the agent's own trace; the W3C traceparent on requests."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import http.server
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest
from conftest import Live
from haystack import tracing
from haystack.components.agents import Agent
from haystack.utils import Secret
from opentelemetry import trace
from support import Counter, Reviewer, ScriptedChatGenerator, calls, local_tools, user

from haystack_integrations.common.callgate.client import AsyncCallgateClient, CallgateClient
from haystack_integrations.hooks.callgate import CallgateHook


@dataclass
class RecordedSpan(tracing.Span):
    """One span a :class:`RecordingTracer` made: its name, tags and parent."""

    name: str
    parent: RecordedSpan | None
    tags: dict[str, Any] = field(default_factory=dict)

    def set_tag(self, key: str, value: Any) -> None:
        self.tags[key] = value

    def ancestors(self) -> list[str]:
        names, span = [], self.parent
        while span is not None:
            names.append(span.name)
            span = span.parent
        return names


class RecordingTracer(tracing.Tracer):
    """A Haystack tracer keeping every span; the current span is a context variable, as in OpenTelemetry."""

    def __init__(self) -> None:
        self.spans: list[RecordedSpan] = []
        self._current: contextvars.ContextVar[RecordedSpan | None] = contextvars.ContextVar("span", default=None)

    @contextlib.contextmanager
    def trace(
        self, operation_name: str, tags: dict[str, Any] | None = None, parent_span: tracing.Span | None = None
    ) -> Iterator[tracing.Span]:
        parent = parent_span if isinstance(parent_span, RecordedSpan) else None
        span = RecordedSpan(operation_name, parent, dict(tags or {}))
        self.spans.append(span)
        token = self._current.set(span)
        try:
            yield span
        finally:
            self._current.reset(token)

    def current_span(self) -> tracing.Span | None:
        return self._current.get()

    def named(self, name: str) -> list[RecordedSpan]:
        return [span for span in self.spans if span.name == name]


@pytest.fixture(params=[False, True], ids=["content-off", "content-on"])
def tracer(request: pytest.FixtureRequest) -> Iterator[RecordingTracer]:
    recording = RecordingTracer()
    previous, content = tracing.tracer.actual_tracer, tracing.tracer.is_content_tracing_enabled
    tracing.enable_tracing(recording)
    tracing.tracer.is_content_tracing_enabled = request.param
    try:
        yield recording
    finally:
        tracing.tracer.actual_tracer = previous
        tracing.tracer.is_content_tracing_enabled = content


def run_step(
    live: Live, hook: CallgateHook, tracer: RecordingTracer, *, run_async: bool = False
) -> tuple[dict[str, RecordedSpan], str]:
    step = calls(
        ("read_note", {"name": "secret-alpha"}, "call-read"),
        ("delete_note", {"name": "secret-beta"}, "call-delete"),
        ("write_note", {"name": "secret-gamma", "text": "secret-delta"}, "call-write"),
    )
    agent = Agent(
        chat_generator=ScriptedChatGenerator([step, "done"]), tools=local_tools(Counter()), hooks=hook.hooks()
    )
    context: dict[str, Any] = {"test": True}
    with Reviewer(live.reviewer(), {"write_note": "approve"}):
        if run_async:
            asyncio.run(agent.run_async([user("notes")], hook_context=context))
        else:
            agent.run([user("notes")], hook_context=context)
    return {span.tags["gen_ai.tool.call.id"]: span for span in tracer.named("callgate.decide")}, context[
        "callgate_run_id"
    ]


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_each_decided_call_has_a_span_inside_the_agent_step(
    live: Live, hook: CallgateHook, tracer: RecordingTracer, run_async: bool
) -> None:
    spans, run_id = run_step(live, hook, tracer, run_async=run_async)

    assert sorted(spans) == ["call-delete", "call-read", "call-write"]
    (step,) = tracer.named("callgate.before_tool")
    assert step.tags == {"callgate.step.calls": 3, "callgate.run_id": run_id}
    # Inside Haystack's own spans: the before_tool hook's span, in the agent's step, in its run.
    assert step.ancestors() == ["haystack.agent.hook", "haystack.agent.step", "haystack.agent.run"]
    assert step.parent is not None and step.parent.tags["haystack.agent.hook.point"] == "before_tool"
    for span in spans.values():
        assert span.parent is step
        assert span.tags["gen_ai.operation.name"] == "execute_tool"
        assert span.tags["callgate.run_id"] == run_id
        assert span.tags["callgate.call.attempt"] == 1

    read, delete, write = spans["call-read"].tags, spans["call-delete"].tags, spans["call-write"].tags
    assert (read["gen_ai.tool.name"], read["callgate.decision.effect"], read["callgate.rule_ids"]) == (
        "read_note",
        "allow",
        ["reads"],
    )
    assert read["callgate.outcome"] == "allowed" and "callgate.approval.status" not in read
    assert (delete["callgate.decision.effect"], delete["callgate.rule_ids"], delete["error.type"]) == (
        "deny",
        ["deletes-denied"],
        "policy-denied",
    )
    assert delete["callgate.outcome"] == "refused"
    assert (write["callgate.decision.effect"], write["callgate.approval.status"], write["callgate.outcome"]) == (
        "ask",
        "approved",
        "allowed",
    )
    assert write["callgate.approval.id"]

    text = repr([span.tags for span in tracer.spans if span.name.startswith("callgate.")])
    if tracing.tracer.is_content_tracing_enabled:
        assert read["gen_ai.tool.call.arguments"] == {"name": "secret-alpha"}
        assert write["gen_ai.tool.call.arguments"] == {"name": "secret-gamma", "text": "secret-delta"}
        assert "secret-beta" not in text  # a refused call never ran: it has no arguments to show
    else:
        assert "secret" not in text
        assert all("gen_ai.tool.call.arguments" not in span.tags for span in spans.values())


def test_no_spans_without_a_tracer(live: Live, hook: CallgateHook) -> None:
    assert not tracing.is_tracing_enabled()
    step = calls(("read_note", {"name": "a"}, "call-quiet"))
    agent = Agent(chat_generator=ScriptedChatGenerator([step, "ok"]), tools=local_tools(Counter()), hooks=hook.hooks())
    result = agent.run([user("read")], hook_context={"test": True})
    assert result["last_message"].text == "ok"


class _HeaderLog(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []

    def do_GET(self) -> None:
        _HeaderLog.seen.append({key.lower(): value for key, value in self.headers.items()})
        body = b'{"status": "ok"}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_requests_carry_the_active_opentelemetry_context(live: Live) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HeaderLog)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    context = trace.SpanContext(
        trace_id=0x4BF92F3577B34DA6A3CE929D0E0E4736,
        span_id=0x00F067AA0BA902B7,
        is_remote=False,
        trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
    )
    sync, asynchronous = CallgateClient(url), AsyncCallgateClient(url)
    try:
        sync.health()  # no active span: no header
        with trace.use_span(trace.NonRecordingSpan(context)):
            sync.health()
            with contextlib.suppress(Exception):  # the header log's answer is no approval
                asyncio.run(asynchronous.get_approval("approval-1"))
            # The real server takes the header on its API.
            assert CallgateClient(live.url).health()["status"] in ("ok", "degraded")
    finally:
        sync.close()
        server.shutdown()
        server.server_close()
    expected = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    assert [headers.get("traceparent") for headers in _HeaderLog.seen] == [None, expected, expected]


def test_a_call_refused_before_any_decision_has_no_effect(tracer: RecordingTracer) -> None:
    unreachable = socket.socket()
    unreachable.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    gate = CallgateHook(url=f"http://127.0.0.1:{unreachable.getsockname()[1]}", api_key=Secret.from_token("cg_x"))
    step = calls(("read_note", {"name": "secret-alpha"}, "call-outage"))
    agent = Agent(chat_generator=ScriptedChatGenerator([step, "ok"]), tools=local_tools(Counter()), hooks=gate.hooks())
    try:
        agent.run([user("read")], hook_context={"test": True})
    finally:
        gate.close()
        unreachable.close()
    (span,) = tracer.named("callgate.decide")
    assert span.tags["error.type"] == "gate-unavailable" and span.tags["callgate.outcome"] == "refused"
    assert "callgate.decision.effect" not in span.tags and "callgate.run_id" not in span.tags
    assert tracing.tracer.is_content_tracing_enabled or "secret" not in repr(span.tags)


def test_a_call_resumed_from_its_approval_says_so(live: Live, secret: Any, tracer: RecordingTracer) -> None:
    arguments = {"name": "refund", "text": "approved"}
    friday = CallgateHook(url=live.url, api_key=secret(live.agent_key), max_wait=0.2)
    context: dict[str, Any] = {"callgate_run_id": None}
    first = Agent(
        chat_generator=ScriptedChatGenerator([calls(("write_note", arguments, "call-resumed")), "asked"]),
        tools=local_tools(Counter()),
        hooks=friday.hooks(),
    )
    first.run([user("write")], hook_context=context)
    friday.flush()
    (asked,) = [span for span in tracer.named("callgate.decide") if span.tags["gen_ai.tool.call.id"] == "call-resumed"]
    assert (asked.tags["callgate.decision.effect"], asked.tags["callgate.approval.status"]) == ("ask", "pending")
    live.reviewer().approve(asked.tags["callgate.approval.id"], reason="fine")

    monday = CallgateHook(url=live.url, api_key=secret(live.agent_key))
    counter = Counter()
    second = Agent(
        chat_generator=ScriptedChatGenerator([calls(("write_note", arguments, "call-resumed")), "done"]),
        tools=local_tools(counter),
        hooks=monday.hooks(),
    )
    try:
        second.run([user("write")], hook_context={"callgate_run_id": context["callgate_run_id"]})
    finally:
        friday.close()
        monday.close()
    assert counter.names() == ["write_note"]
    resumed = tracer.named("callgate.decide")[-1]
    assert resumed.tags["callgate.resumed"] is True and resumed.tags["callgate.approval.status"] == "approved"
    assert resumed.tags["callgate.approval.id"] == asked.tags["callgate.approval.id"]
    assert resumed.tags["callgate.run_id"] == context["callgate_run_id"]
