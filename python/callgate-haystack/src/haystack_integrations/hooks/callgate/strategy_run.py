"""The callgate run a :class:`~.confirmation.CallgateConfirmationStrategy` starts for an agent run, and its end."""

from __future__ import annotations

import weakref
from typing import Any

#: The key under which the strategy keeps its run in the Agent's ``hook_context``.
RUN_CONTEXT_KEY = "callgate_run"


class _StrategyRun:
    """
    The callgate run of one agent run, kept in its ``hook_context``: ended once, when the agent
    run's ``State`` is dropped (:meth:`end_with`, as :class:`CallgateHook` ends its runs), when that
    ``hook_context`` is dropped, or when the strategy closes — unless a call waits for an approval.
    """

    def __init__(self, run_id: str, end: Any) -> None:
        self.run_id = run_id
        self._finalizer = weakref.finalize(self, end, run_id)

    def keep_open(self) -> None:
        """A call of the run waits for an approval: the run is not ended with its agent run."""
        self._finalizer.detach()

    def end_with(self, state: Any, context: dict[str, Any]) -> None:
        """
        Ends the run when ``state`` (the agent run's ``State``) is dropped, when the agent run is
        over, and takes it out of ``context`` (its ``hook_context``): an agent run given the same
        ``hook_context`` later decides into a new run.
        """
        weakref.finalize(state, self._end_in, context)

    def _end_in(self, context: dict[str, Any]) -> None:
        if not self._finalizer.alive:
            return  # kept open (a call waits for an approval) or already ended
        if context.get(RUN_CONTEXT_KEY) is self:
            context.pop(RUN_CONTEXT_KEY, None)
        self._finalizer()

    def end(self) -> None:
        """Ends the run now (once; nothing when it is kept open or already ended)."""
        self._finalizer()

    def __repr__(self) -> str:
        return f"CallgateRun({self.run_id!r})"
