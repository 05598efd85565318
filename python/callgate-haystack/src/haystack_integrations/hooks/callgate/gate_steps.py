"""
The step work of :class:`~.hook.CallgateHook` beyond one decisions request: taking up a resumed
run, calls resumed from their approval, calls to tools the agent lacks, calls run undecided in
an outage, and runs that stay open while a call waits for an approval.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import Tool

from haystack_integrations.common.callgate.client import CallgateClient, ServerUnreachable
from haystack_integrations.common.callgate.errors import CallgateError

from .decisions import Resolution, StepDecider, unavailable
from .recorder import RunRecorder
from .resume import PENDING_KEY, adopt, resumable_calls, resume_call, resume_target
from .runs import RUN_ID_KEY, RunContext, RunRegistry
from .step import CallPlan, plan_call
from .unknown import refuse_unknown

if TYPE_CHECKING:
    from collections.abc import Callable


class StepWork:
    """
    What one hook does around each step's decisions (see the module docs).

    :param client: Returns the hook's synchronous client.
    :param runs: The hook's runs.
    :param decider: Decides the calls that are not resumed.
    :param recorder: The hook's background records.
    :param logger: Where warnings and notes go.
    """

    def __init__(
        self,
        client: Callable[[], CallgateClient],
        runs: RunRegistry,
        decider: StepDecider,
        recorder: RunRecorder,
        logger: logging.Logger,
    ) -> None:
        self._client = client
        self._runs = runs
        self._decider = decider
        self._recorder = recorder
        self.logger = logger
        #: Runs this hook left open for a resume (a call waits for an approval).
        self.kept_open: set[str] = set()
        self._warned_no_context = False

    # --- the run a step belongs to ------------------------------------------------------------

    def prepare(self, context: RunContext) -> None:
        """
        At a run's first step: decides into the run its ``hook_context`` names (a resume), and
        says once when there is no ``hook_context`` to write the run id into.

        :raises CallgateError: When the named run or approval is unknown, or the run has ended.
        """
        if context.run_id is not None:
            return
        if not context.hook_context:
            if context.parent_run_id is None:  # a sub-agent's run is found from its parent's
                self._warn_no_context()
            return
        client = self._client()
        try:
            run_id = resume_target(client, context.hook_context)
        except ServerUnreachable:
            return  # decided (or refused) as an outage by the step itself
        if run_id is None or not self._adoptable(run_id):
            return
        adopt(client, context, run_id)
        self.kept_open.discard(run_id)  # open in this hook again; kept again if a call still waits
        self._runs.started(context, run_id)

    def _adoptable(self, run_id: str) -> bool:
        """
        False for a run live in this hook (e.g. the calling agent's run, when a sub-agent is given
        its ``hook_context``) and for one this hook ended itself (a ``hook_context`` reused from an
        earlier agent run): those agent runs get a run of their own.
        """
        if any(context.run_id == run_id for context in self._runs.open_runs()):
            return False
        return run_id not in self._runs.started_ids or run_id in self.kept_open

    def _warn_no_context(self) -> None:
        if not self._warned_no_context:
            self._warned_no_context = True
            self.logger.warning(
                "callgate: this agent run has no hook_context the run id can be written into (Haystack replaces "
                "a missing or empty hook_context={} with a dict of its own). To read the id, pass a non-empty dict, "
                "e.g. hook_context={%r: None}, then read it back from there; or read gate.last_run_id",
                RUN_ID_KEY,
            )

    # --- deciding, with resumed calls ----------------------------------------------------------

    @staticmethod
    def unrepeat(message: ChatMessage) -> ChatMessage:
        """
        ``message`` with the id of every call that repeats an earlier call's id *in the same
        message* taken away, so the server mints one (``cg-<hex>``) and each call gets its own result:
        a history with two results under one id is one chat APIs refuse. (An id seen again in a later
        step is that call's next attempt, as before.)
        """
        seen: set[str] = set()
        changed = False
        content: list[Any] = []
        for part in message._content:
            if isinstance(part, ToolCall) and part.id:
                if part.id in seen:
                    part, changed = replace(part, id=None), True
                else:
                    seen.add(part.id)
            content.append(part)
        return replace(message, _content=content) if changed else message

    def decide(self, context: RunContext, message: ChatMessage, tools: dict[str, Tool]) -> list[Resolution]:
        """Every call of ``message`` resolved: resumed ones from their approval, the others by the server."""
        resumed = self._resume(context, message.tool_calls, tools)
        rest = self._rest(context, message, resumed)
        decided = self._decider.decide(context, rest, tools) if rest is not None else []
        return self._merge(message.tool_calls, resumed, decided)

    async def decide_async(self, context: RunContext, message: ChatMessage, tools: dict[str, Tool]) -> list[Resolution]:
        """Async twin of :meth:`decide`."""
        resumed = await asyncio.to_thread(self._resume, context, message.tool_calls, tools) if context.resumable else {}
        rest = self._rest(context, message, resumed)
        decided = await self._decider.decide_async(context, rest, tools) if rest is not None else []
        return self._merge(message.tool_calls, resumed, decided)

    def _resume(self, context: RunContext, calls: list[ToolCall], tools: dict[str, Tool]) -> dict[int, Resolution]:
        resolved: dict[int, Resolution] = {}
        for index, row in resumable_calls(context, calls).items():
            call = calls[index]
            try:
                resolution = resume_call(self._client(), context, call, row, tools, self._decider.max_wait, self.logger)
            except ServerUnreachable as error:
                resolution = self._refusal(call, unavailable(error, str(row["approval_id"])))
            except CallgateError as error:
                resolution = self._refusal(call, error.to_body()["error"])
            if resolution is not None:
                resolution.resumed = str(row["approval_id"])
                resolved[index] = resolution
        return resolved

    @staticmethod
    def _refusal(call: ToolCall, error: dict[str, Any]) -> Resolution:
        return Resolution(CallPlan(call, plan_call(call, call.id or "", None), error=error))

    def _rest(self, context: RunContext, message: ChatMessage, resumed: dict[int, Resolution]) -> ChatMessage | None:
        """The message with only the calls the server decides; a waiting call asked again is closed first."""
        calls = [call for index, call in enumerate(message.tool_calls) if index not in resumed]
        if not calls:
            return None
        for call in calls:
            waiting = context.suspended.pop(call.id or "", None)
            if waiting is not None:  # its earlier attempt ends as it was refused, before the new one
                self._recorder.outcome(context, waiting)
        if len(calls) == len(message.tool_calls):
            return message
        others = [part for part in message._content if not isinstance(part, ToolCall)]
        return replace(message, _content=[*others, *calls])

    @staticmethod
    def _merge(calls: list[ToolCall], resumed: dict[int, Resolution], decided: list[Resolution]) -> list[Resolution]:
        remaining = iter(decided)
        return [resumed[index] if index in resumed else next(remaining) for index in range(len(calls))]

    # --- applying a step's resolutions ---------------------------------------------------------

    def settle(
        self, context: RunContext, resolutions: list[Resolution], tools: dict[str, Tool]
    ) -> tuple[list[tuple[ToolCall, dict[str, Any]]], list[ToolCall]]:
        """
        Refuses calls to unknown tools (left for Haystack to report), and keeps the refusal of a call
        still waiting for its approval out of the records (the run stays open for a resume).

        :returns: The unknown calls with their refusal, and the calls whose results the hook does
            not pair (unknown ones, and calls run undecided in an outage).
        """
        left = refuse_unknown(resolutions, tools)
        unknown = [(resolutions[index].plan.call, error) for index, error in left]
        unpaired = [
            resolution.plan.call
            for resolution in resolutions
            if resolution.decided is None and resolution.plan.error is None
        ]
        for resolution in resolutions:
            report = resolution.report
            if report is not None and report.get("error_kind") == "approval-pending":
                context.suspended[str(report["call_id"])] = report
                resolution.report = None
        return unknown, unpaired

    def keep_open(self, context: RunContext) -> bool:
        """True when the run must stay open (a call waits for an approval); says so, and where to resume."""
        if not context.suspended or context.run_id is None:
            return False
        approvals = [str(report["result"]["error"].get("approval_id")) for report in context.suspended.values()]
        self.kept_open.add(context.run_id)
        if context.hook_context is not None:
            context.hook_context[PENDING_KEY] = approvals
        self.logger.info(
            "callgate: run %s stays open: approval %s pending; resume it with hook_context={%r: %r}",
            context.run_id,
            ", ".join(approvals),
            RUN_ID_KEY,
            context.run_id,
        )
        return True
