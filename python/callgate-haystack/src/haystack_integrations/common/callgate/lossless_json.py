"""
The JSON the client writes to and reads from a callgate server, losslessly (RFC 8259 text, UTF-8).

The digits the client sent are the digits the gate sees:

- **Integers** of any size are written with all their digits (Python's ``int`` is exact); the
  server's lossless parser keeps them, and refuses or normalises one beyond ±(2^53−1) itself.
- **Floats** are written as Python's shortest round-trip repr, which is what JavaScript reads back.
- **Lone surrogates** in strings (``"\\ud800"``) are written as ``\\uXXXX`` escapes, so the text is
  valid UTF-8 and the server sees the surrogate and applies its rule (refused in tool arguments,
  ``callgate-normalize/1`` in results and messages). Before, the client failed to encode the body.
- **NaN / Infinity** have no JSON form (RFC 8259 §6), so a value holding one is never sent as is:

  - tool-call ``arguments`` holding one are sent as the model's JSON text, with the bare tokens,
    which the gate refuses (``tool-args-invalid``, naming the value as sent);
  - any other value holding one (a tool result, message content) is replaced by the
    ``callgate-normalize/1`` marker the server would commit in its place (docs/ledger.md,
    "Normalisation"): ``{"$callgate": "normalized", "rule": "callgate-normalize/1", "reasons":
    [...], "bytes": n, "sha256": "sha256:<hex>"}`` over the value's raw JSON text (NaN/Infinity
    as tokens, integers with their digits, lone surrogates as U+FFFD). Before, the client dropped
    the result and recorded the outcome without it.

Reading, :func:`decode` refuses what the server never writes and a lossy reader would hide: a
duplicate key in an object (``ValueError`` naming it), the ``NaN`` / ``Infinity`` tokens, and a
number too large for a float (``1e400``). Integers are read exactly.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

__all__ = ["decode", "encode", "normalized_marker"]

#: The rule this module applies for values with no JSON form (docs/ledger.md, "Normalisation").
NORMALIZE_RULE = "callgate-normalize/1"
_SAFE_INTEGER = 2**53 - 1


def encode(body: Any) -> bytes:
    """
    ``body`` as the UTF-8 JSON text of a request (compact separators).

    :raises TypeError: for a value that is not JSON data (a set, an object), as ``json.dumps`` does.
    """
    try:
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # NaN or Infinity somewhere in the body
        return encode(_without_non_finite(body))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, so the server sees it
        return json.dumps(body, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")


def decode(content: bytes | str) -> Any:
    """
    A server's answer read losslessly.

    :raises ValueError: on invalid JSON, a duplicate key (naming it), ``NaN`` / ``Infinity``, or a
        float out of range.
    """
    return json.loads(
        content, object_pairs_hook=_refuse_duplicates, parse_constant=_refuse_constant, parse_float=_finite
    )


def normalized_marker(value: Any) -> dict[str, Any]:
    """The ``callgate-normalize/1`` marker of ``value`` (a value with no canonical JSON form)."""
    reasons: set[str] = set()
    text = _raw_text(value, reasons)
    raw = text.encode("utf-8")
    return {
        "$callgate": "normalized",
        "rule": NORMALIZE_RULE,
        "reasons": sorted(reasons) or ["not-json"],
        "bytes": len(raw),
        "sha256": "sha256:" + hashlib.sha256(raw).hexdigest(),
    }


def _holds_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_holds_non_finite(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds_non_finite(item) for item in value)
    return False


def _without_non_finite(value: Any, key: str | None = None) -> Any:
    """``value`` with each part holding NaN/Infinity replaced as the module docs say."""
    if not _holds_non_finite(value):
        return value
    if key == "arguments":
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    if key in ("result", "content") or not isinstance(value, (dict, list, tuple)):
        return normalized_marker(value)
    if isinstance(value, dict):
        return {name: _without_non_finite(item, name) for name, item in value.items()}
    return [_without_non_finite(item) for item in value]


def _raw_text(value: Any, reasons: set[str]) -> str:
    """The raw JSON text of ``value``: NaN/Infinity as tokens, integers with every digit, lone surrogates as U+FFFD."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        if abs(value) > _SAFE_INTEGER:
            reasons.add("unsafe-integer")
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            reasons.add("non-finite-number")
            return "NaN"
        if math.isinf(value):
            reasons.add("non-finite-number")
            return "Infinity" if value > 0 else "-Infinity"
        return json.dumps(value)
    if isinstance(value, str):
        cleaned = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        if cleaned != value:
            reasons.add("lone-surrogate")
        return json.dumps(cleaned, ensure_ascii=False)
    if isinstance(value, dict):
        return (
            "{"
            + ",".join(f"{_raw_text(str(key), reasons)}:{_raw_text(item, reasons)}" for key, item in value.items())
            + "}"
        )
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_raw_text(item, reasons) for item in value) + "]"
    reasons.add("not-json")
    return json.dumps(repr(value))


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r} in the server's answer")
        result[key] = value
    return result


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON (RFC 8259 §6) in the server's answer")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {text} in the server's answer is out of range for a float")
    return number
