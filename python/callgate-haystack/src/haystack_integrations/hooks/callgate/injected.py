"""
The values Haystack adds to a call's arguments before its tool runs, so callgate records the
arguments that actually run beside the model's (docs/ledger.md, invariant 5).

Haystack's ``ToolInvoker`` sets, for each ``state_key → parameter`` of a tool's
``inputs_from_state`` the model did not fill, that parameter to the ``State`` value, and passes
the live ``State`` to every parameter annotated as ``State``. These are the call's ``injected``
values (sent with its decision; the gate writes an ``effective-arguments`` record and shows them
to the reviewer). A ``State`` parameter is sent as ``{"$callgate": "state"}`` (the object itself
is no JSON value); a value that is not JSON data, as ``{"$callgate": "not-json", "type": name}``.
The values are those of the ``State`` when the step is decided: a call of the same step that
writes the key runs first (Haystack orders reads after writes) and may change what runs.
"""

from __future__ import annotations

import contextlib
import math
import weakref
from typing import Any

from haystack.components.agents.state.state import State
from haystack.tools import Tool

__all__ = ["injected_values"]


def injected_values(tool: Tool | None, arguments: dict[str, Any], state: State | None) -> dict[str, Any]:
    """The values Haystack will inject into ``arguments`` for ``tool``, by parameter name (empty: none)."""
    if tool is None or state is None:
        return {}
    injected: dict[str, Any] = {}
    for state_key, parameter in (getattr(tool, "inputs_from_state", None) or {}).items():
        if parameter not in arguments and state.has(state_key):
            injected[parameter] = _json_data(state.get(state_key))
    for parameter in _state_parameters(tool):
        injected[parameter] = {"$callgate": "state"}
    return injected


#: The ``State`` parameters of each invocation target (a tool's function, or a ComponentTool's
#: component), read once: resolving a signature's type hints costs tens of µs, on every call.
_STATE_PARAMETERS: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()


def _invocation_target(tool: Tool) -> Any:
    """What Haystack reads a tool's parameters from (``_get_func_params``), or None."""
    component = getattr(tool, "_component", None)
    if component is not None:
        return component
    function = getattr(tool, "function", None)
    return function if function is not None else getattr(tool, "async_function", None)


def _state_parameters(tool: Tool) -> tuple[str, ...]:
    target = _invocation_target(tool)
    try:
        known = _STATE_PARAMETERS.get(target) if target is not None else None
    except TypeError:  # a target that cannot be a weak key: read it every time
        target = None
        known = None
    if known is not None:
        return known
    found = _read_state_parameters(tool)
    if target is not None:
        with contextlib.suppress(TypeError):
            _STATE_PARAMETERS[target] = found
    return found


def _read_state_parameters(tool: Tool) -> tuple[str, ...]:
    try:
        from haystack.components.agents.tool_calling import _get_func_params, _is_state_annotation
    except ImportError:  # another Haystack version: no State parameters known
        return ()
    try:
        return tuple(name for name, kind in _get_func_params(tool).items() if _is_state_annotation(kind))
    except Exception:
        return ()


def _json_data(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$callgate": "not-json", "type": "float"}
    if isinstance(value, dict):
        return {str(key): _json_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_data(item) for item in value]
    return {"$callgate": "not-json", "type": type(value).__name__}
