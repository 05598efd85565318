"""
The client's JSON (``common/callgate/lossless_json.py``): the digits the client sent are the
digits the gate sees, a body always encodes (lone surrogates escaped, NaN/Infinity handled by the
documented rule), and answers with duplicate keys or non-JSON tokens are refused.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from haystack_integrations.common.callgate import lossless_json
from haystack_integrations.common.callgate.ecmascript import number_to_string

#: Strings with lone surrogates among them (Python strs can hold them; JSON texts escape them).
texts = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0xFFFF, exclude_categories=()), max_size=12)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=12,
)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite_equal(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if _number(a) and _number(b) and isinstance(b, float):
        # One JSON number, the double JavaScript reads: a float goes as JavaScript writes it (1.0 as 1).
        return float(a) == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_finite_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_finite_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@given(values)
def test_every_body_encodes_as_utf8_json_and_reads_back_as_sent_when_it_has_a_json_form(value: Any) -> None:
    body = {"call_id": "c1", "result": value}
    raw = lossless_json.encode(body)
    raw.decode("utf-8")  # valid UTF-8: a lone surrogate travels as its \uXXXX escape
    read = json.loads(raw)
    if not _holds_non_finite(value):
        assert _finite_equal(read["result"], value)  # big integers with every digit, surrogates kept
    else:
        assert read["result"]["$callgate"] == "normalized"


def _holds_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_holds_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_non_finite(v) for v in value)
    return False


def test_a_big_integer_keeps_its_digits() -> None:
    assert lossless_json.encode({"arguments": {"n": 2**64 + 1}}) == b'{"arguments":{"n":18446744073709551617}}'


def test_arguments_holding_nan_go_as_the_model_text_for_the_gate_to_refuse() -> None:
    body = {"calls": [{"id": "c1", "tool": "pay", "arguments": {"amount": float("nan")}}]}
    sent = json.loads(lossless_json.encode(body))
    assert sent["calls"][0]["arguments"] == '{"amount":NaN}'


def test_a_result_holding_nan_is_the_marker_the_server_commits() -> None:
    # The marker core's recordable() gives for the same value (callgate-normalize/1).
    value = {"score": float("nan"), "n": 12345678901234567890, "s": "bad \udc00", "f": 0.1, "l": [math.inf, -math.inf]}
    sent = json.loads(lossless_json.encode({"result": value}))
    assert sent["result"] == {
        "$callgate": "normalized",
        "rule": "callgate-normalize/1",
        "reasons": ["lone-surrogate", "non-finite-number", "unsafe-integer"],
        "bytes": 85,
        "sha256": "sha256:cf426caff0b931502ec7c60252855007e88708270492ee624dea0f4286b3610f",
    }


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (b'{"a":1,"a":2}', "duplicate key 'a'"),
        (b'{"a":NaN}', "NaN is not JSON"),
        (b'{"a":-Infinity}', "-Infinity is not JSON"),
        (b'{"a":1e400}', "out of range"),
        (b'{"a":1000.00000000000001}', "1000.00000000000001 in the server's answer has more digits"),
        (b'{"a":1e-400}', "1e-400 in the server's answer has more digits"),
    ],
)
def test_answers_a_lossy_reader_would_hide_are_refused(text: bytes, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        lossless_json.decode(text)


def test_an_answer_reads_big_integers_exactly() -> None:
    assert lossless_json.decode(b'{"n":9007199254740993}') == {"n": 9007199254740993}


#: Floats anywhere, integer-valued ones beyond 2^53 among them (1e16, 2^60, 1e21 and up).
floats_beyond = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-(2**80), 2**80).map(float))
bodies_with_floats = st.recursive(
    floats_beyond | texts,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=12,
)


@given(bodies_with_floats)
def test_a_float_the_server_keeps_as_spelled_is_written_as_javascript_writes_it(value: Any) -> None:
    # The server keeps an integer beyond ±(2^53−1) with the digits as sent, and a marker hashes
    # them: 1e16 must go as 10000000000000000, as core writes that number, not as 1e+16.
    tokens: list[str] = []

    def keep(token: str) -> float:
        tokens.append(token)
        return float(token)

    json.loads(lossless_json.encode({"result": value}), parse_float=keep)
    for token in tokens:
        number = float(token)
        if number.is_integer() and abs(number) > 2**53 - 1:
            assert token == number_to_string(number)
