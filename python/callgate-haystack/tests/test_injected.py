"""
The ``State`` parameters a tool receives from Haystack, read once per tool function and then
remembered: whatever the signature, the remembered answer is the one Haystack's own reading gives,
for each tool on its own, however often it is asked.
"""

from __future__ import annotations

from typing import Any

from haystack.components.agents.state.state import State
from haystack.components.agents.tool_calling import _get_func_params, _is_state_annotation
from haystack.tools import Tool
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_integrations.hooks.callgate.injected import injected_values

NAMES = st.lists(st.from_regex(r"p_[a-z0-9_]{0,6}", fullmatch=True), min_size=1, max_size=5, unique=True)


def _function(parameters: list[tuple[str, bool]]) -> Any:
    """A function with these parameters, each annotated ``State`` (True) or ``str``."""
    text = ", ".join(f"{name}: {'State' if is_state else 'str'}" for name, is_state in parameters)
    scope: dict[str, Any] = {"State": State}
    exec(f"def tool_function({text}) -> str:\n    return 'ok'\n", scope)
    return scope["tool_function"]


def _tool(function: Any) -> Tool:
    schema = {"type": "object", "properties": {}}
    return Tool(name="t", description="a tool", parameters=schema, function=function)


@settings(max_examples=60, deadline=None)
@given(
    NAMES.flatmap(
        lambda names: st.tuples(st.just(names), st.lists(st.booleans(), min_size=len(names), max_size=len(names)))
    )
)
def test_remembered_state_parameters_are_haystacks_own(drawn: tuple[list[str], list[bool]]) -> None:
    names, states = drawn
    tool = _tool(_function(list(zip(names, states, strict=True))))
    expected = {
        name: {"$callgate": "state"} for name, kind in _get_func_params(tool).items() if _is_state_annotation(kind)
    }
    assert set(expected) == {name for name, is_state in zip(names, states, strict=True) if is_state}
    state = State(schema={})
    for _ in range(3):  # read, then remembered
        assert injected_values(tool, {}, state) == expected
    # Another tool with another signature is read on its own.
    other = _tool(_function([(name, not is_state) for name, is_state in zip(names, states, strict=True)]))
    assert set(injected_values(other, {}, state)) == set(names) - set(expected)
