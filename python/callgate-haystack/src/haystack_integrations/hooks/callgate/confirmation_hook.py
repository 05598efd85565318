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

from typing import Any

from haystack.components.agents.state.state import State
from haystack.dataclasses import ToolCall
from haystack.hooks.human_in_the_loop import ConfirmationHook
from haystack.hooks.human_in_the_loop.strategies import _get_confirmation_strategy

from haystack_integrations.common.callgate.errors import CallgateError
from haystack_integrations.common.callgate.wire import encode_arguments

from .confirmation import CallgateConfirmationStrategy
from .reports import refused_report
from .strategy_run import RUN_CONTEXT_KEY, _StrategyRun
from .unknown import not_found_error


def record_unknown(
    strategy: CallgateConfirmationStrategy,
    tool_call: ToolCall,
    available: list[str],
    context: dict[str, Any] | None,
) -> None:
    """
    Records a call to a tool the agent does not have in the strategy's run: decided, then refused
    as ``tool-not-found`` with Haystack's own wording (an ask for it is withdrawn: nobody approves
    a call that cannot run). Never raises for the server: it logs instead.
    """
    client = strategy._sync_client()
    call = {"id": tool_call.id or None, "tool": tool_call.tool_name, "arguments": encode_arguments(tool_call.arguments)}
    try:
        run_id = strategy._existing_run_id(context) or strategy._remember_run(
            context, str(client.start_run(strategy.framework)["run_id"])
        )
        verdict = client.decide(run_id, [call])[0]
        if verdict.approval is not None and verdict.approval.status == "pending":
            client.withdraw_approval(verdict.approval.id, reason="the agent has no such tool")
        error = not_found_error(tool_call.tool_name, available)
        client.record_outcome(run_id, refused_report(verdict.call_id, verdict.attempt, error))
    except CallgateError as error:
        strategy.logger.warning(
            "callgate: the call to unknown tool %s was not recorded: %s", tool_call.tool_name, error
        )


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
                record_unknown(strategy, call, available, state.data.get("hook_context"))

    def _end_with_agent_run(self, state: State) -> None:
        """Ties the strategies' callgate run to the agent run: it ends when the run's ``State`` is dropped."""
        context = state.data.get("hook_context")
        run = context.get(RUN_CONTEXT_KEY) if isinstance(context, dict) else None
        if isinstance(run, _StrategyRun):
            run.end_with(state)

    def run(self, state: State) -> None:
        """Records calls to unknown tools, then confirms the step as Haystack's hook does."""
        self._record_unknown(state)
        super().run(state)
        self._end_with_agent_run(state)

    async def run_async(self, state: State) -> None:
        """Async twin of :meth:`run`."""
        import asyncio

        await asyncio.to_thread(self._record_unknown, state)
        await super().run_async(state)
        self._end_with_agent_run(state)
