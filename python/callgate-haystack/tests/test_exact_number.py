"""
Python tells which number tokens a double holds exactly as core does: ``ecmascript.number_held_exactly``
compared with core's ``numberHeldExactly`` for the same texts, in batches through the generated
harness's check service, and with a reference written apart (the exact rational value of the token
against that of the float, by ``fractions.Fraction``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from fractions import Fraction

import pytest
from check_service import Harness
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_integrations.common.callgate import lossless_json
from haystack_integrations.common.callgate.ecmascript import number_held_exactly, number_to_string


@pytest.fixture(scope="module")
def harness() -> Iterator[Harness]:
    service = Harness()
    try:
        yield service
    finally:
        service.close()


def _reference(text: str) -> bool:
    """Held exactly: the token's value equals that of the shortest text of its float (Fraction)."""
    number = float(text)
    if not math.isfinite(number):
        return False
    return Fraction(text) == Fraction(number_to_string(number))


digits = st.text(alphabet="0123456789", min_size=1, max_size=40)
whole = st.one_of(st.just("0"), st.builds(lambda first, rest: first + rest, st.sampled_from("123456789"), digits))
exponent = st.one_of(
    st.just(""),
    st.builds(
        lambda letter, sign, power: f"{letter}{sign}{power}",
        st.sampled_from("eE"),
        st.sampled_from(["", "+", "-"]),
        st.integers(0, 400),
    ),
)
#: Decimal tokens: signs, leading and trailing zeros, fractions of up to 40 digits, exponents.
random_tokens = st.builds(
    lambda sign, integer, fraction, power: f"{sign}{integer}{'' if fraction is None else '.' + fraction}{power}",
    st.sampled_from(["", "-"]),
    whole,
    st.none() | digits,
    exponent,
)


def _respelled(number: float, change: str, extra: str) -> str:
    text = number_to_string(number)
    mantissa, _, power = text.partition("e")
    with_dot = mantissa if "." in mantissa else mantissa + "."
    tail = f"e{power}" if power else ""
    if change == "zeros":
        return f"{with_dot}000{tail}"
    if change == "digit":
        return f"{with_dot}{'0' * len(extra)}1{tail}"
    if change == "digits":
        return f"{with_dot}{extra}{tail}"
    return text


#: A double's own text, respelled or with digits added: near 2^53, subnormals, anything finite.
near_doubles = st.builds(
    _respelled,
    st.one_of(
        st.floats(allow_nan=False, allow_infinity=False),
        st.floats(min_value=0, max_value=2.2250738585072014e-308),
        st.integers(-1000, 1000).map(lambda step: 2.0**53 + step + 0.5),
    ),
    st.sampled_from(["as-is", "zeros", "digit", "digits"]),
    digits,
)
#: 17 to 40 significant digits anywhere in a double's range and beyond.
long_tokens = st.builds(
    lambda sign, body, power: f"{sign}0.{body}e{power}",
    st.sampled_from(["", "-"]),
    st.text(alphabet="0123456789", min_size=17, max_size=40),
    st.integers(-360, 330),
)
tokens = st.one_of(random_tokens, near_doubles, long_tokens)


@settings(max_examples=300, deadline=None)
@given(batch=st.lists(tokens, min_size=1, max_size=64))
def test_held_exactly_as_core_says(harness: Harness, batch: list[str]) -> None:
    held = harness.ask({"op": "exact", "texts": batch})["held"]
    assert [number_held_exactly(text) for text in batch] == held, list(zip(batch, held, strict=True))


@settings(max_examples=1000, deadline=None)
@given(text=tokens)
def test_held_exactly_as_the_exact_values_say(text: str) -> None:
    assert number_held_exactly(text) == _reference(text)


@pytest.mark.parametrize(
    ("text", "held"),
    [
        ("1.10", True),
        ("1E2", True),
        ("-0.0", True),
        ("5e-324", True),
        ("1000.00000000000001", False),
        ("1e-400", False),
        ("1e400", False),
        ("0.1000000000000000000001", False),
        ("9007199254740993", False),
    ],
)
def test_the_examples(text: str, held: bool) -> None:
    assert number_held_exactly(text) is held


@settings(max_examples=200, deadline=None)
@given(text=tokens)
def test_an_answer_holding_a_number_a_float_rounds_is_refused(text: str) -> None:
    body = f'{{"n":{text}}}'.encode()
    if "." not in text and "e" not in text.lower():
        assert lossless_json.decode(body) == {"n": int(text)}  # an integer: read exactly
    elif number_held_exactly(text):
        assert lossless_json.decode(body) == {"n": float(text)}
    else:
        with pytest.raises(ValueError, match=re.escape(text)):
            lossless_json.decode(body)
