"""
The JSON the client writes to and reads from a callgate server, losslessly (RFC 8259 text, UTF-8).

The digits the client sent are the digits the gate sees:

- **Integers** of any size are written with all their digits (Python's ``int`` is exact); the
  server's lossless parser keeps them, and refuses or normalises one beyond ±(2^53−1) itself.
- **Floats** are read back by JavaScript as the same double whichever way they are spelled, but
  a float the server keeps as written (an integer beyond ±(2^53−1) such as ``1e16``, whose digits
  a ``callgate-normalize/1`` marker hashes) is written as JavaScript writes it
  (:func:`.ecmascript.number_to_string`: ``10000000000000000``, not ``1e+16``), so the server's
  marker is the one core makes for the same value.
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
    as tokens, integers with their digits, floats as JavaScript writes them, lone surrogates as
    U+FFFD): byte for byte the marker core's ``recordable()`` makes for the same value, which
    the server recognises and records as normalised (``result_normalized`` /
    ``content_normalized`` with the marker's reasons).

Reading, :func:`decode` refuses what the server never writes and a lossy reader would hide: a
duplicate key in an object (``ValueError`` naming it), the ``NaN`` / ``Infinity`` tokens, a
number too large for a float (``1e400``) and a decimal whose digits a float does not hold
exactly (``1000.00000000000001``, ``1e-400``: :func:`.ecmascript.number_held_exactly`, the rule
the server applies to what it reads). Integers are read exactly.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from .ecmascript import dumps as ecmascript_dumps
from .ecmascript import key_text, number_held_exactly, number_to_string

__all__ = ["decode", "encode", "normalized_marker"]

#: The rule this module applies for values with no JSON form (docs/ledger.md, "Normalisation").
NORMALIZE_RULE = "callgate-normalize/1"
_SAFE_INTEGER = 2**53 - 1
#: Deepest nesting the raw text follows, as core's: deeper parts are written as ``"[cycle]"``.
_MAX_DEPTH = 200
#: Where ``json.dumps`` may have written a float the server keeps as spelled: an integer-valued
#: float beyond ±(2^53−1) has an exponent (``1e+16``) or 16+ digits and ``.0``. A match inside a
#: string only costs the exact writer. Each pattern starts at its literal and looks behind for the
#: digits, so a scan costs about what the text's length does (a pattern starting with ``\d{16}``
#: cost twice the ``json.dumps`` it follows).
_EXPONENT_TEXT = re.compile(r"e\+(?<=\de\+)")
_LONG_WHOLE_TEXT = re.compile(r"\.0(?<=\d{16}\.0)")


def encode(body: Any) -> bytes:
    """
    ``body`` as the UTF-8 JSON text of a request (compact separators).

    :raises TypeError: for a value that is not JSON data (a set, an object), as ``json.dumps`` does.
    """
    try:
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # NaN or Infinity somewhere in the body
        return encode(_without_non_finite(body))
    if _LONG_WHOLE_TEXT.search(text) or ("e+" in text and _EXPONENT_TEXT.search(text)):
        # Rare: write the floats as JavaScript does.
        text = ecmascript_dumps(body)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, so the server sees it
        return ecmascript_dumps(body, ensure_ascii=True).encode("ascii")


def decode(content: bytes | str) -> Any:
    """
    A server's answer read losslessly.

    :raises ValueError: on invalid JSON, a duplicate key (naming it), ``NaN`` / ``Infinity``, a
        float out of range or a decimal a float does not hold exactly (quoting its digits).
    """
    return json.loads(
        content, object_pairs_hook=_refuse_duplicates, parse_constant=_refuse_constant, parse_float=_finite
    )


def normalized_marker(value: Any) -> dict[str, Any]:
    """
    The ``callgate-normalize/1`` marker of ``value`` (a value with no canonical JSON form), as
    core's ``recordable()`` makes it (docs/ledger.md, "Normalisation").

    :param value: Any Python value; JSON data is read as the JavaScript value it stands for
        (``int`` beyond ±(2^53−1) as a big integer, ``float`` as a number).
    :returns: ``{"$callgate": "normalized", "rule": "callgate-normalize/1", "reasons": [...],
        "bytes": n, "sha256": "sha256:<64 hex>"}``: ``reasons`` sorted (``lone-surrogate``,
        ``non-finite-number``, ``not-json``, ``unsafe-integer``), ``bytes`` and ``sha256`` over
        the raw JSON text in UTF-8.
    """
    reasons: set[str] = set()
    text = _raw_text(value, reasons, set(), 0)
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
        return ecmascript_dumps(value, allow_nan=True)
    if key in ("result", "content") or not isinstance(value, (dict, list, tuple)):
        return normalized_marker(value)
    if isinstance(value, dict):
        return {name: _without_non_finite(item, name) for name, item in value.items()}
    return [_without_non_finite(item) for item in value]


def _raw_text(value: Any, reasons: set[str], open_containers: set[int], depth: int) -> str:
    """
    The raw JSON text of ``value`` as core's ``rawText`` writes it: NaN/Infinity as tokens,
    integers with every digit, floats by Number::toString, lone surrogates as U+FFFD, a cycle (or
    nesting deeper than 200) as ``"[cycle]"``.
    """
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        if abs(value) > _SAFE_INTEGER:
            reasons.add("unsafe-integer")
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            reasons.add("non-finite-number")
        elif value.is_integer() and abs(value) > _SAFE_INTEGER:
            reasons.add("unsafe-integer")
        return number_to_string(value)
    if isinstance(value, str):
        cleaned = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        if cleaned != value:
            reasons.add("lone-surrogate")
        return json.dumps(cleaned, ensure_ascii=False)
    if not isinstance(value, (dict, list, tuple)):
        reasons.add("not-json")
        return json.dumps(repr(value))
    if id(value) in open_containers or depth > _MAX_DEPTH:
        reasons.add("not-json")
        return '"[cycle]"'
    open_containers.add(id(value))
    try:
        if isinstance(value, dict):
            entries = (
                f"{_raw_text(key, reasons, open_containers, depth + 1)}:"
                f"{_raw_text(item, reasons, open_containers, depth + 1)}"
                for key, item in _javascript_order(value)
            )
            return "{" + ",".join(entries) + "}"
        return "[" + ",".join(_raw_text(item, reasons, open_containers, depth + 1) for item in value) + "]"
    finally:
        open_containers.discard(id(value))


def _javascript_order(value: dict[Any, Any]) -> list[tuple[str, Any]]:
    """
    The entries of ``value`` in the order JavaScript lists an object's keys (ECMA-262
    OrdinaryOwnPropertyKeys): array indexes (``"0"``, ``"7"``, up to 2^32−2) in ascending numeric
    order first, then the other keys in insertion order.
    """
    entries = [(key_text(key, lenient=True), item) for key, item in value.items()]
    indexes = [(key, item) for key, item in entries if _array_index(key)]
    if not indexes:
        return entries
    others = [(key, item) for key, item in entries if not _array_index(key)]
    return sorted(indexes, key=lambda entry: int(entry[0])) + others


def _array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1


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
    if not number_held_exactly(text):
        raise ValueError(f"the number {text} in the server's answer has more digits than a float holds")
    return number
