"""
The records a hook sends besides its decisions: outcomes, outage (gap) records and run ends.

A step's outcomes are kept (:meth:`RunRecorder.outcome`) and travel with the run's next
decisions request (:meth:`RunRecorder.take`, recorded by the server in order before it decides
the new calls, so provenance and idempotency see every earlier result) or with the run's end:
one request per step. Until then they are not acknowledged: a process that stops between steps
loses only what the server never confirmed, and the run's end (``after_run``, ``close``, or the
``State`` being dropped) or :meth:`RunRecorder.flush` sends what is left.

Everything else goes through one :class:`~haystack_integrations.common.callgate.background.BackgroundSender`
thread, in order. A record that cannot be sent because the server is unreachable is kept and
sent again before the run's next decision or at its end.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from haystack.dataclasses import ChatMessage

from haystack_integrations.common.callgate.background import BackgroundSender
from haystack_integrations.common.callgate.client import CallgateClient, ServerUnreachable
from haystack_integrations.common.callgate.errors import CallgateError, Conflict, NotFound, RequestInvalid

from .runs import DecidedCall, RunContext, RunRegistry
from .step import message_content

#: Seconds to wait for a run's queued records before deciding its next step.
FLUSH_TIMEOUT = 30.0


class RunRecorder:
    """
    Sends a hook's records in the background.

    :param client: Returns the hook's synchronous client.
    :param start_run: Starts a run for a context (used when a run's first contact is its end).
    :param runs: The hook's runs (an ended run is forgotten).
    :param logger: Where warnings go.
    """

    def __init__(
        self,
        client: Callable[[], CallgateClient],
        start_run: Callable[[CallgateClient, RunContext], str],
        runs: RunRegistry,
        logger: logging.Logger,
    ) -> None:
        self._client = client
        self._start_run = start_run
        self._runs = runs
        self.logger = logger
        self.sender = BackgroundSender()

    def flush(self, timeout: float | None) -> None:
        """
        Sends the outcomes every open run still holds (one request per run), then waits until
        every record queued so far has been sent (or ``timeout`` seconds).
        """
        self._send_held()
        self.sender.submit(lambda: None).result(timeout)

    async def flush_async(self) -> None:
        """Async twin of :meth:`flush`."""
        self._send_held()
        await asyncio.wrap_future(self.sender.submit(lambda: None))

    def _send_held(self) -> None:
        for context in self._runs.open_runs():
            if context.run_id is None or not context.unsent:
                continue
            client, run_id = self._client(), context.run_id
            reports = self.take(context)

            def send(reports: list[dict[str, Any]] = reports, run_id: str = run_id) -> None:
                try:
                    self.acknowledge(context, reports, client.record_outcomes(run_id, reports))
                except ServerUnreachable:
                    self.restore(context, reports)
                except (CallgateError, ValueError, TypeError):
                    self.record_each(client, context, reports)

            context.pending.append(self.sender.submit(send))

    # --- outcomes carried by the next request --------------------------------------------------

    def take(self, context: RunContext) -> list[dict[str, Any]]:
        """
        Takes the outcomes ``context`` holds, in order, for a request to carry (each with its
        call's ``grant_consumed`` as it is now). Give them back with :meth:`restore` when the
        request did not reach the server.
        """
        with context.lock:
            held, context.unsent = context.unsent, []
        reports = []
        for report, call in held:
            if call is not None:
                report["grant_consumed"] = call.grant_consumed
            reports.append(report)
        return reports

    def restore(self, context: RunContext, reports: list[dict[str, Any]]) -> None:
        """Puts back outcomes a request carried that never reached the server (they go first)."""
        if not reports:
            return
        with context.lock:
            context.unsent[:0] = [(report, None) for report in reports]

    def acknowledge(self, context: RunContext, reports: list[dict[str, Any]], results: list[dict[str, Any]]) -> None:
        """Reads what the server made of carried outcomes: an outcome already recorded is fine, others are logged."""
        for report, result in zip(reports, results, strict=False):
            error = result.get("error")
            if not isinstance(error, dict) or error.get("kind") == "conflict":
                continue  # recorded, or already recorded (e.g. by the gateway that ran the call)
            self.logger.warning(
                "callgate: outcome of call %s not recorded: %s", report.get("call_id"), error.get("message")
            )

    def record_each(self, client: CallgateClient, context: RunContext, reports: list[dict[str, Any]]) -> None:
        """
        Records outcomes one request each: the path for a batch the server refused as a whole
        (e.g. a result it cannot take, which is then recorded without its result).
        """
        run_id = context.run_id
        if run_id is None:
            return
        for report in reports:
            try:
                self._record_one(client, run_id, report)
            except ServerUnreachable:
                self.restore(context, [report])
            except CallgateError as error:
                self.logger.warning("callgate: outcome of call %s not recorded: %s", report["call_id"], error.message)

    def _record_one(self, client: CallgateClient, run_id: str, report: dict[str, Any]) -> None:
        try:
            client.record_outcome(run_id, report)
        except Conflict:
            pass  # already recorded (e.g. by the gateway that ran the call)
        except (RequestInvalid, ValueError, TypeError) as error:
            if "result" not in report:
                raise
            message = error.message if isinstance(error, CallgateError) else str(error)
            self.logger.warning(
                "callgate: outcome of call %s recorded without its result: %s", report["call_id"], message
            )
            client.record_outcome(run_id, {key: value for key, value in report.items() if key != "result"})

    def consume(self, context: RunContext, call: DecidedCall) -> None:
        """
        Queues the consumption of an allowed call's grant: the call runs in this process, so its
        grant is spent here, as the call starts (it can then never be honoured for another call,
        e.g. by the gateway). The call's outcome, queued after, reports whether it was consumed.
        """
        grant = call.grant
        if grant is None or call.grant_consumed or context.run_id is None:
            return
        client = self._client()
        run_id = context.run_id

        def consume() -> None:
            try:
                client.consume_grant(
                    grant.token,
                    run_id=run_id,
                    call_id=grant.call_id,
                    tool=grant.tool,
                    arguments_digest=grant.arguments_digest,
                )
                call.grant_consumed = True
            except CallgateError as error:
                self.logger.warning("callgate: the grant of call %s was not consumed: %s", call.call_id, error.message)

        context.pending.append(self.sender.submit(consume))

    def outcome(self, context: RunContext, report: dict[str, Any], call: DecidedCall | None = None) -> None:
        """
        Keeps an outcome report of ``context``'s run for its next decisions request or its end
        (dropped when the run never started).

        :param call: The decided call the report is about: its ``grant_consumed`` is read when the
            report is sent (after any queued consumption of its grant).
        """
        if context.run_id is None:
            return
        with context.lock:
            context.unsent.append((report, call))

    def _requeue(self, context: RunContext) -> list[Any]:
        with context.lock:
            tasks, context.retry = context.retry, []
        for task in tasks:
            context.pending.append(self.sender.submit(task))
        futures, context.pending = context.pending, []
        return futures

    def wait(self, context: RunContext) -> None:
        """Waits for ``context``'s queued records (sending again those the server missed)."""
        for future in self._requeue(context):
            try:
                future.result(FLUSH_TIMEOUT)
            except Exception as error:
                self.logger.debug("callgate: a queued record failed: %s", error)

    async def wait_async(self, context: RunContext) -> None:
        """Async twin of :meth:`wait`."""
        for future in self._requeue(context):
            try:
                await asyncio.wait_for(asyncio.wrap_future(future), FLUSH_TIMEOUT)
            except Exception as error:
                self.logger.debug("callgate: a queued record failed: %s", error)

    def withdraw(self, approval_id: str, reason: str) -> None:
        """Queues the withdrawal of a pending approval nobody waits for any more."""
        client = self._client()

        def withdraw() -> None:
            try:
                client.withdraw_approval(approval_id, reason=reason)
            except CallgateError as error:
                self.logger.debug("callgate: approval %s not withdrawn: %s", approval_id, error)

        self.sender.submit(withdraw)

    def server_back(self, context: RunContext) -> None:
        """
        Queues the outage record of ``context`` once the server answers again (fail mode open): its
        window spans the outage from the first request that failed until now, when the server
        answered again (not only until the last call that ran undecided).
        """
        if context.outage is None:
            return
        context.outage.to_ts = max(context.outage.to_ts, int(time.time() * 1000))
        client = self._client()
        context.pending.append(self.sender.submit(lambda: self._write_gap(client, context)))

    def _write_gap(self, client: CallgateClient, context: RunContext) -> None:
        outage = context.outage
        if outage is None or context.run_id is None:
            return
        context.outage = None
        reason = f"callgate server unreachable, fail mode open: {outage.reason}"
        try:
            client.record_gap(
                context.run_id, reason=reason, from_ts=outage.from_ts, to_ts=outage.to_ts, calls=outage.calls
            )
        except NotFound:
            # A server without a gap route: keep what can be kept, a message record of the outage.
            self.logger.warning("callgate: the server takes no gap records; the outage is recorded as a message")
            gap = {"reason": reason, "from_ts": outage.from_ts, "to_ts": outage.to_ts, "calls": outage.calls}
            client.record_message(context.run_id, "callgate-gap", {"gap": gap})
        except ServerUnreachable:
            context.outage = outage

    def end(
        self, context: RunContext, final: ChatMessage | None, status: str | None = None, *, keep_open: bool = False
    ) -> None:
        """
        Queues the end of a run: records the server missed, any outage record, the final message,
        then ``run-end`` (the server records ``decided-not-completed`` for calls that never
        completed). Safe from a weakref callback. A run ends once; later calls do nothing.

        :param status: ``completed``, ``failed`` or ``cancelled``; by default ``failed`` when the
            run stopped between a step's ``before_tool`` and ``after_tool``, else ``completed``.
        """
        with context.lock:
            if context.ended:
                return
            context.ended = True
        # keep_open: a call of the run waits for an approval; a later agent run resumes the run.
        end_status = status or ("failed" if context.phase == "tools" else "completed")
        content = message_content(final) if final is not None else None

        def end() -> None:
            try:
                client = self._client()
                with context.lock:
                    tasks, context.retry = context.retry, []
                for task in tasks:
                    task()
                run_id = context.run_id
                if run_id is None:
                    if context.outage is None and content is None:
                        return
                    run_id = self._start_run(client, context)
                if context.outage is not None:  # the server answers the run's end: the outage ends now
                    context.outage.to_ts = max(context.outage.to_ts, int(time.time() * 1000))
                    self._write_gap(client, context)
                if content is not None:
                    client.record_message(run_id, "assistant", content)
                reports = self.take(context)
                if keep_open:
                    # The run stays open for a later agent run; its outcomes are recorded now.
                    if reports:
                        self.record_each(client, context, reports)
                    return
                try:
                    answer = client.end_run(run_id, end_status, outcomes=reports)
                    results = answer.get("outcomes") if isinstance(answer, dict) else None
                    self.acknowledge(context, reports, results if isinstance(results, list) else [])
                except (RequestInvalid, ValueError, TypeError):
                    if not reports:
                        raise
                    self.record_each(client, context, reports)
                    client.end_run(run_id, end_status)
            except Conflict:
                pass  # ended already
            except CallgateError as error:
                self.logger.warning("callgate: run %s could not be ended: %s", context.run_id, error.message)
            finally:
                self._runs.forget(context)

        self.sender.submit(end)
