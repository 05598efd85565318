"""
One object per hook point, sharing one :class:`~.hook.CallgateHook`, and how the hook serializes.

Haystack calls a hook with the ``State`` only, and its deserializer builds one instance per entry
of ``hooks={...}``. So each hook point gets its own small object naming its point
(:class:`CallgateHookPoint`), and every copy of one gate's configuration, once deserialized,
resolves to one shared :class:`~.hook.CallgateHook` (:func:`shared_gate`): the three entries of a
loaded agent still record one run per agent run.

Usage::

    gate = CallgateHook()
    agent = Agent(chat_generator=generator, tools=tools, hooks=gate.hooks())
    # {"before_tool": [gate.point("before_tool")], "after_tool": [...], "after_run": [...]}
    Agent.from_dict(agent.to_dict())   # one CallgateHook again behind the three points
"""

from __future__ import annotations

import json
import threading
import weakref
from typing import TYPE_CHECKING, Any

from haystack.components.agents.state.state import State
from haystack.core.errors import DeserializationError, SerializationError
from haystack.core.serialization import default_from_dict, default_to_dict, generate_qualified_class_name
from haystack.utils import deserialize_secrets_inplace

from haystack_integrations.common.callgate.wire import API_KEY_ENV_VAR

if TYPE_CHECKING:
    from .hook import CallgateHook

#: The hook points a gate serves, in the order ``CallgateHook.hooks()`` lists them.
GATE_POINTS = ("before_tool", "after_tool", "after_run")

_shared: weakref.WeakValueDictionary[str, CallgateHook] = weakref.WeakValueDictionary()
_shared_lock = threading.Lock()


def gate_config(gate: CallgateHook) -> dict[str, Any]:
    """
    The serialized form of a gate: its configuration and its API key as a ``Secret`` (no
    connection, no run). ``{"type": "...CallgateHook", "init_parameters": {...}}``.

    :raises ValueError: For a token ``Secret`` (Haystack never serializes a token).
    """
    return default_to_dict(
        gate,
        url=gate.url,
        api_key=gate.api_key.to_dict() if gate.api_key is not None else None,
        fail_mode=gate.fail_mode,
        framework=gate.framework,
        principal=gate.principal,
        labels=gate.labels or None,
        max_wait=gate.max_wait,
        timeout=gate.timeout,
    )


def shared_gate(cls: type[CallgateHook], data: dict[str, Any]) -> CallgateHook:
    """
    The gate of a serialized configuration: the one already built from an equal configuration in
    this process while it is alive, else a new one. Connections open at ``warm_up`` or first use.

    :raises DeserializationError: When ``data`` has no ``init_parameters``.
    """
    parameters = data.get("init_parameters")
    if not isinstance(parameters, dict):
        raise DeserializationError(f"a serialized CallgateHook needs 'init_parameters', got {data!r}")
    key = json.dumps(parameters, sort_keys=True, default=str)
    with _shared_lock:
        gate = _shared.get(key)
        if gate is None:
            copy = {"type": data.get("type", generate_qualified_class_name(cls)), "init_parameters": dict(parameters)}
            deserialize_secrets_inplace(copy["init_parameters"], keys=["api_key"])
            gate = default_from_dict(cls, copy)
            _shared[key] = gate
        return gate


class CallgateHookPoint:
    """
    One hook point of a :class:`~.hook.CallgateHook`: ``before_tool``, ``after_tool`` or
    ``after_run``. Get them from :meth:`CallgateHook.hooks` (or :meth:`CallgateHook.point`); the
    objects of one gate share its runs.

    Serializes as its point and its gate's configuration; deserialized entries of one gate share
    one gate again (see :func:`shared_gate`). ``warm_up`` / ``close`` reach the shared gate
    (idempotent, so Haystack calling them once per entry is fine).

    :param point: The hook point.
    :param gate: The gate it belongs to.
    :raises ValueError: For a point other than ``before_tool``, ``after_tool``, ``after_run``.
    """

    def __init__(self, point: str, gate: CallgateHook) -> None:
        if point not in GATE_POINTS:
            raise ValueError(f"a CallgateHook serves {', '.join(GATE_POINTS)}, not {point!r}")
        self.point = point
        self.gate = gate
        #: Haystack refuses the object under any other hook point, at Agent construction.
        self.allowed_hook_points = (point,)

    def run(self, state: State) -> None:
        """Runs the gate's work for this point on the Agent's live ``State``."""
        self.gate._run_point(self.point, state)

    async def run_async(self, state: State) -> None:
        """Async twin of :meth:`run`."""
        await self.gate._run_point_async(self.point, state)

    def warm_up(self) -> None:
        """Prepares the gate's client (see :meth:`CallgateHook.warm_up`)."""
        self.gate.warm_up()

    async def warm_up_async(self) -> None:
        """Async twin of :meth:`warm_up`."""
        await self.gate.warm_up_async()

    def close(self) -> None:
        """Ends the gate's open runs and closes its connections (see :meth:`CallgateHook.close`)."""
        self.gate.close()

    async def close_async(self) -> None:
        """Async twin of :meth:`close`."""
        await self.gate.close_async()

    def to_dict(self) -> dict[str, Any]:
        """``{"type", "init_parameters": {"point", "gate": <the gate's configuration>}}``."""
        return default_to_dict(self, point=self.point, gate=self.gate.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallgateHookPoint:
        """
        Rebuilds the point on the shared gate of its configuration.

        :raises DeserializationError: When the point or the gate is missing.
        """
        from .hook import CallgateHook

        parameters = data.get("init_parameters") or {}
        point, gate = parameters.get("point"), parameters.get("gate")
        if not isinstance(point, str) or not isinstance(gate, dict):
            raise DeserializationError(f"a serialized CallgateHookPoint needs 'point' and 'gate', got {parameters!r}")
        return CallgateHook.from_dict(gate).point(point)

    def __repr__(self) -> str:
        return f"CallgateHookPoint({self.point!r})"


class GatePoints:
    """Serialization and the hook point objects of :class:`~.hook.CallgateHook` (mixed into it)."""

    _points: dict[str, CallgateHookPoint]
    _points_lock: threading.Lock

    def to_dict(self) -> dict[str, Any]:
        """
        The hook's configuration (no connection, no run), the API key as its ``Secret``.

        :raises SerializationError: When the API key is a token ``Secret`` (use ``Secret.from_env_var``).
        """
        try:
            return gate_config(self)
        except ValueError as error:
            raise SerializationError(
                f"CallgateHook cannot be serialized with a token API key ({error}): use "
                f"Secret.from_env_var({API_KEY_ENV_VAR!r}) or another environment variable"
            ) from error

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """
        The gate of a serialized configuration, shared by every entry built from an equal one.

        :raises DeserializationError: When ``data`` is not a serialized ``CallgateHook``.
        """
        return shared_gate(cls, data)

    def point(self, point: str) -> CallgateHookPoint:
        """
        The hook object of one point (``before_tool``, ``after_tool`` or ``after_run``); the same
        object each time.

        :raises ValueError: For any other point.
        """
        with self._points_lock:
            found = self._points.get(point)
            if found is None:
                found = self._points[point] = CallgateHookPoint(point, self)
            return found

    def hooks(self) -> dict[str, list[Any]]:
        """
        ``{"before_tool": [...], "after_tool": [...], "after_run": [...]}`` for ``Agent(hooks=...)``:
        one object per point, sharing this gate. Add other hooks to the lists before these
        (callgate's should run last), e.g. ``hooks["after_tool"].append(CallgateRefusalHook())``.
        """
        return {point: [self.point(point)] for point in GATE_POINTS}
