"""
Calls to a tool the agent does not have: recorded as refused, reported as Haystack reports them.

Haystack answers such a call with ``ToolNotFoundException`` (``Tool 'x' not found. Available
tools: a, b``): as the call's error result, or raised out of ``Agent.run`` with
``raise_on_tool_invocation_failure=True``. The hook records the call (decided, then refused with
``tool-not-found``) and leaves it on the message for Haystack to report, so both behaviours stay
Haystack's own; at ``after_tool`` it puts Haystack's text inside callgate's error body, so the
model reads ``{"error": {"kind": "tool-not-found", "message": "Tool 'x' not found. Available
tools: ...", "tool", "available_tools"}}`` like any other refusal.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from haystack.components.agents.state.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.components.agents.tool_calling import ToolNotFoundException
from haystack.dataclasses import ChatMessage, ChatRole
from haystack.tools import Tool

from .decisions import Resolution
from .reports import refused_report
from .runs import RunContext
from .step import error_text


def not_found_error(tool_name: str, available: list[str]) -> dict[str, Any]:
    """The refusal of a call to a tool the agent lacks, worded as Haystack's ``ToolNotFoundException``."""
    return {
        "kind": "tool-not-found",
        "message": str(ToolNotFoundException(tool_name, available)),
        "tool": tool_name,
        "available_tools": available,
    }


def refuse_unknown(resolutions: list[Resolution], tools: dict[str, Tool]) -> list[tuple[int, dict[str, Any]]]:
    """
    Turns the resolution of every call to a tool not in ``tools`` into a refusal recorded as
    ``tool-not-found``. With tools, the call stays on the message for Haystack to report (its
    result is rewritten at after_tool); with none (Haystack would not run the step), the hook
    refuses it itself.

    :returns: ``(index, error)`` of each call left for Haystack to report.
    """
    available = list(tools)
    left: list[tuple[int, dict[str, Any]]] = []
    for index, resolution in enumerate(resolutions):
        plan = resolution.plan
        if plan.original.tool_name in tools:
            continue
        error = not_found_error(plan.original.tool_name, available)
        attempt = resolution.decided.attempt if resolution.decided else (resolution.report or {}).get("attempt", 1)
        verdict_known = resolution.decided is not None or resolution.report is not None
        report = refused_report(plan.call.id or "", attempt, error) if verdict_known and plan.call.id else None
        if tools:
            resolutions[index] = Resolution(replace(plan, error=None, note=None), report=report)
            left.append((index, error))
        else:
            resolutions[index] = Resolution(replace(plan, error=error, note=None), report=report)
    return left


def rewrite_not_found(state: State, context: RunContext) -> None:
    """Puts Haystack's not-found text for the step's unknown calls inside callgate's error body."""
    if not context.step_unknown:
        return
    wanted = {id(call): error for call, error in context.step_unknown}
    messages = list(state.data.get("messages") or [])
    changed = False
    for position, message in enumerate(messages):
        result = message.tool_call_result if message.role == ChatRole.TOOL else None
        if result is None or id(result.origin) not in wanted or not result.error:
            continue
        error = dict(wanted[id(result.origin)])
        error["message"] = result.result if isinstance(result.result, str) else error["message"]
        messages[position] = ChatMessage.from_tool(tool_result=error_text(error), origin=result.origin, error=True)
        changed = True
    if changed:
        state.set("messages", messages, handler_override=replace_values)
