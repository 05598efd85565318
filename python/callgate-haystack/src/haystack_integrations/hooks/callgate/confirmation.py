"""
``CallgateConfirmationStrategy``: Haystack's own ``ConfirmationHook``, with decisions from callgate.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from typing import Any

from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.hooks.human_in_the_loop import ToolExecutionDecision
from haystack.tools import Tool, Toolset, flatten_tools_or_toolsets
from haystack.utils import Secret, deserialize_secrets_inplace

from haystack_integrations.common.callgate.approvals import interpret, wait_for_approval, wait_for_approval_async
from haystack_integrations.common.callgate.client import AsyncCallgateClient, CallgateClient, ServerUnreachable
from haystack_integrations.common.callgate.errors import CallgateError
from haystack_integrations.common.callgate.specs import gateway_url_of, tool_spec
from haystack_integrations.common.callgate.wire import API_KEY_ENV_VAR, Verdict, encode_arguments
from haystack_integrations.tools.mcp import MCPToolset

from .confirmation_resume import note_pending, resume_decision, resumes
from .step import error_text
from .strategy_run import RUN_CONTEXT_KEY, _StrategyRun


class CallgateConfirmationStrategy:
    """
    A confirmation strategy for Haystack's ``ConfirmationHook`` whose decisions come from callgate:
    the same allow / deny / ask and the same one-use grants as :class:`CallgateHook`.

    Usage::

        from haystack.hooks.human_in_the_loop import ConfirmationHook
        from haystack_integrations.hooks.callgate import CallgateConfirmationStrategy

        strategy = CallgateConfirmationStrategy(url="http://127.0.0.1:7420")
        agent = Agent(
            chat_generator=generator,
            tools=[send_invoice, read_contract],
            hooks={"before_tool": [ConfirmationHook(confirmation_strategies={"*": strategy})]},
        )
        agent.run([ChatMessage.from_user("Invoice ACME")])   # hook_context gets a fresh run

    - *allow*: the call runs with the decided arguments (scrubbed parameters removed);
    - *deny*, or an ask denied / expired / unanswered: the call does not run and the model reads
      ``{"error": {"kind", "message", ...}}`` as its (error) result;
    - *ask*: the strategy waits for the answer (long-poll, up to the policy's limit or
      ``max_wait``); approved, the call runs, its grant consumed here for a local tool.

    One callgate run per agent run: the strategy starts it on the first call and keeps it in the
    run's ``hook_context`` under ``"callgate_run"`` (pass ``hook_context={"callgate_run_id": id}``
    to decide into a run of your own). In :class:`~.confirmation_hook.CallgateConfirmationHook` the
    run ends with its agent run, as :class:`CallgateHook`'s do (when the run's ``State`` is dropped);
    in Haystack's own ``ConfirmationHook``, when that ``hook_context`` is dropped or :meth:`close`
    is called. A run whose call waits for an approval stays open for a resume.

    What a strategy cannot do (Haystack gives strategies one call at a time and no results): it
    does not record the model's message nor the calls' outcomes, so completed calls read as
    ``decided-not-completed``; a call without an id is decided under a minted id the tool result
    does not carry. For all of that, use :class:`CallgateHook` instead. Haystack's
    ``ConfirmationHook`` never shows a strategy a call to a tool the agent lacks: register the
    strategy in :class:`~.confirmation_hook.CallgateConfirmationHook` to record those calls too.

    :param url: The callgate server; ``None`` reads ``CALLGATE_URL``, then ``http://127.0.0.1:7420``.
    :param api_key: An ``agent`` key; by default ``CALLGATE_API_KEY``.
    :param fail_mode: ``"closed"`` refuses calls while the server cannot be reached; ``"open"``
        lets them run (with a warning).
    :param framework: Recorded on each run.
    :param max_wait: Seconds to wait at most for one approval; None waits the policy's limit.
    :param consume_grants: Consume the grant of an approved call here (for local tools). A tool of
        ``callgate_toolset`` listed in ``tools`` is left to the gateway, which consumes its grant
        itself; set False when gateway tools are used but not listed.
    :param tools: The agent's tools (a list, or toolsets): the specs of local ones (name,
        description, input schema) are sent with their calls, so the server can validate
        arguments — a strategy sees only a tool's name and description, so a local tool the server
        does not know yet must be given here (or in the server's ``callgate.yaml``) — and gateway
        ones are recognised as such.
    :param tool_specs: Tool specs as callgate takes them (``{"name", "description", "inputSchema"}``),
        besides or instead of ``tools``; this is how ``to_dict`` keeps them.
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: Secret = Secret.from_env_var(API_KEY_ENV_VAR),
        *,
        fail_mode: str = "closed",
        framework: str = "haystack",
        max_wait: float | None = None,
        consume_grants: bool = True,
        tools: list[Tool] | Toolset | None = None,
        tool_specs: list[dict[str, Any]] | None = None,
    ) -> None:
        if fail_mode not in ("closed", "open"):
            raise ValueError(f"fail_mode must be 'closed' or 'open', got {fail_mode!r}")
        self.url = url
        self.api_key = api_key
        self.fail_mode = fail_mode
        self.framework = framework
        self.max_wait = max_wait
        self.consume_grants = consume_grants
        self._given_specs = {spec["name"]: spec for spec in tool_specs or []}
        self._tools = tools
        self._known: tuple[dict[str, dict[str, Any]], set[str]] | None = None
        self.logger = logging.getLogger("haystack_integrations.callgate")
        self._client: CallgateClient | None = None
        self._lock = threading.Lock()
        #: The runs this strategy started that may still be open.
        self._runs: weakref.WeakSet[_StrategyRun] = weakref.WeakSet()

    # --- serialization -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Serializes the strategy (the API key as its ``Secret``; a token secret cannot be serialized)."""
        return default_to_dict(
            self,
            url=self.url,
            api_key=self.api_key.to_dict(),
            fail_mode=self.fail_mode,
            framework=self.framework,
            max_wait=self.max_wait,
            consume_grants=self.consume_grants,
            tool_specs=self.tool_specs or None,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallgateConfirmationStrategy:
        """Deserializes the strategy."""
        deserialize_secrets_inplace(data["init_parameters"], keys=["api_key"])
        return default_from_dict(cls, data)

    # --- clients and runs --------------------------------------------------------------------

    def _sync_client(self) -> CallgateClient:
        if self._client is None:
            self._client = CallgateClient(self.url, self.api_key.resolve_value())
        return self._client

    def _end_run(self, run_id: str) -> None:
        client = self._client
        if client is None:
            return

        def end() -> None:
            try:
                client.end_run(run_id)
            except CallgateError as error:
                self.logger.debug("callgate: run %s not ended: %s", run_id, error)

        threading.Thread(target=end, name="callgate-end-run", daemon=True).start()

    def close(self) -> None:
        """Ends every run this strategy started that is still open (those waiting for an approval stay open)."""
        for run in list(self._runs):
            run.end()

    @staticmethod
    def _existing_run_id(context: dict[str, Any] | None) -> str | None:
        if context is None:
            return None
        given = context.get("callgate_run_id")
        if isinstance(given, str):
            return given
        current = context.get(RUN_CONTEXT_KEY)
        return current.run_id if isinstance(current, _StrategyRun) and current.open else None

    def _remember_run(self, context: dict[str, Any] | None, run_id: str) -> str:
        """Keeps a new run in ``context`` (or the run already there, when another call won the race)."""
        with self._lock:
            existing = self._existing_run_id(context)
            if existing is not None:
                self._end_run(run_id)
                return existing
            run = _StrategyRun(run_id, self._end_run)
            self._runs.add(run)
            if context is not None:
                context[RUN_CONTEXT_KEY] = run
            else:
                self.logger.warning("callgate: no hook_context: this call is decided in a run of its own")
            return run_id

    def _withdraw(self, approval_id: str) -> None:
        client = self._sync_client()

        def withdraw() -> None:
            try:
                client.withdraw_approval(approval_id, reason="the agent run was cancelled while waiting")
            except CallgateError as error:
                self.logger.debug("callgate: approval %s not withdrawn: %s", approval_id, error)

        threading.Thread(target=withdraw, name="callgate-withdraw", daemon=True).start()

    def _catalog(self) -> tuple[dict[str, dict[str, Any]], set[str]]:
        """
        The specs of the local tools by name, and the names of gateway tools. Read at the first
        decision, when the Agent has warmed its toolsets up (an ``MCPToolset`` lists its tools then).
        """
        if self._known is not None:
            return self._known
        specs = dict(self._given_specs)
        gateway: set[str] = set()
        entries = [self._tools] if isinstance(self._tools, Toolset) else list(self._tools or [])
        complete = True
        for entry in entries:
            if isinstance(entry, MCPToolset) and not getattr(entry, "_warmup_called", True):
                complete = False  # not connected yet: it lists only a placeholder
                continue
            for tool in flatten_tools_or_toolsets([entry]):
                if gateway_url_of(tool) is not None:
                    gateway.add(tool.name)
                elif (spec := tool_spec(tool)) is not None:
                    specs[tool.name] = spec
        if complete:
            self._known = (specs, gateway)
        return specs, gateway

    @property
    def tool_specs(self) -> list[dict[str, Any]]:
        """The specs of local tools this strategy sends with their calls."""
        return list(self._catalog()[0].values())

    def _spec_for(self, tool_name: str) -> list[dict[str, Any]] | None:
        spec = self._catalog()[0].get(tool_name)
        return [spec] if spec is not None else None

    def _consumes(self, tool_name: str) -> bool:
        return self.consume_grants and tool_name not in self._catalog()[1]

    # --- decisions ---------------------------------------------------------------------------

    def _decision(self, verdict: Verdict, tool_name: str, tool_call_id: str | None) -> ToolExecutionDecision | None:
        """The decision of an allowed or refused verdict; None for a pending one."""
        if verdict.status == "allowed":
            return ToolExecutionDecision(
                tool_name=tool_name, execute=True, tool_call_id=tool_call_id, final_tool_params=verdict.arguments
            )
        if verdict.status == "refused" or verdict.approval is None:
            return self._refuse(
                tool_name, tool_call_id, verdict.error or {"kind": "policy-denied", "message": "refused"}
            )
        return None

    @staticmethod
    def _note_pending(context: dict[str, Any] | None, error: dict[str, Any]) -> None:
        note_pending(context, context.get(RUN_CONTEXT_KEY) if context is not None else None, error)

    def _refusal(
        self, answer: Any, context: dict[str, Any] | None, tool_name: str, tool_call_id: str | None
    ) -> ToolExecutionDecision | None:
        """The refusal of an answer that did not approve (noted in ``context`` for a resume), else None."""
        if answer.approved:
            return None
        self._note_pending(context, answer.error or {})
        return self._refuse(tool_name, tool_call_id, answer.error or {})

    def _consumption(self, answer: Any, run_id: str, tool_name: str) -> tuple[str, dict[str, str]] | None:
        """The token and binding of an approved answer's grant that this strategy consumes, else None."""
        grant = answer.grant
        if grant is None or not self._consumes(tool_name):
            return None
        binding = {"run_id": run_id, "call_id": grant.call_id, "tool": grant.tool}
        return grant.token, {**binding, "arguments_digest": grant.arguments_digest}

    @staticmethod
    def _refuse(tool_name: str, tool_call_id: str | None, error: dict[str, Any]) -> ToolExecutionDecision:
        return ToolExecutionDecision(
            tool_name=tool_name, execute=False, tool_call_id=tool_call_id, feedback=error_text(error)
        )

    def _unreachable(self, tool_name: str, tool_params: dict[str, Any], tool_call_id: str | None, error: Exception):
        if self.fail_mode == "open":
            self.logger.warning("callgate: %s; fail mode open: %s runs undecided", error, tool_name)
            return ToolExecutionDecision(
                tool_name=tool_name, execute=True, tool_call_id=tool_call_id, final_tool_params=tool_params
            )
        message = f"{error}; the call is refused until callgate can decide it"
        return self._refuse(tool_name, tool_call_id, {"kind": "gate-unavailable", "message": message})

    def _approved(
        self, verdict: Verdict, answer: Any, tool_name: str, tool_call_id: str | None
    ) -> ToolExecutionDecision:
        arguments = answer.arguments if answer.arguments is not None else verdict.arguments
        feedback = None
        if arguments != verdict.arguments:
            feedback = f"A reviewer changed the arguments of '{tool_name}' before approving it: {arguments}"
        return ToolExecutionDecision(
            tool_name=tool_name, execute=True, tool_call_id=tool_call_id, final_tool_params=arguments, feedback=feedback
        )

    def run(
        self,
        *,
        tool_name: str,
        tool_description: str,
        tool_params: dict[str, Any],
        tool_call_id: str | None = None,
        confirmation_strategy_context: dict[str, Any] | None = None,
    ) -> ToolExecutionDecision:
        """
        Decides one call (waiting for a person when the policy asks).

        :returns: ``execute=True`` with the decided arguments, or ``execute=False`` with the
            refusal JSON as ``feedback`` (the model reads it as the call's error result).
        """
        client = self._sync_client()
        call = {"id": tool_call_id or None, "tool": tool_name, "arguments": encode_arguments(tool_params)}
        try:
            run_id = self._existing_run_id(confirmation_strategy_context) or self._remember_run(
                confirmation_strategy_context, str(client.start_run(self.framework)["run_id"])
            )
            resumed = resume_decision(
                self, client, run_id, confirmation_strategy_context, tool_name, tool_params, tool_call_id
            )
            if resumed is not None:
                return resumed
            # A local tool runs right after an allow: its grant is consumed with the decision.
            verdict = client.decide_step(
                run_id, [call], tools=self._spec_for(tool_name), consume=self._consumes(tool_name)
            ).verdicts[0]
            decision = self._decision(verdict, tool_name, tool_call_id)
            if decision is not None:
                return decision
            assert verdict.approval is not None
            answer = interpret(verdict.approval, wait_for_approval(client, verdict.approval, self.max_wait))
            refusal = self._refusal(answer, confirmation_strategy_context, tool_name, tool_call_id)
            if refusal is not None:
                return refusal
            consumption = self._consumption(answer, run_id, tool_name)
            if consumption is not None:
                client.consume_grant(consumption[0], **consumption[1])
            return self._approved(verdict, answer, tool_name, tool_call_id)
        except ServerUnreachable as error:
            return self._unreachable(tool_name, tool_params, tool_call_id, error)
        except CallgateError as error:
            return self._refuse(tool_name, tool_call_id, error.to_body()["error"])

    async def run_async(
        self,
        *,
        tool_name: str,
        tool_description: str,
        tool_params: dict[str, Any],
        tool_call_id: str | None = None,
        confirmation_strategy_context: dict[str, Any] | None = None,
    ) -> ToolExecutionDecision:
        """Async twin of :meth:`run`: the waits do not block the event loop."""
        client = AsyncCallgateClient(self.url, self.api_key.resolve_value())
        call = {"id": tool_call_id or None, "tool": tool_name, "arguments": encode_arguments(tool_params)}
        try:
            run_id = self._existing_run_id(confirmation_strategy_context) or self._remember_run(
                confirmation_strategy_context, str((await client.start_run(self.framework))["run_id"])
            )
            resumed = None
            if resumes(confirmation_strategy_context, tool_call_id):  # else no thread hop: nothing to resume
                context, sync_client = confirmation_strategy_context, self._sync_client()
                arguments = (self, sync_client, run_id, context, tool_name, tool_params, tool_call_id)
                resumed = await asyncio.to_thread(resume_decision, *arguments)
            if resumed is not None:
                return resumed
            step = await client.decide_step(
                run_id, [call], tools=self._spec_for(tool_name), consume=self._consumes(tool_name)
            )
            verdict = step.verdicts[0]
            decision = self._decision(verdict, tool_name, tool_call_id)
            if decision is not None:
                return decision
            assert verdict.approval is not None
            try:
                state = await wait_for_approval_async(client, verdict.approval, self.max_wait)
            except asyncio.CancelledError:
                self._withdraw(verdict.approval.id)
                raise
            answer = interpret(verdict.approval, state)
            refusal = self._refusal(answer, confirmation_strategy_context, tool_name, tool_call_id)
            if refusal is not None:
                return refusal
            consumption = self._consumption(answer, run_id, tool_name)
            if consumption is not None:
                await client.consume_grant(consumption[0], **consumption[1])
            return self._approved(verdict, answer, tool_name, tool_call_id)
        except ServerUnreachable as error:
            return self._unreachable(tool_name, tool_params, tool_call_id, error)
        except CallgateError as error:
            return self._refuse(tool_name, tool_call_id, error.to_body()["error"])
        finally:
            await client.aclose()
