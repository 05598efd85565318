"""
Python writes the numbers and markers core writes, checked against core itself: floats by
ECMAScript's Number::toString (``common/callgate/ecmascript.py``) compared with Node's
``String(x)``, and ``callgate-normalize/1`` markers (``lossless_json.normalized_marker``) compared
with core's ``recordable()`` for the same value, in batches through the generated harness's check
service (one Node process for the module).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from check_service import Harness, tagged
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_integrations.common.callgate import lossless_json
from haystack_integrations.common.callgate.ecmascript import dumps, number_to_string


@pytest.fixture(scope="module")
def harness() -> Iterator[Harness]:
    service = Harness()
    try:
        yield service
    finally:
        service.close()


def _around(value: float) -> list[float]:
    return [math.nextafter(value, -math.inf), value, math.nextafter(value, math.inf)]


#: Where Number::toString changes form, and the ends of the doubles.
BOUNDARIES = [
    edge
    for value in (1e21, 1e-7, 1e-6, 1e16, 2.0**53, 1.0, 0.1, 5e-324, sys.float_info.min, sys.float_info.max)
    for edge in _around(value)
] + [0.0, -0.0, math.nan, math.inf, -math.inf, 123e18, 1e20, 9.5e-7, 0.000001, 1.5e300]

floats = st.one_of(
    st.floats(),  # subnormals, ±0, NaN, ±Infinity, huge and tiny
    st.sampled_from(BOUNDARIES),
    st.integers(-(2**80), 2**80).map(float),  # integers as floats, beyond 2^53 too
    st.builds(
        lambda digits, exponent: float(f"{digits}e{exponent}"), st.integers(-(10**17), 10**17), st.integers(-30, 30)
    ),
    st.builds(lambda digits, exponent: float(f"{digits}e{exponent}"), st.integers(1, 99), st.integers(-330, 310)),
)


@settings(max_examples=300, deadline=None)
@given(batch=st.lists(floats, min_size=1, max_size=64))
def test_floats_are_written_as_javascript_writes_them(harness: Harness, batch: list[float]) -> None:
    texts = [repr(value) if math.isfinite(value) else number_to_string(value) for value in batch]
    strings = harness.ask({"op": "numbers", "texts": texts})["strings"]
    assert [number_to_string(value) for value in batch] == strings, list(zip(texts, strings, strict=True))


def test_the_forms_of_number_to_string() -> None:
    cases = {1e-7: "1e-7", 1e-6: "0.000001", 1e16: "10000000000000000", 1e21: "1e+21", 1e20: "100000000000000000000"}
    cases |= {-0.0: "0", 2.0: "2", 123.456: "123.456", -1.5e-7: "-1.5e-7", 2.0**60: "1152921504606847000"}
    for value, text in cases.items():
        assert number_to_string(value) == text
    assert dumps({"a": [1.0, 1e-7, 2**64, "é"], 1.0: None}) == '{"a":[1,1e-7,18446744073709551616,"é"],"1":null}'
    assert dumps([math.nan], allow_nan=True) == "[NaN]"
    with pytest.raises(ValueError, match="no JSON form"):
        dumps([math.inf])
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular"):
        dumps(cycle)


#: Strings with lone surrogates among them.
texts = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0xFFFF, exclude_categories=()), max_size=8)
#: Results as tools return them: NaN, huge integers, boundary floats, lone surrogates, nesting.
results = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | floats | texts,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=16,
)


@settings(max_examples=300, deadline=None)
@given(batch=st.lists(results, min_size=1, max_size=16))
def test_markers_equal_cores_for_the_same_value(harness: Harness, batch: list[Any]) -> None:
    recorded = harness.ask({"op": "normalize", "values": [tagged(value) for value in batch]})["recorded"]
    for value, core in zip(batch, recorded, strict=True):
        sent = json.loads(lossless_json.encode({"result": value}))["result"]
        if core["reasons"]:
            # Byte length and SHA-256 of the raw JSON text, and the reasons, as core makes them.
            assert lossless_json.normalized_marker(value) == core["value"], value
        if "non-finite-number" in core["reasons"]:
            assert sent == core["value"], value  # the client sends core's marker
        else:
            # The value itself travels (the server applies the rule to big integers and lone
            # surrogates): the same JavaScript value, whichever way Python reads the digits back.
            assert dumps(sent, ensure_ascii=True) == dumps(value, ensure_ascii=True), value
