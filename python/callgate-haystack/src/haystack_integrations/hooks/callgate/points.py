"""
Which hook point a hook call comes from.

Haystack calls a hook with the ``State`` only; one ``CallgateHook`` serves ``before_tool``,
``after_tool`` and ``after_run``, so it must tell them apart. Haystack 3.4 runs hooks from
``_run_hooks`` / ``_run_hooks_async``, whose ``hook_point`` argument names the point: the hook
reads it from the calling frame. Should a later Haystack run hooks differently, the point is
inferred from the run's phase and the last message instead (:func:`infer_point`).
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import TYPE_CHECKING

from haystack.dataclasses import ChatMessage, ChatRole

if TYPE_CHECKING:
    from .runs import RunContext

_POINTS = frozenset({"before_run", "before_llm", "before_tool", "after_tool", "on_exit", "after_run"})
_RUNNERS = frozenset({"_run_hooks", "_run_hooks_async"})
_INCOMPLETE_REASONS = frozenset({"length", "content_filter"})


def hook_point(max_depth: int = 8) -> str | None:
    """
    The hook point Haystack is running hooks for, read from the caller's frames.

    :returns: e.g. ``"before_tool"``, or None when not called from Haystack's hook runner.
    """
    try:
        frame: FrameType | None = sys._getframe(2)  # skip this function and the hook's run / run_async
    except ValueError:  # called with a shallower stack than a hook runner's
        return None
    for _ in range(max_depth):
        if frame is None:
            return None
        if frame.f_code.co_name in _RUNNERS:
            point = frame.f_locals.get("hook_point")
            return point if isinstance(point, str) and point in _POINTS else None
        frame = frame.f_back
    return None


def infer_point(messages: list[ChatMessage], context: RunContext | None) -> str:
    """
    The hook point inferred from the run's phase and the last message.

    - between a step's ``before_tool`` and its ``after_tool`` (phase ``tools``): ``after_tool``,
      unless a new assistant message with tool calls is last (``after_tool`` was not registered);
    - otherwise an assistant message with tool calls, or an empty one that did not stop the run,
      means ``before_tool``; anything else ``after_run``.
    """
    last = messages[-1] if messages else None
    pending = last is not None and last.role == ChatRole.ASSISTANT and bool(last.tool_calls)
    if context is not None and context.phase == "tools":
        return "before_tool" if pending and last is not context.step_message else "after_tool"
    if pending:
        return "before_tool"
    if (
        last is not None
        and last.role == ChatRole.ASSISTANT
        and not last.text
        and last.meta.get("finish_reason") not in _INCOMPLETE_REASONS
    ):
        return "before_tool"
    return "after_run"
