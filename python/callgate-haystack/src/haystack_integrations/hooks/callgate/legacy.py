"""
The deprecated entry point of :class:`~.hook.CallgateHook`: the gate object itself registered
under ``before_tool``, ``after_tool`` and ``after_run``. It finds its hook point from Haystack's
call stack (:func:`~.points.hook_point`), else infers it from the run; ``gate.hooks()`` (one
object per point) replaces it.
"""

from __future__ import annotations

import warnings
from typing import Any

from haystack.components.agents.state.state import State

from .points import hook_point, infer_point


class LegacyEntryPoint:
    """``run`` / ``run_async`` on the gate object itself (deprecated); mixed into ``CallgateHook``."""

    _runs: Any
    logger: Any
    _warned_deprecated: bool
    _warned_missing_after_tool: bool

    _run_point: Any
    _run_point_async: Any

    def run(self, state: State) -> None:
        """
        Deprecated: register :meth:`hooks` instead. Runs at the hook point read from Haystack's
        call stack (or inferred from the run), see the class docs.
        """
        self._deprecated()
        self._run_point(hook_point() or self._infer(state), state)

    async def run_async(self, state: State) -> None:
        """Deprecated async twin of :meth:`run`."""
        self._deprecated()
        await self._run_point_async(hook_point() or self._infer(state), state)

    def _deprecated(self) -> None:
        if not self._warned_deprecated:
            self._warned_deprecated = True
            warnings.warn(
                "registering a CallgateHook object itself under hook points is deprecated: use "
                "Agent(hooks=gate.hooks()) (one object per point, sharing the gate)",
                DeprecationWarning,
                stacklevel=3,
            )

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
