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
        self._kept_open = False
        self._finalizer = weakref.finalize(self, end, run_id)

    def keep_open(self) -> None:
        """A call of the run waits for an approval: the run is not ended with its agent run."""
        self._kept_open = True
        self._finalizer.detach()

    @property
    def open(self) -> bool:
        """False once the run was ended: an agent run given this ``hook_context`` then starts a new one."""
        return self._kept_open or self._finalizer.alive

    def end_with(self, state: Any) -> None:
        """
        Ends the run when ``state`` (the agent run's ``State``) is dropped, when the agent run is
        over; the run stays in its ``hook_context`` (its id readable), no longer :attr:`open`.
        """
        weakref.finalize(state, self._finalizer)

    def end(self) -> None:
        """Ends the run now (once; nothing when it is kept open or already ended)."""
        self._finalizer()

    def __repr__(self) -> str:
        return f"CallgateRun({self.run_id!r})"
