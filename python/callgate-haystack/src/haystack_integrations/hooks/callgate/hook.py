"""
``CallgateHook``: every tool call of a Haystack agent is decided by callgate before it runs.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import time
import weakref
from typing import Any, Literal

from haystack.components.agents.state.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.core.errors import DeserializationError, SerializationError
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall
from haystack.utils import Secret

from haystack_integrations.common.callgate.client import AsyncCallgateClient, CallgateClient
from haystack_integrations.common.callgate.wire import API_KEY_ENV_VAR

from .decisions import Resolution, StepDecider
from .points import hook_point, infer_point
from .recorder import FLUSH_TIMEOUT, RunRecorder
from .reports import completed_report
from .runs import ACTIVE_RUN, DecidedCall, RunContext, RunRegistry
from .step import find_results, rewrite_step, tools_by_name

FailMode = Literal["closed", "open"]


class CallgateHook:
    """
    An Agent hook that has callgate decide every tool call before it runs, waits for people when
    the policy asks, and records what each call did.

    Register the **same object last** under ``before_tool`` and ``after_tool`` (and, to record the
    final answer and end the run at once, ``after_run``)::

        from haystack.components.agents import Agent
        from haystack.components.generators.chat import OpenAIChatGenerator
        from haystack.dataclasses import ChatMessage
        from haystack.utils import Secret
        from haystack_integrations.hooks.callgate import CallgateHook

        gate = CallgateHook(url="http://127.0.0.1:7420", api_key=Secret.from_env_var("CALLGATE_API_KEY"))
        agent = Agent(
            chat_generator=OpenAIChatGenerator(),
            tools=[send_invoice, read_contract],
            hooks={"before_tool": [gate], "after_tool": [gate], "after_run": [gate]},
        )
        agent.run([ChatMessage.from_user("Invoice ACME for March")])
        gate.flush()   # every record of the run has reached the server

    **before_tool** — all pending calls of the step go to the server in one request, with the
    model message that asked for them (its text, reasoning, and tool calls under their ids):

    - *allow*: the call stays and runs (with the decided arguments: scrubbed parameters removed);
      its one-use grant is spent by the hook as the call starts (in the background) for a local
      tool, by the gateway for a tool of ``callgate_toolset``;
    - *deny*: the call is taken off the step; the model reads, as that call's tool result,
      ``{"error": {"kind", "message", ...}}`` (an assistant message with the call, then an error
      tool message, as Haystack's ``ConfirmationHook`` does) and the run goes on;
    - *ask*: the hook waits (long-poll) up to the policy's wait limit or ``max_wait``; approved,
      the call runs under a one-use grant bound to its exact arguments (the hook consumes it for
      a local tool; the gateway consumes it for a tool of ``callgate_toolset``); denied, expired
      or withdrawn, it is refused as above; still pending at the limit, it is refused with
      ``approval required: <id>``.
    - A call without an id gets the id the server mints (``cg-<hex>``, recorded as minted) and
      its result carries it. A call id seen again in the run is decided as that call's next attempt.
    - Values Haystack injects from the agent's ``State`` (``inputs_from_state``, a
      ``State``-typed parameter) are **not** the model's arguments: they are not sent, not
      decided, and a policy cannot see them.

    **after_tool** — each result is paired with its call and recorded (``ok`` or ``error``, with
    the result parsed back from JSON text so provenance sees untrusted values), in the background
    and before the run's next decision. A call whose tool or arguments a ``before_tool`` hook
    listed after this one changed is recorded as ``changed-after-decision``. A call decided but
    never completed (e.g. with ``raise_on_tool_invocation_failure=True``) is recorded as
    ``decided-not-completed`` when the run ends: at ``after_run``, when the agent run's ``State``
    is dropped, at :meth:`close`, or at interpreter exit.

    **Fail modes** — ``closed`` (default): while the server cannot be reached, every call of the
    step is refused with ``gate-unavailable``. ``open``: the calls run undecided, with a warning,
    and an outage (``gap``) record is written once the server answers again. Either way an
    approval that was already asked for is never skipped.

    The hook keeps its runs beside each ``State`` (weakly), never inside ``state.data``. It holds
    live connections and runs, so an agent holding it cannot be serialized: :meth:`to_dict`
    raises ``SerializationError``; build the hook in code.

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
        self._warned_missing_after_tool = False
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
            self._recorder.end(context, None)
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

    def to_dict(self) -> dict[str, Any]:
        """
        Refuses to serialize.

        :raises SerializationError: Always: the hook holds live connections and the runs it records.
        """
        raise SerializationError(
            "CallgateHook holds live connections to the callgate server and the runs it is recording, so an "
            "Agent or Pipeline holding it cannot be serialized (to_dict, dumps). Build the hook in code and pass "
            "it to the Agent's hooks= after loading the rest."
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallgateHook:
        """
        Refuses to deserialize.

        :raises DeserializationError: Always: build the hook in code.
        """
        raise DeserializationError("CallgateHook is never serialized: build it in code (see CallgateHook.to_dict)")

    # --- entry points ------------------------------------------------------------------------

    def run(self, state: State) -> None:
        """
        Runs at ``before_tool``, ``after_tool`` or ``after_run`` (see the class docs).

        :param state: The Agent's live ``State``; its ``messages`` are rewritten at ``before_tool``.
        """
        point = hook_point() or self._infer(state)
        if point == "before_tool":
            self._before_tool(state)
        elif point == "after_tool":
            self._after_tool(state)
        elif point == "after_run":
            self._after_run(state)

    async def run_async(self, state: State) -> None:
        """Async twin of :meth:`run`: requests and waits do not block the event loop."""
        point = hook_point() or self._infer(state)
        if point == "before_tool":
            await self._before_tool_async(state)
        elif point == "after_tool":
            self._after_tool(state)
        elif point == "after_run":
            await self._after_run_async(state)

    def _infer(self, state: State) -> str:
        context = self._runs.get(state)
        point = infer_point(state.data.get("messages") or [], context)
        if point == "before_tool" and context is not None and context.phase == "tools":
            self._warn_missing_after_tool()
        return point

    def _warn_missing_after_tool(self) -> None:
        if not self._warned_missing_after_tool:
            self._warned_missing_after_tool = True
            self.logger.warning(
                "callgate: register the same CallgateHook under after_tool too; without it outcomes are "
                "recorded late and tool errors are not told apart"
            )

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
        return context, last

    def _before_tool(self, state: State) -> None:
        context, message = self._begin_step(state)
        if message is not None:
            tools = tools_by_name(state.data.get("tools"))
            self._apply(state, context, message, self._decider.decide(context, message, tools))

    async def _before_tool_async(self, state: State) -> None:
        context, message = self._begin_step(state)
        if message is not None:
            tools = tools_by_name(state.data.get("tools"))
            self._apply(state, context, message, await self._decider.decide_async(context, message, tools))

    def _apply(self, state: State, context: RunContext, message: ChatMessage, resolutions: list[Resolution]) -> None:
        plans = [resolution.plan for resolution in resolutions]
        rewritten = rewrite_step(message, plans)
        if rewritten is not None:
            history = list(state.data.get("messages") or [])
            state.set("messages", history[:-1] + rewritten, handler_override=replace_values)
        last = rewritten[-1] if rewritten else message
        self._enter_tools(
            context,
            last,
            [resolution.decided for resolution in resolutions if resolution.decided is not None],
            [plan.call for plan in plans if plan.error is not None],
        )
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
        self._recorder.end(context, final, status="completed")

    def _state_dropped(self, context: RunContext) -> None:
        # From a weakref callback: only queue work.
        self._recorder.end(context, None)

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
