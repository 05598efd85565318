"""
JSON text with numbers written as JavaScript writes them, so what Python hashes or compares is
byte for byte what callgate's core (TypeScript) computes for the same value.

Python writes a float as ``repr`` does (``1e-07``, ``1e+16``, ``1.0``); JavaScript writes it by
ECMAScript's Number::toString (ECMA-262 §6.1.6.1.20: ``1e-7``, ``10000000000000000``, ``1``), the
rule RFC 8785 §3.2.2.3 (JSON Canonicalization Scheme) also uses. :func:`number_to_string` is that
rule for Python floats, and :func:`dumps` writes JSON text with it. The two agree on the digits:
both write the shortest digit string that reads back as the same double, nearest to it when
several are as short; only where the decimal point goes and how the exponent is spelled differ.

Usage::

    from haystack_integrations.common.callgate.ecmascript import dumps, number_to_string

    assert number_to_string(1e-7) == "1e-7" and number_to_string(1e16) == "10000000000000000"
    assert dumps({"ratio": 1e21, "whole": 2.0}) == '{"ratio":1e+21,"whole":2}'
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["dumps", "number_held_exactly", "number_to_string"]


def number_to_string(value: float) -> str:
    """
    ``value`` as ECMAScript's ``String(value)`` writes it (Number::toString, radix 10).

    ``NaN``, ``Infinity`` and ``-Infinity`` for the non-finite values (no JSON form: RFC 8259 §6),
    ``0`` for both zeros, digits without an exponent from 1e-6 up to (not including) 1e21, and
    ``d.ddde±x`` outside that range.

    :param value: A ``float`` (an ``int`` is written as the float it converts to).
    :returns: The text, ASCII.
    :raises OverflowError: For an ``int`` too large for a float.
    """
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"  # -0 too: Number::toString step 2
    if value < 0:
        return "-" + number_to_string(-value)
    # repr gives the shortest round-trip digits (the k digits of s, ECMA-262 step 5); only their
    # placement differs. value = 0.d1…dk × 10^n, as the standard counts n.
    _, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)  # finite
    n = exponent + len(digit_tuple)  # Decimal keeps no leading zero of a non-zero value
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    e = n - 1
    sign = "+" if e >= 0 else "-"
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{sign}{abs(e)}"


def number_held_exactly(text: str) -> bool:
    """
    Whether the JSON number token ``text`` is held exactly by the double it reads as: its decimal
    value equals that of the double's Number::toString text (:func:`number_to_string`, the
    RFC 8785 form), compared as exact decimals, never through floats (docs/ledger.md, invariant 4).
    Core's ``numberHeldExactly`` (TypeScript) is the same rule.

    ``1.10``, ``1.0``, ``1E2``, ``0.1`` and ``-0.0`` are held (the same number spelled another way);
    ``1000.00000000000001`` (reads as 1000), ``1e-400`` (underflows to 0), ``1e400`` (out of range)
    and ``9007199254740993`` are not.

    :param text: A JSON number token (RFC 8259 §6); not checked for the grammar.
    :returns: True when the double holds the value exactly.
    """
    if len(text) <= 15 and "e" not in text and "E" not in text:
        return True  # 15 digits at most and no exponent: always held (DBL_DIG), as core's fast path
    number = float(text)
    if not math.isfinite(number):
        return False
    mantissa = text.lower().partition("e")[0]
    if not mantissa.strip("-+.0"):
        return True  # zero, whatever its sign and exponent: the double is ±0
    try:
        # Decimal reads both texts exactly and compares their values exactly, whatever the context.
        return Decimal(text) == Decimal(number_to_string(number))
    except InvalidOperation:  # an exponent beyond Decimal's: no double's text has one
        return False


def dumps(
    value: Any,
    *,
    ensure_ascii: bool = False,
    allow_nan: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """
    Compact JSON text of ``value`` (``,`` and ``:``, keys in their order) whose floats are written
    by :func:`number_to_string`; everything else as ``json.dumps`` writes it.

    :param value: ``dict`` (keys ``str``, or ``int``/``float``/``bool``/``None`` written as
        ``json.dumps`` converts them, floats by the ECMAScript rule), ``list``/``tuple``, ``str``,
        ``int`` (every digit), ``float``, ``bool``, ``None``.
    :param ensure_ascii: Escape non-ASCII characters (and lone surrogates) as ``\\uXXXX``.
    :param allow_nan: Write ``NaN`` / ``Infinity`` / ``-Infinity`` as those tokens (not JSON) instead
        of refusing them.
    :param default: Called with a value of any other type; its return value is written instead.
    :raises ValueError: For ``NaN`` / ``Infinity`` without ``allow_nan``, or a circular reference.
    :raises TypeError: For a value of another type without ``default``, or a key of another type.
    """
    parts: list[str] = []
    _write(value, parts, ensure_ascii, allow_nan, default, set())
    return "".join(parts)


def _write(
    value: Any,
    parts: list[str],
    ensure_ascii: bool,
    allow_nan: bool,
    default: Callable[[Any], Any] | None,
    open_containers: set[int],
) -> None:
    if value is None or isinstance(value, (bool, int, str)):
        parts.append(json.dumps(value, ensure_ascii=ensure_ascii))
    elif isinstance(value, float):
        if not math.isfinite(value) and not allow_nan:
            raise ValueError(f"{value!r} has no JSON form (RFC 8259 §6)")
        parts.append(number_to_string(value))
    elif isinstance(value, (dict, list, tuple)):
        if id(value) in open_containers:
            raise ValueError("Circular reference detected")
        open_containers.add(id(value))
        if isinstance(value, dict):
            parts.append("{")
            for position, (key, item) in enumerate(value.items()):
                if position:
                    parts.append(",")
                parts.append(json.dumps(key_text(key), ensure_ascii=ensure_ascii))
                parts.append(":")
                _write(item, parts, ensure_ascii, allow_nan, default, open_containers)
            parts.append("}")
        else:
            parts.append("[")
            for position, item in enumerate(value):
                if position:
                    parts.append(",")
                _write(item, parts, ensure_ascii, allow_nan, default, open_containers)
            parts.append("]")
        open_containers.discard(id(value))
    elif default is not None:
        _write(default(value), parts, ensure_ascii, allow_nan, default, open_containers)
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def key_text(key: Any, *, lenient: bool = False) -> str:
    """
    A dict key as the JavaScript object key it becomes: a string as is, a float by
    Number::toString, an int, bool or None as JSON writes it.

    :param lenient: any other key becomes ``str(key)`` (for markers over values that are not
        JSON) instead of raising.
    :raises TypeError: for any other key, as :func:`json.dumps` does, unless ``lenient``.
    """
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, float):
        return number_to_string(key)
    if isinstance(key, int) or lenient:
        return str(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
