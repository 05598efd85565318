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
from collections.abc import Callable
from typing import Any

from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import Tool

from haystack_integrations.common.callgate.approvals import (
    interpret,
    wait_for_approval,
    wait_for_approval_async,
)
from haystack_integrations.common.callgate.client import AsyncCallgateClient, CallgateClient, ServerUnreachable
from haystack_integrations.common.callgate.errors import CallgateError, GrantInvalid
from haystack_integrations.common.callgate.specs import gateway_url_of
from haystack_integrations.common.callgate.wire import Grant, Verdict

from .decisions_request import DecisionsRequests
from .recorder import RunRecorder
from .resolutions import Resolution, allowed, edit_note, refused, unavailable
from .runs import RunContext
from .step import CallPlan, mint_call_id, plan_call

__all__ = ["Resolution", "StepDecider", "unavailable"]


class StepDecider(DecisionsRequests):
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
            verdicts = self._send(client, context, message, calls, tools)
            self._recorder.server_back(context)  # it answered: an outage before ends now
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
            verdicts = await self._send_async(client, context, message, calls, tools)
            self._recorder.server_back(context)  # it answered: an outage before ends now
        except ServerUnreachable as error:
            return self._outage(context, calls, error)
        except CallgateError as error:
            return self._refuse_all(calls, error)
        resolutions = []
        for verdict, original in zip(verdicts, calls, strict=True):
            resolutions.append((await self._resolve_async(client, context, verdict, original, tools)).of(verdict))
        return resolutions

    # --- verdicts to resolutions ------------------------------------------------------------------

    @staticmethod
    def _first_pass(verdict: Verdict, original: ToolCall, gateway: bool) -> Resolution | None:
        """The resolution of an allowed or refused verdict; None for a pending one."""
        if verdict.status == "allowed":
            return allowed(
                verdict, original, gateway, verdict.arguments, grant=verdict.grant, consumed=verdict.grant_consumed
            )
        if verdict.status == "refused" or verdict.approval is None:
            return refused(
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
            return resolution or refused(verdict, original, {"kind": "internal", "message": "no approval"})
        if tools and verdict.tool not in tools:  # the agent cannot run it: nobody is asked (see unknown.py)
            self._recorder.withdraw(verdict.approval.id, "the agent has no such tool")
            return refused(verdict, original, {"kind": "tool-not-found", "message": "no such tool"})
        try:
            answer = interpret(verdict.approval, wait_for_approval(client, verdict.approval, self.max_wait))
            if not answer.approved:
                return refused(verdict, original, answer.error or {})
            if not gateway:
                token, binding = self._binding(context, answer.grant)
                client.consume_grant(token, **binding)
        except ServerUnreachable as error:
            return refused(verdict, original, unavailable(error, verdict.approval.id))
        except CallgateError as error:
            return refused(verdict, original, error.to_body()["error"])
        arguments, note = edit_note(verdict, answer)
        return allowed(verdict, original, gateway, arguments, grant=answer.grant, consumed=not gateway, note=note)

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
            return resolution or refused(verdict, original, {"kind": "internal", "message": "no approval"})
        if tools and verdict.tool not in tools:  # the agent cannot run it: nobody is asked (see unknown.py)
            self._recorder.withdraw(verdict.approval.id, "the agent has no such tool")
            return refused(verdict, original, {"kind": "tool-not-found", "message": "no such tool"})
        approval = verdict.approval
        try:
            answer = interpret(approval, await wait_for_approval_async(client, approval, self.max_wait))
            if not answer.approved:
                return refused(verdict, original, answer.error or {})
            if not gateway:
                token, binding = self._binding(context, answer.grant)
                await client.consume_grant(token, **binding)
        except asyncio.CancelledError:
            self._recorder.withdraw(approval.id, "the agent run was cancelled while waiting for the approval")
            raise
        except ServerUnreachable as error:
            return refused(verdict, original, unavailable(error, approval.id))
        except CallgateError as error:
            return refused(verdict, original, error.to_body()["error"])
        arguments, note = edit_note(verdict, answer)
        return allowed(verdict, original, gateway, arguments, grant=answer.grant, consumed=not gateway, note=note)

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
