"""
``CallgateRefusalHook``: an ``after_tool`` hook that ends the agent run on a refused call.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from haystack.components.agents.state.state import State
from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, ChatRole

from haystack_integrations.common.callgate.errors import TOOL_REFUSAL_KINDS, CallgateToolRefused
from haystack_integrations.common.callgate.results import Refusal, extract_outcome


class CallgateRefusalHook:
    """
    Raises a typed :class:`~haystack_integrations.common.callgate.errors.CallgateToolRefused` from
    ``Agent.run`` when a call of the step was refused, for users who want a refusal to end the run
    instead of letting the model read it and go on.

    Haystack turns anything a tool raises into an error result (``Tool.invoke`` wraps it), but an
    ``after_tool`` hook's exception leaves ``Agent.run`` as it is: that is why the refusal is raised
    here. Register it under ``after_tool`` **after** ``CallgateHook`` (so the step's outcomes are
    recorded first)::

        from haystack_integrations.common.callgate.errors import ApprovalDenied, CallgateToolRefused
        from haystack_integrations.hooks.callgate import CallgateHook, CallgateRefusalHook

        hooks = CallgateHook().hooks()
        hooks["after_tool"].append(CallgateRefusalHook())
        agent = Agent(chat_generator=generator, tools=tools, hooks=hooks)
        try:
            agent.run([ChatMessage.from_user("delete the backups")])
        except ApprovalDenied as refusal:
            print("a reviewer said no:", refusal.message, refusal.approval_id)

    It reads the step's tool results with
    :func:`~haystack_integrations.common.callgate.results.extract_outcome`: the refusals
    ``CallgateHook`` puts in place of refused calls, and refusals the gateway returned for tools
    of ``callgate_toolset``. A tool that merely failed (``tool-error``) does not end the run unless
    ``kinds`` includes it.

    :param kinds: The error kinds that end the run; default every refusal kind but ``tool-error``.
    """

    allowed_hook_points = ("after_tool",)

    def __init__(self, kinds: list[str] | None = None) -> None:
        self.kinds = list(kinds) if kinds is not None else sorted(TOOL_REFUSAL_KINDS - {"tool-error"})
        self._seen: weakref.WeakKeyDictionary[State, int] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def run(self, state: State) -> None:
        """
        :raises CallgateToolRefused: The subclass of the first refused call's kind this step
            (e.g. ``PolicyDenied``, ``ApprovalDenied``), carrying its message and approval id.
        """
        messages: list[ChatMessage] = state.data.get("messages") or []
        with self._lock:
            start = self._seen.get(state, 0)
            self._seen[state] = len(messages)
        if start > len(messages):  # the history was shortened (e.g. compacted): look at all of it
            start = 0
        for message in messages[start:]:
            if message.role != ChatRole.TOOL or message.tool_call_result is None:
                continue
            outcome = extract_outcome(message)
            if isinstance(outcome, Refusal) and outcome.kind in self.kinds:
                refusal = outcome.to_exception()
                origin = message.tool_call_result.origin
                refusal.details.setdefault("tool", origin.tool_name)
                if origin.id:
                    refusal.details.setdefault("call_id", origin.id)
                raise refusal

    async def run_async(self, state: State) -> None:
        """Async twin of :meth:`run` (it makes no request)."""
        self.run(state)

    def to_dict(self) -> dict[str, Any]:
        """Serializes the hook (its ``kinds``)."""
        return default_to_dict(self, kinds=self.kinds)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallgateRefusalHook:
        """Deserializes the hook."""
        return default_from_dict(cls, data)


__all__ = ["CallgateRefusalHook", "CallgateToolRefused"]
