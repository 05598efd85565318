"""
Pure functions over one agent step's messages: what to send for a step, how to rewrite the
pending message once its calls are decided, and where the step's results are afterwards.

The rewrite follows Haystack's own ``ConfirmationHook``: each refused call becomes an assistant
message holding only that call, followed by a tool message with the refusal as an error result;
the calls that run stay on the last message, which is what the Agent executes. So the history
holds exactly one tool result per call, in the order chat APIs require.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, replace
from typing import Any

from haystack.dataclasses import ChatMessage, ChatRole, ToolCall
from haystack.dataclasses.chat_message import ReasoningContent, TextContent
from haystack.tools import Tool

from haystack_integrations.common.callgate.wire import encode_arguments, json_safe


def mint_call_id() -> str:
    """A call id for a call the model gave none, in the server's own form: ``cg-`` and 16 hex digits."""
    return f"cg-{secrets.token_hex(8)}"


def wire_calls(tool_calls: list[ToolCall]) -> list[dict[str, Any]]:
    """The ``calls`` of a decisions request, in the model's order (an absent or empty id is sent as null)."""
    return [
        {"id": call.id or None, "tool": call.tool_name, "arguments": encode_arguments(call.arguments)}
        for call in tool_calls
    ]


def message_content(message: ChatMessage) -> dict[str, Any]:
    """
    What the hook records of a model message besides its tool calls (which the server records
    under the ids they are decided by): its text and its reasoning, with any provider extras
    (e.g. OpenAI's ``encrypted_content``).
    """
    content: dict[str, Any] = {}
    texts = [part.text for part in message._content if isinstance(part, TextContent)]
    if texts:
        content["text"] = texts[0] if len(texts) == 1 else texts
    reasonings = [part for part in message._content if isinstance(part, ReasoningContent)]
    if reasonings:
        content["reasoning"] = [
            {"text": part.reasoning_text, **({"extra": json_safe(part.extra)} if part.extra else {})}
            for part in reasonings
        ]
    if message.name:
        content["name"] = message.name
    return content


def error_text(error: dict[str, Any]) -> str:
    """The text a model reads for a refused call: ``{"error": {"kind", "message", ...}}``."""
    return json.dumps({"error": error}, ensure_ascii=False, separators=(",", ":"), default=str)


@dataclass
class CallPlan:
    """What happens to one pending call after the decision."""

    original: ToolCall
    #: The call as it stays on the message: minted id and decided arguments applied.
    call: ToolCall
    #: The refusal the model reads in place of a result, or None when the call runs.
    error: dict[str, Any] | None = None
    #: A note for the model when a reviewer changed the arguments (as Haystack's hook explains edits).
    note: str | None = None


def plan_call(original: ToolCall, call_id: str, arguments: dict[str, Any] | None) -> ToolCall:
    """The call with its decided id and arguments; the same object when nothing changes."""
    changes: dict[str, Any] = {}
    if original.id != call_id:
        changes["id"] = call_id
    if arguments is not None and arguments != original.arguments:
        changes["arguments"] = arguments
    return replace(original, **changes) if changes else original


def rewrite_step(message: ChatMessage, plans: list[CallPlan]) -> list[ChatMessage] | None:
    """
    The messages that replace the pending ``message`` once its calls are decided.

    :returns: None when every call runs unchanged (the message stays as it is); otherwise the
        refusal pairs, then any notes, then the assistant message of the calls that run (absent
        when none does). The message's text and reasoning stay on the first assistant message.
    """
    if all(plan.error is None and plan.note is None and plan.call is plan.original for plan in plans):
        return None
    others = [part for part in message._content if not isinstance(part, ToolCall)]
    emitted: list[ChatMessage] = []
    carried = False

    def assistant(calls: list[ToolCall]) -> ChatMessage:
        nonlocal carried
        content = ([] if carried else list(others)) + list(calls)
        carried = True
        return replace(message, _content=content)

    for plan in plans:
        if plan.error is not None:
            emitted.append(assistant([plan.call]))
            emitted.append(ChatMessage.from_tool(tool_result=error_text(plan.error), origin=plan.call, error=True))
    emitted.extend(ChatMessage.from_user(plan.note) for plan in plans if plan.error is None and plan.note)
    running = [plan.call for plan in plans if plan.error is None]
    if running:
        emitted.append(assistant(running))
    return emitted


def tools_by_name(tools: Any) -> dict[str, Tool]:
    """The agent's current tools (``state.data["tools"]``) by name."""
    if not tools:
        return {}
    return {tool.name: tool for tool in tools if isinstance(tool, Tool)}


def parse_result(result: Any) -> Any:
    """A tool result as the model read it, parsed back from JSON text when it is JSON (so provenance sees values)."""
    if isinstance(result, str):
        text = result.strip()
        if text[:1] in ("{", "[", '"'):
            try:
                return json.loads(text)
            except ValueError:
                return result
        return result
    return json_safe(result)


def find_results(
    messages: list[ChatMessage], calls: list[Any], refused: list[ToolCall]
) -> tuple[dict[int, ChatMessage], list[ChatMessage]]:
    """
    Pairs each decided call of the step with its tool-result message.

    A result carries the ToolCall it answers as ``origin``: first by that object's identity
    (anywhere in the history, so an ``after_tool`` hook listed earlier may have moved it), then,
    for calls a later ``before_tool`` hook replaced, by call id among the results after the last
    assistant message with tool calls.

    :param calls: The step's :class:`~.runs.DecidedCall` list.
    :param refused: ToolCall objects the hook refused itself (their results are skipped).
    :returns: ``({index in calls: message}, results of calls the hook never decided)``.
    """
    wanted = {id(call.tool_call): index for index, call in enumerate(calls)}
    found: dict[int, ChatMessage] = {}
    for message in reversed(messages):
        if len(found) == len(calls):
            break
        if message.role != ChatRole.TOOL:
            continue
        for result in message.tool_call_results:
            index = wanted.get(id(result.origin))
            if index is not None and index not in found:
                found[index] = message
    tail_start = 0
    for position in range(len(messages) - 1, -1, -1):
        if messages[position].role == ChatRole.ASSISTANT and messages[position].tool_calls:
            tail_start = position + 1
            break
    claimed = {id(message) for message in found.values()}
    refused_ids = {id(call) for call in refused}
    undecided: list[ChatMessage] = []
    for message in messages[tail_start:]:
        if message.role != ChatRole.TOOL or id(message) in claimed:
            continue
        origin = message.tool_call_result.origin if message.tool_call_result else None
        if origin is None or id(origin) in refused_ids:
            continue
        match = next(
            (index for index, call in enumerate(calls) if index not in found and call.call_id == origin.id),
            None,
        )
        if match is None:
            undecided.append(message)
        else:
            found[match] = message
    return found, undecided
