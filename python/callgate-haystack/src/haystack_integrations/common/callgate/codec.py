"""
The JSON encoding of the callgate HTTP API's bodies, in one place: every request body the clients
send goes through :func:`encode_body`, every answer they read through :func:`decode_body`.

- Requests: UTF-8 JSON, compact (``,`` and ``:`` separators), non-ASCII characters as they are,
  losslessly by the rule of :mod:`.lossless_json` (integers with every digit, lone surrogates as
  escapes, ``NaN`` / ``Infinity`` refused or normalised as documented there).
- Answers: UTF-8 JSON (RFC 8259), read losslessly (duplicate keys, ``NaN`` tokens refused); a
  body that is not JSON is returned as its text, so an error from something in front of the
  server (a proxy's HTML page) still reaches the caller readably.
"""

from __future__ import annotations

from typing import Any

from . import lossless_json


def encode_body(body: Any) -> bytes:
    """
    The bytes of a request body.

    :param body: A JSON value (``dict``, ``list``, ``str``, ``int``, finite ``float``, ``bool``, ``None``).
    :raises TypeError: For a value JSON has no form for.
    """
    return lossless_json.encode(body)


def decode_body(content: bytes) -> Any:
    """
    The value of an answer's body: its JSON value, ``None`` for an empty body, or its text
    (invalid UTF-8 replaced) when it is not JSON.
    """
    if not content:
        return None
    try:
        return lossless_json.decode(content)
    except ValueError:
        return content.decode("utf-8", "replace")
