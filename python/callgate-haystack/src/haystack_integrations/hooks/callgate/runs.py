"""
What the hook keeps per agent run, beside Haystack's ``State`` and never inside it.

A Haystack agent run has one ``State`` object from its first step to its last, so the hook keys
its runs by that object (weakly: a run never keeps a ``State`` alive). When the ``State`` is
dropped — the agent run returned, or raised — a finalizer queues the end of the callgate run.
Nothing of this lives in ``state.data``, so agent outputs and snapshots carry no ids or grants.
"""

from __future__ import annotations

import contextvars
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from haystack.components.agents.state.state import State
from haystack.dataclasses import ChatMessage, ToolCall

from haystack_integrations.common.callgate.wire import Grant


@dataclass
class DecidedCall:
    """A call of the current step that the server decided and the hook let run."""

    call_id: str
    attempt: int
    tool: str
    #: The arguments decided (parsed, validated, scrubbed): what the call must run with.
    arguments: dict[str, Any]
    #: The ToolCall object left on the pending message; its result carries it as ``origin``.
    tool_call: ToolCall
    gateway: bool = False
    grant: Grant | None = None
    grant_consumed: bool = False


@dataclass
class Outage:
    """Calls that ran undecided while the server could not be reached (fail mode ``open``)."""

    from_ts: int
    to_ts: int
    calls: int = 0
    reason: str = ""


@dataclass
class RunContext:
    """The hook's side of one agent run."""

    parent_run_id: str | None = None
    run_id: str | None = None
    #: ``idle`` between steps, ``tools`` between a step's before_tool and its after_tool.
    phase: str = "idle"
    ended: bool = False
    #: The calls of the current step that run, with what they were decided as.
    step_calls: list[DecidedCall] = field(default_factory=list)
    #: ToolCall objects the hook refused this step (their error results are the hook's own).
    step_refused: list[ToolCall] = field(default_factory=list)
    #: The assistant message the hook left last at before_tool (identity marks the step).
    step_message: ChatMessage | None = None
    step_started: float = 0.0
    outage: Outage | None = None
    #: Records queued in the background for this run, not yet known to have been sent.
    pending: list[Future[Any]] = field(default_factory=list)
    #: Records that could not be sent because the server was unreachable; sent again later.
    retry: list[Callable[[], Any]] = field(default_factory=list)
    #: Outcomes not sent yet, in order, with the decided call each is about (its
    #: ``grant_consumed`` is read when the outcome is sent): the run's next decisions request or
    #: its end carries them. Not acknowledged by the server until then.
    unsent: list[tuple[dict[str, Any], DecidedCall | None]] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)
    #: Calls left to Haystack because the agent has no such tool, with the refusal the model reads.
    step_unknown: list[tuple[ToolCall, dict[str, Any]]] = field(default_factory=list)
    #: Approvals still pending for calls refused as ``approval-pending``: the run stays open for a resume.
    suspended: dict[str, str] = field(default_factory=dict)
    #: Approvals of an adopted run (resumed from an earlier process), by call id.
    resumable: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The agent run's ``hook_context`` (a dict the caller may hold), told the run id once started.
    hook_context: dict[str, Any] | None = field(default=None, repr=False)
    #: The agent run's ``State`` (weakly: its drop ends the run), for the values tools read from it.
    state_ref: Callable[[], Any] | None = field(default=None, repr=False)

    def note_outage(self, reason: str, calls: int) -> None:
        """Widens the outage window to now and counts ``calls`` undecided calls in it."""
        now = int(time.time() * 1000)
        if self.outage is None:
            self.outage = Outage(from_ts=now, to_ts=now, calls=calls, reason=reason)
        else:
            self.outage.to_ts = now
            self.outage.calls += calls
            self.outage.reason = reason or self.outage.reason


#: The key under which a run's id is written into the agent run's ``hook_context``.
RUN_ID_KEY = "callgate_run_id"

#: The run whose tools are running in this context: a sub-agent started by one of them (an
#: ``AgentTool``) records its run as a child of it.
ACTIVE_RUN: contextvars.ContextVar[RunContext | None] = contextvars.ContextVar("callgate_active_run", default=None)


class RunRegistry:
    """
    The open runs of one hook, keyed weakly by their ``State``.

    :param on_state_dropped: Called with a run's context when its ``State`` is garbage-collected
        (from a weakref callback: it must only queue work).
    """

    def __init__(self, on_state_dropped: Callable[[RunContext], None]) -> None:
        self._by_state: weakref.WeakKeyDictionary[State, RunContext] = weakref.WeakKeyDictionary()
        self._open: dict[int, RunContext] = {}
        self._lock = threading.Lock()
        self._on_state_dropped = on_state_dropped
        #: Ids of the runs started on the server, oldest first (the last 1,000).
        self.started_ids: deque[str] = deque(maxlen=1000)

    def started(self, context: RunContext, run_id: str) -> None:
        """Notes that ``context``'s run started on the server as ``run_id`` (also in its ``hook_context``)."""
        context.run_id = run_id
        with self._lock:
            self.started_ids.append(run_id)
        if context.hook_context is not None:
            context.hook_context[RUN_ID_KEY] = run_id

    def get(self, state: State) -> RunContext | None:
        """The run of ``state``, if the hook has seen it."""
        with self._lock:
            return self._by_state.get(state)

    def get_or_create(self, state: State) -> RunContext:
        """The run of ``state``, created (not yet started on the server) on first sight."""
        with self._lock:
            context = self._by_state.get(state)
            if context is not None:
                return context
            parent = ACTIVE_RUN.get()
            parent_id = parent.run_id if parent is not None and parent.phase == "tools" and not parent.ended else None
            hook_context = state.data.get("hook_context")
            context = RunContext(
                parent_run_id=parent_id, hook_context=hook_context if isinstance(hook_context, dict) else None
            )
            context.state_ref = weakref.ref(state)
            self._by_state[state] = context
            self._open[id(context)] = context
            finalizer = weakref.finalize(state, self._dropped, context)
            finalizer.atexit = False  # the hook ends open runs at exit itself, in order
            return context

    def _dropped(self, context: RunContext) -> None:
        self._on_state_dropped(context)

    def forget(self, context: RunContext) -> None:
        """Removes an ended run from the open runs."""
        with self._lock:
            self._open.pop(id(context), None)

    def open_runs(self) -> list[RunContext]:
        """Every run not yet ended."""
        with self._lock:
            return [context for context in self._open.values() if not context.ended]
