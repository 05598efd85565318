"""
Deciding one step: one decisions request for all of the step's calls, then each verdict turned
into the call's fate (run as decided, or refused with the error the model reads), waiting for
people where the policy asks.

The request is the step's only one on the allow path: it carries the previous step's outcomes
(recorded by the server before it decides) and asks the server to consume the grant of each
allowed call of a local tool with its decision (the hook runs those calls right after). A
gateway tool's grant stays outstanding: the gateway consumes it when the call reaches it.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import Tool

from haystack_integrations.common.callgate.approvals import (
    ApprovalAnswer,
    interpret,
    wait_for_approval,
    wait_for_approval_async,
)
from haystack_integrations.common.callgate.client import AsyncCallgateClient, CallgateClient, ServerUnreachable
from haystack_integrations.common.callgate.errors import CallgateError, Conflict, GrantInvalid, RequestInvalid
from haystack_integrations.common.callgate.specs import gateway_url_of, tool_spec
from haystack_integrations.common.callgate.wire import Grant, Verdict

from .recorder import RunRecorder
from .reports import refused_report
from .runs import DecidedCall, RunContext
from .step import CallPlan, message_content, mint_call_id, plan_call, wire_calls

_TOOLS_PATH = re.compile(r"^body\.tools\[(\d+)\]")


@dataclass
class Resolution:
    """One call's fate: its plan on the message, what it was decided as, and any outcome to record now."""

    plan: CallPlan
    decided: DecidedCall | None = None
    report: dict[str, Any] | None = None
    #: The server's verdict the call was resolved from (None: resumed, undecided or refused before deciding).
    verdict: Verdict | None = None
    #: The approval a resumed call was resolved from.
    resumed: str | None = None

    def of(self, verdict: Verdict) -> Resolution:
        """This resolution, noting the verdict it came from (for tracing)."""
        self.verdict = verdict
        return self


def unavailable(error: ServerUnreachable, approval_id: str | None = None) -> dict[str, Any]:
    """The refusal of a call callgate could not decide (``gate-unavailable``)."""
    body: dict[str, Any] = {
        "kind": "gate-unavailable",
        "message": f"{error.message}; the call is refused until callgate can decide it",
    }
    if approval_id:
        body["approval_id"] = approval_id
    return body


def _refused(verdict: Verdict, original: ToolCall, error: dict[str, Any]) -> Resolution:
    call = plan_call(original, verdict.call_id, None)
    return Resolution(
        CallPlan(original, call, error=error), report=refused_report(verdict.call_id, verdict.attempt, error)
    )


def _allowed(
    verdict: Verdict,
    original: ToolCall,
    gateway: bool,
    arguments: dict[str, Any] | None,
    *,
    grant: Grant | None,
    consumed: bool = False,
    note: str | None = None,
) -> Resolution:
    decided_arguments = arguments if arguments is not None else dict(original.arguments)
    call = plan_call(original, verdict.call_id, decided_arguments)
    decided = DecidedCall(
        call_id=verdict.call_id,
        attempt=verdict.attempt,
        tool=verdict.tool,
        arguments=decided_arguments,
        tool_call=call,
        gateway=gateway,
        grant=grant,
        grant_consumed=consumed,
    )
    return Resolution(CallPlan(original, call, note=note), decided=decided)


def _edit_note(verdict: Verdict, answer: ApprovalAnswer) -> tuple[dict[str, Any] | None, str | None]:
    arguments = answer.arguments if answer.arguments is not None else verdict.arguments
    if arguments is None or verdict.arguments is None or arguments == verdict.arguments:
        return arguments, None
    note = f"A reviewer changed the arguments of '{verdict.tool}' before approving it; it runs with {arguments}"
    return arguments, note + (f" ({answer.reason})" if answer.reason else "")


class StepDecider:
    """
    Decides steps for one hook.

    :param client: Returns the hook's synchronous client.
    :param async_client: Returns the hook's asynchronous client for the running loop.
    :param start_run: Starts the run of a context on the server (and notes it started); returns its id.
    :param started: Notes that a context's run started (for runs started here, asynchronously).
    :param recorder: The hook's background records.
    :param max_wait: Seconds to wait at most for one approval (None: the policy's limit).
    :param fail_mode: ``closed`` or ``open``.
    :param logger: Where warnings go.
    """

    def __init__(
        self,
        *,
        client: Callable[[], CallgateClient],
        async_client: Callable[[], AsyncCallgateClient],
        start_run: Callable[[CallgateClient, RunContext], str],
        started: Callable[[RunContext, str], None],
        recorder: RunRecorder,
        max_wait: float | None,
        fail_mode: str,
        framework: str,
        principal: str | None,
        labels: dict[str, str] | None,
        logger: logging.Logger,
    ) -> None:
        self._client = client
        self._async_client = async_client
        self._start_run = start_run
        self._started = started
        self._recorder = recorder
        self.max_wait = max_wait
        self.fail_mode = fail_mode
        self.framework = framework
        self.principal = principal
        self.labels = labels or None
        self.logger = logger
        #: Tools whose spec the server keeps in another version (it never overrides a known tool).
        self._server_owned_specs: set[str] = set()
        #: Tools whose spec the server accepted from this hook.
        self._accepted_specs: set[str] = set()

    # --- the step ------------------------------------------------------------------------------

    def decide(self, context: RunContext, message: ChatMessage, tools: dict[str, Tool]) -> list[Resolution]:
        """Decides every call of ``message`` (waiting for approvals); one resolution per call, in order."""
        calls = list(message.tool_calls)
        self._recorder.wait(context)
        client = self._client()
        try:
            if context.run_id is None:
                self._start_run(client, context)
            self._recorder.server_back(context)
            verdicts = self._send(client, context, message, calls, tools)
        except ServerUnreachable as error:
            return self._outage(context, calls, error)
        except CallgateError as error:
            return self._refuse_all(calls, error)
        return [
            self._resolve(client, context, verdict, original, tools).of(verdict)
            for verdict, original in zip(verdicts, calls, strict=True)
        ]

    async def decide_async(self, context: RunContext, message: ChatMessage, tools: dict[str, Tool]) -> list[Resolution]:
        """Async twin of :meth:`decide`."""
        calls = list(message.tool_calls)
        await self._recorder.wait_async(context)
        client = self._async_client()
        try:
            if context.run_id is None:
                run = await client.start_run(
                    self.framework, principal=self.principal, labels=self.labels, parent_run_id=context.parent_run_id
                )
                self._started(context, str(run["run_id"]))
            self._recorder.server_back(context)
            verdicts = await self._send_async(client, context, message, calls, tools)
        except ServerUnreachable as error:
            return self._outage(context, calls, error)
        except CallgateError as error:
            return self._refuse_all(calls, error)
        resolutions = []
        for verdict, original in zip(verdicts, calls, strict=True):
            resolutions.append((await self._resolve_async(client, context, verdict, original, tools)).of(verdict))
        return resolutions

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
            for call, original in zip(wired, calls, strict=True):
                tool = tools.get(original.tool_name)
                if tool is not None and gateway_url_of(tool) is None:
                    call["consume"] = True  # runs here, right after: spend its grant with the decision
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
        self._recorder.acknowledge(context, outcomes, answer.outcomes)
        verdicts: list[Verdict] = answer.verdicts
        self._accepted_specs.update(spec["name"] for spec in specs)
        forgotten = self._forgotten(verdicts, calls, tools)
        if forgotten:
            again, reports = self._again(verdicts, calls, forgotten)
            respecs = self._specs(again, tools, again=True)
            redecided = client.decide_step(**self._request(context, None, again, respecs, tools, reports))
            self._recorder.acknowledge(context, reports, redecided.outcomes)
            for index, verdict in zip(forgotten, redecided.verdicts, strict=True):
                verdicts[index] = verdict
            self._accepted_specs.update(spec["name"] for spec in respecs)
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
                    self._recorder.sender.submit(lambda: self._carried_failed(self._client(), context, carried))
                )
                outcomes = []
        self._recorder.acknowledge(context, outcomes, answer.outcomes)
        verdicts = answer.verdicts
        self._accepted_specs.update(spec["name"] for spec in specs)
        forgotten = self._forgotten(verdicts, calls, tools)
        if forgotten:
            again, reports = self._again(verdicts, calls, forgotten)
            respecs = self._specs(again, tools, again=True)
            redecided = await client.decide_step(**self._request(context, None, again, respecs, tools, reports))
            self._recorder.acknowledge(context, reports, redecided.outcomes)
            for index, verdict in zip(forgotten, redecided.verdicts, strict=True):
                verdicts[index] = verdict
            self._accepted_specs.update(spec["name"] for spec in respecs)
        return verdicts

    # --- verdicts to resolutions ------------------------------------------------------------------

    @staticmethod
    def _first_pass(verdict: Verdict, original: ToolCall, gateway: bool) -> Resolution | None:
        """The resolution of an allowed or refused verdict; None for a pending one."""
        if verdict.status == "allowed":
            return _allowed(
                verdict, original, gateway, verdict.arguments, grant=verdict.grant, consumed=verdict.grant_consumed
            )
        if verdict.status == "refused" or verdict.approval is None:
            return _refused(
                verdict, original, verdict.error or {"kind": "policy-denied", "message": "the call was refused"}
            )
        return None

    @staticmethod
    def _binding(context: RunContext, grant: Grant | None) -> tuple[str, dict[str, Any]]:
        if grant is None:
            raise GrantInvalid("the approval yielded no grant for this key, so the call was not run")
        binding = {"run_id": context.run_id or grant.run_id, "call_id": grant.call_id, "tool": grant.tool}
        return grant.token, {**binding, "arguments_digest": grant.arguments_digest}

    def _resolve(
        self, client: CallgateClient, context: RunContext, verdict: Verdict, original: ToolCall, tools: dict[str, Tool]
    ) -> Resolution:
        gateway = gateway_url_of(tools.get(verdict.tool)) is not None
        resolution = self._first_pass(verdict, original, gateway)
        if resolution is not None or verdict.approval is None:
            return resolution or _refused(verdict, original, {"kind": "internal", "message": "no approval"})
        if tools and verdict.tool not in tools:  # the agent cannot run it: nobody is asked (see unknown.py)
            self._recorder.withdraw(verdict.approval.id, "the agent has no such tool")
            return _refused(verdict, original, {"kind": "tool-not-found", "message": "no such tool"})
        try:
            answer = interpret(verdict.approval, wait_for_approval(client, verdict.approval, self.max_wait))
            if not answer.approved:
                return _refused(verdict, original, answer.error or {})
            if not gateway:
                token, binding = self._binding(context, answer.grant)
                client.consume_grant(token, **binding)
        except ServerUnreachable as error:
            return _refused(verdict, original, unavailable(error, verdict.approval.id))
        except CallgateError as error:
            return _refused(verdict, original, error.to_body()["error"])
        arguments, note = _edit_note(verdict, answer)
        return _allowed(verdict, original, gateway, arguments, grant=answer.grant, consumed=not gateway, note=note)

    async def _resolve_async(
        self,
        client: AsyncCallgateClient,
        context: RunContext,
        verdict: Verdict,
        original: ToolCall,
        tools: dict[str, Tool],
    ) -> Resolution:
        gateway = gateway_url_of(tools.get(verdict.tool)) is not None
        resolution = self._first_pass(verdict, original, gateway)
        if resolution is not None or verdict.approval is None:
            return resolution or _refused(verdict, original, {"kind": "internal", "message": "no approval"})
        if tools and verdict.tool not in tools:  # the agent cannot run it: nobody is asked (see unknown.py)
            self._recorder.withdraw(verdict.approval.id, "the agent has no such tool")
            return _refused(verdict, original, {"kind": "tool-not-found", "message": "no such tool"})
        approval = verdict.approval
        try:
            answer = interpret(approval, await wait_for_approval_async(client, approval, self.max_wait))
            if not answer.approved:
                return _refused(verdict, original, answer.error or {})
            if not gateway:
                token, binding = self._binding(context, answer.grant)
                await client.consume_grant(token, **binding)
        except asyncio.CancelledError:
            self._recorder.withdraw(approval.id, "the agent run was cancelled while waiting for the approval")
            raise
        except ServerUnreachable as error:
            return _refused(verdict, original, unavailable(error, approval.id))
        except CallgateError as error:
            return _refused(verdict, original, error.to_body()["error"])
        arguments, note = _edit_note(verdict, answer)
        return _allowed(verdict, original, gateway, arguments, grant=answer.grant, consumed=not gateway, note=note)

    # --- when the server cannot decide -------------------------------------------------------------

    def _outage(self, context: RunContext, calls: list[ToolCall], error: ServerUnreachable) -> list[Resolution]:
        if self.fail_mode == "open":
            context.note_outage(error.message, len(calls))
            self.logger.warning(
                "callgate: %s; fail mode open: %d call(s) run undecided, an outage record follows",
                error.message,
                len(calls),
            )
            return [Resolution(CallPlan(call, call)) for call in calls]
        self.logger.warning("callgate: %s; fail mode closed: the step's calls are refused", error.message)
        refusal = unavailable(error)
        return [
            Resolution(CallPlan(call, plan_call(call, call.id or mint_call_id(), None), error=refusal))
            for call in calls
        ]

    def _refuse_all(self, calls: list[ToolCall], error: CallgateError) -> list[Resolution]:
        self.logger.error(
            "callgate: the server refused the step's decisions request: %s (%s)", error.message, error.kind
        )
        body = error.to_body()["error"]
        body.pop("path", None)
        return [
            Resolution(CallPlan(call, plan_call(call, call.id or mint_call_id(), None), error=body)) for call in calls
        ]
