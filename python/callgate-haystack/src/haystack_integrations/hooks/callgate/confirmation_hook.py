"""
``CallgateConfirmationHook``: Haystack's ``ConfirmationHook`` that also records calls to tools
the agent does not have.

Haystack's hook never shows such a call to a strategy (it passes it through, so the tool-calling
code reports ``ToolNotFoundException`` as usual). This subclass behaves the same, and first tells
each :class:`~.confirmation.CallgateConfirmationStrategy` concerned, which records the call as
decided and refused (``tool-not-found``). It serializes like Haystack's hook.

Usage::

    strategy = CallgateConfirmationStrategy(tools=tools)
    agent = Agent(..., tools=tools,
                  hooks={"before_tool": [CallgateConfirmationHook(confirmation_strategies={"*": strategy})]})
"""

from __future__ import annotations

from haystack.components.agents.state.state import State
from haystack.hooks.human_in_the_loop import ConfirmationHook
from haystack.hooks.human_in_the_loop.strategies import _get_confirmation_strategy

from .confirmation import CallgateConfirmationStrategy


class CallgateConfirmationHook(ConfirmationHook):
    """``ConfirmationHook`` whose callgate strategies also record calls to unknown tools (see the module docs)."""

    def _record_unknown(self, state: State) -> None:
        messages = state.data.get("messages") or []
        if not messages or not messages[-1].tool_calls:
            return
        available = [tool.name for tool in state.data.get("tools") or []]
        for call in messages[-1].tool_calls:
            if call.tool_name in available:
                continue
            strategy = _get_confirmation_strategy(
                tool_name=call.tool_name, confirmation_strategies=self.confirmation_strategies
            )
            if isinstance(strategy, CallgateConfirmationStrategy):
                strategy.record_unknown(call, available, state.data.get("hook_context"))

    def run(self, state: State) -> None:
        """Records calls to unknown tools, then confirms the step as Haystack's hook does."""
        self._record_unknown(state)
        super().run(state)

    async def run_async(self, state: State) -> None:
        """Async twin of :meth:`run`."""
        import asyncio

        await asyncio.to_thread(self._record_unknown, state)
        await super().run_async(state)
