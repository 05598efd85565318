"""
``CallgateHook``: every tool call of a Haystack agent is decided by callgate before it runs.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
import time
import weakref
from typing import Literal

from haystack.components.agents.state.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall
from haystack.tools import Tool
from haystack.utils import Secret

from haystack_integrations.common.callgate.client import AsyncCallgateClient, CallgateClient
from haystack_integrations.common.callgate.wire import API_KEY_ENV_VAR

from .decisions import Resolution, StepDecider
from .gate_steps import StepWork
from .hook_points import CallgateHookPoint, GatePoints
from .legacy import LegacyEntryPoint
from .recorder import FLUSH_TIMEOUT, RunRecorder
from .reports import completed_report
from .runs import ACTIVE_RUN, DecidedCall, RunContext, RunRegistry
from .step import find_results, rewrite_step, tools_by_name
from .tracing import step_span, trace_calls
from .unknown import rewrite_not_found

FailMode = Literal["closed", "open"]


class CallgateHook(GatePoints, LegacyEntryPoint):
    """
    An Agent hook that has callgate decide every tool call before it runs, waits for people when
    the policy asks, and records what each call did.

    Register its hook points, **last** in each list, with :meth:`hooks` (one object per point,
    sharing this gate's runs; each serializes with the gate's configuration)::

        from haystack.components.agents import Agent
        from haystack.components.generators.chat import OpenAIChatGenerator
        from haystack.dataclasses import ChatMessage
        from haystack_integrations.hooks.callgate import CallgateHook

        gate = CallgateHook()          # CALLGATE_URL, CALLGATE_API_KEY (an environment-variable Secret)
        agent = Agent(chat_generator=OpenAIChatGenerator(), tools=[send_invoice, read_contract], hooks=gate.hooks())
        agent.run([ChatMessage.from_user("Invoice ACME for March")], hook_context={"callgate_run_id": None})
        gate.flush()   # every record of the run has reached the server

    **before_tool** — all pending calls of the step go to the server in one request, with the
    model message that asked for them; each call then runs as decided (allow: with the decided
    arguments, its grant consumed; ask: after a person approved it) or is refused (the model reads
    ``{"error": {"kind", "message", ...}}`` as its error result, as Haystack's ``ConfirmationHook``
    lays it out). A call to a tool the agent does not have is recorded as refused
    (``tool-not-found``) and left to Haystack, which reports it as it always does (or raises
    ``ToolNotFoundException`` with ``raise_on_tool_invocation_failure=True``); the model reads
    Haystack's text (the tool was not found, which tools are available) in callgate's error body.

    **after_tool** — each result is paired with its call and recorded (``ok`` or ``error``), in the
    background and before the run's next decision. **after_run** records the final answer and ends
    the run, unless a call of it waits for an approval (``approval-pending``): then the run stays
    open so a later agent run can resume it (``hook_context={"callgate_run_id": ...}`` or
    ``{"callgate_approval_id": ...}``; see the README's "Resume after an ask").

    **Fail modes** — ``closed`` (default): while the server cannot be reached, every call of the
    step is refused with ``gate-unavailable``. ``open``: the calls run undecided, with a warning
    naming the outage, and an outage (``gap``) record is written once the server answers again.

    The hook keeps its runs beside each ``State`` (weakly), never inside ``state.data``.
    :meth:`to_dict` gives its configuration (the API key as its ``Secret``); :meth:`from_dict`
    returns the one gate of an equal configuration in this process, so the entries of a loaded
    agent share their runs. Registering the gate object itself under each point still works, but
    is deprecated (it finds its point from Haystack's call stack).

    :param url: The callgate server (its base URL or ``/mcp`` URL); ``None`` reads ``CALLGATE_URL``,
        then uses ``http://127.0.0.1:7420``.
    :param api_key: An ``agent`` API key; by default the ``CALLGATE_API_KEY`` environment variable.
    :param fail_mode: ``"closed"`` or ``"open"``, see above.
    :param framework: Recorded on each run.
    :param principal: Who the runs act for; the server uses the key's name when None. Leave it
        unset with ``callgate_toolset``: the gateway finds the hook's grants by the key's name.
    :param labels: String labels recorded on each run.
    :param max_wait: Seconds to wait at most for one approval; None waits the policy's limit.
    :param timeout: Seconds to wait for the server to answer a request.
    :param logger: Where warnings go; default ``logging.getLogger("haystack_integrations.callgate")``.
    :raises ValueError: For an unknown ``fail_mode``.
    """

    allowed_hook_points = ("before_tool", "after_tool", "after_run")

    def __init__(
        self,
        url: str | None = None,
        api_key: Secret = Secret.from_env_var(API_KEY_ENV_VAR),
        *,
        fail_mode: FailMode = "closed",
        framework: str = "haystack",
        principal: str | None = None,
        labels: dict[str, str] | None = None,
        max_wait: float | None = None,
        timeout: float = 15.0,
        logger: logging.Logger | None = None,
    ) -> None:
        if fail_mode not in ("closed", "open"):
            raise ValueError(f"fail_mode must be 'closed' or 'open', got {fail_mode!r}")
        self.url = url
        self.api_key = api_key
        self.fail_mode: FailMode = fail_mode
        self.framework = framework
        self.principal = principal
        self.labels = dict(labels or {})
        self.max_wait = max_wait
        self.timeout = timeout
        self.logger = logger or logging.getLogger("haystack_integrations.callgate")
        self._client: CallgateClient | None = None
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncCallgateClient] = (
            weakref.WeakKeyDictionary()
        )
        self._runs = RunRegistry(on_state_dropped=self._state_dropped)
        self._recorder = RunRecorder(self._sync_client, self._start_run, self._runs, self.logger)
        self._decider = StepDecider(
            client=self._sync_client,
            async_client=self._async_client,
            start_run=self._start_run,
            started=self._runs.started,
            recorder=self._recorder,
            max_wait=max_wait,
            fail_mode=fail_mode,
            framework=framework,
            principal=principal,
            labels=self.labels,
            logger=self.logger,
        )
        self._steps = StepWork(self._sync_client, self._runs, self._decider, self._recorder, self.logger)
        self._warned_missing_after_tool = False
        self._warned_deprecated = False
        self._points: dict[str, CallgateHookPoint] = {}
        self._points_lock = threading.Lock()
        atexit.register(_close_at_exit, weakref.ref(self))

    # --- lifecycle ---------------------------------------------------------------------------

    def warm_up(self) -> None:
        """
        Prepares the client (no request is made). Called by ``Agent.warm_up``; idempotent.

        :raises ValueError: When the API key cannot be resolved (e.g. ``CALLGATE_API_KEY`` is unset).
        """
        self._sync_client()

    async def warm_up_async(self) -> None:
        """Async twin of :meth:`warm_up`."""
        self._sync_client()

    def _api_key_text(self) -> str | None:
        try:
            return self.api_key.resolve_value() if self.api_key is not None else None
        except ValueError as error:
            raise ValueError(
                f"CallgateHook needs an agent API key: set {API_KEY_ENV_VAR} or pass api_key= ({error})"
            ) from error

    def _sync_client(self) -> CallgateClient:
        if self._client is None:
            self._client = CallgateClient(self.url, self._api_key_text(), timeout=self.timeout)
        return self._client

    def _async_client(self) -> AsyncCallgateClient:
        loop = asyncio.get_running_loop()
        client = self._async_clients.get(loop)
        if client is None:
            client = AsyncCallgateClient(self.url, self._api_key_text(), timeout=self.timeout)
            self._async_clients[loop] = client
        return client

    @property
    def last_run_id(self) -> str | None:
        """The id of the run this hook started last (None before the first); see also :attr:`run_ids`."""
        return self._runs.started_ids[-1] if self._runs.started_ids else None

    @property
    def run_ids(self) -> list[str]:
        """
        Ids of the runs this hook started, oldest first (the last 1,000). For one agent run's id,
        pass a non-empty ``hook_context`` dict to ``Agent.run`` (Haystack replaces an empty one): the hook
        writes the id there as ``"callgate_run_id"``.
        """
        return list(self._runs.started_ids)

    def flush(self, timeout: float | None = 30.0) -> None:
        """
        Waits until every record queued so far (outcomes, run ends) has been sent.

        :param timeout: Seconds to wait at most; None waits as long as it takes.
        """
        self._recorder.flush(timeout)

    def close(self) -> None:
        """
        Ends every run still open (a run between a step's before_tool and after_tool ends as
        ``failed``), waits for their records, and closes the connections. Called by
        ``Agent.close``; the hook can be used again afterwards.
        """
        for context in self._runs.open_runs():
            self._recorder.end(context, None, keep_open=self._steps.keep_open(context))
        try:
            self.flush(10.0)
        except Exception:
            self.logger.warning("callgate: some records were still being sent when the hook closed")
        if self._client is not None:
            self._client.close()
            self._client = None

    async def close_async(self) -> None:
        """Async twin of :meth:`close`."""
        await asyncio.to_thread(self.close)
        client = self._async_clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    # --- hook points --------------------------------------------------------------------------

    def _run_point(self, point: str, state: State) -> None:
        if point == "before_tool":
            self._before_tool(state)
        elif point == "after_tool":
            self._after_tool(state)
        elif point == "after_run":
            self._after_run(state)

    async def _run_point_async(self, point: str, state: State) -> None:
        if point == "before_tool":
            await self._before_tool_async(state)
        elif point == "after_tool":
            self._after_tool(state)
        elif point == "after_run":
            await self._after_run_async(state)

    # --- before_tool -------------------------------------------------------------------------

    def _begin_step(self, state: State) -> tuple[RunContext, ChatMessage | None]:
        context = self._runs.get_or_create(state)
        if context.phase == "tools":
            # after_tool never ran for the previous step: record what can be paired now.
            self._warn_missing_after_tool()
            self._finish_step(state, context)
        messages = state.data.get("messages") or []
        last = messages[-1] if messages else None
        if last is None or last.role != ChatRole.ASSISTANT or not last.tool_calls:
            self._enter_tools(context, last, [], [])
            return context, None
        return context, StepWork.unrepeat(last)

    def _before_tool(self, state: State) -> None:
        context, message = self._begin_step(state)
        self._steps.prepare(context)
        if message is not None:
            tools = tools_by_name(state.data.get("tools"))
            with step_span(context, message) as span:
                resolutions = self._steps.decide(context, message, tools)
                trace_calls(span, context, resolutions)
            self._apply(state, context, message, resolutions, tools)

    async def _before_tool_async(self, state: State) -> None:
        context, message = self._begin_step(state)
        await asyncio.to_thread(self._steps.prepare, context)
        if message is not None:
            tools = tools_by_name(state.data.get("tools"))
            with step_span(context, message) as span:
                resolutions = await self._steps.decide_async(context, message, tools)
                trace_calls(span, context, resolutions)
            self._apply(state, context, message, resolutions, tools)

    def _apply(
        self,
        state: State,
        context: RunContext,
        message: ChatMessage,
        resolutions: list[Resolution],
        tools: dict[str, Tool],
    ) -> None:
        unknown, unpaired = self._steps.settle(context, resolutions, tools)
        plans = [resolution.plan for resolution in resolutions]
        rewritten = rewrite_step(message, plans)
        history = state.data.get("messages") or []
        if rewritten is None and history and history[-1] is not message:  # repeated ids were taken away
            rewritten = [message]
        if rewritten is not None:
            state.set("messages", list(history[:-1]) + rewritten, handler_override=replace_values)
        last = rewritten[-1] if rewritten else message
        self._enter_tools(
            context,
            last,
            [resolution.decided for resolution in resolutions if resolution.decided is not None],
            [plan.call for plan in plans if plan.error is not None] + unpaired,
        )
        context.step_unknown = unknown
        for resolution in resolutions:
            if resolution.report is not None:
                self._recorder.outcome(context, resolution.report)
            elif resolution.decided is not None and not resolution.decided.gateway:
                self._recorder.consume(context, resolution.decided)

    @staticmethod
    def _enter_tools(
        context: RunContext, message: ChatMessage | None, decided: list[DecidedCall], refused: list[ToolCall]
    ) -> None:
        context.step_calls = decided
        context.step_refused = refused
        context.step_message = message
        context.step_started = time.perf_counter()
        context.phase = "tools"
        ACTIVE_RUN.set(context)

    # --- after_tool --------------------------------------------------------------------------

    def _after_tool(self, state: State) -> None:
        context = self._runs.get(state)
        if context is None or context.phase != "tools":
            return
        self._finish_step(state, context)

    def _finish_step(self, state: State, context: RunContext) -> None:
        rewrite_not_found(state, context)
        context.step_unknown = []
        duration_ms = (time.perf_counter() - context.step_started) * 1000.0
        found, undecided = find_results(state.data.get("messages") or [], context.step_calls, context.step_refused)
        for index, call in enumerate(context.step_calls):
            message = found.get(index)
            if message is not None:
                self._recorder.outcome(context, completed_report(call, message, duration_ms), call)
        for message in undecided:
            origin = message.tool_call_result.origin if message.tool_call_result else None
            self.logger.warning(
                "callgate: tool %s (call %s) ran without a decision: a before_tool hook listed after CallgateHook "
                "added it; list CallgateHook last",
                origin.tool_name if origin else "?",
                origin.id if origin else "?",
            )
        context.step_calls = []
        context.step_refused = []
        context.step_message = None
        context.phase = "idle"
        if ACTIVE_RUN.get() is context:
            ACTIVE_RUN.set(None)

    # --- after_run and run ends ----------------------------------------------------------------

    def _after_run(self, state: State) -> None:
        self._end_from_state(state)
        self._recorder.flush(FLUSH_TIMEOUT)

    async def _after_run_async(self, state: State) -> None:
        self._end_from_state(state)
        await self._recorder.flush_async()

    def _end_from_state(self, state: State) -> None:
        context = self._runs.get_or_create(state)
        if context.phase == "tools":
            self._finish_step(state, context)
        messages = state.data.get("messages") or []
        last = messages[-1] if messages else None
        final = last if last is not None and last.role == ChatRole.ASSISTANT and not last.tool_calls else None
        self._recorder.end(context, final, status="completed", keep_open=self._steps.keep_open(context))

    def _state_dropped(self, context: RunContext) -> None:
        # From a weakref callback: only queue work.
        self._recorder.end(context, None, keep_open=self._steps.keep_open(context))

    def _start_run(self, client: CallgateClient, context: RunContext) -> str:
        run = client.start_run(
            self.framework, principal=self.principal, labels=self.labels or None, parent_run_id=context.parent_run_id
        )
        run_id = str(run["run_id"])
        self._runs.started(context, run_id)
        return run_id


def _close_at_exit(reference: weakref.ref[CallgateHook]) -> None:
    hook = reference()
    if hook is not None:
        hook.close()
