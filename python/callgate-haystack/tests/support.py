"""Helpers of the test suite: a scripted chat generator, a reviewer that answers approvals, tools."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from haystack import component
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall
from haystack.tools import Tool, create_tool_from_function

from haystack_integrations.common.callgate.client import CallgateClient

POLICY = """
version: 1
default: deny
fail_mode: closed
approval: { ttl: 60s, wait: 4s, allow_edits: false }
scrub: [force]
profiles:
  observe: [read_text_file, list_directory, list_allowed_directories]
rules:
  - id: reads
    match: { tools: ["read_*", "list_*", "get_*", "echo", "fail", "agent_*", "restart_*"] }
    effect: allow
  - id: deletes-denied
    match: { tools: ["delete_*"] }
    effect: deny
    reason: deleting is not allowed
  - id: writes-ask
    match: { tools: ["write_*", "send_*"] }
    effect: ask
    reason: writes need a person
"""


def user(text: str) -> ChatMessage:
    return ChatMessage.from_user(text)


def calls(
    *items: tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str | None], text: str | None = None
) -> ChatMessage:
    """An assistant message asking for tool calls: ``(tool, arguments[, id])``; id None means no id."""
    tool_calls = []
    for number, item in enumerate(items):
        tool, arguments = item[0], item[1]
        call_id = item[2] if len(item) > 2 else f"call-{tool}-{number}-{time.monotonic_ns()}"  # type: ignore[misc]
        tool_calls.append(ToolCall(tool_name=tool, arguments=arguments, id=call_id))
    return ChatMessage.from_assistant(text=text, tool_calls=tool_calls)


def check_history(messages: list[ChatMessage]) -> None:
    """
    Asserts the history is one a chat API accepts: every tool call of an assistant message is
    answered by exactly one tool result right after it, and every message converts to OpenAI's format.
    """
    position = 0
    while position < len(messages):
        message = messages[position]
        message.to_openai_dict_format(require_tool_call_ids=False)
        if message.role == ChatRole.ASSISTANT and message.tool_calls:
            wanted = [call.id for call in message.tool_calls]
            answered = []
            position += 1
            while position < len(messages) and messages[position].role == ChatRole.TOOL:
                messages[position].to_openai_dict_format(require_tool_call_ids=False)
                answered.append(messages[position].tool_call_result.origin.id)
                position += 1
            assert sorted(map(str, answered)) == sorted(map(str, wanted)), (wanted, answered)
            continue
        assert message.role != ChatRole.TOOL, f"a tool result without its call at {position}"
        position += 1


@component
class ScriptedChatGenerator:
    """A chat generator replying from a script; it checks every history it receives."""

    def __init__(self, replies: list[ChatMessage | str]) -> None:
        self.replies = list(replies)
        self.received: list[list[ChatMessage]] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        check_history(messages)
        self.received.append(list(messages))
        reply = self.replies.pop(0) if self.replies else "done"
        if isinstance(reply, str):
            reply = ChatMessage.from_assistant(reply)
        return {"replies": [reply]}

    @component.output_types(replies=list[ChatMessage])
    async def run_async(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        return self.run(messages, tools, **kwargs)


class Reviewer:
    """A person at the approvals inbox: answers pending approvals of given tools through the API."""

    def __init__(self, client: CallgateClient, answers: dict[str, str], *, delay: float = 0.2) -> None:
        self.client = client
        self.answers = answers
        self.delay = delay
        self.answered: list[dict[str, Any]] = []
        self._since = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Reviewer:
        self._since = int(time.time() * 1000) - 50  # answer only approvals asked from now on
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(5)

    def _loop(self) -> None:
        while not self._stop.is_set():
            for approval in self.client.list_approvals(status="pending"):
                answer = self.answers.get(approval["tool"])
                if answer is None or approval["created_at"] < self._since:
                    continue
                time.sleep(self.delay)
                if answer == "approve":
                    self.client.approve(approval["id"], reason="looks right")
                else:
                    self.client.deny(approval["id"], reason="not today")
                self.answered.append(approval)
            self._stop.wait(0.05)


class Counter:
    """Counts how often each local tool ran, and with what."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()

    def record(self, tool: str, arguments: dict[str, Any]) -> None:
        with self.lock:
            self.runs.append((tool, arguments))

    def names(self) -> list[str]:
        return [name for name, _ in self.runs]


def local_tools(counter: Counter) -> list[Tool]:
    """Local function tools: reads (allowed), a write (asks), a delete (denied), one that fails."""

    def read_note(name: str) -> dict[str, Any]:
        """Read a note by name."""
        counter.record("read_note", {"name": name})
        return {"name": name, "text": f"contents of {name}"}

    def write_note(name: str, text: str) -> str:
        """Write a note."""
        counter.record("write_note", {"name": name, "text": text})
        return f"wrote {name}"

    def delete_note(name: str) -> str:
        """Delete a note."""
        counter.record("delete_note", {"name": name})
        return f"deleted {name}"

    def fail(reason: str) -> str:
        """Always fails."""
        counter.record("fail", {"reason": reason})
        raise RuntimeError(f"failed on purpose: {reason}")

    return [create_tool_from_function(function) for function in (read_note, write_note, delete_note, fail)]


def records(bundle: dict[str, Any], record_type: str) -> list[dict[str, Any]]:
    """The bundle's records of one type."""
    return [record for record in bundle["records"] if record.get("type") == record_type]


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")
