"""
The model and the people of the generated Haystack harness (``test_generated_harness.py``): a chat
generator that plays a generated run's steps and notes the results each next request holds, and
reviewers at the approvals inbox who answer each approval as its generated call says.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from haystack import component
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall
from support import check_history

from haystack_integrations.common.callgate.client import CallgateClient
from haystack_integrations.common.callgate.errors import CallgateError


def loads(text: str) -> Any:
    """JSON text as Python reads it: big integers exact, NaN/Infinity tokens as floats, lone surrogates kept."""
    return json.loads(text)


@component
class GeneratedChatGenerator:
    """Plays the model's steps; records the tool results each next request holds (one list per step)."""

    def __init__(self, steps: list[list[dict[str, Any]]]) -> None:
        self.steps = steps
        self.next = 0
        self.seen = 0
        self.results: list[list[dict[str, str]]] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        if self.next > 0:
            # The step's results are every tool result since the previous request: Haystack puts a
            # refused call with its result in an assistant message of its own.
            check_history(messages)
            self.results.append(
                [
                    {"call_id": str(message.tool_call_result.origin.id)}
                    for message in messages[self.seen :]
                    if message.role == ChatRole.TOOL and message.tool_call_result
                ]
            )
        self.seen = len(messages)
        if self.next >= len(self.steps):
            self.next += 1
            return {"replies": [ChatMessage.from_assistant("done")]}
        calls = [
            ToolCall(tool_name=call["tool"], arguments=loads(call["text"]) if call["text"] else {}, id=call["id"])
            for call in self.steps[self.next]
        ]
        self.next += 1
        return {"replies": [ChatMessage.from_assistant(tool_calls=calls)]}


class Reviewers:
    """People at the approvals inbox, answering each pending approval as its generated call says."""

    def __init__(self, client: CallgateClient, acts: dict[str, str]) -> None:
        self.client = client
        self.acts = acts
        self.seen: dict[str, dict[str, Any]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.errors: list[str] = []

    def __enter__(self) -> Reviewers:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.thread.join(5)

    def _loop(self) -> None:
        while not self.stop.is_set():
            for approval in self.client.list_approvals(status="pending"):
                if approval["id"] in self.seen:
                    continue
                self.seen[approval["id"]] = approval
                act = self.acts.get(approval["call_id"], "none")
                try:
                    if act in ("approve", "twice"):
                        self.client.approve(approval["id"], reason="looks right")
                    elif act == "deny":
                        self.client.deny(approval["id"], reason="no")
                    elif act == "edit":
                        edited = {**(approval.get("arguments") or {}), "amount": 1}
                        self.client.approve(approval["id"], arguments=edited)
                    if act == "twice":
                        self._expect_conflict(
                            lambda a=approval: self.client.deny(a["id"], reason="again"), f"twice {approval}"
                        )
                except CallgateError as error:
                    if error.kind != "conflict":  # an answer after the hook gave up is a conflict
                        self.errors.append(f"{act} answer of {approval['id']}: {error}")
            self.stop.wait(0.01)

    def _expect_conflict(self, answer: Any, what: str) -> None:
        try:
            state = answer()
        except CallgateError as error:
            if error.kind != "conflict":
                self.errors.append(f"{what}: a second answer was {error.kind}, not a conflict")
            return
        self.errors.append(f"{what}: a second answer was accepted: {state}")

    def answer_late(self) -> None:
        """Answers, after the hook gave up, every approval whose reviewer was late: each is refused."""
        for approval in self.seen.values():
            if self.acts.get(approval["call_id"]) == "late":
                self._expect_conflict(
                    lambda a=approval: self.client.approve(a["id"], reason="late"), f"late {approval}"
                )
