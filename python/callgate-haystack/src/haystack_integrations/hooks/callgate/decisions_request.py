"""
The decisions request of a step: one request for all of the step's calls, carrying the previous
step's outcomes and the specs of local tools the server has not accepted from this hook yet, and
asking the server to consume the grant of each allowed call of a local tool with its decision.
Calls refused as ``tool-not-found`` because the server forgot a spec (it restarted) are decided
again, with the spec.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from typing import Any

from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import Tool

from haystack_integrations.common.callgate.api import StepAnswer
from haystack_integrations.common.callgate.client import AsyncCallgateClient, CallgateClient, ServerUnreachable
from haystack_integrations.common.callgate.errors import CallgateError, Conflict, RequestInvalid
from haystack_integrations.common.callgate.specs import gateway_url_of, tool_spec
from haystack_integrations.common.callgate.wire import Verdict

from .injected import injected_values
from .recorder import RunRecorder
from .reports import refused_report
from .runs import RunContext
from .step import message_content, plan_call, wire_calls

_TOOLS_PATH = re.compile(r"^body\.tools\[(\d+)\]")


class DecisionsRequests:
    """
    Sends a hook's decisions requests (the base of :class:`~.decisions.StepDecider`, which sets
    these attributes): ``_client`` returns the synchronous client, ``_recorder`` holds the
    background records, ``logger`` takes warnings.
    """

    _client: Callable[[], CallgateClient]
    _async_client: Callable[[], AsyncCallgateClient]
    _recorder: RunRecorder
    logger: logging.Logger
    #: Tools whose spec the server keeps in another version (it never overrides a known tool).
    _server_owned_specs: set[str]
    #: Tools whose spec the server accepted from this hook.
    _accepted_specs: set[str]

    # --- the decisions request -------------------------------------------------------------------

    def _specs(self, calls: list[ToolCall], tools: dict[str, Tool], *, again: bool = False) -> list[dict[str, Any]]:
        """
        Specs of the step's local tools the server has not accepted from this hook yet (a gateway
        tool's spec is the server's own). Checking a known spec costs the server as much as the
        decision itself, so each is sent once; ``again`` sends them whatever the hook remembers.
        """
        specs: dict[str, dict[str, Any]] = {}
        for call in calls:
            name = call.tool_name
            tool = tools.get(name)
            if tool is None or name in specs or name in self._server_owned_specs:
                continue
            fresh = again or name not in self._accepted_specs
            if fresh and gateway_url_of(tool) is None and (spec := tool_spec(tool)) is not None:
                specs[name] = spec
        return list(specs.values())

    def _spec_refused(self, error: CallgateError, specs: list[dict[str, Any]]) -> bool:
        """Drops the spec a decisions request was refused for; True when one was dropped (send again)."""
        match = _TOOLS_PATH.match(str(error.details.get("path", "")))
        if not isinstance(error, (Conflict, RequestInvalid)) or match is None or int(match.group(1)) >= len(specs):
            return False
        dropped = specs.pop(int(match.group(1)))
        self._server_owned_specs.add(dropped["name"])
        self.logger.warning("callgate: the server keeps its own spec of tool %s: %s", dropped["name"], error.message)
        return True

    @staticmethod
    def _request(
        context: RunContext,
        message: ChatMessage | None,
        calls: list[ToolCall],
        specs: list[dict[str, Any]],
        tools: dict[str, Tool] | None = None,
        outcomes: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        content = {"role": "assistant", "content": message_content(message)} if message is not None else None
        wired = wire_calls(calls)
        if tools is not None:
            state = context.state_ref() if context.state_ref is not None else None
            for call, original in zip(wired, calls, strict=True):
                tool = tools.get(original.tool_name)
                if tool is not None and gateway_url_of(tool) is None:
                    call["consume"] = True  # runs here, right after: spend its grant with the decision
                    injected = injected_values(tool, original.arguments, state)
                    if injected:
                        call["injected"] = injected  # what Haystack adds: recorded beside the model's
        return {
            "run_id": context.run_id or "",
            "calls": wired,
            "message": content,
            "tools": specs or None,
            "outcomes": outcomes or None,
        }

    def _carried_failed(self, client: CallgateClient, context: RunContext, outcomes: list[dict[str, Any]]) -> None:
        """A decisions request carrying outcomes was refused as a whole: record them one by one (then decide alone)."""
        self._recorder.record_each(client, context, outcomes)

    def _forgotten(self, verdicts: list[Verdict], calls: list[ToolCall], tools: dict[str, Tool]) -> list[int]:
        """
        Calls refused as ``tool-not-found`` although the server had accepted their tool's spec from
        this hook (it restarted and forgot it): they are decided again, with the spec.
        """
        forgotten = [
            index
            for index, verdict in enumerate(verdicts)
            if verdict.status == "refused"
            and (verdict.error or {}).get("kind") == "tool-not-found"
            and verdict.tool in self._accepted_specs
            and gateway_url_of(tools.get(verdict.tool)) is None
        ]
        for index in forgotten:
            self._accepted_specs.discard(verdicts[index].tool)
        return forgotten

    def _accept(
        self, context: RunContext, outcomes: list[dict[str, Any]], answer: StepAnswer, specs: list[dict[str, Any]]
    ) -> list[Verdict]:
        """
        Notes what the server took from a decisions request (the ``outcomes`` it carried, as
        ``answer`` acknowledges them, and the tool ``specs``); the answer's verdicts, in call order.
        """
        self._recorder.acknowledge(context, outcomes, answer.outcomes)
        self._accepted_specs.update(spec["name"] for spec in specs)
        verdicts: list[Verdict] = answer.verdicts
        return verdicts

    def _redecision(
        self,
        context: RunContext,
        verdicts: list[Verdict],
        calls: list[ToolCall],
        forgotten: list[int],
        tools: dict[str, Tool],
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
        """
        For the ``forgotten`` calls (see :meth:`_forgotten`): the outcomes of their first attempts,
        the specs sent again, and the keyword arguments of the ``decide_step`` that decides them again.
        """
        again, reports = self._again(verdicts, calls, forgotten)
        respecs = self._specs(again, tools, again=True)
        return reports, respecs, self._request(context, None, again, respecs, tools, reports)

    @staticmethod
    def _again(
        verdicts: list[Verdict], calls: list[ToolCall], forgotten: list[int]
    ) -> tuple[list[ToolCall], list[dict[str, Any]]]:
        """
        The calls to decide again, under the ids they were decided by, and the outcomes of their
        first attempts (refused), to record before: the server takes outcomes of a call's latest attempt.
        """
        again = [plan_call(calls[index], verdicts[index].call_id, None) for index in forgotten]
        reports = [
            refused_report(verdicts[index].call_id, verdicts[index].attempt, verdicts[index].error or {})
            for index in forgotten
        ]
        return again, reports

    def _send(
        self,
        client: CallgateClient,
        context: RunContext,
        message: ChatMessage,
        calls: list[ToolCall],
        tools: dict[str, Tool],
    ) -> list[Verdict]:
        specs = self._specs(calls, tools)
        outcomes = self._recorder.take(context)
        while True:
            try:
                answer = client.decide_step(**self._request(context, message, calls, specs, tools, outcomes))
                break
            except ServerUnreachable:
                self._recorder.restore(context, outcomes)
                raise
            except (CallgateError, ValueError, TypeError) as error:
                if isinstance(error, CallgateError) and self._spec_refused(error, specs):
                    continue
                if not outcomes:
                    raise
                self._carried_failed(client, context, outcomes)
                outcomes = []
        verdicts = self._accept(context, outcomes, answer, specs)
        forgotten = self._forgotten(verdicts, calls, tools)
        if forgotten:
            reports, respecs, request = self._redecision(context, verdicts, calls, forgotten, tools)
            redecided = self._accept(context, reports, client.decide_step(**request), respecs)
            for index, verdict in zip(forgotten, redecided, strict=True):
                verdicts[index] = verdict
        return verdicts

    async def _send_async(
        self,
        client: AsyncCallgateClient,
        context: RunContext,
        message: ChatMessage,
        calls: list[ToolCall],
        tools: dict[str, Tool],
    ) -> list[Verdict]:
        specs = self._specs(calls, tools)
        outcomes = self._recorder.take(context)
        while True:
            try:
                answer = await client.decide_step(**self._request(context, message, calls, specs, tools, outcomes))
                break
            except ServerUnreachable:
                self._recorder.restore(context, outcomes)
                raise
            except (CallgateError, ValueError, TypeError) as error:
                if isinstance(error, CallgateError) and self._spec_refused(error, specs):
                    continue
                if not outcomes:
                    raise
                # Rare: the batch was refused whole; record its outcomes one by one off the loop.
                carried = outcomes
                await asyncio.wrap_future(
                    self._recorder.sender.submit(
                        lambda carried=carried: self._carried_failed(self._client(), context, carried)
                    )
                )
                outcomes = []
        verdicts = self._accept(context, outcomes, answer, specs)
        forgotten = self._forgotten(verdicts, calls, tools)
        if forgotten:
            reports, respecs, request = self._redecision(context, verdicts, calls, forgotten, tools)
            redecided = self._accept(context, reports, await client.decide_step(**request), respecs)
            for index, verdict in zip(forgotten, redecided, strict=True):
                verdicts[index] = verdict
        return verdicts
